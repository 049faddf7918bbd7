// The small example graphs (Go: engine/graphs/examples.go) as LangGraph.js graphs.
import { AIMessage } from "@langchain/core/messages";
import { Annotation, END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const echo = new StateGraph(MessagesAnnotation)
  .addNode("echo", (s) => ({ messages: [new AIMessage(`echo: ${String(s.messages.at(-1)?.content)}`)] }))
  .addEdge(START, "echo")
  .addEdge("echo", END)
  .compile();

/** The error the error graph fails with: its name is part of the run's error. */
class CustomError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CustomError";
  }
}

export const error = new StateGraph(MessagesAnnotation)
  .addNode("error_node", async () => {
    await pause(1000);
    throw new CustomError("Boo!");
  })
  .addEdge(START, "error_node")
  .compile();

const DelayState = Annotation.Root({ ...MessagesAnnotation.spec, delay: Annotation<number>() });

export const delay = new StateGraph(DelayState)
  .addNode("long_running", async (s) => {
    await pause(s.delay ?? 0);
    // A plain string: the messages reducer makes it a human message.
    return { messages: [`finished after ${s.delay}ms`] };
  })
  .addEdge(START, "long_running")
  .addEdge("long_running", END)
  .compile();

/** A graph built per run: one node named after configurable.nodeName. */
export function dynamic(config: { configurable?: { nodeName?: string } }) {
  const name = config.configurable?.nodeName || "default";
  const State = Annotation.Root({
    node: Annotation<string>(),
    messages: Annotation<string[], string | string[]>({
      reducer: (a, b) => [...a, ...(Array.isArray(b) ? b : [b])],
      default: () => [],
    }),
  });
  return new StateGraph(State)
    .addNode(name, () => ({ node: name, messages: [name] }))
    .addEdge(START, name)
    .addEdge(name, END)
    .compile();
}

type Model = "openai" | "anthropic" | "unknown";
const RuntimeState = Annotation.Root({ message: Annotation<string>(), model: Annotation<Model>() });

export const simpleRuntime = new StateGraph(
  { input: RuntimeState, output: Annotation.Root({ model: Annotation<Model>() }) },
  Annotation.Root({ model: Annotation<Model>() }),
)
  .addNode("use_context", (_s, runtime) => ({ model: runtime.context?.model }))
  .addEdge(START, "use_context")
  .compile();

const list = () => Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] });
const entered = (name: string) => () => ({ messages: [`Entered ${name} node`] });

const child = new StateGraph(Annotation.Root({ messages: list(), child: Annotation<"child_one" | "child_two">() }))
  .addNode("c_one", entered("c_one"))
  .addNode("c_two", entered("c_two"))
  .addEdge(START, "c_one")
  .addEdge("c_one", "c_two")
  .addEdge("c_two", END)
  .compile();

const parent = new StateGraph(Annotation.Root({ messages: list(), parent: Annotation<"parent_one" | "parent_two">() }))
  .addNode("p_one", entered("p_one"))
  .addNode("p_two", child)
  .addEdge(START, "p_one")
  .addEdge("p_one", "p_two")
  .addEdge("p_two", END)
  .compile();

export const nested = new StateGraph(Annotation.Root({ messages: list() }))
  .addNode("gp_one", entered("gp_one"))
  .addNode("gp_two", parent)
  .addEdge(START, "gp_one")
  .addEdge("gp_one", "gp_two")
  .addEdge("gp_two", END)
  .compile();

const weatherGraph = new StateGraph(Annotation.Root({ ...MessagesAnnotation.spec, city: Annotation<string>() }))
  .addNode("model_node", () => ({ city: "San Francisco" }))
  .addNode("weather_node", (s) => ({ messages: [new AIMessage(`It's sunny in ${s.city}!`)] }))
  .addEdge(START, "model_node")
  .addEdge("model_node", "weather_node")
  .addEdge("weather_node", END)
  .compile({ interruptBefore: ["weather_node"] });

export const weather = new StateGraph(
  Annotation.Root({ ...MessagesAnnotation.spec, route: Annotation<"weather" | "other">() }),
)
  .addNode("router_node", () => ({ route: "weather" as const }))
  .addNode("normal_llm_node", () => ({ messages: [new AIMessage("Hello")] }))
  .addNode("weather_graph", weatherGraph)
  .addEdge(START, "router_node")
  .addConditionalEdges("router_node", (s) => (s.route === "weather" ? "weather_graph" : "normal_llm_node"), [
    "weather_graph",
    "normal_llm_node",
  ])
  .addEdge("weather_graph", END)
  .addEdge("normal_llm_node", END)
  .compile();
