"""The run surfaces of hosted Python graphs (scenarios/hosted/python/visits/long.py) through the
official Python SDK: a long node cancelled promptly (both cancel actions), the four multitask
strategies, the events, checkpoints, tasks, custom and debug stream modes with subgraph
namespaces (three levels of subgraphs in the reference's order), two interrupts at once resumed
by id, Command update and goto, several state updates at once, context, durability, the
recursion limit and the thread-centric protocol.

Run by TestHostedPythonRuns; JETGRAPH_URL names the server.
"""

import asyncio
import os
import re
import sys
import time
from typing import Any

from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import ConflictError, NotFoundError
from langgraph_sdk.schema import Command, StreamMode

import checks
from checks import check, texts, until_async

URL = os.environ["JETGRAPH_URL"]
checks.label = "hosted runs"


def msgs(*words: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": w} for w in words]}


async def status(client: LangGraphClient, tid: str, rid: str) -> str:
    return str((await client.runs.get(tid, rid))["status"])


async def busy_thread(client: LangGraphClient) -> tuple[str, str]:
    """A thread with one finished run, then a long run that is inside its waiting node."""
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(tid, "long", input=msgs("before"))
    run = await client.runs.create(tid, "long", input={**msgs("slow"), "delay": 600}, context={"who": "Ada"})

    async def inside() -> bool:
        state = await client.threads.get_state(tid)
        return await status(client, tid, run["run_id"]) == "running" and list(state["next"]) == ["wait"]

    await until_async("the long run to enter its node", inside)
    return tid, run["run_id"]


async def cancel(client: LangGraphClient) -> None:
    """A run waiting 600 s in its node, cancelled: "interrupt" keeps the run (interrupted) and its
    finished steps; "rollback" deletes the run and what it wrote."""
    tid, first = await busy_thread(client)
    start = time.monotonic()
    await client.runs.cancel(tid, first, wait=True)
    took = time.monotonic() - start
    check(took < 5, f"cancel of a node waiting 600 s took {took:.1f}s")
    check(await status(client, tid, first) == "interrupted", "a cancelled run is interrupted")
    th = await client.threads.get(tid)
    check(th["status"] == "interrupted", f"the thread of a cancelled run (the reference dev server: interrupted): {th['status']}")
    state = await client.threads.get_state(tid)
    check(texts(state["values"])[-2:] == ["slow", "prepared for Ada"] and state["next"] == ["wait"],
          f"a cancelled run keeps its finished steps: {state['values']} next {state['next']}")

    tid, first = await busy_thread(client)
    start = time.monotonic()
    await client.runs.cancel(tid, first, wait=True, action="rollback")
    check(time.monotonic() - start < 5, "cancel with rollback was prompt")
    await until_async("the rolled back run to go", lambda: gone(client, tid, first))
    th = await client.threads.get(tid)
    check(th["status"] == "idle", f"the thread of a rolled back run: {th['status']}")
    state = await client.threads.get_state(tid)
    check(texts(state["values"]) == ["before", "prepared for nobody", "waited 0s"] and state["next"] == [],
          f"a rolled back run leaves nothing: {state['values']} next {state['next']}")


async def gone(client: LangGraphClient, tid: str, rid: str) -> bool:
    try:
        await client.runs.get(tid, rid)
        return False
    except NotFoundError:
        return True


async def reject(client: LangGraphClient) -> None:
    tid, first = await busy_thread(client)
    try:
        await client.runs.create(tid, "long", input=msgs("no"), multitask_strategy="reject")
        check(False, "reject: a second run on a busy thread was accepted")
    except ConflictError as e:
        check("already running a task" in str(e), f"reject's message: {e}")
    check([r["run_id"] for r in await client.runs.list(tid, status="running")] == [first], "reject: only the first runs")
    await client.runs.cancel(tid, first, wait=True)


async def interrupt(client: LangGraphClient) -> None:
    tid, first = await busy_thread(client)
    start = time.monotonic()
    second = await client.runs.create(tid, "long", input={**msgs("now"), "delay": 0}, multitask_strategy="interrupt")
    out = await client.runs.join(tid, second["run_id"])
    check(time.monotonic() - start < 10, "interrupt: the first run stopped promptly")
    check(await status(client, tid, first) == "interrupted", "interrupt: the first run is interrupted")
    check(await status(client, tid, second["run_id"]) == "success", "interrupt: the second run succeeded")
    check(texts(out) == ["before", "prepared for nobody", "waited 0s", "slow", "prepared for Ada", "now",
                         "prepared for nobody", "waited 0s"], f"interrupt: state {texts(out)}")


async def rollback(client: LangGraphClient) -> None:
    tid, first = await busy_thread(client)
    second = await client.runs.create(tid, "long", input=msgs("instead"), multitask_strategy="rollback")
    out = await client.runs.join(tid, second["run_id"])
    check(await gone(client, tid, first), "rollback: the first run is still there")
    check(texts(out) == ["before", "prepared for nobody", "waited 0s", "instead", "prepared for nobody", "waited 0s"],
          f"rollback: state {texts(out)}")


async def enqueue(client: LangGraphClient) -> None:
    tid = (await client.threads.create())["thread_id"]
    first = await client.runs.create(tid, "long", input={**msgs("one"), "delay": 1.5})
    second = await client.runs.create(tid, "long", input=msgs("two"), multitask_strategy="enqueue")
    check(await status(client, tid, second["run_id"]) == "pending", "enqueue: pending while the first runs")
    out = await client.runs.join(tid, second["run_id"])
    check(await status(client, tid, first["run_id"]) == "success", "enqueue: the first run finished")
    check(texts(out) == ["one", "prepared for nobody", "waited 1.5s", "two", "prepared for nobody", "waited 1.5s"],
          f"enqueue: both ran in order: {texts(out)}")


async def stream_modes(client: LangGraphClient) -> None:
    tid = (await client.threads.create())["thread_id"]
    parts = [p async for p in client.runs.stream(
        tid, "long", input=msgs("hi"), context={"who": "Bo"},
        stream_mode=["custom", "tasks", "checkpoints", "debug", "events"])]
    kinds = [p.event for p in parts]
    check("error" not in kinds, f"the streamed run failed: {parts}")
    custom = [p.data for p in parts if p.event == "custom"]
    check(custom == [{"progress": "prepared"}], f"custom: {custom}")
    tasks = [p.data for p in parts if p.event == "tasks"]
    starts = [t["name"] for t in tasks if "input" in t]
    ends = [(t["name"], t.get("error")) for t in tasks if "result" in t]
    check(starts == ["prep", "wait"] and ends == [("prep", None), ("wait", None)], f"tasks: {tasks}")
    cps = [p.data for p in parts if p.event == "checkpoints"]
    check([c["metadata"]["step"] for c in cps] == [-1, 0, 1, 2], f"checkpoints' steps: {cps}")
    check(cps[-1]["next"] == [] and texts(cps[-1]["values"])[-1] == "waited 0s"
          and cps[-1]["parent_config"]["configurable"]["checkpoint_id"] == cps[-2]["config"]["configurable"]["checkpoint_id"],
          f"the last checkpoint: {cps[-1]}")
    # Each step's tasks follow the checkpoint before them, with the step the reference gives.
    debug = [(p.data["type"], p.data["step"]) for p in parts if p.event == "debug"]
    check(debug == [("checkpoint", -1), ("checkpoint", 0), ("task", 1), ("task_result", 1), ("checkpoint", 1),
                    ("task", 2), ("task_result", 2), ("checkpoint", 2)], f"debug events: {debug}")
    events = [p.data for p in parts if p.event == "events"]
    names = {(e["event"], e["name"]) for e in events}
    check({("on_chain_start", "prep"), ("on_chain_end", "wait")} <= names, f"events: {sorted(names)}")
    check(texts(events[-1]["data"]["output"])[-1] == "waited 0s" if events[-1]["event"] == "on_chain_end" else False,
          f"the last event ends the graph with its output: {events[-1]}")


async def context_limits(client: LangGraphClient) -> None:
    out = await client.runs.wait(None, "long", input=msgs("c"), context={"who": "Cy"})
    check(texts(out)[-2] == "prepared for Cy", f"the run's context reached the node: {texts(out)}")
    tid = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(tid, "loop", input=msgs("l"), config={"recursion_limit": 4}, raise_error=False)
    err = out.get("__error__") if isinstance(out, dict) else None
    check(err is not None and err["error"] == "GraphRecursionError" and "Recursion limit of 4 reached" in err["message"],
          f"the recursion limit's error: {out}")
    check((await client.threads.get(tid))["status"] == "error", "the thread of a run over its recursion limit")
    # durability "exit" keeps only the run's last checkpoint; "sync" and "async" every step's.
    for durability, want in (("exit", 1), ("sync", 4), ("async", 4)):
        tid = (await client.threads.create())["thread_id"]
        await client.runs.wait(tid, "long", input=msgs("d"), durability=durability)
        history = await client.threads.get_history(tid, limit=10)
        check(len(history) == want and texts(history[0]["values"])[-1] == "waited 0s",
              f"durability {durability}: {len(history)} checkpoints, {[h['metadata']['step'] for h in history]}")


async def interrupts_at_once(client: LangGraphClient) -> None:
    """pair's two parallel nodes each call interrupt(): the run stops with both, and one
    Command(resume={id: value, ...}) answers each by its id."""
    tid = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(tid, "pair", input=msgs("go"))
    asked = {i["value"]: i["id"] for i in out.get("__interrupt__", [])} if isinstance(out, dict) else {}
    check(set(asked) == {"a?", "b?"}, f"both interrupts in the waited run's output: {out}")
    state = await client.threads.get_state(tid)
    check(sorted(state["next"]) == ["ask_a", "ask_b"], f"both nodes pending: {state['next']}")
    check(sorted(i["value"] for i in state["interrupts"]) == ["a?", "b?"], f"the state's interrupts: {state['interrupts']}")
    tasks = {t["name"]: [i["id"] for i in t["interrupts"]] for t in state["tasks"]}
    check(tasks == {"ask_a": [asked["a?"]], "ask_b": [asked["b?"]]}, f"each task its interrupt: {state['tasks']}")
    th = await client.threads.get(tid)
    by_task = {i["value"]: i["id"] for its in th["interrupts"].values() for i in its}
    check(th["status"] == "interrupted" and by_task == asked,
          f"the thread's interrupts by id: {th['status']} {th['interrupts']}")
    out = await client.runs.wait(tid, "pair", command=Command(resume={asked["a?"]: "yes", asked["b?"]: "no"}))
    check(texts(out) == ["go", "a: yes", "b: no", "after"], f"resumed by id: {texts(out)}")
    check((await client.threads.get(tid))["status"] == "idle", "the answered thread is idle")
    # One answered of two: the step stays open with the other interrupt only (read live, as the
    # reference answers: the answered task finished, its interrupt gone).
    tid = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(tid, "pair", input=msgs("half"))
    asked = {i["value"]: i["id"] for i in out["__interrupt__"]}
    out = await client.runs.wait(tid, "pair", command=Command(resume={asked["a?"]: "only"}))
    check([i["id"] for i in out.get("__interrupt__", [])] == [asked["b?"]], f"the other interrupt still asked: {out}")
    state = await client.threads.get_state(tid)
    check(state["next"] == ["ask_b"] and [i["id"] for i in state["interrupts"]] == [asked["b?"]],
          f"one answered of two: next {state['next']} interrupts {state['interrupts']}")
    check({t["name"]: len(t["interrupts"]) for t in state["tasks"]} == {"ask_a": 0, "ask_b": 1}, f"tasks: {state['tasks']}")


async def command_goto(client: LangGraphClient) -> None:
    """Command(update=..., goto=...) starts a run at a node with an update."""
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(tid, "long", input=msgs("first"))
    out = await client.runs.wait(tid, "long", command=Command(update=msgs("jumped"), goto="wait"))
    check(texts(out) == ["first", "prepared for nobody", "waited 0s", "jumped", "waited 0s"], f"goto wait: {texts(out)}")


async def supersteps(client: LangGraphClient) -> None:
    """Several updates at once: a thread created with supersteps of updates (as_node, or a
    command), one checkpoint each, and runs that go on from them."""
    th = await client.threads.create(graph_id="pair", supersteps=[
        {"updates": [{"values": msgs("one"), "as_node": "ask_a"}]},
        {"updates": [{"values": {"messages": [{"type": "ai", "content": "a: 1"}]}, "as_node": "ask_a"},
                     {"values": {"messages": [{"type": "ai", "content": "b: 2"}]}, "as_node": "ask_b"}]},
    ])
    tid = th["thread_id"]
    state = await client.threads.get_state(tid)
    # next is left out: the library's get_state answers ["after"] (both sides of the join were
    # updated), the reference dev server []; both then run `after`, checked below.
    check(texts(state["values"]) == ["one", "a: 1", "b: 2"], f"supersteps' state: {state['values']}")
    history = await client.threads.get_history(tid)
    check([(h["metadata"]["source"], h["metadata"]["step"]) for h in history] == [("update", 1), ("update", 0)],
          f"one checkpoint per superstep: {[h['metadata'] for h in history]}")
    out = await client.runs.wait(tid, "pair", input=None)
    check(texts(out) == ["one", "a: 1", "b: 2", "after"], f"a run after the supersteps goes on with the join: {texts(out)}")
    # A command among the updates: its update written as the node's, its goto the next step
    # (the reference answers the same, the __input__ superstep's message included in neither).
    th = await client.threads.create(graph_id="long", supersteps=[
        {"updates": [{"values": msgs("lost"), "as_node": "__input__"}]},
        {"updates": [{"values": None, "command": {"update": {"messages": [{"type": "ai", "content": "cmd"}]}, "goto": "wait"},
                      "as_node": "prep"}]},
    ])
    state = await client.threads.get_state(th["thread_id"])
    check(texts(state["values"]) == ["cmd"] and state["next"] == ["wait"], f"a command superstep: {state['values']} next {state['next']}")
    out = await client.runs.wait(th["thread_id"], "long", input=None)
    check(texts(out) == ["cmd", "waited 0s"], f"a run after a command superstep goes to its goto: {texts(out)}")


async def subgraph_streams(client: LangGraphClient) -> None:
    """wrapped runs long as its node `inner`: with stream_subgraphs the subgraph's events carry
    its namespace (custom, updates, tasks)."""
    parts = [p async for p in client.runs.stream(
        None, "wrapped", input=msgs("sub"), stream_mode=["custom", "updates", "tasks"], stream_subgraphs=True)]
    check(all(p.event != "error" for p in parts), f"the streamed run failed: {parts}")
    custom = [p.event for p in parts if p.event.startswith("custom")]
    check(len(custom) == 1 and custom[0].startswith("custom|inner:"), f"custom from the subgraph: {custom}")
    updates = [(p.event.split("|")[0], p.event.count("|"), list(p.data)) for p in parts if p.event.startswith("updates")]
    check(updates == [("updates", 1, ["prep"]), ("updates", 1, ["wait"]), ("updates", 0, ["inner"]), ("updates", 0, ["after"])],
          f"updates with namespaces: {updates}")
    tasks = [(p.event.count("|"), p.data["name"]) for p in parts if p.event.startswith("tasks") and "input" in p.data]
    check(tasks == [(0, "inner"), (1, "prep"), (1, "wait"), (0, "after")], f"tasks with namespaces: {tasks}")


async def subgraph_order(client: LangGraphClient) -> None:
    """generations nests three levels of subgraphs: with stream_subgraphs, each level's tasks,
    checkpoints and debug events come in the reference's order, with the reference's steps."""
    async def streamed(mode: StreamMode) -> list[tuple[int, Any]]:
        tid = (await client.threads.create())["thread_id"]
        parts = [p async for p in client.runs.stream(
            tid, "generations", input={"words": []}, stream_mode=mode, stream_subgraphs=True)]
        check(all(p.event != "error" for p in parts), f"the streamed run failed: {parts}")
        ours = [p for p in parts if p.event.split("|")[0] == mode]
        names = {p.event for p in ours}
        uuid = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
        check(len(names) == 3 and all(re.fullmatch(f"{mode}(\\|gp_two:{uuid}(\\|p_two:{uuid})?)?", n) for n in names),
              f"{mode}: the namespaces {sorted(names)}")
        return [(p.event.count("|"), p.data) for p in ours]

    debug = [f"{n} {d['type']} {d['step']}" for n, d in await streamed("debug")]
    check(debug == ["0 checkpoint -1", "0 checkpoint 0", "0 task 1", "0 task_result 1", "0 checkpoint 1", "0 task 2",
                    "1 checkpoint -1", "1 checkpoint 0", "1 task 1", "1 task_result 1", "1 checkpoint 1", "1 task 2",
                    "2 checkpoint -1", "2 checkpoint 0", "2 task 1", "2 task_result 1", "2 checkpoint 1", "2 task 2",
                    "2 task_result 2", "2 checkpoint 2", "1 task_result 2", "1 checkpoint 2",
                    "0 task_result 2", "0 checkpoint 2"], f"debug events of the subgraphs: {debug}")
    cps = [f"{n} {d['metadata']['step']} {','.join(d['next'])} {len(d['values'].get('words', []))}"
           for n, d in await streamed("checkpoints")]
    check(cps == ["0 -1 __start__ 0", "0 0 gp_one 0", "0 1 gp_two 1", "1 -1 __start__ 0", "1 0 p_one 1", "1 1 p_two 2",
                  "2 -1 __start__ 0", "2 0 c_one 2", "2 1 c_two 3", "2 2  4", "1 2  4", "0 2  4"],
          f"checkpoints of the subgraphs: {cps}")
    tasks = [f"{n} {d['name']} {'start' if 'input' in d else 'result'}" for n, d in await streamed("tasks")]
    check(tasks == ["0 gp_one start", "0 gp_one result", "0 gp_two start", "1 p_one start", "1 p_one result",
                    "1 p_two start", "2 c_one start", "2 c_one result", "2 c_two start", "2 c_two result",
                    "1 p_two result", "0 gp_two result"], f"tasks of the subgraphs: {tasks}")


async def thread_stream(client: LangGraphClient) -> None:
    """The thread-centric protocol on a hosted graph: pair's two interrupts seen through the SDK,
    each answered by its id, and the run's values to the end."""
    async with client.threads.stream(assistant_id="pair") as thread:
        events: list[dict[str, Any]] = []

        async def read() -> None:
            async for ev in thread.events:
                events.append(ev)

        reader = asyncio.create_task(read())
        await asyncio.sleep(0.2)
        await thread.run.start(input=msgs("ts"))
        await until_async("both interrupts", lambda: asyncio.sleep(0, len(thread.interrupts) == 2))
        asked = {e["params"]["data"]["payload"]: e["params"]["data"]["interrupt_id"]
                 for e in events if e.get("method") == "input.requested"}
        by_value = {k: v for k, v in asked.items() if v in {i["interrupt_id"] for i in thread.interrupts}}
        check(set(by_value) == {"a?", "b?"}, f"the thread's interrupts: {thread.interrupts}, asked {asked}")
        await thread.run.respond("x", interrupt_id=by_value["a?"])
        await thread.run.respond("y", interrupt_id=by_value["b?"])
        out = await thread.output.with_timeout(30)
        reader.cancel()
    check(texts(out) == ["ts", "a: x", "b: y", "after"], f"the thread stream's output: {out}")
    requested = [e for e in events if e.get("method") == "input.requested"]
    # As on the reference: the first answer resumes a run that asks the other question again.
    check([e["params"]["data"]["payload"] for e in requested] == ["a?", "b?", "b?"], f"input.requested: {requested}")


SECTIONS = (cancel, reject, interrupt, rollback, enqueue, stream_modes, context_limits, interrupts_at_once,
            command_goto, supersteps, subgraph_streams, subgraph_order, thread_stream)


async def main() -> None:
    """Runs every section, or those named on the command line."""
    only = set(sys.argv[1:])
    async with get_client(url=URL, api_key=None) as client:
        for section in SECTIONS:
            if not only or section.__name__ in only:
                await section(client)


asyncio.run(main())
print("ok")
