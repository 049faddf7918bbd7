"""jetgraph's Python graph host (protocol version 1, see engine/hosting/PROTOCOL.md).

jetgraph starts this file with the user's Python; it loads the user's graphs with the user's own
`langgraph` and runs them, with a checkpointer and a store that call back into jetgraph over
stdin/stdout (newline-delimited JSON). It keeps no state of its own. Standard library only,
besides the user's `langgraph`.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import importlib
import importlib.util
import inspect
import json
import os
import platform
import sys
import threading
import traceback
from collections.abc import AsyncIterator, Coroutine, Iterable, Sequence
from typing import IO, Any, cast

PROTOCOL = 1
INTERRUPT = "__interrupt__"
ERROR = "__error__"
PUT_WAIT = 60.0  # seconds writes wait for their checkpoint's put
# Turns of the event loop a checkpoint's put lets go first, so that the stream events a subgraph
# queued before it reach jetgraph before the checkpoint (the library's hand-over takes 4: its
# queue, its waiter task, asyncio.wait and the run's reader).
EVENT_TURNS = 8

# The protocol owns stdout: whatever the user's code prints goes to stderr, jetgraph's log.
_OUT: IO[bytes] = sys.stdout.buffer
sys.stdout = sys.stderr

from langchain_core.runnables import RunnableConfig  # noqa: E402
from langgraph.checkpoint.base import (  # noqa: E402
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_checkpoint_metadata,
)
from langgraph.graph.state import StateGraph  # noqa: E402
from langgraph.pregel import Pregel  # noqa: E402
from langgraph.store.base import (  # noqa: E402
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)
from langgraph.types import (  # noqa: E402
    Command,
    Durability,
    Interrupt,
    StateSnapshot,
    StateUpdate,
    StreamMode,
)
from pydantic import TypeAdapter, create_model  # noqa: E402

from jetgraph_auth import AuthHandler, HandlerUser  # noqa: E402
from jetgraph_codec import decode, encode, to_api  # noqa: E402
from jetgraph_http import App, routes_of  # noqa: E402
from jetgraph_tracer import RunTracer, flush_spans, parent_of  # noqa: E402

Graph = Pregel[Any, Any, Any, Any]


class CallError(Exception):
    """jetgraph refused a checkpointer or store call."""


class Conn:
    """The protocol's two directions: frames out on stdout, calls to jetgraph answered by id."""

    def __init__(self) -> None:
        self._calls: dict[str, asyncio.Future[Any]] = {}
        self._next = 0

    def send(self, frame: dict[str, Any]) -> None:
        line = json.dumps(frame, ensure_ascii=False, separators=(",", ":"), default=str)
        _OUT.write(line.encode() + b"\n")
        _OUT.flush()

    async def call(self, req: str, method: str, params: dict[str, Any]) -> Any:
        self._next += 1
        cid = f"c{self._next}"
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._calls[cid] = fut
        self.send({"t": "call", "id": cid, "req": req, "method": method, "params": params})
        try:
            return await fut
        finally:
            self._calls.pop(cid, None)

    def reply(self, frame: dict[str, Any]) -> None:
        fut = self._calls.get(frame.get("id", ""))
        if fut is None or fut.done():
            return
        if frame.get("error") is not None:
            err = frame["error"]
            fut.set_exception(CallError(f"{err.get('class', 'Error')}: {err.get('message', '')}"))
        else:
            fut.set_result(frame.get("result"))


def _blocking(loop: asyncio.AbstractEventLoop, coro: Any) -> Any:
    """Runs coro on the host's loop for a caller in another thread (a sync node in the library's
    executor) and waits for its result."""
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        coro.close()
        raise RuntimeError("jetgraph: a synchronous checkpointer or store call on the event loop; use the async API")
    return asyncio.run_coroutine_threadsafe(coro, loop).result()


def _ref(config: RunnableConfig, checkpoint_id: str | None = None) -> dict[str, str]:
    c = config.get("configurable", {})
    return {
        "thread_id": str(c.get("thread_id", "")),
        "checkpoint_ns": str(c.get("checkpoint_ns", "")),
        "checkpoint_id": checkpoint_id if checkpoint_id is not None else (get_checkpoint_id(config) or ""),
    }


def _config_of(ref: dict[str, str]) -> RunnableConfig:
    return {"configurable": dict(ref)}


class JetgraphSaver(BaseCheckpointSaver[int]):
    """A checkpointer whose checkpoints are jetgraph's: every call goes to the request's saver."""

    def __init__(self, conn: Conn, req: str) -> None:
        super().__init__()
        self.conn, self.req = conn, req
        self.loop = asyncio.get_running_loop()
        # A checkpoint may be put in the background (runs use the library's "sync" durability,
        # other requests may not) and the writes of the next step come before it: jetgraph keeps
        # writes only on a stored checkpoint, so writes wait for their checkpoint when this saver
        # is putting it.
        self._stored: dict[str, asyncio.Future[None]] = {}

    def _known(self, checkpoint_id: str) -> asyncio.Future[None]:
        fut = self._stored.get(checkpoint_id)
        if fut is None:
            fut = asyncio.get_running_loop().create_future()
            self._stored[checkpoint_id] = fut
        return fut

    def _mark(self, checkpoint_id: str) -> None:
        fut = self._known(checkpoint_id)
        if not fut.done():
            fut.set_result(None)

    def _tuple(self, t: dict[str, Any]) -> CheckpointTuple:
        cp = t["checkpoint"]
        self._mark(cp["id"])
        checkpoint: Checkpoint = {
            "v": cp.get("v", 1),
            "id": cp["id"],
            "ts": cp.get("ts", ""),
            "channel_values": {k: decode(x) for k, x in (cp.get("channel_values") or {}).items()},
            "channel_versions": cp.get("channel_versions") or {},
            "versions_seen": cp.get("versions_seen") or {},
            "updated_channels": None,
        }
        writes = []
        for w in t.get("pending_writes") or []:
            value = decode(w["value"])
            if w["channel"] == INTERRUPT and isinstance(value, list):
                value = tuple(Interrupt(value=decode(i["value"]), id=i["id"]) for i in w["value"])
            writes.append((w["task_id"], w["channel"], value))
        parent = t.get("parent")
        return CheckpointTuple(
            config=_config_of(t["ref"]),
            checkpoint=checkpoint,
            metadata=decode(t.get("metadata") or {}),
            parent_config=_config_of(parent) if parent else None,
            pending_writes=writes,
        )

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        t = await self.conn.call(self.req, "checkpoint.get", {"ref": _ref(config)})
        return self._tuple(t) if t else None

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        if config is None:
            raise CallError("jetgraph lists the checkpoints of one thread only")
        params = {
            "ref": _ref(config, ""),
            "limit": limit or 0,
            "before": (get_checkpoint_id(before) or "") if before else "",
            "filter": to_api(filter or {}),
        }
        for t in await self.conn.call(self.req, "checkpoint.list", params) or []:
            yield self._tuple(t)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        parent_id = get_checkpoint_id(config)
        ref = _ref(config, checkpoint["id"])
        parent = dict(ref, checkpoint_id=parent_id) if parent_id else None
        cp = {
            "v": checkpoint["v"],
            "id": checkpoint["id"],
            "ts": checkpoint["ts"],
            "channel_values": {k: encode(x) for k, x in checkpoint["channel_values"].items()},
            "channel_versions": checkpoint["channel_versions"],
            "versions_seen": checkpoint["versions_seen"],
        }
        # The run's metadata and config scalars join the checkpoint's, as the library's savers do.
        md = get_checkpoint_metadata(config, metadata)
        params = {"ref": ref, "checkpoint": cp, "metadata": encode(dict(md)), "parent": parent}
        # A subgraph hands its stream's events to the run's queue and goes on to put its step's
        # checkpoint at once: a few turns of the loop let the run's reader send those events
        # first, since jetgraph emits the checkpoint's event (and counts steps) as it stores it.
        for _ in range(EVENT_TURNS):
            await asyncio.sleep(0)
        fut = self._known(checkpoint["id"])
        try:
            await self.conn.call(self.req, "checkpoint.put", params)
        except BaseException as e:
            if not fut.done():
                fut.set_exception(e)
            raise
        if not fut.done():
            fut.set_result(None)
        return _config_of(ref)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        out = []
        for channel, value in writes:
            if channel == INTERRUPT and isinstance(value, (list, tuple)):
                enc: Any = [{"value": encode(i.value), "id": i.id} for i in value]
            else:
                enc = encode(value)
            out.append({"task_id": task_id, "channel": channel, "value": enc})
        ref = _ref(config)
        # A checkpoint this saver neither read nor put yet is one it is about to put: after it.
        try:
            await asyncio.wait_for(asyncio.shield(self._known(ref["checkpoint_id"])), PUT_WAIT)
        except TimeoutError:
            pass  # jetgraph answers with the reason if the checkpoint does not exist
        await self.conn.call(self.req, "checkpoint.put_writes", {"ref": ref, "writes": out})

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return _blocking(self.loop, self.aget_tuple(config))  # type: ignore[no-any-return]

    def put(
        self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return _blocking(self.loop, self.aput(config, checkpoint, metadata, new_versions))  # type: ignore[no-any-return]

    def put_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        _blocking(self.loop, self.aput_writes(config, writes, task_id, task_path))


def _item(d: dict[str, Any], search: bool) -> Item:
    created = datetime.datetime.fromisoformat(d["created_at"].replace("Z", "+00:00"))
    updated = datetime.datetime.fromisoformat(d["updated_at"].replace("Z", "+00:00"))
    ns = tuple(d["namespace"])
    if search:
        return SearchItem(ns, d["key"], d["value"], created, updated, d.get("score"))
    return Item(value=d["value"], key=d["key"], namespace=ns, created_at=created, updated_at=updated)


class JetgraphStore(BaseStore):
    """The store nodes reach: jetgraph's store, through the request's calls."""

    def __init__(self, conn: Conn, req: str) -> None:
        self.conn, self.req = conn, req
        self.loop = asyncio.get_running_loop()

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return [await self._op(op) for op in ops]

    async def _op(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            d = await self.conn.call(self.req, "store.get", {"namespace": list(op.namespace), "key": op.key})
            return _item(d, False) if d else None
        if isinstance(op, PutOp):
            if op.value is None:
                await self.conn.call(self.req, "store.delete", {"namespace": list(op.namespace), "key": op.key})
            else:
                params = {"namespace": list(op.namespace), "key": op.key, "value": to_api(op.value),
                          "index": op.index, "ttl": op.ttl}
                await self.conn.call(self.req, "store.put", params)
            return None
        if isinstance(op, SearchOp):
            params = {"namespace_prefix": list(op.namespace_prefix), "filter": to_api(op.filter),
                      "limit": op.limit, "offset": op.offset, "query": op.query}
            return [_item(d, True) for d in await self.conn.call(self.req, "store.search", params) or []]
        if isinstance(op, ListNamespacesOp):
            prefix = suffix = None
            for c in op.match_conditions or ():
                if c.match_type == "prefix":
                    prefix = list(c.path)
                else:
                    suffix = list(c.path)
            params = {"prefix": prefix, "suffix": suffix, "max_depth": op.max_depth,
                      "limit": op.limit, "offset": op.offset}
            return [tuple(n) for n in await self.conn.call(self.req, "store.list_namespaces", params) or []]
        raise CallError(f"unknown store operation {type(op).__name__}")

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return _blocking(self.loop, self.abatch(list(ops)))  # type: ignore[no-any-return]


class Loaded:
    """A graph of the config: compiled once, or a factory called per request."""

    def __init__(self, target: Any) -> None:
        if isinstance(target, StateGraph):
            target = target.compile()
        self.graph: Graph | None = target if isinstance(target, Pregel) else None
        self.factory: Any = None if self.graph is not None else target
        if self.graph is None and (inspect.isclass(target) or not callable(target)):
            what = f"class {target.__qualname__}" if inspect.isclass(target) else type(target).__qualname__
            raise TypeError(f"{what} is not a graph (a compiled graph, a StateGraph or a function that returns one)")

    async def build(self, config: RunnableConfig) -> Graph:
        if self.graph is not None:
            return self.graph
        params = inspect.signature(self.factory).parameters
        out = self.factory(config) if params else self.factory()
        if inspect.isawaitable(out):
            out = await out
        if isinstance(out, StateGraph):
            out = out.compile()
        if not isinstance(out, Pregel):
            raise TypeError(f"the graph factory returned {type(out).__qualname__}, not a graph")
        return out


def _file_module(root: str, where: str) -> Any:
    """The module of a file, loaded once: graphs of one file share it (and its classes)."""
    path = os.path.normpath(os.path.join(root, where))
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no file {path}")
    name = "jetgraph_user_" + os.path.splitext(os.path.relpath(path, root))[0].replace(os.sep, "_").replace(".", "_")
    if name in sys.modules:
        return sys.modules[name]
    mspec = importlib.util.spec_from_file_location(name, path)
    if mspec is None or mspec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(mspec)
    sys.modules[name] = module
    try:
        mspec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def load(root: str, spec: str) -> Loaded:
    return Loaded(load_attr(root, spec))


def load_attr(root: str, spec: str) -> Any:
    """The attribute a spec names (./path/file.py:attr or package.module:attr)."""
    where, sep, attr = spec.rpartition(":")
    if not sep or not where or not attr:
        raise ValueError(f"{spec!r} must be ./path/file.py:attribute or package.module:attribute")
    if where.endswith(".py") or "/" in where or where.startswith("."):
        module = _file_module(root, where)
    else:
        module = importlib.import_module(where)
    if not hasattr(module, attr):
        raise AttributeError(f"{where} has no attribute {attr!r}")
    return getattr(module, attr)


def _library_durability(asked: str | None) -> Durability:
    """The library's durability for a run's: "sync" unless the run keeps only its last checkpoint.
    The library then stores each step's checkpoint, and emits its checkpoint event, before the
    next step's tasks start, in subgraphs too: tasks, checkpoints and debug stream in its order.
    jetgraph's own durability ("async" included) decides when the checkpoints reach the log."""
    return "exit" if asked == "exit" else "sync"


def _nodes(names: list[str] | None) -> Any:
    """Interrupt nodes as the library takes them: "*" (every node) is a string, not a list."""
    if not names:
        return None
    return "*" if "*" in names else names


def _error(e: BaseException) -> dict[str, Any]:
    return {"class": type(e).__name__, "message": str(e), "traceback": "".join(traceback.format_exception(e))[-4000:]}


def _graph_schemas(g: Graph) -> dict[str, Any]:
    """A graph's JSON Schemas: input, output, state (its stream channels), config (the
    configurable part only) and context; a schema the library cannot draw is null."""
    def attempt(f: Any) -> Any:
        try:
            return f()
        except Exception:  # noqa: BLE001 - the reference answers null for an undrawable schema
            return None
    return {
        "input_schema": attempt(g.get_input_jsonschema),
        "output_schema": attempt(g.get_output_jsonschema),
        "state_schema": attempt(lambda: _state_jsonschema(g)),
        "config_schema": attempt(lambda: _configurable_jsonschema(g)),
        "context_schema": attempt(g.get_context_jsonschema),
    }

def _state_jsonschema(g: Graph) -> dict[str, Any]:
    """A model of the graph's stream channels, each typed by what it accepts (Any when pydantic
    cannot draw it)."""
    fields: dict[str, Any] = {}
    for k in g.stream_channels_list:
        kind = g.channels[k].UpdateType  # type: ignore[union-attr]  # stream channels are never managed values
        try:
            TypeAdapter(kind).json_schema()
        except Exception:  # noqa: BLE001 - an undrawable channel type is Any
            kind = Any
        fields[k] = (kind, None)
    return cast(dict[str, Any], create_model(g.get_name("State"), **fields).model_json_schema())


# Keys of configurable the server sets itself, which no config schema shows.
_SERVER_CONFIGURABLE = ("__pregel_checkpointer", "__pregel_store", "checkpoint_id", "checkpoint_ns", "thread_id")


def _configurable_jsonschema(g: Graph) -> dict[str, Any]:
    """The configurable part of the graph's config schema ({} when it has none)."""
    fields = getattr(g.config_schema(), "model_fields", None) or {}
    if "configurable" not in fields:
        return {}
    annotation = fields["configurable"].annotation  # a variable: mypy reads a string in the call as a type
    out = TypeAdapter(annotation).json_schema()
    for key in _SERVER_CONFIGURABLE:
        out.get("properties", {}).pop(key, None)
    name = getattr(getattr(g, "config_type", None), "__name__", None)
    if name:
        out["title"] = name
    return out


def _command(cmd: dict[str, Any]) -> Command[Any]:
    """The library's Command of the API's {update, goto, resume}."""
    return Command(update=cmd.get("update"), goto=cmd.get("goto") or (), resume=cmd.get("resume"))


def _with_user(configurable: dict[str, Any]) -> None:
    """Makes configurable's langgraph_auth_user (it comes as an object) readable as the
    reference's graphs read it: by key (user["identity"]) and by attribute (user.identity), as
    its ProxyUser allows; JSON as a dict."""
    user = configurable.get("langgraph_auth_user")
    if isinstance(user, dict) and not isinstance(user, HandlerUser):
        configurable["langgraph_auth_user"] = HandlerUser(user)


def _newest(config: RunnableConfig, drop: bool = False) -> RunnableConfig:
    """config naming the thread's newest checkpoint: without an empty checkpoint id (or any,
    with drop). The library reads a state "live" (finished tasks of an open step applied,
    answered interrupts gone) only when the config names no checkpoint."""
    c = dict(config.get("configurable") or {})
    if drop or not c.get("checkpoint_id"):
        c.pop("checkpoint_id", None)
    return {**config, "configurable": c}


def _snapshot(s: StateSnapshot) -> dict[str, Any]:
    def ref(config: RunnableConfig | None) -> dict[str, str] | None:
        return _ref(config) if config else None

    tasks = []
    for t in s.tasks:
        state = t.state
        tasks.append({
            "id": t.id, "name": t.name, "path": to_api(t.path), "error": to_api(t.error),
            "interrupts": to_api(t.interrupts),
            "checkpoint": ref(state) if isinstance(state, dict) else (ref(state.config) if state else None),
            "state": _snapshot(state) if isinstance(state, StateSnapshot) else None,
            "result": to_api(t.result),
        })
    values = s.values if isinstance(s.values, dict) else {"__root__": s.values}
    return {
        "values": to_api(values), "next": list(s.next), "tasks": tasks, "metadata": to_api(s.metadata or {}),
        "created_at": s.created_at, "checkpoint": ref(s.config), "parent_checkpoint": ref(s.parent_config),
        "interrupts": to_api(s.interrupts),
    }


def _traced(config: RunnableConfig, headers: dict[str, str] | None) -> RunnableConfig:
    """The run's config with the run's tracer (jetgraph_tracer) as its callbacks, when the run
    frame's `trace` names the parent of its spans (jetgraph's root span of the run). Without (the
    user's own LangSmith settings, or tracing off), the config as it is: LangChain traces as its
    environment says."""
    parent = parent_of(headers)
    if parent is None:
        return config
    return {**config, "callbacks": [RunTracer(parent)]}


FLUSH_WAIT = 2.0  # seconds the traces still queued at exit may take to be sent
APP_SHUTDOWN_WAIT = 1.0  # seconds the app's lifespan shutdown may take: jetgraph kills a host after 3


def _flush_traces() -> None:
    """Sends the traces still queued in the langsmith client, for FLUSH_WAIT at most: jetgraph
    gives a host little time to exit, and a jetgraph that is gone receives nothing."""

    def flush() -> None:
        try:
            from langchain_core.tracers.langchain import wait_for_all_tracers  # noqa: PLC0415

            wait_for_all_tracers()
            flush_spans(FLUSH_WAIT)
        except Exception as e:  # noqa: BLE001 - a trace lost at exit never fails the host
            print(f"jetgraph host: traces not flushed: {e}", file=sys.stderr)

    t = threading.Thread(target=flush, daemon=True)
    t.start()
    t.join(FLUSH_WAIT)


class Host:
    """Serves jetgraph's requests until stdin closes."""

    def __init__(self, conn: Conn, graphs: dict[str, Loaded], app: App | None = None,
                 auth: AuthHandler | None = None) -> None:
        self.conn, self.graphs, self.app, self.auth = conn, graphs, app, auth
        self.tasks: dict[str, asyncio.Task[None]] = {}

    def dispatch(self, frame: dict[str, Any]) -> None:
        t = frame.get("t")
        if t == "reply":
            self.conn.reply(frame)
        elif t == "cancel":
            task = self.tasks.get(frame.get("id", ""))
            if task is not None:
                task.cancel()
        elif t == "http" and self.app is not None:
            rid = frame["id"]
            self.tasks[rid] = asyncio.create_task(self._http(rid, self.app.serve(frame)))
        elif t == "http.body" and self.app is not None:
            self.app.feed(frame)
        elif t == "authenticate" and self.auth is not None:
            rid = frame["id"]
            self.tasks[rid] = asyncio.create_task(self._auth(rid, self.auth.authenticate(frame)))
        elif t == "authorize" and self.auth is not None:
            rid = frame["id"]
            self.tasks[rid] = asyncio.create_task(self._auth(rid, self.auth.authorize(frame)))
        elif isinstance(t, str) and hasattr(self, "do_" + t):
            rid = frame["id"]
            self.tasks[rid] = asyncio.create_task(self.serve(frame))
        else:
            print(f"jetgraph host: unknown frame {t!r}", file=sys.stderr)
            if "id" in frame:  # a request this host does not know still gets its answer
                self.conn.send({"t": "done", "id": frame["id"], "error": {
                    "class": "UnknownRequest", "message": f"this host does not serve {t!r} requests", "traceback": ""}})

    async def _auth(self, rid: str, answer: Coroutine[Any, Any, dict[str, Any]]) -> None:
        try:
            self.conn.send({"t": "done", "id": rid, "result": await answer})
        except asyncio.CancelledError:
            self.conn.send({"t": "done", "id": rid, "error": {
                "class": "CancelledError", "message": "", "traceback": ""}})
        except Exception as e:  # noqa: BLE001 - the handler's failure is the request's answer (a 500)
            print(f"jetgraph host: the auth handler failed: {type(e).__name__}: {e}", file=sys.stderr)
            self.conn.send({"t": "done", "id": rid, "error": _error(e)})
        finally:
            self.tasks.pop(rid, None)

    async def _http(self, rid: str, serving: Coroutine[Any, Any, None]) -> None:
        try:
            await serving
        finally:
            self.tasks.pop(rid, None)

    async def serve(self, frame: dict[str, Any]) -> None:
        rid = frame["id"]
        try:
            loaded = self.graphs.get(frame["graph"])
            if loaded is None:
                raise KeyError(f"no graph {frame['graph']!r} in this host")
            config = cast(RunnableConfig, frame.get("config") or {})
            built = await loaded.build(config)
            g = built.copy(update={
                "checkpointer": JetgraphSaver(self.conn, rid), "store": JetgraphStore(self.conn, rid),
                # An unnamed graph takes its graph id as its name, as on the reference servers.
                **({"name": frame["graph"]} if built.name == "LangGraph" else {})})
            handler = getattr(self, "do_" + frame["t"])
            result = await handler(rid, g, frame, config)
            self.conn.send({"t": "done", "id": rid, "result": result})
        except asyncio.CancelledError:
            self.conn.send({"t": "done", "id": rid, "result": {
                "cancelled": True, "interrupted": False, "values": None, "interrupts": []}})
        except Exception as e:  # noqa: BLE001 - every failure is the request's answer
            self.conn.send({"t": "done", "id": rid, "error": _error(e)})
        finally:
            self.tasks.pop(rid, None)

    async def do_run(self, rid: str, g: Graph, frame: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        config = {**config, "configurable": dict(config.get("configurable") or {})}
        _with_user(config["configurable"])
        config["configurable"]["thread_id"] = frame.get("thread_id") or rid
        if frame.get("checkpoint_id"):
            config["configurable"]["checkpoint_id"] = frame["checkpoint_id"]
        cmd = frame.get("command")
        run_input: Any = frame.get("input")
        if cmd:
            run_input = _command(cmd)
        wanted = set(frame.get("stream_modes") or [])
        modes = cast(list[StreamMode], sorted(wanted | {"values", "updates"}))
        values: Any = None
        interrupted_at_root = False
        interrupts: list[dict[str, Any]] = []
        async for ns, mode, chunk in g.astream(
            run_input, _traced(config, frame.get("trace")), context=frame.get("context") or None,
            stream_mode=modes, subgraphs=True,
            durability=_library_durability(frame.get("durability")),
            interrupt_before=_nodes(frame.get("interrupt_before")),
            interrupt_after=_nodes(frame.get("interrupt_after")),
        ):
            if isinstance(chunk, dict) and INTERRUPT in chunk:
                # jetgraph publishes a run's interrupts from its state when it ends, as for Go graphs.
                if not ns and mode == "updates":
                    interrupted_at_root = True
                    interrupts.extend(to_api(chunk[INTERRUPT]))
                continue
            if mode == "values" and not ns:
                values = chunk
            if mode in wanted:
                self.conn.send({"t": "event", "id": rid, "mode": mode, "ns": list(ns), "data": to_api(chunk)})
        # The library streams each interrupt of a run at the root (a static one as an empty
        # tuple): a run without one, nor interrupt nodes, ended with nothing next. Reading its
        # state would make jetgraph append the run's checkpoints apart instead of with its end.
        if (not interrupted_at_root and values is not None
                and not frame.get("interrupt_before") and not frame.get("interrupt_after")):
            return {"values": to_api(values), "interrupts": [], "interrupted": False, "cancelled": False}
        # The thread's state now (not that of the checkpoint the run started from), as the
        # library reads it live: tasks finished in a step that an interrupt left open count.
        snap = await g.aget_state(_newest(config, drop=True))
        if values is None:
            values = snap.values
        if not interrupts:
            interrupts = to_api(snap.interrupts)
        return {"values": to_api(values), "interrupts": interrupts, "interrupted": bool(snap.next), "cancelled": False}

    async def do_state(
        self, rid: str, g: Graph, frame: dict[str, Any], config: RunnableConfig
    ) -> dict[str, Any] | None:
        cfg: RunnableConfig = {**config, "configurable": {**(config.get("configurable") or {}), **frame["checkpoint"]}}
        s = await g.aget_state(_newest(cfg), subgraphs=bool(frame.get("subgraphs")))
        if s.config is None or not s.created_at:
            return None
        return _snapshot(s)

    async def do_history(
        self, rid: str, g: Graph, frame: dict[str, Any], config: RunnableConfig
    ) -> list[dict[str, Any]]:
        cfg: RunnableConfig = {**config, "configurable": {**(config.get("configurable") or {}), **frame["checkpoint"]}}
        before = frame.get("before")
        out = []
        async for s in g.aget_state_history(
            cfg, filter=frame.get("filter") or None, limit=frame.get("limit") or None,
            before=_config_of(dict(frame["checkpoint"], checkpoint_id=before)) if before else None,
        ):
            out.append(_snapshot(s))
        return out

    async def do_update_state(
        self, rid: str, g: Graph, frame: dict[str, Any], config: RunnableConfig
    ) -> dict[str, Any]:
        cfg = _newest({**config, "configurable": {**(config.get("configurable") or {}), **frame["checkpoint"]}})
        if frame.get("supersteps"):
            # Several updates: one checkpoint per superstep, its updates applied together. StateUpdate
            # is typed for values only, but the library applies a Command too (hosted_python_runs.py sends one).
            out = await g.abulk_update_state(cfg, [
                [StateUpdate(cast(Any, _command(u["command"])) if u.get("command") else u.get("values"),
                             u.get("as_node") or None)
                 for u in step] for step in frame["supersteps"]])
        else:
            out = await g.aupdate_state(cfg, frame.get("values"), as_node=frame.get("as_node") or None)
        return {"checkpoint": _ref(out)}


    async def do_graph(self, rid: str, g: Graph, frame: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        """The library's drawable graph as JSON without the nodes' class paths (data.id), as the
        reference server answers; xray is a depth (-1 for every level)."""
        depth = int(frame.get("xray") or 0)
        xray: bool | int = True if depth < 0 else depth
        drawn = cast(dict[str, Any], (await g.aget_graph(config, xray=xray)).to_json())
        for node in drawn.get("nodes", []):
            if isinstance(node.get("data"), dict):
                node["data"].pop("id", None)
        return drawn

    async def do_schemas(self, rid: str, g: Graph, frame: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        """The graph's JSON Schemas: input, output, state (its stream channels), config (the
        configurable part only) and context; a schema the library cannot draw is null."""
        return _graph_schemas(g)

    async def do_subgraphs(self, rid: str, g: Graph, frame: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        """The schemas of the graph's subgraphs by namespace (under `namespace`, all levels when
        `recurse`), in the order the library yields them."""
        # A Pregel's subgraphs are Pregel (the library types them as the protocol).
        return {ns: _graph_schemas(cast(Graph, sub)) async for ns, sub in g.aget_subgraphs(
            namespace=frame.get("namespace") or None, recurse=bool(frame.get("recurse")))}


async def main() -> None:
    parser = argparse.ArgumentParser(description="jetgraph's Python graph host")
    parser.add_argument("--root", required=True, help="the folder of the config file")
    parser.add_argument("--graph", action="append", default=[], help="id=./path/file.py:attr")
    parser.add_argument("--path", action="append", default=[], help="a local dependency's folder, for imports")
    parser.add_argument("--app", default="", help="the custom routes: ./path/file.py:attr (an ASGI app)")
    parser.add_argument("--auth", default="", help="the auth handler: ./path/file.py:attr (a langgraph_sdk.Auth)")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    sys.path.insert(0, root)
    # langgraph.json's local dependencies go after the installed packages, as the reference puts them.
    sys.path.extend(p for p in args.path if p not in sys.path)
    conn = Conn()
    graphs: dict[str, Loaded] = {}
    report: dict[str, dict[str, Any]] = {}
    for g in args.graph:
        gid, _, spec = g.partition("=")
        try:
            graphs[gid] = load(root, spec)
            report[gid] = {"ok": True, "factory": graphs[gid].factory is not None}
        except BaseException as e:  # noqa: BLE001 - a user's module may raise anything, SystemExit too
            report[gid] = {"ok": False, "error": f"{type(e).__name__}: {e}"}
    app: App | None = None
    app_report: dict[str, Any] | None = None
    if args.app:
        try:
            app = App(load_attr(root, args.app), conn.send)
            app_report = {"ok": True, "routes": routes_of(app.app)}
            await app.startup()
        except BaseException as e:  # noqa: BLE001 - a user's module may raise anything
            app, app_report = None, {"ok": False, "error": f"{type(e).__name__}: {e}"}
    auth: AuthHandler | None = None
    auth_report: dict[str, Any] | None = None
    if args.auth:
        try:
            auth = AuthHandler(load_attr(root, args.auth))
            auth_report = auth.report()
        except BaseException as e:  # noqa: BLE001 - a user's module may raise anything
            auth, auth_report = None, {"ok": False, "error": f"{type(e).__name__}: {e}"}
    from importlib.metadata import version

    conn.send({"t": "hello", "protocol": PROTOCOL, "language": "python", "runtime": platform.python_version(),
               "library": version("langgraph"), "graphs": report,
               **({"app": app_report} if app_report is not None else {}),
               **({"auth": auth_report} if auth_report is not None else {})})
    host = Host(conn, graphs, app, auth)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=64 << 20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        if line.strip():
            host.dispatch(json.loads(line))
    for task in list(host.tasks.values()):
        task.cancel()
    if app is not None:
        await app.shutdown(APP_SHUTDOWN_WAIT)


if __name__ == "__main__":
    # A debugging aid for where a host's time goes: JETGRAPH_HOST_PROFILE=<path> writes the
    # event loop thread's cProfile statistics to <path>.<pid> when the host stops.
    profile_to = os.environ.get("JETGRAPH_HOST_PROFILE")
    if profile_to:
        import cProfile

        profiler = cProfile.Profile()
        try:
            profiler.runcall(asyncio.run, main())
        finally:
            profiler.dump_stats(f"{profile_to}.{os.getpid()}")
    else:
        asyncio.run(main())
    _flush_traces()
    # The langsmith client's sender thread is no daemon: with jetgraph gone it would go on
    # retrying, and a host never outlives its server.
    sys.stderr.flush()
    os._exit(0)
