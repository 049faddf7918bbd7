"""The Python SDK's async client resumes a cut stream: a proxy before jetgraph cuts the first
response of a run's stream inside an event's frame; the SDK reconnects to the stream's Location
with the Last-Event-ID of the last whole event it read and gets every later event once, exactly
the events a join of the run from its start gives.

Run by TestPythonSDKReconnect; JETGRAPH_URL names the server.
"""

import asyncio
import os
import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from langgraph_sdk import get_client

from checks import check, texts

URL = os.environ["JETGRAPH_URL"]
CUT_AT = re.compile(rb'"step":\s*3\b')


@dataclass
class Proxy:
    """A TCP proxy to the server that cuts the first response to a POST .../runs/stream a few
    bytes into the frame of the custom event of step 3, and logs every request line."""

    host: str
    port: int
    requests: list[str] = field(default_factory=list)
    last_event_ids: list[str | None] = field(default_factory=list)
    cut: bool = False

    async def serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        up_r, up_w = await asyncio.open_connection(self.host, self.port)
        head = await client_r.readuntil(b"\r\n\r\n")
        line = head.split(b"\r\n", 1)[0].decode()
        self.requests.append(line)
        found = re.search(rb"(?im)^last-event-id:\s*(\S+)", head)
        self.last_event_ids.append(found.group(1).decode() if found else None)
        up_w.write(head)
        cutting = not self.cut and line.startswith("POST ") and "/runs/stream" in line
        if cutting:
            self.cut = True

        async def upload() -> None:
            while data := await client_r.read(65536):
                up_w.write(data)
                await up_w.drain()

        async def download() -> None:
            seen = b""
            while data := await up_r.read(65536):
                if cutting:
                    seen += data
                    if m := CUT_AT.search(seen):
                        keep = len(data) - (len(seen) - m.start()) + 4
                        client_w.write(data[: max(keep, 0)])
                        await client_w.drain()
                        return
                client_w.write(data)
                await client_w.drain()

        up = asyncio.create_task(upload())
        try:
            await download()
        finally:
            up.cancel()
            for w in (client_w, up_w):
                w.close()


async def main() -> None:
    target = urlsplit(URL)
    proxy = Proxy(target.hostname or "127.0.0.1", target.port or 80)
    server = await asyncio.start_server(proxy.serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    # One request per connection, so that the proxy reads each request's head.
    headers = {"Connection": "close"}
    async with server, get_client(url=f"http://127.0.0.1:{port}", api_key=None, headers=headers) as client:
        tid = (await client.threads.create())["thread_id"]
        got = []
        async for part in client.runs.stream(
            tid,
            "agent",
            input={"messages": [{"role": "user", "content": "foo"}], "sleep": {"steps": 10, "ms": 50}},
            stream_mode=["values", "custom"],
            stream_resumable=True,
        ):
            got.append(part)
        check(proxy.cut, f"the proxy never cut the stream: {proxy.requests}")
        check(
            proxy.requests[-1].startswith("GET ") and "/runs/" in proxy.requests[-1],
            f"the SDK reconnected to the Location: {proxy.requests}",
        )
        resumed_after = proxy.last_event_ids[-1]
        check(resumed_after is not None, f"the reconnect sent a Last-Event-ID: {proxy.last_event_ids}")
        whole = [p for p in got if p.event == "custom"]
        check([p.data["step"] for p in whole] == list(range(10)), f"custom steps: {[p.data for p in whole]}")
        check(resumed_after == whole[2].id, f"resumed after step 2's event {whole[2].id}, not {resumed_after}")
        check(
            texts([p.data for p in got if p.event == "values"][-1]) == ["foo", "begin", "tool_call__begin", "end"],
            "the last values",
        )
        run_id = got[0].data["run_id"]
        ref = [p async for p in client.runs.join_stream(tid, run_id, last_event_id="-1")]
        check(
            [(p.id, p.event, p.data) for p in got] == [(p.id, p.event, p.data) for p in ref],
            f"a cut and resumed stream gives the events of a join from the start: "
            f"{[p.event for p in got]} vs {[p.event for p in ref]}",
        )


asyncio.run(main())
print("ok")
