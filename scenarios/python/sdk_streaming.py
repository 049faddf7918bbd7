"""Runs through the official Python SDK's sync client: every stream mode, interrupts (dynamic,
static, inside a subgraph) resumed with a Command, stateless runs (kept or not, a batch), a join
of a running run from its start and again after an event id (Last-Event-ID), run reads, and
cancel (interrupt and rollback, one run or many).

Run by TestPythonSDKStreaming; JETGRAPH_URL names the server.
"""

import os
from collections.abc import Iterator
from typing import Any

from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient
from langgraph_sdk.errors import NotFoundError
from langgraph_sdk.schema import StreamPart

from checks import check, texts, until

URL = os.environ["JETGRAPH_URL"]
AGENT_ANSWER = ["foo", "begin", "tool_call__begin", "end"]
FOO = {"messages": [{"role": "user", "content": "foo"}]}


def drain(stream: Iterator[StreamPart]) -> list[StreamPart]:
    parts = list(stream)
    check(len(parts) >= 2 and parts[0].event == "metadata", f"a stream starts with metadata: {parts[:1]}")
    check(parts[-1].event == "end", f"a stream ends with end: {parts[-1:]}")
    check(not any(p.event == "error" for p in parts), f"an error event: {[p for p in parts if p.event == 'error']}")
    return parts


def of(parts: list[StreamPart], event: str) -> list[Any]:
    return [p.data for p in parts if p.event == event]


def modes(client: SyncLangGraphClient) -> None:
    tid = client.threads.create()["thread_id"]
    created: list[Any] = []
    parts = drain(
        client.runs.stream(
            tid,
            "agent",
            input={**FOO, "sleep": {"steps": 3, "ms": 5}},
            stream_mode=["values", "updates", "messages-tuple", "custom"],
            on_run_created=created.append,
        )
    )
    run_id = parts[0].data["run_id"]
    check(created == [{"run_id": run_id, "thread_id": tid}], f"on_run_created: {created}")
    check(
        {p.event for p in parts} == {"metadata", "values", "updates", "messages", "custom", "end"},
        f"events of four modes: {sorted({p.event for p in parts})}",
    )
    check([texts(v) for v in of(parts, "values")] == [AGENT_ANSWER[:n] for n in range(1, 5)], "values, one per step")
    check([list(u) for u in of(parts, "updates")] == [["agent"], ["tool"], ["agent"]], "updates' nodes")
    check(of(parts, "custom") == [{"type": "sleep", "step": i} for i in range(3)], f"custom: {of(parts, 'custom')}")
    chunks: dict[str, str] = {}
    for chunk, meta in of(parts, "messages"):
        check(meta["thread_id"] == tid and isinstance(meta["langgraph_step"], int), f"tuple metadata: {meta}")
        if chunk["type"] == "AIMessageChunk":
            chunks[chunk["id"]] = chunks.get(chunk["id"], "") + chunk["content"]
    check(list(chunks.values()) == ["begin", "end"], f"model chunks by message id: {chunks}")
    run = client.runs.get(tid, run_id)
    check(run["status"] == "success" and run["thread_id"] == tid, f"the streamed run: {run['status']}")

    # messages mode: partial AI messages growing, complete messages, their metadata.
    parts = drain(client.runs.stream(tid, "agent", input=FOO, stream_mode="messages"))
    partial = [d[0]["content"] for d in of(parts, "messages/partial")]
    check(partial[:5] == ["b", "be", "beg", "begi", "begin"], f"partial messages grow: {partial[:6]}")
    complete = [m["content"] for d in of(parts, "messages/complete") for m in d]
    check("begin" in complete and "end" in complete, f"complete messages: {complete}")
    check(len(of(parts, "messages/metadata")) > 0, "messages/metadata events")

    # events, debug, tasks and checkpoints of a stateless echo run.
    parts = drain(client.runs.stream(None, "echo", input=FOO, stream_mode=["events", "debug", "tasks", "checkpoints"]))
    lifecycle = [(e["event"], e["name"]) for e in of(parts, "events")]
    check(
        lifecycle[0] == ("on_chain_start", "echo") and lifecycle[-1] == ("on_chain_end", "echo"), f"events: {lifecycle}"
    )
    check(texts(of(parts, "events")[-1]["data"]["output"]) == ["foo", "echo: foo"], "the root on_chain_end's output")
    tasks = of(parts, "tasks")
    check([t["name"] for t in tasks] == ["echo", "echo"] and tasks[0]["id"] == tasks[1]["id"], f"tasks: {tasks}")
    check(texts(tasks[1]["result"]) == ["echo: foo"], f"the task's result: {tasks[1]}")
    cps = of(parts, "checkpoints")
    check(
        [c["metadata"]["step"] for c in cps] == [-1, 0, 1], f"checkpoint steps: {[c['metadata']['step'] for c in cps]}"
    )
    check(cps[-1]["next"] == [] and texts(cps[-1]["values"]) == ["foo", "echo: foo"], "the last checkpoint")
    debug = [d["type"] for d in of(parts, "debug")]
    check(debug == ["checkpoint", "checkpoint", "task", "task_result", "checkpoint"], f"debug types: {debug}")

    # Subgraphs: events of the weather subgraph carry its namespace.
    wid = client.threads.create()["thread_id"]
    parts = drain(
        client.runs.stream(
            wid,
            "weather",
            input={"messages": [{"role": "user", "content": "sf"}]},
            stream_mode="updates",
            stream_subgraphs=True,
        )
    )
    names = [p.event.split(":")[0] for p in parts if p.event.startswith("updates")]
    check("updates|weather_graph" in names, f"a subgraph's updates: {names}")
    sub = [d for p in parts if p.event.startswith("updates|weather_graph") for d in [p.data]]
    check(sub[0] == {"model_node": {"city": "San Francisco"}}, f"the subgraph's first update: {sub}")

    # The v2 format: typed dicts, the interrupts taken out of values.
    v2 = list(client.runs.stream(None, "echo", input=FOO, stream_mode="values", version="v2"))
    check([p["type"] for p in v2] == ["metadata", "values", "values"], f"v2 types: {[p['type'] for p in v2]}")
    check(
        texts(v2[-1]["data"]) == ["foo", "echo: foo"] and v2[-1]["ns"] == [] and v2[-1]["interrupts"] == [], "v2 values"
    )


def interrupts(client: SyncLangGraphClient) -> None:
    # A dynamic interrupt: streamed, seen in the state, answered with Command(resume).
    tid = client.threads.create()["thread_id"]
    parts = drain(client.runs.stream(tid, "agent", input={**FOO, "interrupt": True}, stream_mode=["values", "updates"]))
    pending = of(parts, "updates")[-1]["__interrupt__"]
    check([i["value"] for i in pending] == ["i want to interrupt"], f"the interrupt in updates: {pending}")
    check(of(parts, "values")[-1]["__interrupt__"] == pending, "the interrupt in the last values")
    check(client.threads.get(tid)["status"] == "interrupted", "the thread waits on its interrupt")
    state = client.threads.get_state(tid)
    check(
        state["next"] == ["agent"] and state["interrupts"][0]["id"] == pending[0]["id"], f"state: {state['interrupts']}"
    )
    parts = drain(client.runs.stream(tid, "agent", command={"resume": "go on"}, stream_mode="values"))
    check(texts(of(parts, "values")[0]) == ["foo"], "a resumed run first shows the state it resumes from")
    check(texts(of(parts, "values")[-1]) == AGENT_ANSWER, f"resumed: {texts(of(parts, 'values')[-1])}")
    check(client.threads.get(tid)["status"] == "idle", "idle after the resume")

    # Resume by interrupt id, with wait.
    tid = client.threads.create()["thread_id"]
    out = client.runs.wait(tid, "agent", input={**FOO, "interrupt": True})
    iid = out["__interrupt__"][0]["id"]
    out = client.runs.wait(tid, "agent", command={"resume": {iid: "yes"}})
    check(texts(out) == AGENT_ANSWER, f"resume by interrupt id: {texts(out)}")

    # A static interrupt on the run, then a run on with no input.
    tid = client.threads.create()["thread_id"]
    out = client.runs.wait(tid, "agent", input=FOO, interrupt_after=["agent"])
    check(texts(out) == ["foo", "begin"], f"stopped after agent: {texts(out)}")
    check(client.threads.get_state(tid)["next"] == ["tool"], "next after interrupt_after")
    out = client.runs.wait(tid, "agent", input=None)
    check(texts(out) == AGENT_ANSWER, f"run on after interrupt_after: {texts(out)}")

    # The weather subgraph's own interrupt_before: the thread is interrupted, input None resumes it.
    tid = client.threads.create()["thread_id"]
    out = client.runs.wait(tid, "weather", input={"messages": [{"role": "user", "content": "sf"}]})
    check(client.threads.get(tid)["status"] == "interrupted", "the subgraph's static interrupt")
    check(client.threads.get_state(tid)["next"] == ["weather_graph"], "the root waits on the subgraph")
    parts = drain(client.runs.stream(tid, "weather", input=None, stream_mode="values"))
    check(texts(of(parts, "values")[-1])[-1] == "It's sunny in San Francisco!", "resumed subgraph")


def stateless(client: SyncLangGraphClient) -> None:
    # A stateless run kept: on_run_created names its thread, which holds the run's state.
    created: list[Any] = []
    out = client.runs.wait(None, "echo", input=FOO, on_completion="keep", on_run_created=created.append)
    check(len(created) == 1 and created[0]["thread_id"] is not None, f"on_run_created of a stateless wait: {created}")
    kept = client.threads.get_state(created[0]["thread_id"])
    check(texts(kept["values"]) == texts(out) == ["foo", "echo: foo"], f"the kept thread's state: {kept['values']}")
    check(client.runs.get(created[0]["thread_id"], created[0]["run_id"])["status"] == "success", "the kept run")
    # Without keep the thread is gone once the answer is read.
    created.clear()
    client.runs.wait(None, "echo", input=FOO, on_run_created=created.append)
    try:
        client.threads.get(created[0]["thread_id"])
        check(False, "a stateless run's thread is left without on_completion=keep")
    except NotFoundError:
        pass
    # A batch of stateless runs: each one pending, on a thread of its own.
    batch = client.runs.create_batch([{"assistant_id": "echo", "input": FOO, "on_completion": "keep"}] * 2)
    check(
        [r["status"] for r in batch] == ["pending", "pending"] and batch[0]["thread_id"] != batch[1]["thread_id"],
        f"a batch: {batch}",
    )
    for r in batch:
        check(texts(client.runs.join(r["thread_id"], r["run_id"])) == ["foo", "echo: foo"], "a batch run's answer")


def join_and_cancel(client: SyncLangGraphClient) -> None:
    # A background run joined from its start, and again after one of its event ids.
    tid = client.threads.create()["thread_id"]
    run = client.runs.create(
        tid,
        "agent",
        input={**FOO, "sleep": {"steps": 8, "ms": 100}},
        stream_mode=["values", "custom"],
        stream_resumable=True,
    )
    check(run["status"] == "pending" and run["thread_id"] == tid, f"a created run: {run['status']}")
    first = drain(client.runs.join_stream(tid, run["run_id"], last_event_id="-1"))
    check(first[0].data["run_id"] == run["run_id"], "a join from the start begins with the run's metadata")
    check(of(first, "custom") == [{"type": "sleep", "step": i} for i in range(8)], f"custom: {of(first, 'custom')}")
    check(texts(of(first, "values")[-1]) == AGENT_ANSWER, "the joined run's last values")
    mid = [p for p in first if p.event == "custom"][3]
    rest = list(client.runs.join_stream(tid, run["run_id"], last_event_id=mid.id))
    after = first[first.index(mid) + 1 :]
    check(
        [(p.id, p.event, p.data) for p in rest] == [(p.id, p.event, p.data) for p in after],
        f"a join after event {mid.id} gives exactly the later events: {[p.event for p in rest]}",
    )
    modes_only = drain(client.runs.join_stream(tid, run["run_id"], last_event_id="-1", stream_mode="custom"))
    check({p.event for p in modes_only} == {"metadata", "custom", "end"}, "a join in fewer modes")
    check(texts(client.runs.join(tid, run["run_id"])) == AGENT_ANSWER, "join answers the final state")
    runs = client.runs.list(tid)
    check([r["run_id"] for r in runs] == [run["run_id"]] and runs[0]["status"] == "success", "runs.list")

    # Cancel with wait: the run is interrupted, its node left to resume.
    tid = client.threads.create()["thread_id"]
    slow = client.runs.create(tid, "delay", input={"messages": "x", "delay": 60000}, durability="sync")
    until(
        "the slow run to enter its node",
        lambda: (
            client.runs.get(tid, slow["run_id"])["status"] == "running"
            and client.threads.get_state(tid)["next"] == ["long_running"]
        ),
    )
    client.runs.cancel(tid, slow["run_id"], wait=True)
    check(client.runs.get(tid, slow["run_id"])["status"] == "interrupted", "a cancelled run is interrupted")
    check(client.threads.get(tid)["status"] == "interrupted", "its thread can resume the node")

    # Cancel with rollback: the run and what it wrote are gone.
    tid = client.threads.create()["thread_id"]
    client.runs.wait(tid, "echo", input={"messages": [{"role": "user", "content": "kept"}]})
    doomed = client.runs.create(tid, "delay", input={"messages": "gone", "delay": 60000})
    until("the doomed run to run", lambda: client.runs.get(tid, doomed["run_id"])["status"] == "running")
    client.runs.cancel(tid, doomed["run_id"], wait=True, action="rollback")
    try:
        client.runs.get(tid, doomed["run_id"])
        check(False, "a rolled back run is still there")
    except NotFoundError:
        pass
    check(texts(client.threads.get_state(tid)["values"]) == ["kept", "echo: kept"], "rollback restores the state")
    check(client.threads.get(tid)["status"] == "idle", "idle after a rollback")

    # cancel_many: every pending run of a thread, by id.
    tid = client.threads.create()["thread_id"]
    later = [
        client.runs.create(tid, "echo", input=FOO, after_seconds=600, multitask_strategy="enqueue") for _ in range(2)
    ]
    client.runs.cancel_many(thread_id=tid, run_ids=[r["run_id"] for r in later])
    until(
        "the pending runs to be cancelled",
        lambda: all(client.runs.get(tid, r["run_id"])["status"] == "interrupted" for r in later),
    )
    client.runs.delete(tid, later[0]["run_id"])
    check([r["run_id"] for r in client.runs.list(tid)] == [later[1]["run_id"]], "runs.delete")


with get_sync_client(url=URL, api_key=None) as c:
    modes(c)
    interrupts(c)
    stateless(c)
    join_and_cancel(c)
print("ok")
