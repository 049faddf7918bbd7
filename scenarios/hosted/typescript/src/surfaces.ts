// LangGraph.js graphs for the hosted-TypeScript scenario's run surfaces: a long node to cancel,
// parallel interrupts, a Command that routes, custom stream events, run context, a loop that hits
// the recursion limit, and three levels of subgraphs to draw and stream.
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { Annotation, Command, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";

// `long` waits `delay` ms without looking at the run's abort signal, as most nodes are written:
// cancelling the run must still stop it promptly.
const Delayed = Annotation.Root({ ...MessagesAnnotation.spec, delay: Annotation<number>() });

export const long = new StateGraph(Delayed)
  .addNode("long_running", async (s: typeof Delayed.State) => {
    await new Promise((resolve) => setTimeout(resolve, s.delay));
    return { messages: [`finished after ${s.delay}ms`] };
  })
  .addEdge(START, "long_running")
  .addEdge("long_running", END)
  .compile();

// `listening` waits as long, but stops when the run's abort signal fires, and says so in the store.
export const listening = new StateGraph(Delayed)
  .addNode("wait_for_abort", async (s: typeof Delayed.State, config: LangGraphRunnableConfig) => {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, s.delay);
      config.signal?.addEventListener("abort", () => {
        clearTimeout(timer);
        const thread = String(config.configurable?.thread_id);
        config.store!.put(["aborted"], thread, { node: "wait_for_abort" }).then(() => reject(new Error("aborted")), reject);
      }, { once: true });
    });
    return { messages: [`finished after ${s.delay}ms`] };
  })
  .addEdge(START, "wait_for_abort")
  .addEdge("wait_for_abort", END)
  .compile();

const Answers = Annotation.Root({
  answers: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
});

const ask = (side: string) => (_s: typeof Answers.State) => {
  const answer = interrupt({ side }) as string;
  return { answers: [`${side}: ${answer}`] };
};

// `pair` asks two questions at once, from two nodes of one step.
export const pair = new StateGraph(Answers)
  .addNode("left", ask("left"))
  .addNode("right", ask("right"))
  .addEdge(START, "left")
  .addEdge(START, "right")
  .addEdge("left", END)
  .addEdge("right", END)
  .compile();

const Routed = Annotation.Root({
  log: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
  volume: Annotation<string>(),
});
const Context = Annotation.Root({ loudness: Annotation<string>() });

// `router` goes where a Command sends it; its nodes stream custom events and read the run's context.
export const router = new StateGraph(Routed, Context)
  .addNode("decide", (s: typeof Routed.State) =>
    new Command({ goto: s.volume === "quiet" ? "whisper" : "shout", update: { log: ["decided"] } }), { ends: ["shout", "whisper"] })
  .addNode("shout", (_s: typeof Routed.State, config: LangGraphRunnableConfig<typeof Context.State>) => {
    config.writer?.({ progress: "shouting" });
    return { log: [`SHOUT ${config.context?.loudness ?? "?"}`] };
  })
  .addNode("whisper", (_s: typeof Routed.State, config: LangGraphRunnableConfig<typeof Context.State>) => {
    config.writer?.({ progress: "whispering" });
    return { log: [`whisper ${config.context?.loudness ?? "?"}`] };
  })
  .addEdge(START, "decide")
  .addEdge("shout", END)
  .addEdge("whisper", END)
  .compile();

const Count = Annotation.Root({ n: Annotation<number>({ reducer: (_a, b) => b, default: () => 0 }) });

// `loop` never ends on its own: the recursion limit stops it.
export const loop = new StateGraph(Count)
  .addNode("again", (s: typeof Count.State) => ({ n: s.n + 1 }))
  .addEdge(START, "again")
  .addConditionalEdges("again", () => "again", ["again"])
  .compile();

const Said = Annotation.Root({ messages: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });
const said = (name: string) => () => ({ messages: [`Entered ${name} node`] });

const child = new StateGraph(Said)
  .addNode("c_one", said("c_one"))
  .addNode("c_two", said("c_two"))
  .addEdge(START, "c_one")
  .addEdge("c_one", "c_two")
  .addEdge("c_two", END)
  .compile();

const parent = new StateGraph(Said)
  .addNode("p_one", said("p_one"))
  .addNode("p_two", child)
  .addEdge(START, "p_one")
  .addEdge("p_one", "p_two")
  .addEdge("p_two", END)
  .compile();

// `generations` nests three graphs, the way jetgraph's Go example `nested` does.
export const generations = new StateGraph(Said)
  .addNode("gp_one", said("gp_one"))
  .addNode("gp_two", parent)
  .addEdge(START, "gp_one")
  .addEdge("gp_one", "gp_two")
  .addEdge("gp_two", END)
  .compile();
