"""The example agents (Go: engine/graphs/examples_agent.go) as LangGraph graphs in Python.

agent answers "begin", "end" in turn through LangChain's fake chat model, loops through a tool
node until it answers "end", and uses the store; agent_simple reaches its tool with Send. The
model's turn is the number of AI messages in the state, as in the Go graphs, so answers follow the
thread wherever and whenever it runs (a model kept per thread in memory would not survive a host
restart).
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.store.base import BaseStore
from langgraph.types import Send, interrupt
from typing_extensions import TypedDict

SHARED_STATE = ("sharedState", "data")
INPUTTED_STATE = ("inputtedState", "data")


class Steps(TypedDict):
    steps: int
    ms: float


class Output(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    sharedStateValue: str | None
    interrupt: bool
    keyOne: str | None
    keyTwo: str | None
    sleep: float | Steps | None


class State(Output, total=False):
    sharedStateFromStoreConfig: dict[str, Any] | None


async def fake_answer(messages: list[AnyMessage], answers: list[str]) -> BaseMessage:
    """The fake model's answer in turn: answers[number of AI answers so far % len(answers)]."""
    turn = sum(1 for m in messages if m.type == "ai") % len(answers)
    return await FakeListChatModel(responses=[answers[turn]]).ainvoke(messages)


async def agent_sleep(sleep: float | Steps) -> None:
    if isinstance(sleep, (int, float)):
        await asyncio.sleep(sleep)
        return
    write = get_stream_writer()
    for step in range(int(sleep["steps"])):
        write({"type": "sleep", "step": step})
        await asyncio.sleep(sleep["ms"] / 1000)


async def agent(state: State, config: RunnableConfig, *, store: BaseStore) -> dict[str, Any]:
    if state.get("interrupt"):
        interrupt("i want to interrupt")
    messages = state["messages"]
    if state.get("sleep") is not None and messages and messages[-1].type == "human":
        await agent_sleep(state["sleep"])  # type: ignore[arg-type]
    answer = await fake_answer(messages, ["begin", "end"])
    if not state.get("sharedStateFromStoreConfig"):
        await store.aput(SHARED_STATE, "user_id", {"id": config.get("configurable", {}).get("user_id")})
    return {"interrupt": False, "messages": [answer]}


async def tool(state: State, *, store: BaseStore) -> dict[str, Any]:
    item = await store.aget(SHARED_STATE, "user_id")
    shared = item.value if item else None
    last = state["messages"][-1]
    reply = ToolMessage(content=f"tool_call__{last.content}", tool_call_id="tool_call_id")
    return {"messages": [reply], "sharedStateFromStoreConfig": shared}


async def check_shared_state(state: State, *, store: BaseStore) -> dict[str, Any]:
    item = await store.aget(INPUTTED_STATE, "my_key")
    if item is None or not item.value.get("isTrue"):
        raise ValueError("Value is not true")
    return {}


def after_agent(state: State) -> str:
    first, last = state["messages"][0].content, state["messages"][-1].content
    if first == "should_end":
        return END
    if first == "___check_state_value":
        return "checkSharedState"
    return END if last == "end" else "tool"


graph = (
    StateGraph(State, output_schema=Output)
    .add_node("agent", agent)
    .add_node("tool", tool)
    .add_node("checkSharedState", check_shared_state)
    .add_edge(START, "agent")
    .add_conditional_edges("agent", after_agent, ["tool", "checkSharedState", END])
    .add_edge("tool", "agent")
    .add_edge("checkSharedState", END)
    .compile()
)


class SimpleState(TypedDict, total=False):
    key_one: str
    key_two: str
    sleep: float
    messages: Annotated[list[AnyMessage], add_messages]


async def simple_agent(state: SimpleState, config: RunnableConfig, *, store: BaseStore) -> dict[str, Any]:
    configurable = config.get("configurable", {})
    header = configurable.get("x-configurable-header")
    if header:
        return {"messages": [AIMessage(content=f"end: {header}")]}
    user = configurable.get("langgraph_auth_user_id") or "ALL"
    if await store.aget((user,), "key_one") is None:
        await store.aput((user,), "key_one", {"text": state["messages"][-1].content})
    return {"messages": [await fake_answer(state["messages"], ["begin", "end\u2028"])]}


async def simple_tool(message: AnyMessage) -> dict[str, Any]:
    return {"messages": [ToolMessage(content=f"tool_call__{message.content}", tool_call_id="tool_call_id")]}


def simple_after_agent(state: SimpleState) -> Send | str:
    last = state["messages"][-1]
    return END if str(last.content).startswith("end") else Send("tool", last)


simple_graph = (
    StateGraph(SimpleState)
    .add_node("agent", simple_agent)
    # The library types a node's input as the state; this one gets what the Send carries.
    .add_node("tool", simple_tool)  # type: ignore[arg-type]
    .add_edge(START, "agent")
    .add_conditional_edges("agent", simple_after_agent, ["tool", END])
    .add_edge("tool", "agent")
    .compile()
)
