// A LangGraph.js graph written for the hosted-TypeScript scenario, as a user writes one.
//
// `visits` greets a user, counts their visits in the store, asks a question with an interrupt
// and checks, once resumed, that its messages came back as the message classes it saved.
// `makeGreeter` is a factory: it builds its graph from the run's config.
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { Annotation, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { greeting } from "./words.js";

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  visits: Annotation<number>({ reducer: (_old: number, next: number) => next, default: () => 0 }),
});
type S = typeof State.State;

async function greet(state: S, config: LangGraphRunnableConfig): Promise<Partial<S>> {
  const name = String(state.messages[state.messages.length - 1].content);
  const item = await config.store!.get(["users", name], "profile");
  const visits = ((item?.value.visits as number | undefined) ?? 0) + 1;
  await config.store!.put(["users", name], "profile", { visits });
  return { messages: [new AIMessage({ content: greeting(name, visits), id: `greet-${visits}` })], visits };
}

function ask(state: S): Partial<S> {
  const answer = interrupt({ question: "continue?" }) as string;
  // A resumed run reads the state back from jetgraph: it must be the objects it saved.
  const [first, second] = state.messages;
  if (!(first instanceof HumanMessage) || !(second instanceof AIMessage)) {
    throw new TypeError(`messages came back as ${state.messages.map((m) => m.constructor.name).join(", ")}`);
  }
  return { messages: [new AIMessage(`${String(first.content)} said ${answer}`)] };
}

export const graph = new StateGraph(State)
  .addNode("greet", greet)
  .addNode("ask", ask)
  .addEdge(START, "greet")
  .addEdge("greet", "ask")
  .addEdge("ask", END)
  .compile();

export function makeGreeter(config: LangGraphRunnableConfig) {
  const hello = (config.configurable?.greeting as string | undefined) ?? "Hello";
  return new StateGraph(MessagesAnnotation)
    .addNode("say", (s: typeof MessagesAnnotation.State) => ({
      messages: [new AIMessage(`${hello}, ${String(s.messages[s.messages.length - 1].content)}`)],
    }))
    .addEdge(START, "say")
    .addEdge("say", END)
    .compile();
}
