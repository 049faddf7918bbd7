"""The official Python langsmith client against jetgraph's tracing service, as its users run it.

Run by TestPythonTracing with LANGSMITH_ENDPOINT, LANGSMITH_API_KEY and LANGSMITH_TRACING set
(the README's recipe). The argument names how the client sends runs:

- ``zstd``: the default, a zstd-compressed multipart stream (the server announces
  ``zstd_compression_enabled``);
- ``plain``: LANGSMITH_DISABLE_RUN_COMPRESSION=true, uncompressed multipart with a
  Content-Length on each part;
- ``batch``: a server whose /info says it has no multipart endpoint: JSON to /runs/batch;
- ``direct``: ``Client(auto_batch_tracing=False)``: one POST /runs and PATCH /runs/{id} each.

Each mode traces the same program (a chain calling a streamed llm, a chat-completions llm, a tool
and a failing tool) into its own project, flushes, and reads it back with the same client's v1
reads. ``zstd`` then goes on with projects, feedback and the v2 reads (tracing_reads.py).
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import datetime
from typing import Any
from urllib.parse import urlparse

import requests
from langsmith import Client, traceable

import checks
from checks import check, native_reply, note_run, poll

MODE = sys.argv[1]
checks.label = MODE
SUFFIX = uuid.uuid4().hex[:8]
PROJECT = f"py-{MODE}-{SUFFIX}"

USAGE = {"input_tokens": 12, "output_tokens": 5, "total_tokens": 17}
# 8 of the prompt's tokens were read from the provider's cache, priced at $0.075 per million.
CHAT_USAGE = {"input_tokens": 20, "output_tokens": 2, "total_tokens": 22, "input_token_details": {"cache_read": 8}}
# gpt-4o-mini's default prices: $0.15 and $0.60 per million input and output tokens.
PRICE_IN, PRICE_OUT = 0.15e-6, 0.6e-6
COST = 12 * PRICE_IN + 5 * PRICE_OUT
CHAT_COST = 12 * PRICE_IN + 8 * 0.075e-6 + 2 * PRICE_OUT
# The streamed model's first token comes this long after it started.
FIRST_TOKEN_DELAY = 0.05


def close(a: float | None, b: float, what: str) -> None:
    check(a is not None and abs(a - b) < 1e-12, f"{what}: {a}, want {b}")


class RecordingSession(requests.Session):
    """Logs "METHOD /path content-encoding" of every request the client makes."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[str] = []

    def request(self, method: str, url: str | bytes, *args: Any, **kwargs: Any) -> requests.Response:
        headers = kwargs.get("headers") or {}
        enc = headers.get("Content-Encoding", "")
        self.log.append(f"{method} {urlparse(str(url)).path} {enc}".strip())
        return super().request(method, url, *args, **kwargs)

    def sent(self, prefix: str) -> list[str]:
        return [r for r in self.log if r.startswith(prefix)]


def make_client(session: RecordingSession, errors: list[Exception]) -> Client:
    if MODE == "batch":
        info = requests.get(os.environ["LANGSMITH_ENDPOINT"] + "/info", timeout=10).json()
        info["batch_ingest_config"]["use_multipart_endpoint"] = False
        return Client(session=session, info=info, tracing_error_callback=errors.append)
    if MODE == "direct":
        return Client(session=session, auto_batch_tracing=False, tracing_error_callback=errors.append)
    return Client(session=session, tracing_error_callback=errors.append)


def send_trace(client: Client) -> dict[str, str]:
    """Traces one question into PROJECT and returns the ids of its runs by role."""
    ids: dict[str, str] = {}

    def here(role: str) -> None:
        note_run(ids, role)

    @traceable(
        run_type="llm", name="fake-chat", reduce_fn=native_reply(USAGE),
        metadata={"ls_provider": "openai", "ls_model_name": "gpt-4o-mini"},
    )
    def stream_model(messages: list[dict[str, Any]]) -> Iterator[str]:
        here("llm")
        time.sleep(FIRST_TOKEN_DELAY)
        for token in ["2 + 3 * 4", " is", " 14", "."]:
            yield token
            time.sleep(0.005)

    @traceable(run_type="llm", name="summarise", metadata={"ls_provider": "openai", "ls_model_name": "gpt-4o-mini"})
    def chat_model(messages: list[dict[str, Any]]) -> dict[str, Any]:
        here("chat")
        # The chat-completions shape, normalised by the server to the native one.
        return {"choices": [{"message": {"role": "assistant", "content": "Fourteen."}}], "usage_metadata": CHAT_USAGE}

    @traceable(run_type="tool", name="calculator", tags=["math"])
    def calculator(expression: str) -> dict[str, str]:
        here("tool")
        return {"result": str(2 + 3 * 4)}

    @traceable(run_type="tool", name="broken-tool")
    def broken(expression: str) -> str:
        here("broken")
        raise ValueError(f"cannot parse {expression!r}")

    @traceable(run_type="chain", name="agent-chain", metadata={"thread_id": f"conv-{SUFFIX}"})
    def agent(question: str) -> dict[str, Any]:
        here("chain")
        answer = "".join(stream_model([{"role": "user", "content": question}]))
        tool = calculator("2 + 3 * 4")
        try:
            broken("2 +")
        except ValueError:
            pass
        summary = chat_model([{"role": "user", "content": answer}])
        return {"answer": answer, "tool": tool, "summary": summary["choices"][0]["message"]["content"]}

    out = agent("What is 2 + 3 * 4?", langsmith_extra={"client": client, "project_name": PROJECT})
    check(out["answer"] == "2 + 3 * 4 is 14.", f"the traced program's answer: {out}")
    client.flush()
    return ids


def check_transport(session: RecordingSession) -> None:
    """The runs went the way MODE says, and no other way."""
    multipart = session.sent("POST /tracing/runs/multipart")
    batch = session.sent("POST /tracing/runs/batch")
    posts = [r for r in session.log if r == "POST /tracing/runs"]
    patches = session.sent("PATCH /tracing/runs/")
    want = {
        "zstd": bool(multipart) and all(r.endswith(" zstd") for r in multipart) and not (batch or posts or patches),
        "plain": bool(multipart) and not any(r.endswith(" zstd") for r in multipart) and not (batch or posts or patches),
        "batch": bool(batch) and not (multipart or posts or patches),
        "direct": len(posts) == 5 and len(patches) == 5 and not (multipart or batch),
    }[MODE]
    check(want, f"requests: {session.log}")


def check_trace(client: Client, ids: dict[str, str]) -> None:
    """Reads the trace back with the client's v1 reads and checks what the server derived."""
    # The client may send runs in several requests, in any order: wait for all five, ended.
    poll("the whole trace", lambda: len(done := [r for r in client.list_runs(trace_id=ids["chain"]) if r.end_time]) == 5 and done)
    root = poll(f"run {ids['chain']}", lambda: (r := client.read_run(ids["chain"])).end_time and r.total_tokens == 39 and r)
    check(root.run_type == "chain" and root.name == "agent-chain", f"root: {root}")
    check(root.parent_run_id is None and str(root.trace_id) == ids["chain"], f"root links: {root}")
    check(root.outputs == {"answer": "2 + 3 * 4 is 14.", "tool": {"result": "14"}, "summary": "Fourteen."}, f"root outputs: {root.outputs}")
    check(root.inputs == {"question": "What is 2 + 3 * 4?"}, f"root inputs: {root.inputs}")
    check(root.status == "success" and root.error is None, f"root status: {root.status} {root.error}")
    check(root.prompt_tokens == 32 and root.completion_tokens == 7, f"root tokens: {root.prompt_tokens} {root.completion_tokens}")
    close(float(root.total_cost or 0), COST + CHAT_COST, "root cost")
    check((root.extra or {}).get("metadata", {}).get("thread_id") == f"conv-{SUFFIX}", f"root metadata: {root.extra}")
    check(root.dotted_order is not None and root.dotted_order.endswith("Z" + ids["chain"]) and "." not in root.dotted_order,
          f"root dotted order: {root.dotted_order}")

    llm = client.read_run(ids["llm"])
    check(llm.run_type == "llm" and str(llm.parent_run_id) == ids["chain"] and str(llm.trace_id) == ids["chain"], f"llm: {llm}")
    check(llm.dotted_order.startswith(root.dotted_order + ".") and llm.dotted_order.endswith("Z" + ids["llm"]),
          f"llm dotted order {llm.dotted_order} under {root.dotted_order}")
    check(llm.prompt_tokens == 12 and llm.completion_tokens == 5 and llm.total_tokens == 17, f"llm tokens: {llm}")
    close(float(llm.prompt_cost or 0), 12 * PRICE_IN, "llm prompt cost")
    close(float(llm.completion_cost or 0), 5 * PRICE_OUT, "llm completion cost")
    close(float(llm.total_cost or 0), COST, "llm cost")
    check(llm.first_token_time is not None, f"llm first_token_time: {llm}")
    assert llm.first_token_time is not None and llm.end_time is not None
    ttft = (llm.first_token_time - llm.start_time).total_seconds()
    check(FIRST_TOKEN_DELAY * 0.8 <= ttft <= (llm.end_time - llm.start_time).total_seconds(), f"time to first token {ttft}")
    tokens = [e for e in llm.events or [] if e.get("name") == "new_token"]
    # The client sends the event without the token itself (it strips new_token's kwargs).
    check(len(tokens) == 1 and datetime.fromisoformat(tokens[0]["time"]) == llm.first_token_time, f"llm events: {llm.events}")
    msgs = (llm.outputs or {}).get("messages")
    check(msgs == [{"role": "assistant", "content": [{"type": "text", "text": "2 + 3 * 4 is 14."}]}], f"llm outputs: {llm.outputs}")
    check(llm.inputs == {"messages": [{"role": "user", "content": "What is 2 + 3 * 4?"}]}, f"llm inputs: {llm.inputs}")

    chat = client.read_run(ids["chat"])
    check(chat.total_tokens == 22 and chat.first_token_time is None, f"chat: {chat.total_tokens} {chat.first_token_time}")
    check(chat.prompt_token_details == {"cache_read": 8}, f"chat prompt token details: {chat.prompt_token_details}")
    close(float(chat.total_cost or 0), CHAT_COST, "chat cost")
    check(chat.outputs is not None and chat.outputs["choices"][0]["message"]["content"] == "Fourteen.", f"chat outputs: {chat.outputs}")

    broken = client.read_run(ids["broken"])
    check(broken.status == "error" and broken.error is not None and "ValueError" in broken.error and "cannot parse" in broken.error,
          f"broken: {broken.status} {broken.error}")

    # read_run with its children: the tree in execution order.
    tree = client.read_run(ids["chain"], load_child_runs=True)
    check([c.name for c in tree.child_runs or []] == ["fake-chat", "calculator", "broken-tool", "summarise"],
          f"children: {[c.name for c in tree.child_runs or []]}")

    everything = ["agent-chain", "broken-tool", "calculator", "fake-chat", "summarise"]
    children = everything[1:]
    # (list_runs arguments, the names of the runs it finds)
    queries: list[tuple[dict[str, Any], list[str]]] = [
        ({}, everything),
        ({"trace_id": ids["chain"]}, everything),
        ({"run_type": "llm"}, ["fake-chat", "summarise"]),
        ({"run_type": "tool"}, ["broken-tool", "calculator"]),
        ({"is_root": True}, ["agent-chain"]),
        ({"is_root": False}, children),
        ({"error": True}, ["broken-tool"]),
        ({"error": False}, [n for n in everything if n != "broken-tool"]),
        ({"parent_run_id": ids["chain"]}, children),
        ({"run_ids": [ids["llm"], ids["tool"]]}, ["calculator", "fake-chat"]),
        ({"filter": 'and(eq(run_type, "llm"), gt(total_tokens, 20))'}, ["summarise"]),
        ({"filter": 'has(tags, "math")'}, ["calculator"]),
        ({"filter": 'eq(status, "error")'}, ["broken-tool"]),
        ({"filter": 'search("cannot parse")'}, ["broken-tool"]),
        ({"trace_filter": 'eq(name, "agent-chain")', "is_root": False}, children),
        ({"tree_filter": 'eq(name, "calculator")', "is_root": True}, ["agent-chain"]),
        ({"filter": 'eq(run_type, "llm")', "limit": 1}, ["fake-chat"]),
    ]
    for kw, want in queries:
        got = sorted(r.name for r in client.list_runs(project_name=PROJECT, **kw))
        if kw.get("limit") == 1:
            check(len(got) == 1 and got[0] in ("fake-chat", "summarise"), f"list_runs({kw}): {got}")
        else:
            check(got == want, f"list_runs({kw}): {got}, want {want}")
    sel = list(client.list_runs(project_name=PROJECT, run_type="llm", select=["inputs", "outputs", "total_tokens"]))
    check(sorted(r.total_tokens or 0 for r in sel) == [17, 22] and all(r.inputs and r.outputs for r in sel), f"select: {sel}")

    stats = client.get_run_stats(project_names=[PROJECT], run_type="llm")
    check(stats.get("run_count") == 2 and stats.get("total_tokens") == 39, f"run stats: {stats}")
    check((stats.get("first_token_p50") or 0) > 0, f"first token p50: {stats}")


def send_big(client: Client) -> None:
    """Uncompressed, a request over the client's inline limit (20 MB) is streamed from its parts
    rather than built in memory; the run arrives whole."""
    ids: dict[str, str] = {}

    @traceable(name="big-input")
    def measure(blob: str) -> int:
        note_run(ids, "big")
        return len(blob)

    size = 21_000_000
    measure("x" * size, langsmith_extra={"client": client, "project_name": PROJECT + "-big"})
    client.flush()
    run = poll("the big run", lambda: (r := client.read_run(ids["big"])).end_time and r)
    check(len(run.inputs["blob"]) == size and run.outputs == {"output": size}, f"big run: {run.outputs}")


def main() -> None:
    session = RecordingSession()
    errors: list[Exception] = []
    client = make_client(session, errors)
    ids = send_trace(client)
    check(not errors, f"tracing errors: {errors}")
    check_trace(client, ids)
    check_transport(session)
    if MODE == "plain":
        send_big(client)
    if MODE == "zstd":
        import tracing_reads

        tracing_reads.run(client, PROJECT, ids, SUFFIX)
    print("ok")


main()
