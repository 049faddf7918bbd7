// The small graph of the hosted benchmark (run.sh), as a user writes one: one node that answers
// the last message. echo.py is the same graph in Python.
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";

type State = typeof MessagesAnnotation.State;

function echo(state: State): Partial<State> {
  const last = state.messages[state.messages.length - 1];
  return { messages: [new AIMessage(`echo: ${String(last.content)}`)] };
}

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("echo", echo)
  .addEdge(START, "echo")
  .addEdge("echo", END)
  .compile();
