// A graph with a slow second step, for the scenario that kills the host mid-run: the first step
// counts its executions in the store, so the test sees that a resumed run does not repeat it.
import { AIMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";

async function first(_state: typeof MessagesAnnotation.State, config: LangGraphRunnableConfig) {
  const thread = String(config.configurable?.thread_id);
  const item = await config.store!.get(["executions"], thread);
  await config.store!.put(["executions"], thread, { first: ((item?.value.first as number | undefined) ?? 0) + 1 });
  return { messages: [new AIMessage("first")] };
}

async function slow() {
  await new Promise((resolve) => setTimeout(resolve, 3000));
  return { messages: [new AIMessage("slow done")] };
}

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("first", first)
  .addNode("slow", slow)
  .addEdge(START, "first")
  .addEdge("first", "slow")
  .addEdge("slow", END)
  .compile();
