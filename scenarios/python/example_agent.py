"""The official Python SDK against the Python example project (scenarios/examples/python-agent).

Run by TestExamplePythonAgent; JETGRAPH_URL names the server. The agent answers about the
weather: its model streams tokens and calls get_weather, an interrupt asks before the call, the
tool runs in a subgraph, and the user's city comes from the store.
"""

import asyncio
import os
from typing import Any

from langgraph_sdk import get_client
from langgraph_sdk.schema import Command

from checks import check

URL = os.environ["JETGRAPH_URL"]
ANSWER = "In Paris it is sunny, 21 °C."


async def stream(client: Any, tid: str | None, **kwargs: Any) -> list[tuple[str, Any]]:
    parts = []
    async for p in client.runs.stream(
        tid, "agent", stream_mode=["messages-tuple", "updates"], stream_subgraphs=True, **kwargs
    ):
        check(p.event != "error", f"the stream failed: {p.data}")
        parts.append((p.event, p.data))
    return parts


def tokens(parts: list[tuple[str, Any]]) -> list[str]:
    """The AI's token chunks of the parent graph's messages events."""
    return [
        d[0]["content"] for e, d in parts if e == "messages" and d[0]["type"] == "AIMessageChunk" and d[0]["content"]
    ]


async def main() -> None:
    client = get_client(url=URL)
    check([a["graph_id"] for a in await client.assistants.search(limit=100)] == ["agent"], "the config's one graph")

    # The store: what the agent remembers of ada.
    await client.store.put_item(["users", "ada"], "memory", {"city": "Paris"})
    ada = {"user_id": "ada"}

    # A question without a city: the model calls the tool with ada's city, read from the store,
    # and the run stops before the call.
    tid = (await client.threads.create())["thread_id"]
    parts = await stream(
        client, tid, input={"messages": [{"role": "user", "content": "What is the weather?"}]}, context=ada
    )
    calls = [c for e, d in parts if e == "messages" for c in d[0].get("tool_calls") or []]
    check(
        [(c["name"], c["args"]) for c in calls] == [("get_weather", {"city": "Paris"})],
        f"the model's tool call: {parts}",
    )
    asked = [d["__interrupt__"] for e, d in parts if e == "updates" and "__interrupt__" in d]
    check(
        len(asked) == 1 and asked[0][0]["value"]["tool_calls"][0]["args"] == {"city": "Paris"},
        f"the interrupt: {parts}",
    )
    state = await client.threads.get_state(tid)
    check(state["next"] == ["approve"], f"the thread waits at approve: {state['next']}")
    check(state["tasks"][0]["interrupts"][0]["id"] == asked[0][0]["id"], f"the task's interrupt: {state['tasks']}")
    check((await client.threads.get(tid))["status"] == "interrupted", "the thread is interrupted")

    # Approved: the tool runs in the subgraph, then the answer streams token by token.
    parts = await stream(client, tid, command=Command(resume="yes"), context=ada)
    inner = [(e, d) for e, d in parts if e.startswith("updates|tools:")]
    check(len(inner) == 1 and "run_tools" in inner[0][1], f"the subgraph's step under the tools task: {parts}")
    tool = [d[0] for e, d in parts if e.startswith("messages|tools:")]
    check([m["content"] for m in tool] == ["sunny, 21 °C"], f"the tool's message from the subgraph: {tool}")
    got = tokens(parts)
    check(len(got) >= 5 and "".join(got) == ANSWER, f"the answer's token chunks: {got}")
    values = (await client.threads.get_state(tid))["values"]
    check([m["type"] for m in values["messages"]] == ["human", "ai", "tool", "ai"], f"the messages: {values}")
    check(values["messages"][-1]["content"] == ANSWER, f"the last message: {values['messages'][-1]}")
    check((await client.threads.get(tid))["status"] == "idle", "the thread is idle")

    # Declined: no tool runs, the model says so.
    tid = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(tid, "agent", input={"messages": [{"role": "user", "content": "Weather in Tokyo?"}]})
    check(out["__interrupt__"][0]["value"]["tool_calls"][0]["args"] == {"city": "Tokyo"}, f"the city asked: {out}")
    out = await client.runs.wait(tid, "agent", command=Command(resume="no"))
    check(out["messages"][-1]["content"] == "Alright, I did not look it up.", f"declined: {out['messages']}")
    check(
        out["messages"][-2]["type"] == "tool" and out["messages"][-2]["status"] == "error",
        f"declined: {out['messages']}",
    )

    # Another user, nothing remembered: the model asks for the city and calls nothing.
    out = await client.runs.wait(
        None,
        "agent",
        input={"messages": [{"role": "user", "content": "What is the weather?"}]},
        context={"user_id": "bo"},
    )
    check("__interrupt__" not in out and out["messages"][-1]["content"].startswith("Which city?"), f"bo: {out}")
    print("ok")


asyncio.run(main())
