"""Kills jetgraph's graph host (kill -9) while a hosted graph's run is in its slow second step;
the run must still end once, from its last checkpoint: its finished first step not run again.

Run by TestHostedPythonHostKilled and TestHostedTypeScriptHostKilled with the host's pid (the
graph "slow" is the same in both languages); JETGRAPH_URL names the server.
"""

import asyncio
import os
import signal
import sys

from langgraph_sdk import get_client

URL = os.environ["JETGRAPH_URL"]


def check(cond: bool, what: str) -> None:
    if not cond:
        sys.exit(f"FAIL: {what}")


async def main(host_pid: int) -> None:
    client = get_client(url=URL)
    thread = await client.threads.create()
    tid = thread["thread_id"]
    run = await client.runs.create(tid, "slow", input={"messages": [{"role": "user", "content": "go"}]})
    for _ in range(200):
        history = await client.threads.get_history(tid, limit=5)
        if any(h["next"] == ["slow"] for h in history):
            break
        await asyncio.sleep(0.05)
    else:
        sys.exit("FAIL: the run never reached its slow step")
    os.kill(host_pid, signal.SIGKILL)
    out = await client.runs.join(tid, run["run_id"])
    check([m["content"] for m in out["messages"]] == ["go", "first", "slow done"], f"the run's end: {out}")
    done = await client.runs.get(tid, run["run_id"])
    check(done["status"] == "success", f"run status: {done['status']}")
    item = await client.store.get_item(["executions"], tid)
    check(item is not None and item["value"] == {"first": 1}, f"the first step ran once: {item}")
    history = await client.threads.get_history(tid, limit=10)
    check([h["metadata"]["step"] for h in history] == [2, 1, 0, -1], f"one checkpoint a step: {[h['metadata'] for h in history]}")


asyncio.run(main(int(sys.argv[1])))
print("ok")
