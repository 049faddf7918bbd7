"""The graphs of the hosted-project scenarios, a langgraph.json using env as a .env file,
dependencies, store.index and checkpointer.ttl.

notes: greets with the .env file's GREETING through ./libs's greetings module, and keeps the
message as a note in the store (embedded by the store's index on its "text" field).

draining: a first step, a slow one and a long last one, each counting its executions in the
store once it is done (the slow one also when it starts), for the scenarios that stop jetgraph (SIGTERM) during the slow step.
The slow step ends once the file DRAIN_GATE names exists (3 s without one): the scenarios open it
when they have seen the run in that step and stopped jetgraph, however loaded the machine.
"""

from __future__ import annotations

import asyncio
import os
from typing import Annotated, Any

from greetings import shout
from langchain_core.messages import AIMessage, AnyMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def greet(state: State, config: RunnableConfig) -> dict[str, Any]:
    text = shout(f"{os.environ['GREETING']} {state['messages'][-1].content}")
    get_store().put(("notes",), str(config["configurable"]["thread_id"]), {"text": text})
    return {"messages": [AIMessage(content=text)]}


notes = StateGraph(State)
notes.add_node("greet", greet)
notes.add_edge(START, "greet")
notes.add_edge("greet", END)
graph = notes.compile()


async def _count(config: RunnableConfig, step: str) -> None:
    store, thread = get_store(), str(config["configurable"]["thread_id"])
    item = await store.aget(("executions",), thread)
    counts = dict(item.value) if item else {}
    counts[step] = counts.get(step, 0) + 1
    await store.aput(("executions",), thread, counts, index=False)


async def first(state: State, config: RunnableConfig) -> dict[str, Any]:
    await _count(config, "first")
    return {"messages": [AIMessage(content="first")]}


async def _gate() -> None:
    """Waits for the file DRAIN_GATE names, for a minute at most, or 3 s when it names none."""
    gate = os.environ.get("DRAIN_GATE")
    if not gate:
        await asyncio.sleep(3)
        return
    for _ in range(1200):
        if os.path.exists(gate):
            return
        await asyncio.sleep(0.05)


async def slow(state: State, config: RunnableConfig) -> dict[str, Any]:
    await _count(config, "slow_started")
    await _gate()  # cancelled at once when jetgraph stops the run
    await _count(config, "slow")
    return {"messages": [AIMessage(content="slow done")]}


async def last(state: State, config: RunnableConfig) -> dict[str, Any]:
    await asyncio.sleep(12)
    await _count(config, "last")
    return {"messages": [AIMessage(content="last done")]}


drain = StateGraph(State)
drain.add_node("first", first)
drain.add_node("slow", slow)
drain.add_node("last", last)
drain.add_edge(START, "first")
drain.add_edge("first", "slow")
drain.add_edge("slow", "last")
drain.add_edge("last", END)
draining = drain.compile()
