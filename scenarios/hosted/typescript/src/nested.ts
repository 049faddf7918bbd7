// A graph with a subgraph as a node, for the hosted-TypeScript scenario's drawing and subgraph events.
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";

const State = Annotation.Root({ words: Annotation<string[]>({ reducer: (_a, b) => b, default: () => [] }) });

const inner = new StateGraph(State)
  .addNode("inner_word", (s: typeof State.State) => ({ words: [...s.words, "inner"] }))
  .addEdge(START, "inner_word")
  .addEdge("inner_word", END)
  .compile();

export const graph = new StateGraph(State)
  .addNode("child", inner)
  .addNode("outer_word", (s: typeof State.State) => ({ words: [...s.words, "outer"] }))
  .addEdge(START, "child")
  .addEdge("child", "outer_word")
  .addEdge("outer_word", END)
  .compile();
