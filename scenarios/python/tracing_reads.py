"""What the Python langsmith client reads besides runs, on a trace tracing.py sent: projects,
feedback, threads, and the v2 reads (``client.runs``, ``client.traces``, ``client.threads``,
``client.sessions``). Called by tracing.py in its default (zstd) mode.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import requests
from langsmith import Client, traceable
from langsmith.schemas import Attachment
from langsmith.utils import LangSmithNotFoundError

from checks import check, note_run, poll

# Far enough back for every v2 query window (their default is a day).
SINCE = datetime(2020, 1, 1, tzinfo=UTC)


def projects(client: Client, project: str, suffix: str) -> str:
    """create/read/list/update/has/delete_project; returns the traced project's id."""
    traced = client.read_project(project_name=project, include_stats=True)
    check(traced.run_count == 1 and traced.total_tokens == 39, f"project stats: {traced}")
    check(traced.prompt_tokens == 32 and traced.completion_tokens == 7, f"project tokens: {traced}")
    check(traced.error_rate is not None and traced.error_rate == 0, f"project error rate (of roots): {traced.error_rate}")
    check(traced.first_token_p50 is not None and traced.first_token_p50.total_seconds() > 0.04,
          f"project first token p50: {traced.first_token_p50}")
    check(traced.latency_p50 is not None and traced.latency_p50.total_seconds() > 0, f"latency: {traced.latency_p50}")
    check(traced.last_run_start_time is not None, f"last run start: {traced}")

    name = f"py-made-{suffix}"
    made = client.create_project(name, description="made by the client", metadata={"team": "py"})
    check(made.name == name and made.description == "made by the client", f"create_project: {made}")
    check((made.extra or {}).get("metadata") == {"team": "py"}, f"create_project metadata: {made.extra}")
    check(str(client.read_project(project_id=made.id).id) == str(made.id), "read_project by id")
    check(client.has_project(name) and not client.has_project(f"nothing-{suffix}"), "has_project")
    listed = [p.name for p in client.list_projects(name_contains=suffix)]
    check(sorted(listed) == sorted([project, name]), f"list_projects(name_contains): {listed}")
    check([p.name for p in client.list_projects(name=name)] == [name], "list_projects(name)")
    # A query value that reads as JSON (a number here) is still the string it was sent as.
    check(list(client.list_projects(name_contains="8088e062")) == [], "list_projects(name_contains=<a number in JSON>)")
    check([str(p.id) for p in client.list_projects(project_ids=[made.id])] == [str(made.id)], "list_projects(ids)")
    again = client.create_project(name, upsert=True)
    check(str(again.id) == str(made.id), f"create_project(upsert) gave another project: {again.id} {made.id}")
    updated = client.update_project(made.id, name=f"{name}-done", description="closed", end_time=datetime.now(UTC))
    check(updated.name == f"{name}-done" and updated.description == "closed" and updated.end_time is not None,
          f"update_project: {updated}")
    client.delete_project(project_name=f"{name}-done")
    check(not client.has_project(f"{name}-done"), "delete_project")
    return str(traced.id)


def feedback(client: Client, project: str, project_id: str, ids: dict[str, str]) -> None:
    """create (through POST /feedback and through multipart), read, list, update, delete, a
    presigned token, and the stats on the run and the project."""
    direct = client.create_feedback(ids["chain"], key="correctness", score=1, comment="right")
    batched = client.create_feedback(ids["llm"], key="tone", value="warm", trace_id=ids["chain"],
                                     feedback_source_type="model")
    client.flush()
    read = client.read_feedback(direct.id)
    check(read.key == "correctness" and read.score == 1 and read.comment == "right" and str(read.run_id) == ids["chain"],
          f"read_feedback: {read}")
    both = poll("the multipart feedback",
                lambda: f if len(f := list(client.list_feedback(run_ids=[ids["chain"], ids["llm"]]))) == 2 else None)
    check(sorted(str(f.id) for f in both) == sorted([str(direct.id), str(batched.id)]), f"list_feedback: {both}")
    models = list(client.list_feedback(run_ids=[ids["llm"]], feedback_source_type=["model"]))
    check(len(models) == 1 and models[0].value == "warm", f"list_feedback by source: {models}")
    keyed = list(client.list_feedback(run_ids=[ids["chain"], ids["llm"]], feedback_key=["correctness"]))
    check([str(f.id) for f in keyed] == [str(direct.id)], f"list_feedback by key: {keyed}")

    client.update_feedback(direct.id, score=0.5, comment="half right")
    check(client.read_feedback(direct.id).score == 0.5, "update_feedback")
    rated = client.read_run(ids["chain"])
    stats = (rated.feedback_stats or {}).get("correctness", {})
    check(stats.get("n") == 1 and stats.get("avg") == 0.5, f"run feedback_stats: {rated.feedback_stats}")
    p = client.read_project(project_name=project, include_stats=True)
    check((p.feedback_stats or {}).get("tone", {}).get("values") == {"warm": 1}, f"project feedback_stats: {p.feedback_stats}")

    client.delete_feedback(batched.id)
    left = [str(f.id) for f in client.list_feedback(run_ids=[ids["chain"], ids["llm"]])]
    check(left == [str(direct.id)], f"after delete_feedback: {left}")
    try:
        client.read_feedback(batched.id)
        check(False, "read_feedback of a deleted feedback answered")
    except LangSmithNotFoundError:
        pass

    token = client.create_presigned_feedback_token(ids["chain"], "thumbs", expiration=timedelta(minutes=5))
    check(token.expires_at is not None and token.expires_at > datetime.now(UTC), f"token: {token}")
    # Used without an API key, as a browser would.
    use = requests.get(str(token.url), params={"score": "1", "comment": "great"}, timeout=10)
    check(use.status_code == 200, f"presigned url: {use.status_code} {use.text}")
    thumbs = list(client.list_feedback(run_ids=[ids["chain"]], feedback_key=["thumbs"]))
    check(len(thumbs) == 1 and thumbs[0].comment == "great" and thumbs[0].score == 1, f"presigned feedback: {thumbs}")


def threads(client: Client, project: str, suffix: str) -> None:
    """The deprecated v1 thread reads (read_thread, list_threads): the roots whose metadata names
    a thread_id, oldest first."""
    thread = f"conv-{suffix}"
    turns = list(client.read_thread(thread_id=thread, project_name=project))
    check([r.name for r in turns] == ["agent-chain"], f"read_thread: {turns}")
    listed = client.list_threads(project_name=project)
    check([(t["thread_id"], t["count"]) for t in listed] == [(thread, 1)], f"list_threads: {listed}")

    # Two turns of another conversation, in a project of their own.
    chat = f"{project}-chat"

    @traceable(name="turn", client=client, project_name=chat, metadata={"thread_id": f"chat-{suffix}"})
    def turn(question: str) -> str:
        return question.upper()

    turn("first")
    turn("second")
    client.flush()
    poll("both turns", lambda: len([r for r in client.list_runs(project_name=chat) if r.end_time]) == 2)
    ordered = [r.inputs["question"] for r in client.read_thread(thread_id=f"chat-{suffix}", project_name=chat)]
    check(ordered == ["first", "second"], f"read_thread, oldest first: {ordered}")
    newest = [r.inputs["question"] for r in client.read_thread(thread_id=f"chat-{suffix}", project_name=chat, order="desc")]
    check(newest == ["second", "first"], f"read_thread(order=desc): {newest}")
    listed = client.list_threads(project_name=chat)
    check([(t["thread_id"], t["count"]) for t in listed] == [(f"chat-{suffix}", 2)], f"list_threads: {listed}")


class VersionWarnings(logging.Handler):
    """Keeps the client's warnings that the server's announced version is too old."""

    def __init__(self) -> None:
        super().__init__()
        self.minimums: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if "older than" in record.getMessage():
            self.minimums.append(str(record.args[-1]) if isinstance(record.args, tuple) else "?")


async def v2(client: Client, project_id: str, ids: dict[str, str], suffix: str) -> None:
    """The v2 reads the client offers, with their selects, filters and cursor pages."""
    warned = VersionWarnings()
    logging.getLogger("langsmith._internal._backend_version").addHandler(warned)
    runs = [r async for r in client.runs.query(
        project_ids=[project_id], page_size=2, min_start_time=SINCE,
        selects=["ID", "NAME", "RUN_TYPE", "STATUS", "PARENT_RUN_IDS", "TOTAL_TOKENS", "TRACE_ID", "DOTTED_ORDER"])]
    check(sorted(str(r.id) for r in runs) == sorted(ids.values()), f"runs.query over pages: {runs}")
    llm = next(r for r in runs if str(r.id) == ids["llm"])
    check((llm.name, llm.run_type, llm.status, llm.total_tokens) == ("fake-chat", "LLM", "SUCCESS", 17), f"v2 llm: {llm}")
    check([str(x) for x in llm.parent_run_ids or []] == [ids["chain"]] and str(llm.trace_id) == ids["chain"],
          f"v2 llm links: {llm}")

    async def names(**kw: Any) -> list[str]:
        return sorted([r.name async for r in client.runs.query(project_ids=[project_id], selects=["NAME"],
                                                             min_start_time=SINCE, **kw)])

    check(await names(is_root=True) == ["agent-chain"], "runs.query is_root")
    check(await names(run_type="LLM") == ["fake-chat", "summarise"], "runs.query run_type")
    check(await names(has_error=True) == ["broken-tool"], "runs.query has_error")
    check(await names(filter='gt(total_tokens, 20)') == ["agent-chain", "summarise"], "runs.query filter")
    check(await names(trace_id=ids["chain"], ids=[ids["tool"]]) == ["calculator"], "runs.query ids")

    one = await client.runs.retrieve(ids["llm"], project_id=project_id,
                                     selects=["NAME", "OUTPUTS", "TOTAL_COST", "FIRST_TOKEN_TIME", "PROMPT_TOKENS"])
    check(one.name == "fake-chat" and one.prompt_tokens == 12 and one.first_token_time is not None, f"runs.retrieve: {one}")
    check(one.outputs is not None and one.outputs["messages"][0]["content"][0]["text"] == "2 + 3 * 4 is 14.",
          f"runs.retrieve outputs: {one.outputs}")
    check(one.total_cost is not None and abs(float(one.total_cost) - (12 * 0.15e-6 + 5 * 0.6e-6)) < 1e-12, f"cost: {one}")

    traces = [t async for t in client.traces.query(project_id=project_id, selects=["NAME"], min_start_time=SINCE)]
    check([(t.root_run.name, t.trace_aggregates.total_tokens) for t in traces] == [("agent-chain", 39)], f"traces: {traces}")
    trace_runs = await client.traces.list_runs(ids["chain"], project_id=project_id, selects=["NAME", "RUN_TYPE"],
                                               min_start_time=SINCE)
    check([r.name for r in trace_runs.items] == ["agent-chain", "fake-chat", "calculator", "broken-tool", "summarise"],
          f"traces.list_runs in execution order: {trace_runs.items}")

    ts = [t async for t in client.threads.query(project_id=project_id, min_start_time=SINCE)]
    check([(t.thread_id, t.count) for t in ts] == [(f"conv-{suffix}", 1)], f"threads.query: {ts}")
    turns = [t async for t in client.threads.list_traces(f"conv-{suffix}", project_id=project_id,
                                                          selects=["TURN_NUMBER", "TOTAL_TOKENS"])]
    check([(t.turn_number, str(t.trace_id), t.total_tokens) for t in turns] == [(1, ids["chain"], 39)],
          f"threads.list_traces: {turns}")

    sessions = [s async for s in client.sessions.list_v2(name_contains=suffix)]
    check(project_id in [str(s.id) for s in sessions], f"sessions.list_v2: {sessions}")
    session = await client.sessions.retrieve_v2(project_id, include_stats=True)
    check(str(session.id) == project_id and session.type == "PROJECT", f"sessions.retrieve_v2: {session}")
    check(session.run_count == 1 and session.total_tokens == 39, f"sessions.retrieve_v2 stats: {session}")
    # The generated resource's writes, v2 and v1.
    made = await client.sessions.create_v2(type="PROJECT", name=f"py-v2-{suffix}", description="v2", extra={"by": "sessions"})
    check(made.name == f"py-v2-{suffix}" and made.type == "PROJECT" and made.extra == {"by": "sessions"}, f"create_v2: {made}")
    again = await client.sessions.create_v2(type="PROJECT", name=f"py-v2-{suffix}", upsert=True)
    check(again.id == made.id, f"create_v2(upsert): {again.id}, want {made.id}")
    renamed = await client.sessions.update_v2(made.id, name=f"py-v2-{suffix}-renamed", description="renamed")
    check(renamed.name == f"py-v2-{suffix}-renamed" and renamed.description == "renamed", f"update_v2: {renamed}")
    fetched = await client.sessions.retrieve(made.id)
    check(fetched.name == renamed.name, f"sessions.retrieve: {fetched}")
    await client.sessions.update(made.id, description="v1 path")
    check((await client.sessions.retrieve_v2(made.id)).description == "v1 path", "sessions.update")
    await client.sessions.delete(made.id)
    check(not [s async for s in client.sessions.list_v2(name=renamed.name)], "sessions.delete")
    # The version /info announces (0.16.0) is what client.runs, traces and threads need;
    # client.sessions asks for 0.18.0, whose address resolution jetgraph does not serve.
    check(set(warned.minimums) == {"0.18.0"}, f"version warnings for: {warned.minimums}")


def v2_client() -> Client:
    """A client told by /info that the server's reads are v2 only (sdb_query_enabled without
    ch_query_enabled)."""
    info = requests.get(Client().api_url + "/info", timeout=10).json()
    info["instance_flags"] = {**info["instance_flags"], "sdb_query_enabled": True, "ch_query_enabled": False}
    return Client(info=info)


def v2_backend(project_id: str, ids: dict[str, str]) -> None:
    """A client told by /info that the server's reads are v2 only (sdb_query_enabled without
    ch_query_enabled) sends list_runs and read_run to the v2 routes."""
    client = v2_client()
    runs = list(client.list_runs(project_id=project_id, run_type="llm", start_time=SINCE))
    check(sorted(r.name for r in runs) == ["fake-chat", "summarise"], f"v2-backed list_runs: {runs}")
    llm = client.read_run(ids["llm"], project_id=project_id, start_time=SINCE)
    check(llm.total_tokens == 17 and str(llm.parent_run_id) == ids["chain"], f"v2-backed read_run: {llm}")


def attachments(client: Client, project: str) -> None:
    """A traced function's Attachment argument goes as a multipart part; read_run and list_runs
    give it back, downloaded from its presigned_url."""
    ids: dict[str, str] = {}

    @traceable(name="with-file", client=client, project_name=project)
    def summarise(question: str, doc: Attachment) -> str:
        note_run(ids, "run")
        return "a note"

    summarise("what does it say?", Attachment(mime_type="text/plain", data=b"hello from a file"))
    client.flush()
    run = poll("the run with a file", lambda: (r := client.read_run(ids["run"])).attachments and r)
    doc = run.attachments["doc"]
    check(doc["mime_type"] == "text/plain" and doc["reader"].read() == b"hello from a file", f"attachment: {doc}")
    check(run.inputs == {"question": "what does it say?"}, f"inputs without the file: {run.inputs}")
    listed = list(client.list_runs(project_name=project, filter='eq(name, "with-file")'))
    check(len(listed) == 1 and listed[0].attachments["doc"]["reader"].read() == b"hello from a file",
          f"list_runs attachments: {listed}")
    # Through the v2 reads: a client whose reads are v2 only downloads them too.
    v2 = v2_client()
    project_id = str(client.read_project(project_name=project).id)
    [v2_run] = list(v2.list_runs(project_id=project_id, start_time=SINCE))
    check(v2_run.attachments["doc"]["reader"].read() == b"hello from a file", f"v2 attachments: {v2_run.attachments}")


def run(client: Client, project: str, ids: dict[str, str], suffix: str) -> None:
    project_id = projects(client, project, suffix)
    threads(client, project, suffix)
    asyncio.run(v2(client, project_id, ids, suffix))
    v2_backend(project_id, ids)
    # Feedback last: it changes the runs' feedback_stats.
    feedback(client, project, project_id, ids)
    # In its own project, so as not to change the counts above.
    attachments(client, project + "-files")
