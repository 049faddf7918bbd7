"""The user's auth handler (langgraph.json's `auth.path`) in jetgraph's Python host.

jetgraph sends an `authenticate` frame for each request its API guards (PROTOCOL.md, "Auth
handler"); the `@auth.authenticate` handler of the user's `langgraph_sdk.Auth` gets the
parameters it names, as the reference server gives them, and its answer (a user, or its
`Auth.exceptions.HTTPException`) goes back in `done`. An `authorize` frame asks the `@auth.on`
handler of a resource and action, as the reference server finds and calls it.
"""

from __future__ import annotations

import asyncio
import builtins
import inspect
import json
from collections.abc import Callable
from typing import Any

# The handler's parameters the reference server fills (langgraph_api.auth.custom); "body" is
# in its list but never given, so a handler must give it a default there and here alike.
SUPPORTED = ("request", "body", "user", "path", "method", "scopes", "path_params", "query_params",
             "headers", "authorization", "scope")


class AuthHandler:
    """A loaded `langgraph_sdk.Auth` and the parameters its authenticate handler takes."""

    def __init__(self, auth: Any) -> None:
        try:
            from langgraph_sdk import Auth
        except ImportError as e:
            raise ImportError("auth.path needs the langgraph-sdk package in the project's environment") from e
        if not isinstance(auth, Auth):
            raise TypeError(f"expected a langgraph_sdk.Auth instance, got {type(auth).__qualname__}")
        fn: Any = auth._authenticate_handler
        if fn is None:
            raise ValueError("the Auth object has no @auth.authenticate handler")
        sig = inspect.signature(fn)
        unsupported = [n for n, p in sig.parameters.items() if n not in SUPPORTED and p.default is p.empty]
        if unsupported:
            raise ValueError(f"the authenticate handler has unsupported required parameters: {', '.join(unsupported)} "
                             f"(supported: {', '.join(SUPPORTED)})")
        self.auth, self.fn = auth, fn
        self.params = {n for n in sig.parameters if n in SUPPORTED}
        self.http_exception: type[Exception] = Auth.exceptions.HTTPException

    def report(self) -> dict[str, Any]:
        """What `hello` says of it: loaded, how many @auth.on handlers it has and the
        (resource, action) pairs they answer ("*" for any; a global handler is ("*", "*"))."""
        handlers: dict[tuple[str, str], list[Any]] = self.auth._handlers
        on = sum(len(v) for v in handlers.values()) + len(self.auth._global_handlers)
        keys = [list(k) for k in handlers]
        if self.auth._global_handlers and ["*", "*"] not in keys:
            keys.append(["*", "*"])
        return {"ok": True, "on_handlers": on, "on": keys}

    def _handler(self, resource: str, action: str) -> Any:
        """The handler the reference server picks: the most specific, the last one registered."""
        handlers: dict[tuple[str, str], list[Any]] = self.auth._handlers
        for key in ((resource, action), (resource, "*"), ("*", action), ("*", "*")):
            if key in handlers:
                return handlers[key][-1]
        if self.auth._global_handlers:
            return self.auth._global_handlers[-1]
        return None

    async def authorize(self, frame: dict[str, Any]) -> dict[str, Any]:
        """The answer to an `authorize` frame: {"value", "filter"?} with the value as the handler
        left it, or {"status", "detail"} when it refused (its HTTPException, an assert, False) or
        returned what is no filter (a 500, as the reference answers)."""
        from langgraph_sdk import Auth

        resource, action = str(frame["resource"]), str(frame["action"])
        value: dict[str, Any] = frame.get("value") or {}
        handler = self._handler(resource, action)
        if handler is None:
            return {"value": value}
        if resource == "store":  # the reference gives a store op's namespaces as tuples
            for k in ("namespace", "suffix"):
                if isinstance(value.get(k), list):
                    value[k] = tuple(value[k])
        user = HandlerUser(frame.get("user") or {})
        ctx = Auth.types.AuthContext(permissions=list(user.permissions), user=user,
                                     resource=resource, action=action)  # type: ignore[arg-type]
        try:
            result = await handler(ctx=ctx, value=value)
        except self.http_exception as e:
            return {"status": int(getattr(e, "status_code", 500)), "detail": str(getattr(e, "detail", ""))}
        except AssertionError as e:
            return {"status": 403, "detail": str(e)}
        if result is None or result is True:
            return {"value": _jsonable(value)}
        if result is False:
            return {"status": 403, "detail": "Forbidden"}
        if not isinstance(result, dict):
            return {"status": 500, "detail": "Auth handler returned invalid result. Expected filter dict, None, "
                                             f"or boolean. Got {type(result)} instead."}
        return {"value": _jsonable(value), "filter": _jsonable(result)}

    async def authenticate(self, frame: dict[str, Any]) -> dict[str, Any]:
        """The answer to an `authenticate` frame: {"user": ...} or {"status", "detail"} (a 401/403)."""
        try:
            args = self._arguments(frame)
            if inspect.iscoroutinefunction(self.fn):
                out = await self.fn(**args)
            else:  # a blocking handler runs in a thread, as the reference runs it in its threadpool
                out = await asyncio.to_thread(self.fn, **args)
                if inspect.isawaitable(out):
                    out = await out
        except self.http_exception as e:
            status = int(getattr(e, "status_code", 401))
            if status not in (401, 403):
                raise  # as on the reference server: any other status is the handler's failure, a 500
            return {"status": status, "detail": str(getattr(e, "detail", ""))}
        return {"user": normalize(out)}

    def _arguments(self, frame: dict[str, Any]) -> dict[str, Any]:
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in frame.get("headers") or []]
        scope: dict[str, Any] = {
            "type": "http", "method": frame.get("method", "GET"), "path": frame.get("path", "/"),
            "raw_path": frame.get("path", "/").encode(), "query_string": (frame.get("query") or "").encode(),
            "headers": headers, "scheme": frame.get("scheme", "http"), "root_path": "", "path_params": {},
            "http_version": "1.1", "server": None, "client": None,
        }
        args: dict[str, Any] = {}
        p = self.params
        if "scope" in p:
            args["scope"] = scope
        if "request" in p:
            from starlette.requests import Request  # the reference's Request: a Starlette one

            args["request"] = Request(scope)
        if "user" in p:
            args["user"] = None
        if "scopes" in p:
            args["scopes"] = []
        if "path_params" in p:
            args["path_params"] = {}
        if "path" in p:
            args["path"] = scope["path"]
        if "method" in p:
            args["method"] = scope["method"]
        if "query_params" in p:
            args["query_params"] = _query_params(scope["query_string"])
        if "headers" in p:
            args["headers"] = dict(headers)
        if "authorization" in p:
            auth = dict(headers).get(b"authorization")
            args["authorization"] = auth.decode("utf-8") if auth is not None else None
        return args


class DotDict(dict[str, Any]):
    """A dict whose keys read as attributes too, nested dicts alike, as the reference's DotDict."""

    def __getattr__(self, name: str) -> Any:
        try:
            v = self[name]
        except KeyError:
            raise AttributeError(f"no attribute {name!r}") from None
        return DotDict(v) if isinstance(v, dict) and not isinstance(v, DotDict) else v


class HandlerUser(DotDict):
    """The authenticated user as an @auth.on handler and a graph see it, as the reference gives it:
    by key (`ctx.user["identity"]`, `.get`, `.dict()`) and by attribute (`ctx.user.identity`,
    `ctx.user.org.id`), with is_authenticated (true unless the user said otherwise) and
    display_name (the identity without one)."""

    def __init__(self, fields: dict[str, Any]) -> None:
        super().__init__(fields)
        self.setdefault("is_authenticated", True)
        if not self.get("display_name"):
            self["display_name"] = self.get("identity", "")
        self.setdefault("permissions", [])

    @property
    def identity(self) -> str:
        return str(self["identity"])

    @property
    def display_name(self) -> str:
        return str(self["display_name"])

    @property
    def is_authenticated(self) -> bool:
        return bool(self["is_authenticated"])

    @property
    def permissions(self) -> list[str]:
        return list(self["permissions"])

    def dict(self) -> builtins.dict[str, Any]:
        return builtins.dict(self)

    def model_dump(self, **_: Any) -> builtins.dict[str, Any]:
        return builtins.dict(self)


def _jsonable(v: Any) -> Any:
    """v as JSON takes it: tuples as lists, what JSON has no type for as its text."""
    return json.loads(json.dumps(v, default=str))


def _query_params(raw: bytes) -> Any:
    try:
        from starlette.datastructures import QueryParams

        return QueryParams(raw)
    except ImportError:  # no Starlette in the project: the query's first values as a dict
        from urllib.parse import parse_qsl

        out: dict[str, str] = {}
        for k, v in parse_qsl(raw.decode("latin-1"), keep_blank_values=True):
            out.setdefault(k, v)
        return out


def normalize(result: Any) -> dict[str, Any]:
    """The handler's answer as jetgraph's user: identity, display_name, is_authenticated,
    permissions and the user's other fields (JSON), as the reference server reads it."""
    if isinstance(result, tuple):
        if len(result) != 2:
            raise ValueError(f"expected a tuple with two elements (permissions, user), got {len(result)}")
        permissions, user = result
    elif hasattr(result, "permissions"):
        permissions, user = result.permissions, result
    elif isinstance(result, dict) and "permissions" in result:
        permissions, user = result["permissions"], result
    else:
        permissions, user = [], result
    if isinstance(user, str):
        fields: dict[str, Any] = {"identity": user}
    elif isinstance(user, dict) and "identity" in user:
        fields = dict(user)
    elif hasattr(user, "identity"):
        dump: Callable[..., Any] | None = getattr(user, "model_dump", None) or getattr(user, "dict", None)
        fields = dict(dump()) if callable(dump) else {}
        fields.setdefault("identity", user.identity)
        for k in ("display_name", "is_authenticated"):
            if hasattr(user, k):
                fields.setdefault(k, getattr(user, k))
    else:
        raise ValueError("expected a user with an identity (str): a string, a dict with identity, or an object "
                         f"with an identity attribute; got {type(user).__qualname__}")
    identity = fields.get("identity")
    if not isinstance(identity, str) or not identity:
        raise ValueError(f"the user's identity must be a non-empty string, got {identity!r}")
    fields["permissions"] = [str(p) for p in (permissions or [])]
    out: dict[str, Any] = json.loads(json.dumps(fields, default=str))
    return out
