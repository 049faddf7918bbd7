"""What the Python reference server answered, asked the same by the official Python SDK.

Run by TestPythonMatchesTheReference with one case name; each case asserts what the reference
(langgraph-api 0.16.7, langgraph 1.2.24, langchain-core 1.8.3) answered the same script on an
equivalent graph. JETGRAPH_URL names the server.
"""

import asyncio
import os
import sys
from typing import Any

from langgraph_sdk import get_client

URL = os.environ["JETGRAPH_URL"]


def check(cond: bool, what: str) -> None:
    if not cond:
        sys.exit(f"FAIL: {what}")


async def cancel_mid_node() -> None:
    """A run cancelled (action interrupt) while its node runs: the run and the thread are
    "interrupted", the node is next, and the thread has no interrupts."""
    c = get_client(url=URL)
    th = await c.threads.create()
    tid = th["thread_id"]
    run = await c.runs.create(tid, "delay", input={"delay": 3000, "messages": [{"role": "user", "content": "go"}]})
    for _ in range(50):
        if (await c.runs.get(tid, run["run_id"]))["status"] == "running":
            break
        await asyncio.sleep(0.1)
    await asyncio.sleep(0.3)
    await c.runs.cancel(tid, run["run_id"], wait=True, action="interrupt")
    r = await c.runs.get(tid, run["run_id"])
    t = await c.threads.get(tid)
    st = await c.threads.get_state(tid)
    got = {"run": r["status"], "thread": t["status"], "next": st["next"], "interrupts": t.get("interrupts")}
    want = {"run": "interrupted", "thread": "interrupted", "next": ["long_running"], "interrupts": {}}
    check(got == want, f"after a cancel mid-node {got}, the reference {want}")


async def message_keys() -> None:
    """Messages in a thread's state carry name null and no example key; AI messages their
    tool-call lists."""
    c = get_client(url=URL)
    th = await c.threads.create()
    await c.runs.wait(th["thread_id"], "echo", input={"messages": [{"role": "user", "content": "hi"}]})
    st = await c.threads.get_state(th["thread_id"])
    human, ai = st["values"]["messages"]
    check(sorted(human) == ["additional_kwargs", "content", "id", "name", "response_metadata", "type"],
          f"human message keys {sorted(human)}")
    check(human["name"] is None and ai["name"] is None, f"names {human['name']!r} {ai['name']!r}")
    check("example" not in ai and ai["tool_calls"] == [] and ai["invalid_tool_calls"] == [], f"ai message {ai}")


async def interrupt_values() -> None:
    """A run that interrupts streams, in values and updates modes: the input state, an update
    {__interrupt__}, and a last values chunk with the state and __interrupt__."""
    c = get_client(url=URL)
    th = await c.threads.create()
    chunks: list[Any] = []
    async for p in c.runs.stream(th["thread_id"], "agent", stream_mode=["values", "updates"],
                                 input={"messages": [{"role": "user", "content": "x"}], "interrupt": True}):
        if p.event in ("values", "updates"):
            chunks.append([p.event, sorted(p.data)])
    want = [["values", ["interrupt", "messages"]], ["updates", ["__interrupt__"]],
            ["values", ["__interrupt__", "interrupt", "messages"]]]
    check(chunks == want, f"chunks {chunks}, the reference {want}")


CASES = {"cancel_mid_node": cancel_mid_node, "message_keys": message_keys, "interrupt_values": interrupt_values}

asyncio.run(CASES[sys.argv[1]]())
print("ok")
