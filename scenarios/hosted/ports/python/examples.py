"""The small example graphs (Go: engine/graphs/examples.go) as LangGraph graphs in Python."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any, Literal

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict


def echo_node(state: MessagesState) -> dict[str, Any]:
    return {"messages": [AIMessage(content=f"echo: {state['messages'][-1].content}")]}


echo = StateGraph(MessagesState).add_node("echo", echo_node).add_edge(START, "echo").add_edge("echo", END).compile()


class CustomError(Exception):
    """The error the error graph fails with: its class name is part of the run's error."""


async def error_node(state: MessagesState) -> dict[str, Any]:
    await asyncio.sleep(1)
    raise CustomError("Boo!")


error = StateGraph(MessagesState).add_node("error_node", error_node).add_edge(START, "error_node").compile()


class DelayState(MessagesState, total=False):
    delay: float


async def long_running(state: DelayState) -> dict[str, Any]:
    delay = state.get("delay") or 0
    await asyncio.sleep(delay / 1000)
    # A plain string: add_messages makes it a human message, as the reference graph's reducer does.
    return {"messages": [f"finished after {delay}ms"]}


delay = (
    StateGraph(DelayState)
    .add_node("long_running", long_running)
    .add_edge(START, "long_running")
    .add_edge("long_running", END)
    .compile()
)


def append(left: list[str], right: list[str] | str) -> list[str]:
    """Appends a string or a list of strings."""
    return [*left, *([right] if isinstance(right, str) else right)]


class DynamicState(TypedDict, total=False):
    node: str
    messages: Annotated[list[str], append]


def dynamic(config: RunnableConfig) -> CompiledStateGraph[DynamicState, None, DynamicState, DynamicState]:
    """A graph built per run: one node named after configurable.nodeName."""
    name = config.get("configurable", {}).get("nodeName") or "default"
    return (
        StateGraph(DynamicState)
        .add_node(name, lambda _: {"node": name, "messages": [name]})
        .add_edge(START, name)
        .add_edge(name, END)
        .compile()
    )


Model = Literal["openai", "anthropic", "unknown"]


class RuntimeContext(TypedDict, total=False):
    model: Model


class RuntimeState(TypedDict, total=False):
    message: str
    model: Model


class RuntimeOutput(TypedDict, total=False):
    model: Model


def use_context(state: RuntimeState, runtime: Runtime[RuntimeContext]) -> dict[str, Any]:
    return {"model": (runtime.context or {}).get("model")}


simple_runtime = (
    StateGraph(RuntimeState, context_schema=RuntimeContext, output_schema=RuntimeOutput)
    .add_node("use_context", use_context)
    .add_edge(START, "use_context")
    .compile()
)


class ChildState(TypedDict, total=False):
    messages: Annotated[list[str], operator.add]
    child: Literal["child_one", "child_two"]


class ParentState(TypedDict, total=False):
    messages: Annotated[list[str], operator.add]
    parent: Literal["parent_one", "parent_two"]


class GrandParentState(TypedDict, total=False):
    messages: Annotated[list[str], operator.add]


def entered(name: str) -> Any:
    return lambda _: {"messages": [f"Entered {name} node"]}


def two_steps(state: type[Any], first: str, second: str, second_node: Any) -> Any:
    """START -> first (which says it was entered) -> second -> END."""
    return (
        StateGraph(state)
        .add_node(first, entered(first))
        .add_node(second, second_node)
        .add_edge(START, first)
        .add_edge(first, second)
        .add_edge(second, END)
        .compile()
    )


nested_child = two_steps(ChildState, "c_one", "c_two", entered("c_two"))
nested_parent = two_steps(ParentState, "p_one", "p_two", nested_child)
nested = two_steps(GrandParentState, "gp_one", "gp_two", nested_parent)


class WeatherState(MessagesState, total=False):
    city: str


class RouterState(MessagesState, total=False):
    route: Literal["weather", "other"]


def weather_node(state: WeatherState) -> dict[str, Any]:
    return {"messages": [AIMessage(content=f"It's sunny in {state['city']}!")]}


weather_graph = (
    StateGraph(WeatherState)
    .add_node("model_node", lambda _: {"city": "San Francisco"})
    .add_node("weather_node", weather_node)
    .add_edge(START, "model_node")
    .add_edge("model_node", "weather_node")
    .add_edge("weather_node", END)
    .compile(interrupt_before=["weather_node"])
)


def route(state: RouterState) -> Literal["weather_graph", "normal_llm_node"]:
    return "weather_graph" if state.get("route") == "weather" else "normal_llm_node"


weather = (
    StateGraph(RouterState)
    .add_node("router_node", lambda _: {"route": "weather"})
    .add_node("normal_llm_node", lambda _: {"messages": [AIMessage(content="Hello")]})
    .add_node("weather_graph", weather_graph)
    .add_edge(START, "router_node")
    .add_conditional_edges("router_node", route)
    .add_edge("weather_graph", END)
    .add_edge("normal_llm_node", END)
    .compile()
)
