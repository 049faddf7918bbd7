"""A graph whose second node waits as long as its input asks (asyncio.sleep, so a cancel stops it
at once), for the scenarios of multitask strategies, cancel and stream modes; its first node
writes a custom stream event and reads the run's context. Beside it: a graph that loops forever
(the recursion limit), one whose two parallel nodes both call interrupt(), and the long graph as
a subgraph (stream namespaces)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.runtime import Runtime
from langgraph.types import interrupt
from typing_extensions import NotRequired, TypedDict


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    delay: NotRequired[float]


@dataclass
class Context:
    who: str = "nobody"


def prep(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    get_stream_writer()({"progress": "prepared"})
    return {"messages": [AIMessage(content=f"prepared for {runtime.context.who if runtime.context else 'nobody'}")]}


async def wait(state: State) -> dict[str, Any]:
    delay = float(state.get("delay", 0))
    await asyncio.sleep(delay)
    return {"messages": [AIMessage(content=f"waited {delay:g}s")]}


builder = StateGraph(State, context_schema=Context)
builder.add_node("prep", prep)
builder.add_node("wait", wait)
builder.add_edge(START, "prep")
builder.add_edge("prep", "wait")
builder.add_edge("wait", END)
graph = builder.compile()


def again(state: State) -> dict[str, Any]:
    return {"messages": [AIMessage(content="again")]}


looping = StateGraph(State)
looping.add_node("again", again)
looping.add_edge(START, "again")
looping.add_edge("again", "again")
loop = looping.compile()


def ask_a(state: State) -> dict[str, Any]:
    return {"messages": [AIMessage(content=f"a: {interrupt('a?')}")]}


def ask_b(state: State) -> dict[str, Any]:
    return {"messages": [AIMessage(content=f"b: {interrupt('b?')}")]}


def after(state: State) -> dict[str, Any]:
    return {"messages": [AIMessage(content="after")]}


# Two parallel nodes that each ask: a run stops with both interrupts at once.
asking = StateGraph(State)
asking.add_node("ask_a", ask_a)
asking.add_node("ask_b", ask_b)
asking.add_node("after", after)
asking.add_edge(START, "ask_a")
asking.add_edge(START, "ask_b")
asking.add_edge(["ask_a", "ask_b"], "after")
asking.add_edge("after", END)
pair = asking.compile()

# The long graph as a node of another: its stream events carry the subgraph's namespace.
wrapping = StateGraph(State)
wrapping.add_node("inner", graph)
wrapping.add_node("after", after)
wrapping.add_edge(START, "inner")
wrapping.add_edge("inner", "after")
wrapping.add_edge("after", END)
wrapped = wrapping.compile()
