"""The official Python SDK against a Go program with an auth handler of its own (cli.Program's
Auth: scenarios/examples/go-auth, tokens to users, owners.Rules): no token is a 401, and two users
each see only their own threads, runs, assistants, crons and store namespace; the other's ids are
404s (or None), never their content.

Run by TestGoAuthHandler; JETGRAPH_URL names the server, TOKEN_A and TOKEN_B two users' tokens and
USER_A and USER_B their identities.
"""

import asyncio
import os
import sys
from collections.abc import Awaitable
from typing import Any

import httpx
from langgraph_sdk import get_client

URL = os.environ["JETGRAPH_URL"]
TOKEN_A, TOKEN_B = os.environ["TOKEN_A"], os.environ["TOKEN_B"]
USER_A, USER_B = os.environ["USER_A"], os.environ["USER_B"]
INPUT = {"messages": [{"role": "user", "content": "hi"}]}


def check(cond: bool, what: str) -> None:
    if not cond:
        sys.exit(f"FAIL: {what}")


def as_(token: str | None) -> Any:
    return get_client(url=URL, api_key=None, headers={"Authorization": f"Bearer {token}"} if token else None)


async def status(call: Awaitable[Any]) -> int:
    """The status a call is answered with, 200 when it succeeds."""
    try:
        await call
    except httpx.HTTPStatusError as e:
        return e.response.status_code
    return 200


async def main() -> None:
    anonymous = as_(None)
    check(await status(anonymous.threads.search()) == 401, "no token: 401")
    check(await status(anonymous.store.list_namespaces()) == 401, "no token: 401")
    check(await status(as_("not-a-token").assistants.search()) == 401, "an unknown token: 401")

    a, b = as_(TOKEN_A), as_(TOKEN_B)
    # A's things, each recorded as A's.
    thread = await a.threads.create(metadata={"topic": "py"})
    check(thread["metadata"].get("owner") == USER_A, f"the thread's owner: {thread['metadata']}")
    tid = thread["thread_id"]
    run = await a.runs.create(tid, "echo", input=INPUT)
    await a.runs.join(tid, run["run_id"])
    assistant = await a.assistants.create(graph_id="echo", metadata={"team": "py"})
    check(assistant["metadata"].get("owner") == USER_A, f"the assistant's owner: {assistant['metadata']}")
    aid = assistant["assistant_id"]
    cron = await a.crons.create_for_thread(tid, aid, schedule="0 0 1 1 *")
    check(cron["metadata"].get("owner") == USER_A, f"the cron's owner: {cron['metadata']}")
    await a.store.put_item(["notes"], "k", {"v": USER_A})

    # B reaches none of them.
    for what, call in [
        ("get A's thread", b.threads.get(tid)),
        ("read A's thread's state", b.threads.get_state(tid)),
        ("list A's runs", b.runs.list(tid)),
        ("get A's run", b.runs.get(tid, run["run_id"])),
        ("run on A's thread", b.runs.create(tid, "echo", input=INPUT)),
        ("get A's assistant", b.assistants.get(aid)),
        ("take A's assistant", b.assistants.update(aid, metadata={"owner": USER_B})),
        ("delete A's assistant", b.assistants.delete(aid)),
        ("run A's assistant", b.runs.wait(None, aid, input=INPUT)),
        ("delete A's cron", b.crons.delete(cron["cron_id"])),
        ("change A's cron", b.crons.update(cron["cron_id"], schedule="0 0 2 1 *")),
        ("a cron on A's thread", b.crons.create_for_thread(tid, "echo", schedule="0 0 1 1 *")),
    ]:
        code = await status(call)
        check(code == 404, f"B may {what}: {code}")
    check(await b.store.get_item(["notes"], "k") is None, "B reads A's item")
    check(await b.store.get_item([USER_A, "notes"], "k") is None, "B reads A's item by its full name")

    # B's searches and counts hold only B's own (and the graphs' system assistants).
    b_thread = await b.threads.create()
    await b.runs.wait(b_thread["thread_id"], "echo", input=INPUT)
    check([t["thread_id"] for t in await b.threads.search()] == [b_thread["thread_id"]], "B's threads")
    check(await b.threads.count() == 1, "B's thread count")
    found = await b.assistants.search(limit=100)
    check(all(x["metadata"].get("created_by") == "system" for x in found), f"B's assistants: {[x['metadata'] for x in found]}")
    check(await b.assistants.count(metadata={"owner": USER_A}) == 0, "B counts A's assistants")
    check(await b.crons.search() == [] and await b.crons.count() == 0, "B's crons")
    await b.store.put_item(["notes"], "k", {"v": USER_B})
    check((await b.store.list_namespaces())["namespaces"] == [[USER_B, "notes"]], "B's namespaces")
    items = (await b.store.search_items(["notes"]))["items"]
    check([i["value"] for i in items] == [{"v": USER_B}], f"B's items: {items}")

    # A still has everything, untouched.
    check([t["thread_id"] for t in await a.threads.search()] == [tid], "A's threads")
    check(len(await a.runs.list(tid)) == 1, "A's runs")
    check((await a.assistants.get(aid))["metadata"].get("owner") == USER_A, "A's assistant")
    crons = await a.crons.search()
    check([(c["cron_id"], c["schedule"]) for c in crons] == [(cron["cron_id"], "0 0 1 1 *")], f"A's crons: {crons}")
    item = await a.store.get_item(["notes"], "k")
    check(item is not None and item["value"] == {"v": USER_A}, f"A's item: {item}")
    await a.crons.delete(cron["cron_id"])
    print("ok")


asyncio.run(main())
