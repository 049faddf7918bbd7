"""The Python host's own tracer of a run (see engine/hosting/PROTOCOL.md, Tracing), the same as
the TypeScript host's (typescript/tracer.ts): a LangChain callback handler that records the run's
graph, its nodes, its model calls, tools and retrievers as spans under the run's root span in
jetgraph, and posts each once, when it ends, in batches to jetgraph's tracing API
(LANGSMITH_ENDPOINT, the langsmith clients' /runs/batch) from a thread of its own.

Why not LangChain's LangChainTracer: it builds a langsmith run for every runnable a run calls,
LangGraph's hidden plumbing included, and posts each at its start and again at its end.
"""

from __future__ import annotations

import datetime
import json
import os
import queue
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import ChatGenerationChunk, GenerationChunk, LLMResult

from jetgraph_codec import to_api

# The tag LangGraph puts on its own plumbing (channel writes, branches, __start__), which
# LangSmith hides: left out, their children hang from the nearest span kept.
HIDDEN = "langsmith:hidden"
BATCH_WAIT = 0.05  # seconds an ended span waits for others to share its post
BATCH_MAX = 200  # spans that make a post at once
RETRIES = 3  # a post that fails for the network or the server (5xx, 429) is tried again


class Parent:
    """Where a run's spans go: jetgraph's root span of the run, from the run frame's trace."""

    def __init__(self, trace_id: str, span_id: str, dotted: str, project: str) -> None:
        self.trace_id, self.id, self.dotted, self.project = trace_id, span_id, dotted, project


def parent_of(headers: dict[str, str] | None) -> Parent | None:
    """The parent named by the langsmith distributed-tracing headers jetgraph sends with a run:
    langsmith-trace, the root span's dotted_order; baggage, its project (langsmith-project=).
    None without headers or when they are malformed (the run is then not traced)."""
    dotted = (headers or {}).get("langsmith-trace", "")
    # A segment is YYYYMMDDTHHMMSSffffffZ (22 characters) and a UUID (36).
    if len(dotted) < 58:
        return None
    project = "default"
    for item in (headers or {}).get("baggage", "").split(","):
        key, _, value = item.partition("=")
        if key.strip() == "langsmith-project":
            project = urllib.parse.unquote(value.strip())
    return Parent(dotted[22:58], dotted[-36:], dotted, project)


class _Span:
    __slots__ = ("id", "parent", "dotted", "name", "run_type", "start", "inputs", "tags", "metadata", "invocation",
                 "events")

    def __init__(self, span_id: str, parent: str, dotted: str, name: str, run_type: str, start: datetime.datetime,
                 inputs: Any, tags: list[str] | None, metadata: dict[str, Any] | None) -> None:
        self.id, self.parent, self.dotted, self.name, self.run_type = span_id, parent, dotted, name, run_type
        self.start, self.inputs, self.tags, self.metadata = start, inputs, tags, metadata
        self.invocation: Any = None
        self.events: list[dict[str, Any]] | None = None


_UTC = datetime.timezone.utc  # noqa: UP017 - the host runs on Python 3.10, which has no datetime.UTC
_last_stamp = 0  # microseconds of the last dotted_order stamp: each later than the one before


def _stamp(t: datetime.datetime) -> str:
    global _last_stamp
    micros = max(int(t.timestamp() * 1_000_000), _last_stamp + 1)
    _last_stamp = micros
    at = datetime.datetime.fromtimestamp(micros / 1_000_000, _UTC)
    return at.strftime("%Y%m%dT%H%M%S") + f"{micros % 1_000_000:06d}Z"


def _now() -> datetime.datetime:
    return datetime.datetime.now(_UTC)


def _iso(t: datetime.datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


class RunTracer(BaseCallbackHandler):
    """One run's tracer: a handler of the run's callbacks (given in the run's config, so that the
    library hands it to every runnable the run calls). Its handlers run inline, in the run's
    event loop: they only record."""

    run_inline = True

    def __init__(self, root: Parent) -> None:
        self.root = root
        self.spans: dict[UUID, _Span] = {}
        self.hidden: dict[UUID, _Span | Parent] = {}  # hidden runs, to the span their children hang from

    def _open(self, run_id: UUID, parent_id: UUID | None, name: str, run_type: str, inputs: Any,
              tags: list[str] | None, metadata: dict[str, Any] | None) -> _Span | None:
        parent: _Span | Parent = self.root
        if parent_id is not None:
            parent = self.spans.get(parent_id) or self.hidden.get(parent_id) or self.root
        if tags and HIDDEN in tags:
            self.hidden[run_id] = parent
            return None
        start = _now()
        sid = str(run_id)
        span = _Span(sid, parent.id, f"{parent.dotted}.{_stamp(start)}{sid}", name, run_type, start, inputs, tags,
                     metadata)
        self.spans[run_id] = span
        return span

    def _close(self, run_id: UUID, outputs: Any = None, error: BaseException | None = None) -> None:
        if self.hidden.pop(run_id, None) is not None:
            return
        s = self.spans.pop(run_id, None)
        if s is None:
            return
        extra: dict[str, Any] = {"metadata": _safe(s.metadata or {})}
        if s.invocation is not None:
            extra["invocation_params"] = _safe(s.invocation)
        _sender.queue({
            "id": s.id, "trace_id": self.root.trace_id, "parent_run_id": s.parent, "dotted_order": s.dotted,
            "session_name": self.root.project, "name": s.name, "run_type": s.run_type,
            "start_time": _iso(s.start), "end_time": _iso(_now()), "inputs": _object(s.inputs),
            "outputs": _object(outputs) if error is None else None,
            "error": None if error is None else f"{type(error).__name__}: {error}",
            "extra": extra, "tags": s.tags or [], "events": s.events or [],
        })

    def on_chain_start(self, serialized: dict[str, Any] | None, inputs: dict[str, Any] | Any, *, run_id: UUID,
                       parent_run_id: UUID | None = None, tags: list[str] | None = None,
                       metadata: dict[str, Any] | None = None, **kwargs: Any) -> None:
        self._open(run_id, parent_run_id, _name(serialized, kwargs), kwargs.get("run_type") or "chain", inputs, tags,
                   metadata)

    def on_chain_end(self, outputs: dict[str, Any] | Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._close(run_id, outputs)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._close(run_id, error=error)

    def on_chat_model_start(self, serialized: dict[str, Any], messages: list[list[Any]], *, run_id: UUID,
                            parent_run_id: UUID | None = None, tags: list[str] | None = None,
                            metadata: dict[str, Any] | None = None, **kwargs: Any) -> None:
        self._llm(self._open(run_id, parent_run_id, _name(serialized, kwargs), "llm", {"messages": messages}, tags,
                             metadata), kwargs)

    def on_llm_start(self, serialized: dict[str, Any], prompts: list[str], *, run_id: UUID,
                     parent_run_id: UUID | None = None, tags: list[str] | None = None,
                     metadata: dict[str, Any] | None = None, **kwargs: Any) -> None:
        self._llm(self._open(run_id, parent_run_id, _name(serialized, kwargs), "llm", {"prompts": prompts}, tags,
                             metadata), kwargs)

    def _llm(self, s: _Span | None, kwargs: dict[str, Any]) -> None:
        if s is None:
            return
        s.invocation = kwargs.get("invocation_params")
        s.events = [{"name": "start", "time": _iso(s.start)}]

    def on_llm_new_token(self, token: str | list[str | dict[str, Any]], *,
                         chunk: GenerationChunk | ChatGenerationChunk | None = None, run_id: UUID,
                         parent_run_id: UUID | None = None, tags: list[str] | None = None, **kwargs: Any) -> None:
        """Each token is an event of the model call: jetgraph takes the first as its time to
        first token."""
        s = self.spans.get(run_id)
        if s is not None and s.events is not None:
            s.events.append({"name": "new_token", "time": _iso(_now()), "kwargs": {"token": token}})

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        s = self.spans.get(run_id)
        if s is not None and s.events is not None:
            s.events.append({"name": "end", "time": _iso(_now())})
        generations = [[{"text": g.text, "generation_info": _safe(g.generation_info),
                         **({"message": _message(g.message)} if hasattr(g, "message") else {})} for g in gs]
                       for gs in response.generations]
        self._close(run_id, {"generations": generations, "llm_output": _safe(response.llm_output)})

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._close(run_id, error=error)

    def on_tool_start(self, serialized: dict[str, Any], input_str: str, *, run_id: UUID,
                      parent_run_id: UUID | None = None, tags: list[str] | None = None,
                      metadata: dict[str, Any] | None = None, **kwargs: Any) -> None:
        self._open(run_id, parent_run_id, _name(serialized, kwargs), "tool", {"input": input_str}, tags, metadata)

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._close(run_id, {"output": output})

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._close(run_id, error=error)

    def on_retriever_start(self, serialized: dict[str, Any], query: str, *, run_id: UUID,
                           parent_run_id: UUID | None = None, tags: list[str] | None = None,
                           metadata: dict[str, Any] | None = None, **kwargs: Any) -> None:
        self._open(run_id, parent_run_id, _name(serialized, kwargs), "retriever", {"query": query}, tags, metadata)

    def on_retriever_end(self, documents: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._close(run_id, {"documents": documents})

    def on_retriever_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._close(run_id, error=error)


def _name(serialized: dict[str, Any] | None, kwargs: dict[str, Any]) -> str:
    name = kwargs.get("name")
    if isinstance(name, str) and name:
        return name
    ids = (serialized or {}).get("id") or []
    return str(ids[-1]) if ids else (serialized or {}).get("name") or "Unnamed"


def _safe(v: Any) -> Any:
    """A value as the API shows it; one that cannot be shown is named so, never failing the run."""
    try:
        return to_api(v)
    except Exception as e:  # noqa: BLE001 - tracing never fails a run
        return {"error": f"not serializable: {e}"}


def _object(v: Any) -> dict[str, Any]:
    """A run's inputs or outputs, which are objects."""
    out = _safe(v)
    return out if isinstance(out, dict) else {"output": out}


def _message(m: Any) -> Any:
    """A model's answer as the API shows a message, with its type (ai), not its class: a
    streamed answer is a chunk (AIMessageChunk), which traces read as the message it makes up."""
    d = _safe(m)
    if isinstance(d, dict) and isinstance(d.get("type"), str) and d["type"].endswith("MessageChunk"):
        d["type"] = d["type"][: -len("MessageChunk")].lower()
    return d


class _Sender:
    """Posts ended spans in batches from a thread of its own; a batch that cannot be posted is
    dropped with a line in the log (traces never fail a run)."""

    def __init__(self) -> None:
        self.spans: queue.SimpleQueue[dict[str, Any] | None] = queue.SimpleQueue()
        self.unposted = 0  # spans queued and not yet posted (or dropped)
        self.done = threading.Condition()
        self.thread: threading.Thread | None = None
        self.warned = 0

    def queue(self, span: dict[str, Any]) -> None:
        with self.done:
            self.unposted += 1
            if self.thread is None:
                self.thread = threading.Thread(target=self._loop, name="jetgraph-tracer", daemon=True)
                self.thread.start()
        self.spans.put(span)

    def _loop(self) -> None:
        while True:
            first = self.spans.get()
            batch = [first] if first is not None else []
            deadline = time.monotonic() + BATCH_WAIT
            while len(batch) < BATCH_MAX:
                wait = deadline - time.monotonic()
                if wait <= 0:
                    break
                try:
                    span = self.spans.get(timeout=wait)
                except queue.Empty:
                    break
                if span is not None:
                    batch.append(span)
            if batch:
                self._post(batch)
            with self.done:
                self.unposted -= len(batch)
                self.done.notify_all()

    def _post(self, batch: list[dict[str, Any]]) -> None:
        endpoint = os.environ.get("LANGSMITH_ENDPOINT", "")
        if not endpoint:
            return
        body = json.dumps({"post": batch}, default=str).encode()
        why = ""
        for attempt in range(RETRIES + 1):
            if attempt:
                time.sleep(0.1 * 4**attempt)
            req = urllib.request.Request(endpoint.rstrip("/") + "/runs/batch", data=body, method="POST", headers={
                "content-type": "application/json", "x-api-key": os.environ.get("LANGSMITH_API_KEY", "")})
            try:
                with urllib.request.urlopen(req, timeout=30) as res:
                    text = res.read(2000).decode(errors="replace")
                # jetgraph appends what it can of a batch and names the spans it refused.
                if '"errors"' in text:
                    self._warn(f"spans refused by jetgraph's tracing: {text[:500]}")
                return
            except urllib.error.HTTPError as e:
                why = f"{e.code} {e.read(500).decode(errors='replace')}"
                if e.code < 500 and e.code != 429:
                    break
            except OSError as e:
                why = str(e)
        self._warn(f"spans not posted to jetgraph's tracing: {why}")

    def _warn(self, msg: str) -> None:
        if self.warned < 10:
            self.warned += 1
            print(f"jetgraph host: {msg}", file=sys.stderr)

    def flush(self, timeout: float) -> None:
        """Waits until the spans queued are posted, for timeout seconds at most."""
        with self.done:
            self.done.wait_for(lambda: self.unposted == 0, timeout)


_sender = _Sender()


def flush_spans(timeout: float) -> None:
    """Posts the spans still queued, for timeout seconds at most."""
    _sender.flush(timeout)
