"""The Python SDK's thread-centric streaming (client.threads.stream) against jetgraph.

Run by TestPythonThreadStream; JETGRAPH_URL names the server. Over each transport: a thread id
chosen by the caller that does not exist yet (the SDK watches its lifecycle before run.start),
a static interrupt (weather: interrupt_before) and a dynamic one (agent: interrupt()) seen and
answered through the SDK, and the values, messages and tool calls of runs.
"""

import asyncio
import os
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

URL = os.environ["JETGRAPH_URL"]
TIMEOUT = 30.0
Event = dict[str, Any]


def check(cond: bool, what: str) -> None:
    if not cond:
        sys.exit(f"FAIL: {what}")


def human(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def root_lifecycle(ev: Event) -> str | None:
    """The state a root lifecycle event announces, None for any other event."""
    params = ev.get("params") or {}
    if ev.get("method") != "lifecycle" or params.get("namespace"):
        return None
    return str((params.get("data") or {}).get("event"))


def ends(n: int) -> Callable[[list[Event]], bool]:
    """A stop condition: n runs have ended (completed, interrupted or failed)."""

    def done(events: list[Event]) -> bool:
        over = [e for e in events if root_lifecycle(e) in ("completed", "interrupted", "failed")]
        return len(over) >= n

    return done


async def collect(events: AsyncIterator[Event], done: Callable[[list[Event]], bool]) -> list[Event]:
    out: list[Event] = []
    async for ev in events:
        out.append(ev)
        if done(out):
            break
    return out


async def wait_interrupted(thread: Any) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while not thread.interrupted:
        check(loop.time() < deadline, "thread.interrupted never became true")
        await asyncio.sleep(0.05)


def asked(events: list[Event]) -> list[Event]:
    return [e for e in events if e.get("method") == "input.requested"]


async def static_interrupt(client: LangGraphClient, transport: str) -> None:
    """weather stops before weather_node: the run ends interrupted, the SDK sees an interrupt,
    and answering it continues the thread to its answer."""
    tid = str(uuid.uuid4())  # not created: the SDK opens its lifecycle watch on it at once
    async with client.threads.stream(tid, assistant_id="weather", transport=transport) as thread:
        raw = asyncio.create_task(collect(thread.events, ends(2)))
        await asyncio.sleep(0.2)
        started = await thread.run.start(input=human("weather in SF?"))
        check(bool(started.get("run_id")), f"run.start answered a run: {started}")
        await wait_interrupted(thread)
        check(len(thread.interrupts) == 1, f"one interrupt: {thread.interrupts}")
        interrupt = thread.interrupts[0]
        check(interrupt["namespace"] == [], f"the interrupt is at the root: {interrupt}")
        await thread.run.respond("go on")
        out = await thread.output.with_timeout(TIMEOUT)
        events = await asyncio.wait_for(raw, TIMEOUT)
    last = out["messages"][-1]
    check(last["content"] == "It's sunny in San Francisco!", f"the answered thread's output: {out}")
    lifecycles = [root_lifecycle(e) for e in events if root_lifecycle(e)]
    check(lifecycles == ["running", "interrupted", "running", "completed"], f"{transport} lifecycle: {lifecycles}")
    requests = asked(events)
    check(len(requests) == 1, f"one input.requested: {requests}")
    data = requests[0]["params"]["data"]
    check(data["interrupt_id"] == interrupt["interrupt_id"], f"the SDK's interrupt is the event's: {data}")
    check(data["payload"] == {"type": "static", "next": ["weather_graph"]}, f"static payload: {data}")
    values = [e for e in events if e.get("method") == "values"]
    check(all("__interrupt__" not in (e["params"]["data"] or {}) for e in values), "values without __interrupt__")


async def dynamic_interrupt(client: LangGraphClient) -> None:
    """agent calls interrupt(): answered through the SDK, the run goes on to stream its answers."""
    async with client.threads.stream(assistant_id="agent") as thread:
        raw = asyncio.create_task(collect(thread.events, ends(2)))
        await asyncio.sleep(0.2)
        await thread.run.start(input={**human("foo"), "interrupt": True})
        await wait_interrupted(thread)
        check(len(thread.interrupts) == 1 and thread.interrupts[0]["namespace"] == [], f"interrupts: {thread.interrupts}")
        streams: list[Any] = []

        async def read_messages() -> None:
            async for stream in thread.messages:
                streams.append(stream)

        reader = asyncio.create_task(read_messages())
        await asyncio.sleep(0.2)
        await thread.run.respond("yes")
        out = await thread.output.with_timeout(TIMEOUT)
        events = await asyncio.wait_for(raw, TIMEOUT)
        await asyncio.wait_for(reader, TIMEOUT)
        texts = [await s.text for s in streams]
    check([m["content"] for m in out["messages"]] == ["foo", "begin", "tool_call__begin", "end"], f"output: {out}")
    check(texts == ["begin", "end"], f"thread.messages texts: {texts}")
    requests = asked(events)
    check(len(requests) == 1 and requests[0]["params"]["data"]["payload"] == "i want to interrupt", f"input.requested: {requests}")
    lifecycles = [root_lifecycle(e) for e in events if root_lifecycle(e)]
    check(lifecycles == ["running", "interrupted", "running", "completed"], f"lifecycle: {lifecycles}")


async def tool_calls(client: LangGraphClient) -> None:
    """react's root tool node: thread.tool_calls sees the call, its output the tool message;
    thread.values the states of the run."""
    async with client.threads.stream(assistant_id="react") as thread:
        calls: list[Any] = []
        states: list[Any] = []

        async def read_calls() -> None:
            async for call in thread.tool_calls:
                calls.append(call)

        async def read_values() -> None:
            async for state in thread.values:
                states.append(state)

        readers = [asyncio.create_task(read_calls())]
        await asyncio.sleep(0.2)
        await thread.run.start(input=human("calculator: 2 + 3"))
        # thread.values reads the thread's state first: the thread exists once run.start answered.
        readers.append(asyncio.create_task(read_values()))
        out = await thread.output.with_timeout(TIMEOUT)
        await asyncio.wait_for(asyncio.gather(*readers), TIMEOUT)
        outputs = [await asyncio.wait_for(c.output, TIMEOUT) for c in calls]
    check([(c.name, c.namespace) for c in calls] == [("calculator", [])], f"tool calls: {[(c.name, c.namespace) for c in calls]}")
    tool = outputs[0]
    check(
        tool["type"] == "tool" and tool["status"] == "success" and tool["content"] == "5"
        and tool["tool_call_id"] == calls[0].tool_call_id,
        f"the call's output is its tool message: {tool}",
    )
    check(out["messages"][-1]["content"] == "calculator: 5", f"output: {out}")
    contents = [[m["content"] for m in st.get("messages", [])] for st in states]
    check(contents[-1:] == [["calculator: 2 + 3", "", "5", "calculator: 5"]], f"thread.values ends with the output: {contents}")


async def main() -> None:
    client = get_client(url=URL)
    for transport in ("sse", "websocket"):
        await static_interrupt(client, transport)
    await dynamic_interrupt(client)
    await tool_calls(client)


asyncio.run(main())
print("ok")
