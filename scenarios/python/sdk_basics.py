"""The official Python SDK's async and sync clients against jetgraph: the smallest round trip.

Run by TestPythonSDKBasics; JETGRAPH_URL names the server.
"""

import asyncio
import os
import sys

from langgraph_sdk import get_client, get_sync_client

URL = os.environ["JETGRAPH_URL"]


def check(cond: bool, what: str) -> None:
    if not cond:
        sys.exit(f"FAIL: {what}")


async def main_async() -> None:
    client = get_client(url=URL)
    assistants = await client.assistants.search(graph_id="echo")
    check(len(assistants) >= 1, f"search found the echo system assistant: {assistants}")
    thread = await client.threads.create(metadata={"lang": "python"})
    out = await client.runs.wait(
        thread["thread_id"], "echo", input={"messages": [{"role": "user", "content": "hi"}]}
    )
    check(isinstance(out, dict), f"wait answered the state: {out!r}")
    last = out["messages"][-1]
    check(last["type"] == "ai" and last["content"] == "echo: hi", f"echo answered: {last}")


def main_sync() -> None:
    client = get_sync_client(url=URL)
    thread = client.threads.create()
    modes = []
    for part in client.runs.stream(
        thread["thread_id"], "echo", input={"messages": [{"role": "user", "content": "yo"}]},
        stream_mode="values",
    ):
        modes.append(part.event)
    check(modes[0] == "metadata" and "values" in modes, f"stream events: {modes}")
    state = client.threads.get_state(thread["thread_id"])
    check(state["values"]["messages"][-1]["content"] == "echo: yo", f"state: {state}")


asyncio.run(main_async())
main_sync()
print("ok")
