// The example agents (Go: engine/graphs/examples_agent.go) as LangGraph.js graphs.
//
// agent answers "begin", "end" in turn through LangChain's fake chat model, loops through a tool
// node until it answers "end", and uses the store; agentSimple reaches its tool with Send. The
// model's turn is the number of AI messages in the state, as in the Go graphs, so answers follow
// the thread wherever and whenever it runs (a model kept per thread in memory would not survive a
// host restart).
import { type BaseMessage, ToolMessage, AIMessage } from "@langchain/core/messages";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import {
  Annotation,
  END,
  interrupt,
  type LangGraphRunnableConfig,
  MessagesAnnotation,
  messagesStateReducer,
  Send,
  START,
  StateGraph,
} from "@langchain/langgraph";

const sharedState = ["sharedState", "data"];
const inputtedState = ["inputtedState", "data"];

type Sleep = number | { steps: number; ms: number } | null;

const Output = Annotation.Root({
  messages: Annotation<BaseMessage[]>({ reducer: messagesStateReducer, default: () => [] }),
  sharedStateValue: Annotation<string | null>(),
  interrupt: Annotation<boolean>(),
  keyOne: Annotation<string | null>(),
  keyTwo: Annotation<string | null>(),
  sleep: Annotation<Sleep>(),
});

const Input = Annotation.Root({
  ...Output.spec,
  sharedStateFromStoreConfig: Annotation<Record<string, unknown> | null>(),
});

type State = typeof Input.State;

/** The fake model's answer in turn: answers[number of AI answers so far % answers.length]. */
async function fakeAnswer(messages: BaseMessage[], answers: string[]): Promise<BaseMessage> {
  const turn = messages.filter((m) => m.getType() === "ai").length % answers.length;
  return new FakeListChatModel({ responses: [answers[turn]] }).invoke(messages);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function agentSleep(sleep: Exclude<Sleep, null>, config: LangGraphRunnableConfig) {
  if (typeof sleep === "number") return pause(sleep * 1000);
  for (let step = 0; step < sleep.steps; step++) {
    config.writer?.({ type: "sleep", step });
    await pause(sleep.ms);
  }
}

async function agent(state: State, config: LangGraphRunnableConfig) {
  if (state.interrupt) interrupt("i want to interrupt");
  if (state.sleep != null && state.messages.at(-1)?.getType() === "human") await agentSleep(state.sleep, config);
  const answer = await fakeAnswer(state.messages, ["begin", "end"]);
  if (config.store && !state.sharedStateFromStoreConfig) {
    await config.store.put(sharedState, "user_id", { id: config.configurable?.user_id });
  }
  return { interrupt: false, messages: [answer] };
}

async function tool(state: State, config: LangGraphRunnableConfig) {
  const item = config.store ? await config.store.get(sharedState, "user_id") : null;
  const last = state.messages.at(-1);
  const reply = new ToolMessage({ content: `tool_call__${String(last?.content)}`, tool_call_id: "tool_call_id" });
  return { messages: [reply], sharedStateFromStoreConfig: item?.value ?? null };
}

async function checkSharedState(_state: State, config: LangGraphRunnableConfig) {
  if (config.store) {
    const item = await config.store.get(inputtedState, "my_key");
    if (!item?.value.isTrue) throw new Error("Value is not true");
  }
  return {};
}

function afterAgent(state: State) {
  const first = state.messages[0]?.content;
  if (first === "should_end") return END;
  if (first === "___check_state_value") return "checkSharedState";
  return state.messages.at(-1)?.content === "end" ? END : "tool";
}

export const graph = new StateGraph({ input: Input, output: Output }, Annotation.Root({ model_name: Annotation<string> }))
  .addNode("agent", agent)
  .addNode("tool", tool)
  .addNode("checkSharedState", checkSharedState)
  .addEdge(START, "agent")
  .addConditionalEdges("agent", afterAgent, ["tool", "checkSharedState", END])
  .addEdge("tool", "agent")
  .addEdge("checkSharedState", END)
  .compile();

const SimpleState = Annotation.Root({
  key_one: Annotation<string>(),
  key_two: Annotation<string>(),
  sleep: Annotation<number>(),
  messages: MessagesAnnotation.spec.messages,
});

async function simpleAgent(state: typeof SimpleState.State, config: LangGraphRunnableConfig) {
  const header = config.configurable?.["x-configurable-header"];
  if (header) return { messages: [new AIMessage(`end: ${String(header)}`)] };
  const user = String(config.configurable?.langgraph_auth_user_id || "ALL");
  if (config.store && !(await config.store.get([user], "key_one"))) {
    await config.store.put([user], "key_one", { text: state.messages.at(-1)?.content });
  }
  return { messages: [await fakeAnswer(state.messages, ["begin", "end\u2028"])] };
}

function simpleAfterAgent(state: typeof SimpleState.State) {
  const last = state.messages.at(-1);
  return String(last?.content).startsWith("end") ? END : new Send("tool", last);
}

export const simpleGraph = new StateGraph(SimpleState)
  .addNode("agent", simpleAgent)
  .addNode("tool", (message: BaseMessage) => ({
    messages: [new ToolMessage({ content: `tool_call__${String(message.content)}`, tool_call_id: "tool_call_id" })],
  }))
  .addEdge(START, "agent")
  .addConditionalEdges("agent", simpleAfterAgent, ["tool", END])
  .addEdge("tool", "agent")
  .compile();
