"""The official Python SDK against Python LangGraph graphs that jetgraph hosts (scenarios/hosted/python).

Run by TestHostedPython; JETGRAPH_URL names the server.
"""

import asyncio
import os
import sys
from typing import Any

from langgraph_sdk import get_client

URL = os.environ["JETGRAPH_URL"]


def check(cond: bool, what: str) -> None:
    if not cond:
        sys.exit(f"FAIL: {what}")


def contents(values: dict[str, Any]) -> list[str]:
    return [m["content"] for m in values.get("messages", [])]


async def main() -> None:
    client = get_client(url=URL)
    graphs = {a["graph_id"] for a in await client.assistants.search(limit=100)}
    check({"visits", "greeter", "echo"} <= graphs, f"the system assistants of the config's graphs: {graphs}")

    # A waited run that stops at the graph's interrupt.
    thread = await client.threads.create()
    tid = thread["thread_id"]
    out = await client.runs.wait(tid, "visits", input={"messages": [{"role": "user", "content": "Ada"}]})
    check(contents(out) == ["Ada", "hello Ada (visit 1)"], f"wait answered the state: {out}")
    interrupts = out.get("__interrupt__") or []
    check(len(interrupts) == 1 and interrupts[0]["value"] == {"question": "continue?"}, f"wait's interrupt: {out}")
    msgs = out["messages"]
    check(msgs[0]["type"] == "human" and msgs[1]["type"] == "ai" and msgs[1]["id"] == "greet-1",
          f"messages as LangChain message dicts: {msgs}")
    check(out["profile"] == {"name": "Ada", "visits": 1}, f"a pydantic model as its dict: {out['profile']}")

    state = await client.threads.get_state(tid)
    check(state["next"] == ["ask"], f"state next: {state['next']}")
    task = state["tasks"][0]
    check(task["name"] == "ask" and task["interrupts"][0]["value"] == {"question": "continue?"}
          and task["interrupts"][0]["id"] == interrupts[0]["id"], f"state task with its interrupt: {task}")
    th = await client.threads.get(tid)
    check(th["status"] == "interrupted", f"thread status: {th['status']}")
    check(contents(th["values"]) == ["Ada", "hello Ada (visit 1)"], f"thread values: {th['values']}")

    # Resumed with a command, streamed in values and updates.
    seen: list[tuple[str, Any]] = []
    async for part in client.runs.stream(tid, "visits", command={"resume": "yes"}, stream_mode=["values", "updates"]):
        seen.append((part.event, part.data))
    events = [e for e, _ in seen]
    check("error" not in events, f"the resumed run failed: {seen}")
    updates = [d for e, d in seen if e == "updates"]
    check(any("ask" in u for u in updates), f"an update of ask: {updates}")
    values = [d for e, d in seen if e == "values"]
    check(contents(values[-1]) == ["Ada", "hello Ada (visit 1)", "Ada said yes"], f"last values: {values[-1]}")

    history = await client.threads.get_history(tid, limit=10)
    steps = [h["metadata"]["step"] for h in history]
    check(steps == [2, 1, 0, -1], f"history steps: {steps}")
    check(history[0]["next"] == [] and history[1]["next"] == ["ask"], f"history next: {[h['next'] for h in history]}")
    check(history[1]["parent_checkpoint"]["checkpoint_id"] == history[2]["checkpoint"]["checkpoint_id"],
          "history parents chain")
    th = await client.threads.get(tid)
    check(th["status"] == "idle", f"thread status after resume: {th['status']}")

    # A state update as a node, by the library's rules; a copy of the thread reads the same.
    await client.threads.update_state(tid, {"messages": [{"role": "user", "content": "more"}]}, as_node="ask")
    state = await client.threads.get_state(tid)
    check(contents(state["values"])[-1] == "more" and state["next"] == [] and state["metadata"]["source"] == "update",
          f"state after update: {state}")
    copy = await client.threads.copy(tid)
    cstate = await client.threads.get_state(copy["thread_id"])
    check(cstate["values"] == state["values"], f"the copy's state: {cstate['values']}")

    # The graph's store is jetgraph's: the API reads what the node wrote, the next visit counts on it.
    item = await client.store.get_item(["users", "Ada"], "profile")
    check(item is not None and item["value"] == {"visits": 1}, f"store item: {item}")
    t2 = await client.threads.create()
    out = await client.runs.wait(t2["thread_id"], "visits", input={"messages": [{"role": "user", "content": "Ada"}]})
    check(contents(out)[-1] == "hello Ada (visit 2)", f"second visit: {out}")

    # A factory graph built from an assistant's config, on a thread and stateless.
    assistant = await client.assistants.create("greeter", config={"configurable": {"greeting": "Howdy"}})
    t3 = await client.threads.create()
    out = await client.runs.wait(t3["thread_id"], assistant["assistant_id"], input={"messages": [{"role": "user", "content": "Bo"}]})
    check(contents(out) == ["Bo", "Howdy, Bo"], f"factory graph: {out}")
    # A static interrupt asked by the run: it stops before the node, and a run without input goes on.
    await client.runs.wait(t3["thread_id"], assistant["assistant_id"], input={"messages": [{"role": "user", "content": "Di"}]},
                           interrupt_before=["say"])
    state = await client.threads.get_state(t3["thread_id"])
    check(state["next"] == ["say"] and contents(state["values"])[-1] == "Di", f"stopped before say: {state}")
    out = await client.runs.wait(t3["thread_id"], assistant["assistant_id"], input=None)
    check(contents(out)[-1] == "Howdy, Di", f"went on after the static interrupt: {out}")
    out = await client.runs.wait(None, "greeter", input={"messages": [{"role": "user", "content": "Cy"}]})
    check(contents(out) == ["Cy", "Hello, Cy"], f"stateless factory run: {out}")

    # A chat model's tokens, streamed as they come (messages-tuple: the chunk and its metadata).
    tokens: list[str] = []
    async for part in client.runs.stream(None, "chat", input={"messages": [{"role": "user", "content": "hi"}]},
                                         stream_mode="messages-tuple"):
        if part.event == "messages":
            chunk, meta = part.data
            check(chunk["type"] == "AIMessageChunk" and meta["langgraph_node"] == "chat", f"a token: {part.data}")
            tokens.append(chunk["content"])
    check(len(tokens) > 1 and "".join(tokens) == "hello there friend", f"streamed tokens: {tokens}")

    # A node's exception is the run's error, in the reference servers' shape.
    t4 = await client.threads.create()
    out = await client.runs.wait(t4["thread_id"], "failing", input={"messages": [{"role": "user", "content": "x"}]},
                                 raise_error=False)
    check(out == {"__error__": {"error": "ValueError", "message": "the node broke"}}, f"the failing run: {out}")
    runs = await client.runs.list(t4["thread_id"])
    check([r["status"] for r in runs] == ["error"], f"the failing run's status: {runs}")
    check((await client.threads.get(t4["thread_id"]))["status"] == "error", "the failing run's thread status")

    # The graph's drawing and schemas come from the library, in the reference dev server's shapes
    # (it answered these same values for this graph).
    visits = (await client.assistants.search(graph_id="visits"))[0]["assistant_id"]
    drawn = await client.assistants.get_graph(visits)
    check(drawn == {
        "nodes": [{"id": "__start__", "type": "runnable", "data": {"name": "__start__"}},
                  {"id": "greet", "type": "runnable", "data": {"name": "greet"}},
                  {"id": "ask", "type": "runnable", "data": {"name": "ask"}},
                  {"id": "__end__"}],
        "edges": [{"source": "__start__", "target": "greet"}, {"source": "greet", "target": "ask"},
                  {"source": "ask", "target": "__end__"}]}, f"the drawn graph: {drawn}")
    check(await client.assistants.get_graph(visits, xray=True) == drawn, "xray without subgraphs")
    schemas = await client.assistants.get_schemas(visits)
    check(schemas["graph_id"] == "visits", f"schemas' graph: {schemas['graph_id']}")
    for key, title in (("input_schema", "State"), ("output_schema", "State"), ("state_schema", "visits_state")):
        check(schemas[key]["title"] == title and list(schemas[key]["properties"]) == ["messages", "profile"],
              f"{key}: {schemas[key].get('title')} {list(schemas[key].get('properties', {}))}")
    check("Profile" in schemas["input_schema"]["$defs"], "the pydantic model in the input schema")
    check(schemas["config_schema"] == {} and schemas["context_schema"] is None,
          f"config and context: {schemas['config_schema']} {schemas['context_schema']}")

    # A subgraph: xray draws its nodes in the parent's place, and a run streamed with subgraphs
    # names the subgraph's events by the parent's node and task (the reference answered the same).
    nested = (await client.assistants.search(graph_id="nested"))[0]["assistant_id"]
    drawn = await client.assistants.get_graph(nested, xray=True)
    check(drawn == {
        "nodes": [{"id": "__start__", "type": "runnable", "data": {"name": "__start__"}},
                  {"id": "outer_word", "type": "runnable", "data": {"name": "outer_word"}},
                  {"id": "__end__"},
                  {"id": "child:inner_word", "type": "runnable", "data": {"name": "child:inner_word"}}],
        "edges": [{"source": "__start__", "target": "child:inner_word"},
                  {"source": "child:inner_word", "target": "outer_word"},
                  {"source": "outer_word", "target": "__end__"}]}, f"the xray drawing: {drawn}")
    flat = await client.assistants.get_graph(nested)
    check([n["id"] for n in flat["nodes"]] == ["__start__", "child", "outer_word", "__end__"], f"without xray: {flat}")
    subs = await client.assistants.get_subgraphs(nested, recurse=True)
    check(list(subs) == ["child"] and subs["child"]["input_schema"]["title"] == "State"
          and list(subs["child"]["state_schema"]["properties"]) == ["words"], f"the subgraphs: {subs}")
    parts = [(p.event, p.data) async for p in client.runs.stream(None, "nested", input={"words": []},
                                                                  stream_mode="updates", stream_subgraphs=True)]
    # jetgraph closes every stream with an "end" event, which the reference dev server (0.16.7) did
    # not send here; the SDK ignores it.
    parts = [(e, d) for e, d in parts if e not in ("metadata", "end")]
    events = [e for e, _ in parts]
    check(len(events) == 3 and events[0].startswith("updates|child:") and events[1:] == ["updates", "updates"],
          f"subgraph events: {events}")
    check([d for _, d in parts] == [
        {"inner_word": {"words": ["inner"]}}, {"child": {"words": ["inner"]}},
        {"outer_word": {"words": ["inner", "outer"]}}], f"subgraph updates: {parts}")

    # A subgraph's own interrupt: the parent stops inside it, the thread's state with subgraphs
    # shows the subgraph's state under its task, and a resume finishes both (as the reference).
    t5 = await client.threads.create()
    await client.runs.wait(t5["thread_id"], "asking", input={"words": []})
    state = await client.threads.get_state(t5["thread_id"], subgraphs=True)
    task = state["tasks"][0]
    check(state["next"] == ["child"] and task["name"] == "child" and task["interrupts"][0]["value"] == "a word?",
          f"stopped in the subgraph: {state}")
    check(task["state"]["values"] == {"words": []} and task["state"]["next"] == ["inner_ask"]
          and task["state"]["checkpoint"]["checkpoint_ns"].startswith("child:"), f"the subgraph's state: {task}")
    # The subgraph's checkpoint reads as its own state (the reference answered the same).
    sub = await client.threads.get_state(t5["thread_id"], checkpoint=task["state"]["checkpoint"])
    check(sub["values"] == {"words": []} and sub["next"] == ["inner_ask"]
          and sub["checkpoint"]["checkpoint_ns"] == task["state"]["checkpoint"]["checkpoint_ns"], f"the subgraph's checkpoint: {sub}")
    out = await client.runs.wait(t5["thread_id"], "asking", command={"resume": "yes"})
    check(out == {"words": ["yes"]}, f"resumed in the subgraph: {out}")

    # Go graphs beside the hosted ones.
    out = await client.runs.wait(None, "echo", input={"messages": [{"role": "user", "content": "hi"}]})
    check(contents(out)[-1] == "echo: hi", f"the Go echo graph: {out}")


asyncio.run(main())
print("ok")
