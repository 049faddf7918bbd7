"""A graph with a subgraph as a node, for the hosted-Python scenario's drawing and subgraph events."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from typing_extensions import TypedDict


class State(TypedDict, total=False):
    words: list[str]


def inner_word(state: State) -> dict[str, Any]:
    return {"words": [*state.get("words", []), "inner"]}


def outer_word(state: State) -> dict[str, Any]:
    return {"words": [*state.get("words", []), "outer"]}


inner = StateGraph(State).add_node("inner_word", inner_word).add_edge(START, "inner_word").add_edge("inner_word", END).compile()
graph = (StateGraph(State).add_node("child", inner).add_node("outer_word", outer_word)
         .add_edge(START, "child").add_edge("child", "outer_word").add_edge("outer_word", END).compile())


def inner_ask(state: State) -> dict[str, Any]:
    return {"words": [*state.get("words", []), str(interrupt("a word?"))]}


# The subgraph asks with its own interrupt; the parent's run stops inside it and is resumed.
asking = (StateGraph(State).add_node("child", StateGraph(State).add_node("inner_ask", inner_ask)
                                     .add_edge(START, "inner_ask").add_edge("inner_ask", END).compile())
          .add_edge(START, "child").add_edge("child", END).compile())


def said(name: str) -> Any:
    def node(state: State) -> dict[str, Any]:
        return {"words": [*state.get("words", []), name]}
    return node


def two_nodes(first: str, second: Any, name: str) -> Any:
    """A graph of two nodes in a row: `first`, then `second` under `name` (a node or a graph)."""
    return (StateGraph(State).add_node(first, said(first)).add_node(name, second)
            .add_edge(START, first).add_edge(first, name).add_edge(name, END).compile())


# Three levels of subgraphs (gp_two runs p_one then p_two, which runs c_one then c_two): their
# tasks, checkpoints and debug events stream in the library's order.
generations = two_nodes("gp_one", two_nodes("p_one", two_nodes("c_one", said("c_two"), "c_two"), "p_two"), "gp_two")
