"""The four multitask strategies through the official Python SDK's async client: a second run
on a thread whose first run is still going is refused (reject), stops the first and keeps what
it wrote (interrupt), stops the first and drops it and its writes (rollback), or waits its turn
(enqueue).

Run by TestPythonSDKMultitask; JETGRAPH_URL names the server.
"""

import asyncio
import os

from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import ConflictError, NotFoundError

from checks import check, texts, until_async

URL = os.environ["JETGRAPH_URL"]
SLOW = {"messages": [{"role": "user", "content": "slow"}], "delay": 60000}


async def busy_thread(client: LangGraphClient) -> tuple[str, str]:
    """A thread with one finished echo run, then a slow run that is inside its node."""
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(tid, "echo", input={"messages": [{"role": "user", "content": "before"}]})
    run = await client.runs.create(tid, "delay", input=SLOW, durability="sync")

    async def inside() -> bool:
        state = await client.threads.get_state(tid)
        running = await status(client, tid, run["run_id"]) == "running"
        return running and list(state["next"]) == ["long_running"]

    await until_async("the slow run to enter its node", inside)
    return tid, run["run_id"]


async def status(client: LangGraphClient, tid: str, rid: str) -> str:
    return str((await client.runs.get(tid, rid))["status"])


async def reject(client: LangGraphClient) -> None:
    tid, first = await busy_thread(client)
    try:
        await client.runs.create(
            tid, "echo", input={"messages": [{"role": "user", "content": "no"}]}, multitask_strategy="reject"
        )
        check(False, "reject: a second run on a busy thread was accepted")
    except ConflictError as e:
        check("already running a task" in str(e), f"reject's message: {e}")
    check([r["run_id"] for r in await client.runs.list(tid, status="running")] == [first], "only the first runs")
    check(len(await client.runs.list(tid)) == 2, "no run was added")
    await client.runs.cancel(tid, first, wait=True)


async def interrupt(client: LangGraphClient) -> None:
    tid, first = await busy_thread(client)
    second = await client.runs.create(
        tid, "echo", input={"messages": [{"role": "user", "content": "now"}]}, multitask_strategy="interrupt"
    )
    check(second["multitask_strategy"] == "interrupt", f"the run's strategy: {second.get('multitask_strategy')}")
    out = await client.runs.join(tid, second["run_id"])
    check(await status(client, tid, first) == "interrupted", "interrupt: the first run is interrupted")
    check(await status(client, tid, second["run_id"]) == "success", "interrupt: the second run succeeded")
    # The first run's input stays in the thread; its node never answered.
    check(texts(out) == ["before", "echo: before", "slow", "now", "echo: now"], f"interrupt: state {texts(out)}")


async def rollback(client: LangGraphClient) -> None:
    tid, first = await busy_thread(client)
    second = await client.runs.create(
        tid, "echo", input={"messages": [{"role": "user", "content": "instead"}]}, multitask_strategy="rollback"
    )
    out = await client.runs.join(tid, second["run_id"])
    try:
        await client.runs.get(tid, first)
        check(False, "rollback: the first run is still there")
    except NotFoundError:
        pass
    check(texts(out) == ["before", "echo: before", "instead", "echo: instead"], f"rollback: state {texts(out)}")
    check([r["run_id"] for r in await client.runs.list(tid)][0] == second["run_id"], "rollback: the newest run")


async def enqueue(client: LangGraphClient) -> None:
    tid = (await client.threads.create())["thread_id"]
    first = await client.runs.create(
        tid, "delay", input={"messages": [{"role": "user", "content": "one"}], "delay": 2000}
    )
    second = await client.runs.create(
        tid, "echo", input={"messages": [{"role": "user", "content": "two"}]}, multitask_strategy="enqueue"
    )
    check(second["status"] == "pending", f"enqueue: the second run waits: {second['status']}")
    check(await status(client, tid, second["run_id"]) == "pending", "enqueue: pending while the first runs")
    out = await client.runs.join(tid, second["run_id"])
    check(await status(client, tid, first["run_id"]) == "success", "enqueue: the first run finished")
    check(
        texts(out) == ["one", "finished after 2000ms", "two", "echo: two"], f"enqueue: both ran in order: {texts(out)}"
    )
    # A stream of an enqueued run waits for its turn too.
    third = []
    async for part in client.runs.stream(
        tid,
        "echo",
        input={"messages": [{"role": "user", "content": "three"}]},
        multitask_strategy="enqueue",
        stream_mode="values",
    ):
        third.append(part)
    last = [p.data for p in third if p.event == "values"][-1]
    check(texts(last)[-2:] == ["three", "echo: three"], f"a streamed enqueued run: {texts(last)}")


async def main() -> None:
    async with get_client(url=URL, api_key=None) as client:
        await reject(client)
        await interrupt(client)
        await rollback(client)
        await enqueue(client)


asyncio.run(main())
print("ok")
