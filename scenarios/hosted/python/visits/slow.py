"""A graph with a slow second step, for the scenario that kills the host mid-run: the first step
counts its executions in the store, so the test sees that a resumed run does not repeat it."""

from __future__ import annotations

import time
from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def first(state: State, config: RunnableConfig) -> dict[str, Any]:
    store, thread = get_store(), str(config["configurable"]["thread_id"])
    item = store.get(("executions",), thread)
    store.put(("executions",), thread, {"first": (item.value["first"] if item else 0) + 1})
    return {"messages": [AIMessage(content="first")]}


def slow(state: State) -> dict[str, Any]:
    time.sleep(3)
    return {"messages": [AIMessage(content="slow done")]}


builder = StateGraph(State)
builder.add_node("first", first)
builder.add_node("slow", slow)
builder.add_edge(START, "first")
builder.add_edge("first", "slow")
builder.add_edge("slow", END)
graph = builder.compile()


def boom(state: State) -> dict[str, Any]:
    raise ValueError("the node broke")


broken = StateGraph(State)
broken.add_node("boom", boom)
broken.add_edge(START, "boom")
broken.add_edge("boom", END)
failing = broken.compile()
