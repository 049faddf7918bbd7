"""Assistants, threads, state and history through the official Python SDK's async client.

Assistants: create, get, update, versions, set_latest, search (filters, select, sort, the object
format with its next cursor), count, graph, schemas, subgraphs, delete. Threads: create (if_exists,
graph_id, ttl, supersteps), get, update, search (metadata, ids, status, values, select, sort),
count, copy, prune, delete. State and history: get_state (at a checkpoint, with subgraphs),
update_state (as a node, forking an older checkpoint), get_history (limit, before, metadata).

Run by TestPythonSDKThreads; JETGRAPH_URL names the server.
"""

import asyncio
import os
import uuid

from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import ConflictError, NotFoundError

from checks import check, texts

URL = os.environ["JETGRAPH_URL"]
AGENT_ANSWER = ["foo", "begin", "tool_call__begin", "end"]


async def assistants(client: LangGraphClient) -> None:
    system = await client.assistants.get("agent")
    check(
        system["graph_id"] == "agent" and system["metadata"].get("created_by") == "system",
        f"graph id as assistant id gives the system assistant: {system}",
    )

    a = await client.assistants.create(
        "agent",
        config={"configurable": {"model_name": "py"}},
        metadata={"team": "py"},
        name="Py Agent",
        description="first",
    )
    aid = a["assistant_id"]
    check(a["version"] == 1 and a["name"] == "Py Agent" and a["description"] == "first", f"created assistant: {a}")
    check(a["config"]["configurable"]["model_name"] == "py", f"created config: {a['config']}")
    try:
        await client.assistants.create("agent", assistant_id=aid, if_exists="raise")
        check(False, "a second create with the same id and if_exists=raise succeeded")
    except ConflictError:
        pass
    same = await client.assistants.create("echo", assistant_id=aid, if_exists="do_nothing")
    check(same["graph_id"] == "agent" and same["version"] == 1, f"do_nothing keeps the assistant: {same}")

    b = await client.assistants.update(aid, metadata={"v": 2}, description="second")
    check(
        b["version"] == 2 and b["metadata"] == {"team": "py", "v": 2} and b["description"] == "second",
        f"update makes version 2 and merges metadata: {b}",
    )
    check(b["name"] == "Py Agent", f"update keeps the name: {b}")
    versions = await client.assistants.get_versions(aid)
    check([v["version"] for v in versions] == [2, 1], f"versions newest first: {versions}")
    back = await client.assistants.set_latest(aid, 1)
    check(back["version"] == 1 and back["description"] == "first", f"set_latest(1): {back}")
    check((await client.assistants.get(aid))["version"] == 1, "get after set_latest")

    other = await client.assistants.create("agent", name="Another", metadata={"team": "py"})
    found = await client.assistants.search(
        metadata={"team": "py"},
        sort_by="name",
        sort_order="asc",
        select=["assistant_id", "name"],
    )
    check(
        found
        == [{"assistant_id": other["assistant_id"], "name": "Another"}, {"assistant_id": aid, "name": "Py Agent"}],
        f"search sorted by name, selected: {found}",
    )
    page = await client.assistants.search(metadata={"team": "py"}, limit=1, response_format="object")
    check(len(page["assistants"]) == 1 and page["next"] == "1", f"a first page and its next cursor: {page}")
    last = await client.assistants.search(metadata={"team": "py"}, limit=1, offset=1, response_format="object")
    check(len(last["assistants"]) == 1 and last["next"] is None, f"the last page has no next: {last}")
    check(await client.assistants.count(graph_id="agent") == 3, "count of the agent graph's assistants")
    check(await client.assistants.count(metadata={"team": "py"}, name="py agent") == 1, "count by name")

    graph = await client.assistants.get_graph(aid)
    check(
        {"__start__", "agent", "tool", "__end__"} <= {n["id"] for n in graph["nodes"]}, f"graph nodes: {graph['nodes']}"
    )
    check(
        any(e["source"] == "agent" and e.get("conditional") for e in graph["edges"]),
        f"agent's conditional edge: {graph['edges']}",
    )
    schemas = await client.assistants.get_schemas(aid)
    check(schemas["graph_id"] == "agent", f"schemas graph_id: {schemas.get('graph_id')}")
    check(
        schemas["state_schema"]["properties"]["messages"].get("langgraph_type") == "messages",
        "state schema marks messages",
    )
    check(list(schemas["config_schema"]["properties"]) == ["model_name"], "config schema")
    subs = await client.assistants.get_subgraphs("nested", recurse=True)
    check(sorted(subs) == ["gp_two", "gp_two|p_two"], f"subgraphs, recursive: {sorted(subs)}")
    only = await client.assistants.get_subgraphs("nested", namespace="gp_two")
    check(sorted(only) == ["gp_two"], f"subgraphs of one namespace: {sorted(only)}")

    # An assistant's threads go with it when asked.
    t = await client.threads.create()
    await client.runs.wait(
        t["thread_id"], other["assistant_id"], input={"messages": [{"role": "user", "content": "x"}]}
    )
    await client.assistants.delete(other["assistant_id"], delete_threads=True)
    for what, call in [
        ("assistant", client.assistants.get(other["assistant_id"])),
        ("its thread", client.threads.get(t["thread_id"])),
    ]:
        try:
            await call
            check(False, f"the deleted {what} is still there")
        except NotFoundError:
            pass
    await client.assistants.delete(aid)
    check(await client.assistants.count(metadata={"team": "py"}) == 0, "no py assistants left")


async def threads(client: LangGraphClient) -> None:
    tag = str(uuid.uuid4())
    t1 = await client.threads.create(metadata={"tag": tag, "user": "a"}, graph_id="agent", ttl=60)
    check(
        t1["status"] == "idle" and t1["metadata"] == {"tag": tag, "user": "a", "graph_id": "agent"},
        f"created thread: {t1}",
    )
    with_ttl = await client.threads.get(t1["thread_id"], include=["ttl"])
    check(with_ttl["ttl"]["ttl"] == 60 and with_ttl["ttl"]["strategy"] == "delete", f"ttl: {with_ttl.get('ttl')}")
    tid2 = str(uuid.uuid4())
    t2 = await client.threads.create(thread_id=tid2, metadata={"tag": tag, "user": "b"})
    check(t2["thread_id"] == tid2, "the thread has the id asked for")
    try:
        await client.threads.create(thread_id=tid2, if_exists="raise")
        check(False, "a second create with if_exists=raise succeeded")
    except ConflictError:
        pass
    again = await client.threads.create(thread_id=tid2, if_exists="do_nothing", metadata={"user": "z"})
    check(again["metadata"]["user"] == "b", f"do_nothing returns the thread as it was: {again}")
    up = await client.threads.update(tid2, metadata={"n": 2})
    check(up["metadata"] == {"tag": tag, "user": "b", "n": 2}, f"update merges metadata: {up}")
    none = await client.threads.update(tid2, metadata={"m": 1}, return_minimal=True)
    check(none is None, f"update with return_minimal answers no body: {none}")
    check((await client.threads.get(tid2))["metadata"]["m"] == 1, "a minimal update is applied")

    out = await client.runs.wait(t1["thread_id"], "agent", input={"messages": [{"role": "user", "content": "foo"}]})
    check(texts(out) == AGENT_ANSWER, f"the agent's answer: {texts(out)}")
    await client.runs.wait(tid2, "agent", input={"messages": [{"role": "user", "content": "x"}], "interrupt": True})
    check(
        (await client.threads.get(tid2))["status"] == "interrupted", "a dynamic interrupt leaves the thread interrupted"
    )

    both = await client.threads.search(metadata={"tag": tag}, sort_by="created_at", sort_order="asc")
    check([t["thread_id"] for t in both] == [t1["thread_id"], tid2], f"search by metadata, sorted: {both}")
    check(texts(both[0]["values"]) == AGENT_ANSWER, "a searched thread carries its values")
    inter = await client.threads.search(metadata={"tag": tag}, status="interrupted", select=["thread_id", "status"])
    check(inter == [{"thread_id": tid2, "status": "interrupted"}], f"search by status, selected: {inter}")
    picked = await client.threads.search(
        metadata={"tag": tag},
        sort_by="created_at",
        sort_order="asc",
        select=["thread_id"],
        extract={"last": "values.messages[-1].content", "user": "metadata.user", "nothing": "values.none[3]"},
    )
    check(
        picked
        == [
            {"thread_id": t1["thread_id"], "extracted": {"last": "end", "user": "a", "nothing": None}},
            {"thread_id": tid2, "extracted": {"last": "x", "user": "b", "nothing": None}},
        ],
        f"search with extract: {picked}",
    )
    by_ids = await client.threads.search(ids=[tid2, str(uuid.uuid4())])
    check([t["thread_id"] for t in by_ids] == [tid2], f"search by ids: {by_ids}")
    check(await client.threads.count(metadata={"tag": tag}) == 2, "count by metadata")
    check(await client.threads.count(metadata={"tag": tag}, status="idle") == 1, "count by status")
    by_values = await client.threads.search(values={"interrupt": True}, metadata={"tag": tag})
    check([t["thread_id"] for t in by_values] == [tid2], f"search by values: {by_values}")

    # Copy: the same state and history under a new id.
    copy = await client.threads.copy(t1["thread_id"])
    check(copy["thread_id"] != t1["thread_id"] and texts(copy["values"]) == AGENT_ANSWER, f"copy: {copy}")
    orig_h = await client.threads.get_history(t1["thread_id"], limit=20)
    copy_h = await client.threads.get_history(copy["thread_id"], limit=20)
    check(
        [h["metadata"]["step"] for h in copy_h] == [h["metadata"]["step"] for h in orig_h] == [3, 2, 1, 0, -1],
        f"copied history steps: {[h['metadata']['step'] for h in copy_h]}",
    )

    # Prune: keep_latest leaves one checkpoint, delete removes the thread.
    pruned = await client.threads.prune([copy["thread_id"]], strategy="keep_latest")
    check(pruned == {"pruned_count": 1}, f"prune keep_latest: {pruned}")
    left = await client.threads.get_history(copy["thread_id"], limit=20)
    check(len(left) == 1 and texts(left[0]["values"]) == AGENT_ANSWER, f"after keep_latest: {len(left)} states")
    pruned = await client.threads.prune([copy["thread_id"], str(uuid.uuid4())])
    check(pruned == {"pruned_count": 1}, f"prune delete counts existing threads: {pruned}")
    try:
        await client.threads.get(copy["thread_id"])
        check(False, "a pruned thread is still there")
    except NotFoundError:
        pass

    # Supersteps: a thread made from updates, as a copy between deployments makes it.
    made = await client.threads.create(
        graph_id="agent",
        supersteps=[
            {"updates": [{"values": {"messages": [{"role": "user", "content": "s1"}]}, "as_node": "__input__"}]},
            {"updates": [{"values": {"messages": [{"role": "ai", "content": "end"}]}, "as_node": "agent"}]},
        ],
    )
    st = await client.threads.get_state(made["thread_id"])
    check(
        texts(st["values"]) == ["end"] and st["next"] == [], f"state made by supersteps: {st['values']}, {st['next']}"
    )

    await client.threads.delete(tid2)
    check(await client.threads.count(metadata={"tag": tag}) == 1, "count after delete")


async def state_and_history(client: LangGraphClient) -> None:
    t = await client.threads.create()
    tid = t["thread_id"]
    await client.runs.wait(
        tid, "agent", input={"messages": [{"role": "user", "content": "x"}]}, interrupt_before=["tool"]
    )
    st = await client.threads.get_state(tid)
    check(st["next"] == ["tool"] and texts(st["values"]) == ["x", "begin"], f"stopped before tool: {st['next']}")
    check(st["tasks"][0]["name"] == "tool", f"the pending task: {st['tasks']}")
    check(
        st["checkpoint"]["thread_id"] == tid and st["checkpoint"]["checkpoint_id"] == st["checkpoint_id"],
        f"the checkpoint names the thread: {st['checkpoint']}",
    )

    history = await client.threads.get_history(tid, limit=10)
    check(
        [h["next"] for h in history] == [["tool"], ["agent"], ["__start__"]],
        f"history next: {[h['next'] for h in history]}",
    )
    check([h["metadata"]["source"] for h in history] == ["loop", "loop", "input"], "history sources")
    two = await client.threads.get_history(tid, limit=1, before=history[0]["checkpoint"])
    check([h["checkpoint_id"] for h in two] == [history[1]["checkpoint_id"]], "history before a checkpoint")
    step0 = await client.threads.get_history(tid, metadata={"step": 0})
    check([h["checkpoint_id"] for h in step0] == [history[1]["checkpoint_id"]], "history by metadata")

    # Rewrite the model's answer as the agent: the graph then ends.
    ai = st["values"]["messages"][1]
    res = await client.threads.update_state(tid, {"messages": [{**ai, "content": "end"}]}, as_node="agent")
    check(res["checkpoint"]["thread_id"] == tid, f"update_state answers the new checkpoint: {res}")
    st = await client.threads.get_state(tid)
    check(st["checkpoint_id"] == res["checkpoint"]["checkpoint_id"], "the state is at the new checkpoint")
    check(
        st["next"] == [] and texts(st["values"]) == ["x", "end"] and st["metadata"]["source"] == "update",
        f"after update_state: {st['next']}, {texts(st['values'])}, {st['metadata']['source']}",
    )
    check((await client.threads.get(tid))["status"] == "idle", "nothing left: idle")

    # The old checkpoint is still readable, by id and by checkpoint object.
    old = await client.threads.get_state(tid, checkpoint_id=history[0]["checkpoint_id"])
    check(old["next"] == ["tool"] and texts(old["values"]) == ["x", "begin"], "state at an old checkpoint id")
    old2 = await client.threads.get_state(tid, checkpoint=history[0]["checkpoint"])
    check(old2["checkpoint_id"] == history[0]["checkpoint_id"], "state at an old checkpoint")

    # Fork the checkpoint before the tool with other values, and run on from there.
    fork = await client.threads.update_state(
        tid,
        {"messages": [{"role": "user", "content": "forked"}]},
        as_node="tool",
        checkpoint_id=history[0]["checkpoint_id"],
    )
    st = await client.threads.get_state(tid)
    check(
        st["checkpoint_id"] == fork["checkpoint"]["checkpoint_id"] and st["metadata"]["source"] == "fork",
        f"the fork is the thread's head: {st['metadata']}",
    )
    check(st["parent_checkpoint_id"] == history[0]["checkpoint_id"], "the fork's parent")
    out = await client.runs.wait(tid, "agent", input=None)
    check(texts(out) == ["x", "begin", "forked", "end"], f"run on from the fork: {texts(out)}")

    # A subgraph stopped inside, read with subgraphs, updated through its task's checkpoint.
    w = await client.threads.create()
    await client.runs.wait(w["thread_id"], "weather", input={"messages": [{"role": "user", "content": "sf?"}]})
    deep = await client.threads.get_state(w["thread_id"], subgraphs=True)
    check(
        deep["next"] == ["weather_graph"] and deep["tasks"][0]["state"]["next"] == ["weather_node"],
        f"the subgraph waits before weather_node: {deep['tasks']}",
    )
    check(deep["tasks"][0]["state"]["values"]["city"] == "San Francisco", "the subgraph's city")
    plain = await client.threads.get_state(w["thread_id"])
    await client.threads.update_state(
        w["thread_id"], {"city": "LA"}, as_node="model_node", checkpoint=plain["tasks"][0]["checkpoint"]
    )
    out = await client.runs.wait(w["thread_id"], "weather", input=None)
    check(texts(out)[-1] == "It's sunny in LA!", f"the resumed subgraph used the update: {texts(out)}")


async def main() -> None:
    async with get_client(url=URL, api_key=None) as client:
        await assistants(client)
        await threads(client)
        await state_and_history(client)


asyncio.run(main())
print("ok")
