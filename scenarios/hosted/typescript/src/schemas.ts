// Graphs whose state is declared in each of the ways LangGraph.js draws JSON Schemas from, for the
// hosted-TypeScript scenario's /schemas: a StateSchema with the library's messages value, Zod
// (v3) fields registered with withLangGraph (with a JSON Schema extra), and plain Zod (v4). They
// are the JS reference server's schema test graphs, whose Go ports jetgraph ships as examples.
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesValue, START, StateGraph, StateSchema } from "@langchain/langgraph";
import { withLangGraph } from "@langchain/langgraph/zod";
import { z as z3 } from "zod/v3";
import { z } from "zod/v4";

const Counted = new StateSchema({ messages: MessagesValue, count: z.number().default(0) });

export const stateSchemaGraph = new StateGraph(Counted)
  .addNode("process", (s: typeof Counted.State) => ({
    messages: [new AIMessage(`Response ${s.count + 1}`)],
    count: s.count + 1,
  }))
  .addEdge(START, "process")
  .addEdge("process", END)
  .compile();

const Registered = z3.object({
  messages: withLangGraph(z3.array(z3.string()), {
    reducer: { schema: z3.string(), fn: (all: string[], one: string) => [...all, one] },
    default: () => [],
    jsonSchemaExtra: { langgraph_type: "messages" },
  }),
  count: z3.number().default(0),
  status: z3.enum(["idle", "processing", "done"]).default("idle"),
});

export const zodRegistryGraph = new StateGraph(Registered)
  .addNode("process", (s: z3.infer<typeof Registered>) => ({
    messages: `Message ${s.count + 1}`,
    count: s.count + 1,
    status: "processing" as const,
  }))
  .addEdge(START, "process")
  .addEdge("process", END)
  .compile();

const Plain = z.object({
  items: z.array(z.string()).default([]),
  counter: z.number().default(0),
  label: z.string().optional(),
});

export const plainZodGraph = new StateGraph(Plain)
  .addNode("process", (s: z.infer<typeof Plain>) => ({
    items: [...s.items, `Item ${s.counter + 1}`],
    counter: s.counter + 1,
    label: "processed",
  }))
  .addEdge(START, "process")
  .addEdge("process", END)
  .compile();
