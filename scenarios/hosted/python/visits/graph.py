"""A LangGraph graph written for the hosted-Python scenario, as a user writes one.

`visits` greets a user, counts their visits in the store, asks a question with an interrupt and
checks, once resumed, that the state came back as the objects it saved (message classes, a
pydantic model). `make_greeter` is a factory: it builds its graph from the run's config.
"""

from __future__ import annotations

import os
from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import interrupt
from pydantic import BaseModel
from typing_extensions import TypedDict


class Profile(BaseModel):
    name: str
    visits: int


class State(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    profile: Profile


def greet(state: State) -> dict[str, Any]:
    name = str(state["messages"][-1].content)
    store = get_store()
    item = store.get(("users", name), "profile")
    visits = (item.value["visits"] if item else 0) + 1
    store.put(("users", name), "profile", {"visits": visits})
    word = os.environ["VISIT_WORD"]  # set by langgraph.json's env
    reply = AIMessage(content=f"hello {name} ({word} {visits})", id=f"greet-{visits}")
    return {"messages": [reply], "profile": Profile(name=name, visits=visits)}


def ask(state: State) -> dict[str, Any]:
    answer = interrupt({"question": "continue?"})
    messages, profile = state["messages"], state["profile"]
    # A resumed run reads the state back from jetgraph: it must be the objects it saved.
    if not isinstance(profile, Profile):
        raise TypeError(f"profile came back as {type(profile).__name__}")
    if not isinstance(messages[0], HumanMessage) or not isinstance(messages[1], AIMessage):
        raise TypeError(f"messages came back as {[type(m).__name__ for m in messages]}")
    return {"messages": [AIMessage(content=f"{profile.name} said {answer}")]}


builder = StateGraph(State)
builder.add_node("greet", greet)
builder.add_node("ask", ask)
builder.add_edge(START, "greet")
builder.add_edge("greet", "ask")
builder.add_edge("ask", END)
graph = builder.compile()


class Greeting(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def make_greeter(config: RunnableConfig) -> Any:
    greeting = config.get("configurable", {}).get("greeting", "Hello")

    def say(state: Greeting) -> dict[str, Any]:
        return {"messages": [AIMessage(content=f"{greeting}, {state['messages'][-1].content}")]}

    b = StateGraph(Greeting)
    b.add_node("say", say)
    b.add_edge(START, "say")
    b.add_edge("say", END)
    return b.compile()
