"""Crons and the store through the official Python SDK's sync client.

Crons: create_for_thread and create (every field the client sends: end_time as an aware and a
naive datetime, a ZoneInfo time zone, stream modes, durability, on_run_completed), the runs they
make, search (filters, sort, paging, select), count, update (end_time cleared), delete. Store:
put (index, ttl), get (refresh_ttl), search (filter, query, paging), namespaces (prefix, suffix,
max_depth), delete.

Run by TestPythonSDKCronsStore; JETGRAPH_URL names the server.
"""

import os
import time
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient
from langgraph_sdk.errors import NotFoundError, UnprocessableEntityError

from checks import check, texts, until

URL = os.environ["JETGRAPH_URL"]


def crons(client: SyncLangGraphClient) -> None:
    tid = client.threads.create()["thread_id"]
    every = client.crons.create_for_thread(
        tid,
        "echo",
        schedule="* * * * * *",
        input={"messages": [{"role": "user", "content": "tick"}]},
        metadata={"kind": "thread"},
        stream_mode=["values", "updates"],
        durability="sync",
        end_time=datetime(2099, 1, 1, tzinfo=UTC),
        multitask_strategy="enqueue",
    )
    check(every["thread_id"] == tid and every["schedule"] == "* * * * * *", f"a thread cron: {every}")
    check(every["end_time"].startswith("2099-01-01T00:00:00"), f"an aware end_time: {every['end_time']}")
    check(bool(every["next_run_date"]), "a cron has its next run date")
    until("two runs of the thread cron", lambda: len(client.runs.list(tid)) >= 2)
    run = client.runs.list(tid)[-1]
    kw = run["kwargs"]
    check(
        kw["input"] == {"messages": [{"role": "user", "content": "tick"}]}
        and kw["durability"] == "sync"
        and kw["stream_mode"] == ["values", "updates"]
        and run["multitask_strategy"] == "enqueue",
        f"a run of the cron carries the cron's settings: {run}",
    )
    until("a cron run to finish", lambda: texts(client.threads.get_state(tid)["values"])[:2] == ["tick", "echo: tick"])

    daily = client.crons.create(
        "agent",
        schedule="27 15 * * *",
        input={"messages": [{"role": "user", "content": "hello!"}]},
        metadata={"kind": "daily"},
        context={"model_name": "openai"},
        interrupt_before=["tool"],
        interrupt_after=["agent"],
        on_run_completed="keep",
        enabled=False,
        webhook="https://hooks.example.com/cron",
        stream_subgraphs=True,
        stream_resumable=True,
        timezone=ZoneInfo("Europe/Paris"),
        end_time=datetime(2030, 6, 1, 12, 30),
    )
    check(
        daily["thread_id"] is None and daily["enabled"] is False and daily["on_run_completed"] == "keep",
        f"a stateless cron: {daily}",
    )
    check(
        daily["payload"]["webhook"] == "https://hooks.example.com/cron"
        and daily["payload"]["interrupt_before"] == ["tool"],
        f"the cron's run settings: {daily['payload']}",
    )
    check(daily["timezone"] == "Europe/Paris", f"a ZoneInfo is sent by its key: {daily['timezone']}")
    check(daily["end_time"].startswith("2030-06-01T12:30:00"), f"a naive end_time is UTC: {daily['end_time']}")
    check(daily["next_run_date"][11:16] in ("13:27", "14:27"), f"15:27 in Paris: {daily['next_run_date']}")

    found = client.crons.search(sort_by="created_at", sort_order="asc")
    check([c["cron_id"] for c in found] == [every["cron_id"], daily["cron_id"]], f"search sorted: {found}")
    page = client.crons.search(
        limit=1, offset=1, sort_by="created_at", sort_order="asc", select=["cron_id", "schedule"]
    )
    check(page == [{"cron_id": daily["cron_id"], "schedule": "27 15 * * *"}], f"a page, selected: {page}")
    check([c["cron_id"] for c in client.crons.search(thread_id=tid)] == [every["cron_id"]], "search by thread")
    check([c["cron_id"] for c in client.crons.search(enabled=False)] == [daily["cron_id"]], "search by enabled")
    check([c["cron_id"] for c in client.crons.search(assistant_id="agent")] == [daily["cron_id"]], "search by graph")
    check([c["cron_id"] for c in client.crons.search(metadata={"kind": "daily"})] == [daily["cron_id"]], "by metadata")
    check(client.crons.count() == 2 and client.crons.count(assistant_id="echo") == 1, "count")
    check(
        client.crons.count(thread_id=tid) == 1 and client.crons.count(metadata={"kind": "none"}) == 0, "count by filter"
    )

    up = client.crons.update(
        daily["cron_id"],
        schedule="0 10 * * *",
        enabled=True,
        timezone="UTC",
        end_time=None,
        metadata={"kind": "daily", "v": 2},
    )
    check(
        up["schedule"] == "0 10 * * *" and up["enabled"] is True and up["end_time"] is None,
        f"update with end_time cleared: {up}",
    )
    check(up["next_run_date"][11:16] == "10:00", f"next run at 10:00 UTC: {up['next_run_date']}")

    client.crons.delete(every["cron_id"])
    client.crons.delete(daily["cron_id"])
    check(client.crons.count() == 0, "no crons after delete")
    try:
        client.crons.delete(daily["cron_id"])
        check(False, "deleting a deleted cron succeeded")
    except NotFoundError:
        pass
    before = len(client.runs.list(tid, limit=100))
    time.sleep(1.5)
    check(len(client.runs.list(tid, limit=100)) == before, "a deleted cron makes no more runs")
    try:
        client.crons.create("echo", schedule="not a schedule", timezone="Nowhere/Land")
        check(False, "a bad schedule was accepted")
    except UnprocessableEntityError as e:
        check("schedule" in str(e.body) and "timezone" in str(e.body), f"422 names every problem: {e.body}")


def store(client: SyncLangGraphClient) -> None:
    ns = ["py", "users", "ada"]
    client.store.put_item(ns, "prefs", {"theme": "dark", "n": 3})
    client.store.put_item(ns, "food", {"text": "Loves Italian pasta and tomato sauce", "n": 1})
    client.store.put_item(ns, "hike", {"text": "Goes hiking in the mountains", "n": 2}, index=["text"])
    client.store.put_item(["py", "users", "bob"], "prefs", {"theme": "light", "n": 5}, ttl=60)
    client.store.put_item(["py", "tmp"], "gone", {"n": 9}, index=False)

    item = client.store.get_item(ns, "prefs")
    check(
        item["value"] == {"theme": "dark", "n": 3} and item["namespace"] == ns and item["key"] == "prefs",
        f"get_item: {item}",
    )
    bob = client.store.get_item(["py", "users", "bob"], "prefs", refresh_ttl=True)
    check(bob["value"]["theme"] == "light", f"get_item with refresh_ttl: {bob}")

    hits = client.store.search_items(["py", "users"], filter={"n": {"$gte": 3}})
    check(
        sorted(f"{i['namespace'][-1]}:{i['key']}" for i in hits["items"]) == ["ada:prefs", "bob:prefs"],
        f"search with a filter: {hits}",
    )
    ranked = client.store.search_items(["py"], query="hiking in the mountains", limit=2)
    check(ranked["items"][0]["key"] == "hike" and ranked["items"][0]["score"] > 0, f"a query ranks: {ranked}")
    second = client.store.search_items(["py", "users", "ada"], limit=1, offset=1)
    first = client.store.search_items(["py", "users", "ada"], limit=1)
    check(len(second["items"]) == 1 and second["items"][0]["key"] != first["items"][0]["key"], "paging")

    nss = client.store.list_namespaces(prefix=["py"])
    check(
        sorted(map(tuple, nss["namespaces"])) == [("py", "tmp"), ("py", "users", "ada"), ("py", "users", "bob")],
        f"namespaces by prefix: {nss}",
    )
    deep = client.store.list_namespaces(prefix=["py"], max_depth=2)
    check(sorted(map(tuple, deep["namespaces"])) == [("py", "tmp"), ("py", "users")], f"max_depth: {deep}")
    ada = client.store.list_namespaces(suffix=["ada"])
    check([tuple(n) for n in ada["namespaces"]] == [("py", "users", "ada")], f"by suffix: {ada}")

    client.store.delete_item(["py", "tmp"], "gone")
    gone: Any = client.store.get_item(["py", "tmp"], "gone")
    check(gone is None, f"a deleted item reads as None: {gone}")
    try:
        client.store.put_item(["bad.label"], "k", {"x": 1})
        check(False, "the client let a dotted label through")
    except ValueError:
        pass


with get_sync_client(url=URL, api_key=None) as c:
    crons(c)
    store(c)
print("ok")
