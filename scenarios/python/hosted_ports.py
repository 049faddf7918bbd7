"""Runs the example graphs' cases through the official Python SDK and prints what they answered.

Usage: hosted_ports.py PREFIX. Every case runs on the graphs named PREFIX + the example's id ("" for
jetgraph's Go examples, "py_" and "ts_" for their ports in scenarios/hosted/ports), so the same
script drives the Go graphs, the hosted ports and the reference servers alike. The answers are
normalised (ids become <id:N> by first appearance, times <time>) and printed as one JSON object,
case name to transcript, on the last line; TestHostedPorts compares the transcripts.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

URL = os.environ["JETGRAPH_URL"]

# Opaque ids: UUIDs (alone or inside a checkpoint namespace), LangChain's run-based message ids
# (LangGraph.js names a node's output messages after the run: <run>-out-<i>, <run>-tool-<call>) and
# interrupt ids (32 hex digits).
OPAQUE = re.compile(
    r"(?:lc_run--|run-)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"(?:-\d+|-out-\d+|-tool-[\w-]+)?|\b[0-9a-f]{32}\b"
)
# The user the agent cases run for (the agent writes its id to the store).
ADA = {"configurable": {"user_id": "ada"}}
TIMES = {"created_at", "updated_at", "ts"}
# What a messages-tuple event's metadata is compared by: the rest names the server and model.
MESSAGE_METADATA = ("langgraph_node", "langgraph_step", "langgraph_checkpoint_ns")
# What a message is compared by, when not null. The rest is the model's (jetgraph's Go fake reports
# a model name, usage and a finish reason, LangChain's fakes none) or the language's (Python's
# ToolMessage has an artifact, its chunks a chunk_position; LangGraph.js leaves unset fields out).
MESSAGE_FIELDS = ("type", "content", "id", "name", "tool_calls", "tool_call_id", "status")
# A tool message's status when it does not say (LangChain.js leaves it unset).
TOOL_OK = "success"
MESSAGE_TYPES = {"human", "ai", "tool", "system", "AIMessageChunk"}
# The prefix of the Go fake model's message ids.
GO_FAKE_ID = "fake-"


class Normaliser:
    """Replaces opaque values by placeholders numbered by first appearance within one case."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def opaque(self, m: re.Match[str]) -> str:
        return self.seen.setdefault(m.group(0), f"<id:{len(self.seen)}>")

    def __call__(self, v: Any, key: str = "") -> Any:
        if isinstance(v, dict) and v.get("type") in MESSAGE_TYPES and "content" in v:
            v = {k: v[k] for k in MESSAGE_FIELDS if v.get(k) is not None}
            if v["type"] == "tool":
                v.setdefault("status", TOOL_OK)
            if v["type"] == "AIMessageChunk":  # LangGraph.js calls a streamed chunk "ai"
                v["type"] = "ai"
            if isinstance(v.get("id"), str):
                v["id"] = v["id"].removeprefix(GO_FAKE_ID)
        if isinstance(v, dict):  # in key order: placeholders must not follow a server's key order
            return {k: self(v[k], k) for k in sorted(v)}
        if isinstance(v, list):
            return [self(x) for x in v]
        if isinstance(v, str):
            return "<time>" if key in TIMES else OPAQUE.sub(self.opaque, v)
        return v


def event(part: Any) -> list[Any]:
    """A stream part as [event, data], a messages-tuple's metadata cut to what graphs decide, an
    update's messages without their ids: a node's update shows the ids the node gave, and Python's
    add_messages gives one only when it folds the update into the state (which the values show)."""
    data = part.data
    if part.event == "messages" and isinstance(data, list) and len(data) == 2:
        data = [data[0], {k: data[1].get(k) for k in MESSAGE_METADATA}]
    if part.event.startswith("updates") and isinstance(data, dict):
        data = {node: without_ids(u) for node, u in data.items()}
    return [part.event, data]


def without_ids(update: Any) -> Any:
    if not isinstance(update, dict) or not isinstance(update.get("messages"), list):
        return update
    return {
        **update,
        "messages": [
            {k: v for k, v in m.items() if k != "id"} if isinstance(m, dict) else m for m in update["messages"]
        ],
    }


async def stream(client: LangGraphClient, thread: str | None, graph: str, **kw: Any) -> list[Any]:
    """The run's events but its metadata (ids) and jetgraph's closing end event (which neither
    reference server sends)."""
    return [event(p) async for p in client.runs.stream(thread, graph, **kw) if p.event not in ("metadata", "end")]


def shape(state: dict[str, Any]) -> dict[str, Any]:
    """What a thread state is compared by."""
    return {
        "values": state["values"],
        "next": state["next"],
        "tasks": [
            {
                "name": t["name"],
                "interrupts": [i["value"] for i in t.get("interrupts", [])],
                "has_state": t.get("state") is not None,
            }
            for t in state["tasks"]
        ],
        "step": state["metadata"].get("step"),
        "source": state["metadata"].get("source"),
        "has_parent": state.get("parent_checkpoint") is not None,
        "interrupts": [i["value"] for i in state.get("interrupts") or []],
    }


async def history(client: LangGraphClient, thread: str) -> list[Any]:
    """The thread's history, newest first, by step, source and next."""
    return [
        [h["metadata"].get("step"), h["metadata"].get("source"), h["next"]]
        for h in await client.threads.get_history(thread, limit=20)
    ]


def human(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


async def thread(client: LangGraphClient) -> str:
    return str((await client.threads.create())["thread_id"])


async def echo(c: LangGraphClient, g: str) -> Any:
    t = await thread(c)
    waited = await c.runs.wait(t, g + "echo", input=human("hi"))
    t2 = await thread(c)
    streamed = await stream(c, t2, g + "echo", input=human("hi"), stream_mode=["values", "updates", "messages-tuple"])
    return {
        "wait": waited,
        "state": shape(await c.threads.get_state(t)),
        "history": await history(c, t),
        "stream": streamed,
    }


async def agent(c: LangGraphClient, g: str) -> Any:
    t = await thread(c)
    streamed = await stream(
        c, t, g + "agent", input=human("foo"), config=ADA, stream_mode=["values", "updates", "messages-tuple"]
    )
    second = await c.runs.wait(t, g + "agent", input=human("bar"), config=ADA)
    item = await c.store.get_item(["sharedState", "data"], "user_id")
    return {
        "stream": streamed,
        "state": shape(await c.threads.get_state(t)),
        "history": await history(c, t),
        "second": second,
        "store": item["value"],
    }


async def agent_interrupt(c: LangGraphClient, g: str) -> Any:
    t = await thread(c)
    waited = await c.runs.wait(t, g + "agent", input={**human("foo"), "interrupt": True}, config=ADA)
    state = shape(await c.threads.get_state(t))
    status = (await c.threads.get(t))["status"]
    resumed = await stream(c, t, g + "agent", command={"resume": "go on"}, stream_mode="updates", config=ADA)
    return {
        "wait": waited,
        "state": state,
        "status": status,
        "resumed": resumed,
        "final": shape(await c.threads.get_state(t)),
        "history": await history(c, t),
    }


async def agent_custom(c: LangGraphClient, g: str) -> Any:
    return await stream(
        c, await thread(c), g + "agent", input={**human("foo"), "sleep": {"steps": 2, "ms": 10}}, stream_mode="custom"
    )


async def agent_error(c: LangGraphClient, g: str) -> Any:
    t = await thread(c)
    parts = await stream(c, t, g + "agent", input=human("___check_state_value"), stream_mode="updates")
    # The error's class is the language's own (Error in TypeScript, ValueError here); its message is
    # the graph's.
    errors = [d.get("message") for e, d in parts if e == "error"]
    return {
        "updates": [d for e, d in parts if e != "error"],
        "error": errors,
        "status": (await c.threads.get(t))["status"],
    }


async def agent_branches(c: LangGraphClient, g: str) -> Any:
    """The agent's other routes: a first message "should_end" ends after one answer; the check
    node passes once the store holds what it checks (removed again: agent_error needs it gone)."""
    ended = await c.runs.wait(None, g + "agent", input=human("should_end"), config=ADA)
    await c.store.put_item(["inputtedState", "data"], "my_key", {"isTrue": True})
    try:
        checked = await c.runs.wait(None, g + "agent", input=human("___check_state_value"), config=ADA)
    finally:
        await c.store.delete_item(["inputtedState", "data"], "my_key")
    return {"ended": ended, "checked": checked}


async def agent_simple(c: LangGraphClient, g: str) -> Any:
    t = await thread(c)
    streamed = await stream(c, t, g + "agent_simple", input=human("foo"), stream_mode=["updates"])
    return {"stream": streamed, "state": shape(await c.threads.get_state(t)), "history": await history(c, t)}


async def nested(c: LangGraphClient, g: str) -> Any:
    t = await thread(c)
    streamed = await stream(
        c, t, g + "nested", input={"messages": ["start"]}, stream_mode="updates", stream_subgraphs=True
    )
    return {"stream": streamed, "state": shape(await c.threads.get_state(t)), "history": await history(c, t)}


async def subgraphs(c: LangGraphClient, g: str) -> Any:
    # By the system assistant's id: the Python reference takes no graph id here.
    ids = {a["graph_id"]: a["assistant_id"] for a in await c.assistants.search(limit=100)}
    return {
        "nested": sorted(await c.assistants.get_subgraphs(ids[g + "nested"], recurse=True)),
        "weather": sorted(await c.assistants.get_subgraphs(ids[g + "weather"])),
    }


async def weather(c: LangGraphClient, g: str) -> Any:
    t = await thread(c)
    waited = await c.runs.wait(t, g + "weather", input=human("what's the weather in sf"))
    state = await c.threads.get_state(t, subgraphs=True)
    sub = state["tasks"][0]["state"]
    await c.threads.update_state(t, {"city": "LA"}, checkpoint=sub["checkpoint"])
    resumed = await c.runs.wait(t, g + "weather", input=None)
    return {
        "wait": waited,
        "state": shape(state),
        "sub": shape(sub),
        "resumed": resumed,
        "status": (await c.threads.get(t))["status"],
        "history": await history(c, t),
    }


async def error(c: LangGraphClient, g: str) -> Any:
    t = await thread(c)
    parts = await stream(c, t, g + "error", input=human("hi"), stream_mode=["values", "updates"])
    runs = await c.runs.list(t)
    return {"stream": parts, "run": runs[0]["status"], "thread": (await c.threads.get(t))["status"]}


async def delay(c: LangGraphClient, g: str) -> Any:
    return await c.runs.wait(None, g + "delay", input={"messages": [], "delay": 50})


async def delay_cancelled(c: LangGraphClient, g: str) -> Any:
    """A long node cancelled mid-run: the run ends promptly, interrupted, and the thread keeps its input."""
    t = await thread(c)
    run = await c.runs.create(t, g + "delay", input={**human("wait"), "delay": 20000})
    deadline = time.monotonic() + 30
    while (await c.runs.get(t, run["run_id"]))["status"] != "running" and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)  # into the node's sleep
    started = time.monotonic()
    await c.runs.cancel(t, run["run_id"], wait=True)
    return {
        "prompt": time.monotonic() - started < 10,
        "run": (await c.runs.get(t, run["run_id"]))["status"],
        "thread": (await c.threads.get(t))["status"],
        "state": shape(await c.threads.get_state(t)),
    }


async def dynamic(c: LangGraphClient, g: str) -> Any:
    named = await stream(
        c,
        None,
        g + "dynamic",
        input={},
        stream_mode=["updates", "values"],
        config={"configurable": {"nodeName": "picked"}},
    )
    default = await c.runs.wait(None, g + "dynamic", input={})
    return {"named": named, "default": default}


async def simple_runtime(c: LangGraphClient, g: str) -> Any:
    return await c.runs.wait(None, g + "simple_runtime", input={"message": "hi"}, context={"model": "openai"})


async def schema_graphs(c: LangGraphClient, g: str) -> Any:
    # One run each: a second run on the thread fails in LangGraph.js (a ZodError, count NaN), on the
    # JS reference server as here.
    return {
        name: await c.runs.wait(None, g + name, input={})
        for name in ("state_schema_graph", "zod_registry_graph", "plain_zod_graph")
    }


GRAPHS = (
    "echo",
    "agent",
    "agent_simple",
    "nested",
    "weather",
    "error",
    "delay",
    "dynamic",
    "simple_runtime",
    "state_schema_graph",
    "zod_registry_graph",
    "plain_zod_graph",
)


async def state_keys(c: LangGraphClient, g: str) -> Any:
    """The keys of each graph's state schema (the schemas' details are each library's own)."""
    ids = {a["graph_id"]: a["assistant_id"] for a in await c.assistants.search(limit=100)}
    out = {}
    for name in GRAPHS:
        schemas = await c.assistants.get_schemas(ids[g + name])
        out[name] = sorted((schemas.get("state_schema") or {}).get("properties", {}))
    return out


CASES: dict[str, Callable[[LangGraphClient, str], Awaitable[Any]]] = {
    f.__name__: f
    for f in (
        echo,
        agent,
        agent_interrupt,
        agent_custom,
        agent_error,
        agent_branches,
        agent_simple,
        nested,
        subgraphs,
        state_keys,
        weather,
        error,
        delay,
        delay_cancelled,
        dynamic,
        simple_runtime,
        schema_graphs,
    )
}


async def main(prefix: str, only: list[str]) -> None:
    client = get_client(url=URL)
    names = only or list(CASES)
    out = {}
    for n in names:  # one case at a time: the agent cases share a store item
        try:
            out[n] = Normaliser()(await CASES[n](client, prefix))
        except Exception as e:  # noqa: BLE001 - a failed case is an answer to compare too
            out[n] = {"failed": f"{type(e).__name__}: {e}"}
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "", sys.argv[2:]))
