// The hosted TypeScript scenario's custom routes (langgraph.json's http.app): a Hono app.
import { Hono } from "hono";
import { streamSSE } from "hono/streaming";

export const app = new Hono();

app.get("/hello", (c) => c.json({ hello: c.req.query("name") ?? "world" }));

app.post("/echo", async (c) => {
  const body = await c.req.text();
  return c.json({ bytes: Buffer.byteLength(body), upper: body.toUpperCase() });
});

app.get("/ticks", (c) =>
  streamSSE(c, async (stream) => {
    for (let i = 0; i < 3; i++) {
      await stream.writeSSE({ event: "tick", data: String(i) });
      await stream.sleep(300);
    }
  }),
);

// Ticks until the client goes away: jetgraph then aborts the request in the host.
app.get("/forever", (c) =>
  streamSSE(c, async (stream) => {
    stream.onAbort(() => console.error("forever: client gone"));
    for (let i = 0; !stream.aborted; i++) {
      await stream.writeSSE({ data: String(i) });
      await stream.sleep(100);
    }
  }),
);

app.get("/items/:id{[0-9]+}", (c) => c.json({ item: Number(c.req.param("id")) }));

app.get("/threads/custom", (c) => c.json({ custom: "threads" }));
