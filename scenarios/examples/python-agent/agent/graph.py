"""The agent's graph.

    agent ──(a tool call)──▶ approve ──(yes)──▶ tools ──▶ agent
      │                        └──(anything else)──────▶ agent
      └──(an answer)──▶ END

`agent` reads what the store remembers of the user (namespace ("users", <user_id>), key
"memory") into the system prompt, then asks the model. `approve` stops the run with an interrupt
before any tool runs; the run is resumed with Command(resume="yes") to run it, anything else to
decline. `tools` is a subgraph that runs the tool calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from langchain_core.messages import AIMessage, AnyMessage, SystemMessage, ToolMessage
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode
from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict

from agent.model import make_model
from agent.tools import get_weather

TOOLS = [get_weather]
MODEL = make_model().bind_tools(TOOLS)


@dataclass
class Context:
    """What a run is given besides its input: `"context": {"user_id": "ada"}`."""

    user_id: str = "anonymous"


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def agent(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    user_id = runtime.context.user_id if runtime.context else "anonymous"
    memory = runtime.store.get(("users", user_id), "memory") if runtime.store else None
    known = memory.value if memory else {}
    prompt = "You are a weather assistant: call get_weather to answer questions about the weather."
    if city := known.get("city"):
        prompt += f" The user lives in {city}."
    reply = MODEL.invoke([SystemMessage(content=prompt), *state["messages"]])
    return {"messages": [reply]}


def route(state: State) -> Literal["approve", "__end__"]:
    last = state["messages"][-1]
    return "approve" if isinstance(last, AIMessage) and last.tool_calls else "__end__"


def approve(state: State) -> Command[Literal["tools", "agent"]]:
    last = state["messages"][-1]
    assert isinstance(last, AIMessage)
    answer = interrupt({"question": "Run these tool calls?", "tool_calls": last.tool_calls})
    if answer == "yes":
        return Command(goto="tools")
    declined = [
        ToolMessage(content="declined by the user", tool_call_id=c["id"] or "", name=c["name"], status="error")
        for c in last.tool_calls
    ]
    return Command(goto="agent", update={"messages": declined})


# The tools run in a subgraph of their own: its steps stream under the parent's "tools" task
# (stream_subgraphs) and its state shows under that task in the thread's state.
tools = StateGraph(State).add_node("run_tools", ToolNode(TOOLS)).add_edge(START, "run_tools").compile()

builder = StateGraph(State, context_schema=Context)
builder.add_node("agent", agent)
builder.add_node("approve", approve)
builder.add_node("tools", tools)
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", route)
builder.add_edge("tools", "agent")
graph = builder.compile()
