// The schema examples (Go: state_schema_graph, zod_registry_graph, plain_zod_graph): the three
// ways LangGraph.js states are declared with Zod, whose /schemas jetgraph reads from the library.
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesValue, START, StateGraph, StateSchema } from "@langchain/langgraph";
import { withLangGraph } from "@langchain/langgraph/zod";
import { z as z3 } from "zod/v3";
import { z } from "zod/v4";

// StateSchema with the prebuilt messages value (marked langgraph_type: messages).
const Counted = new StateSchema({ messages: MessagesValue, count: z.number().default(0) });

export const stateSchemaGraph = new StateGraph(Counted)
  .addNode("process", (s) => ({ messages: [new AIMessage(`Response ${s.count + 1}`)], count: s.count + 1 }))
  .addEdge(START, "process")
  .addEdge("process", END)
  .compile();

// Zod v3 with withLangGraph: a reducer and a JSON Schema marker of its own.
const WithStatus = z3.object({
  messages: withLangGraph(z3.array(z3.string()), {
    reducer: { schema: z3.string(), fn: (a: string[], b: string) => [...a, b] },
    default: () => [],
    jsonSchemaExtra: { langgraph_type: "messages" },
  }),
  count: z3.number().default(0),
  status: z3.enum(["idle", "processing", "done"]).default("idle"),
});

// The node reads count with its default itself: LangGraph.js 1.7.3 leaves a withLangGraph state's
// plain Zod v3 defaults unapplied (the reference server's run fails with count NaN).
const next = (count: number | undefined) => (count ?? 0) + 1;

export const zodRegistryGraph = new StateGraph(WithStatus)
  .addNode("process", (s) => ({ messages: `Message ${next(s.count)}`, count: next(s.count), status: "processing" as const }))
  .addEdge(START, "process")
  .addEdge("process", END)
  .compile();

// Plain Zod v4: no reducers, no markers.
const Items = z.object({ items: z.array(z.string()).default([]), counter: z.number().default(0) });

export const plainZodGraph = new StateGraph(Items)
  .addNode("process", (s) => ({ items: [...s.items, `Item ${s.counter + 1}`], counter: s.counter + 1 }))
  .addEdge(START, "process")
  .addEdge("process", END)
  .compile();
