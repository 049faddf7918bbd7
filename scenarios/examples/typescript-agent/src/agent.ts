// The agent's graph.
//
//   agent ──(a tool call)──▶ approve ──("yes")──▶ tools ──▶ agent
//     │                        └──(anything else)───────▶ agent
//     └──(an answer)──▶ END
//
// `agent` reads what the store remembers of the user (namespace ["users", <user_id>], key
// "memory") into the system prompt, then asks the model. `approve` stops the run with an
// interrupt before any tool runs; the run is resumed with Command({ resume: "yes" }) to run it,
// anything else to decline. `tools` is a subgraph that runs the tool calls.
import { AIMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import {
  Command,
  END,
  type LangGraphRunnableConfig,
  MessagesAnnotation,
  START,
  StateGraph,
  interrupt,
} from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { makeModel } from "./model.js";
import { getWeather } from "./tools.js";

/** What a run is given besides its input: `"context": {"user_id": "ada"}`. */
export interface Context {
  user_id?: string;
}

type State = typeof MessagesAnnotation.State;

const tools = [getWeather];
const model = makeModel().bindTools(tools);

async function agent(state: State, config: LangGraphRunnableConfig<Context>): Promise<Partial<State>> {
  const userId = config.context?.user_id ?? "anonymous";
  const memory = await config.store?.get(["users", userId], "memory");
  let prompt = "You are a weather assistant: call get_weather to answer questions about the weather.";
  const city: unknown = memory?.value.city;
  if (typeof city === "string") prompt += ` The user lives in ${city}.`;
  const reply = await model.invoke([new SystemMessage(prompt), ...state.messages], config);
  return { messages: [reply] };
}

function route(state: State): "approve" | typeof END {
  const last = state.messages.at(-1);
  return last instanceof AIMessage && (last.tool_calls?.length ?? 0) > 0 ? "approve" : END;
}

function approve(state: State): Command {
  const last = state.messages.at(-1);
  if (!(last instanceof AIMessage)) throw new TypeError("approve follows a message with tool calls");
  const calls = last.tool_calls ?? [];
  const answer: unknown = interrupt({ question: "Run these tool calls?", tool_calls: calls });
  if (answer === "yes") return new Command({ goto: "tools" });
  const declined = calls.map(
    (c) => new ToolMessage({ content: "declined by the user", tool_call_id: c.id ?? "", name: c.name, status: "error" }),
  );
  return new Command({ goto: "agent", update: { messages: declined } });
}

// The tools run in a subgraph of their own: its steps stream under the parent's "tools" task
// (streamSubgraphs) and its state shows under that task in the thread's state.
const toolsGraph = new StateGraph(MessagesAnnotation)
  .addNode("run_tools", new ToolNode(tools))
  .addEdge(START, "run_tools")
  .compile();

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("agent", agent)
  .addNode("approve", approve, { ends: ["tools", "agent"] })
  .addNode("tools", toolsGraph)
  .addEdge(START, "agent")
  .addConditionalEdges("agent", route, ["approve", END])
  .addEdge("tools", "agent")
  .compile();
