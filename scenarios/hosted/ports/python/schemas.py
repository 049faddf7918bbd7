"""The schema examples (Go: state_schema_graph, zod_registry_graph, plain_zod_graph) in Python.

The TypeScript originals show how Zod schemas become JSON Schema; here the same states are
TypedDicts, so their runs answer the same while their /schemas are what Python's library makes.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from langchain_core.messages import AIMessage, AnyMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict


class CountedMessages(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    count: int


def respond(state: CountedMessages) -> dict[str, Any]:
    n = state.get("count", 0) + 1
    return {"messages": [AIMessage(content=f"Response {n}")], "count": n}


state_schema_graph = (
    StateGraph(CountedMessages)
    .add_node("process", respond)
    .add_edge(START, "process")
    .add_edge("process", END)
    .compile()
)


def append(left: list[str], right: str) -> list[str]:
    return [*left, right]


class WithStatus(TypedDict, total=False):
    messages: Annotated[list[str], append]  # plain strings, as the TypeScript original's
    count: int
    status: Literal["idle", "processing", "done"]


def count_message(state: WithStatus) -> dict[str, Any]:
    n = state.get("count", 0) + 1
    return {"messages": f"Message {n}", "count": n, "status": "processing"}


zod_registry_graph = (
    StateGraph(WithStatus)
    .add_node("process", count_message)
    .add_edge(START, "process")
    .add_edge("process", END)
    .compile()
)


class Items(TypedDict, total=False):
    items: list[str]
    counter: int


def add_item(state: Items) -> dict[str, Any]:
    n = state.get("counter", 0) + 1
    return {"items": [*state.get("items", []), f"Item {n}"], "counter": n}


plain_zod_graph = (
    StateGraph(Items).add_node("process", add_item).add_edge(START, "process").add_edge("process", END).compile()
)
