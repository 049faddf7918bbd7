"""Two users through the official Python SDK against a server whose langgraph.json names an
Auth where each user owns what they create (owners_auth.py or owners_auth.ts): each sees only
their own threads, runs, crons and store namespace; no token is the handler's 401; a rule's
403 carries its message.

Run by TestAuthOwners (and, to settle it, against the Python reference dev server); JETGRAPH_URL
names the server, GRAPH the graph to run and INPUT its input (JSON).
"""

import asyncio
import json
import os
import sys
from collections.abc import Awaitable
from typing import Any

import httpx
from langgraph_sdk import get_client

URL = os.environ["JETGRAPH_URL"]
GRAPH = os.environ.get("GRAPH", "whoami")
INPUT: dict[str, Any] = json.loads(os.environ.get("INPUT", "{}"))


def check(cond: bool, what: str) -> None:
    if not cond:
        sys.exit(f"FAIL: {what}")


async def status(call: Awaitable[Any]) -> tuple[int, Any]:
    """The status and detail of a call the server refuses; 200 and its answer when it does not."""
    try:
        return 200, await call
    except httpx.HTTPStatusError as e:
        return e.response.status_code, e.response.json().get("detail")


def as_(token: str | None) -> Any:
    return get_client(url=URL, api_key=None, headers={"Authorization": f"Bearer {token}"} if token else None)


async def main() -> None:
    check(await status(as_(None).threads.search()) == (401, "Missing bearer token"), "no token")
    ada, bob = as_("tok-ada"), as_("tok-bob")

    # Threads: created with the owner's metadata, each user's search and reads their own only.
    ta = await ada.threads.create(metadata={"topic": "ada's"})
    tb = await bob.threads.create(metadata={"owner": "ada"})  # the rule overwrites a forged owner
    check(ta["metadata"] == {"topic": "ada's", "owner": "ada"}, f"ada's thread metadata {ta['metadata']}")
    check(tb["metadata"] == {"owner": "bob"}, f"bob's thread metadata {tb['metadata']}")
    check([t["thread_id"] for t in await ada.threads.search()] == [ta["thread_id"]], "ada's search")
    check([t["thread_id"] for t in await bob.threads.search()] == [tb["thread_id"]], "bob's search")
    check(await bob.threads.count() == 1, "bob's count")
    got = await status(bob.threads.get(ta["thread_id"]))
    check(got[0] == 404, f"bob reads ada's thread: {got}")
    got = await status(bob.threads.update(ta["thread_id"], metadata={"x": 1}))
    check(got[0] == 404, f"bob updates ada's thread: {got}")
    got = await status(bob.threads.get_state(ta["thread_id"]))
    check(got[0] == 404, f"bob reads ada's state: {got}")

    # Runs belong to their thread.
    run = await ada.runs.create(ta["thread_id"], GRAPH, input=INPUT)
    await ada.runs.join(ta["thread_id"], run["run_id"])
    check([r["run_id"] for r in await ada.runs.list(ta["thread_id"])] == [run["run_id"]], "ada's runs")
    got = await status(bob.runs.list(ta["thread_id"]))
    check(got[0] == 404, f"bob lists ada's runs: {got}")
    got = await status(bob.runs.get(ta["thread_id"], run["run_id"]))
    check(got[0] == 404, f"bob reads ada's run: {got}")
    got = await status(bob.runs.create(ta["thread_id"], GRAPH, input=INPUT))
    check(got[0] == 404, f"bob runs on ada's thread: {got}")

    # Crons: filtered on their metadata.
    ca = await ada.crons.create_for_thread(ta["thread_id"], GRAPH, schedule="0 0 1 1 *", input=INPUT)
    cb = await bob.crons.create(GRAPH, schedule="0 0 1 1 *", input=INPUT)
    check([c["cron_id"] for c in await ada.crons.search()] == [ca["cron_id"]], "ada's crons")
    check([c["cron_id"] for c in await bob.crons.search()] == [cb["cron_id"]], "bob's crons")
    got = await status(bob.crons.create_for_thread(ta["thread_id"], GRAPH, schedule="0 0 1 1 *", input=INPUT))
    check(got[0] == 404, f"bob's cron on ada's thread: {got}")
    got = await status(bob.crons.delete(ca["cron_id"]))
    check(got[0] == 404, f"bob deletes ada's cron: {got}")
    check(len(await ada.crons.search()) == 1, "ada's cron after bob's delete")

    # The store: each user's namespace under their identity.
    await ada.store.put_item(["notes"], "k", {"by": "ada"})
    await bob.store.put_item(["notes"], "k", {"by": "bob"})
    item = await ada.store.get_item(["notes"], "k")
    check(item["value"] == {"by": "ada"} and item["namespace"] == ["ada", "notes"], f"ada's item {item}")
    found = await bob.store.search_items(["notes"])
    check([i["value"] for i in found["items"]] == [{"by": "bob"}], f"bob's search {found}")
    listed = await bob.store.list_namespaces()
    check(listed["namespaces"] == [["bob", "notes"]], f"bob's namespaces {listed}")

    # Rules that refuse, with their messages.
    check(await status(bob.threads.delete(tb["thread_id"])) == (403, "bob may not delete threads"), "bob's delete")
    await ada.threads.delete(ta["thread_id"])
    check(await status(as_("tok-guest").threads.search()) == (403, "guests may not search threads"), "a guest")
    assistant = (await ada.assistants.search(graph_id=GRAPH))[0]
    check(await status(ada.assistants.update(assistant["assistant_id"], metadata={"x": 1})) == (403, "Forbidden"),
          "an assistant's update a rule answers False to")


asyncio.run(main())
print("ok")
