"""The deployment's own routes (langgraph.json's `http.app`) in jetgraph's Python host.

The user's ASGI app (Starlette, FastAPI) is driven over the host protocol (see PROTOCOL.md,
"Custom routes"): jetgraph sends an `http` frame and the request body in `http.body` frames; the
app's `http.response.start` and `http.response.body` messages go back as `event` frames, and
`done` ends the response. No server, port or socket: ASGI is already a message protocol.
"""

from __future__ import annotations

import asyncio
import base64
import sys
from collections.abc import Callable, Coroutine
from typing import Any

Send = Callable[[dict[str, Any]], None]


def routes_of(app: Any) -> list[dict[str, Any]]:
    """The app's routes as jetgraph matches them: a regular expression on the path and the
    methods (None: any). Starlette compiles every route's path into `path_regex`; a Mount
    matches its prefix and whatever follows. WebSocket routes are left out (HTTP only)."""
    from starlette.routing import Mount, Route

    out: list[dict[str, Any]] = []
    for r in getattr(app, "routes", []):
        if isinstance(r, Route):
            methods = sorted(r.methods) if r.methods else None
            out.append({"pattern": r.path_regex.pattern, "methods": methods})
        elif isinstance(r, Mount):
            out.append({"pattern": r.path_regex.pattern, "methods": None})
    return out


class App:
    """The user's ASGI app and the requests it serves."""

    def __init__(self, app: Any, send: Send) -> None:
        if not callable(app):
            raise TypeError(f"{type(app).__qualname__} is not an ASGI app (a Starlette or FastAPI app)")
        self.app, self.send = app, send
        self.bodies: dict[str, asyncio.Queue[tuple[bytes, bool]]] = {}
        self.state: dict[str, Any] = {}
        self._lifespan_end: asyncio.Event | None = None

    async def startup(self) -> None:
        """Runs the app's lifespan startup (its state goes into every request's scope), as ASGI
        servers do; an app that does not speak the lifespan protocol starts without it."""
        started: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._lifespan_end = asyncio.Event()
        sent_startup = False

        async def receive() -> dict[str, Any]:
            nonlocal sent_startup
            if not sent_startup:
                sent_startup = True
                return {"type": "lifespan.startup"}
            assert self._lifespan_end is not None
            await self._lifespan_end.wait()
            return {"type": "lifespan.shutdown"}

        async def send(msg: dict[str, Any]) -> None:
            if msg["type"] == "lifespan.startup.complete" and not started.done():
                started.set_result(None)
            elif msg["type"] == "lifespan.startup.failed" and not started.done():
                started.set_exception(RuntimeError(msg.get("message") or "the app's startup failed"))

        async def run() -> None:
            try:
                await self.app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": self.state}, receive, send)
            except BaseException as e:  # noqa: BLE001 - an app without lifespan support raises here
                if not started.done():
                    print(f"jetgraph host: the app has no lifespan ({type(e).__name__}: {e}); starting without it",
                          file=sys.stderr)
                    started.set_result(None)
                return
            if not started.done():
                started.set_result(None)

        self._task = asyncio.create_task(run())
        await started

    async def shutdown(self, wait: float) -> None:
        """Runs the app's lifespan shutdown (closing what its startup opened), as ASGI servers do
        when they stop, for `wait` seconds at most: jetgraph kills a host that lingers."""
        if self._lifespan_end is None:
            return
        self._lifespan_end.set()
        try:
            await asyncio.wait_for(asyncio.shield(self._task), wait)
        except BaseException as e:  # noqa: BLE001 - the app's shutdown failing never hangs the host
            print(f"jetgraph host: the app's shutdown did not finish ({type(e).__name__}: {e})", file=sys.stderr)

    def feed(self, frame: dict[str, Any]) -> None:
        """A chunk of a request's body (an `http.body` frame)."""
        q = self.bodies.get(frame.get("id", ""))
        if q is not None:
            q.put_nowait((base64.b64decode(frame.get("data") or ""), bool(frame.get("more"))))

    def serve(self, frame: dict[str, Any]) -> Coroutine[Any, Any, None]:
        """Serves one request to its end (the coroutine's task is cancelled when the client goes
        away). Its body's queue is there at once: the body's frames follow the request's."""
        q: asyncio.Queue[tuple[bytes, bool]] = asyncio.Queue()
        self.bodies[frame["id"]] = q
        q.put_nowait((base64.b64decode(frame.get("body") or ""), bool(frame.get("more"))))
        return self._serve(frame, q)

    async def _serve(self, frame: dict[str, Any], q: asyncio.Queue[tuple[bytes, bool]]) -> None:
        rid = frame["id"]
        body_done = False
        finished = asyncio.Event()
        started = False
        path: str = frame["path"]
        scope = {
            "type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
            "method": frame["method"], "scheme": frame.get("scheme") or "http", "path": path,
            "raw_path": (frame.get("raw_path") or path).encode(), "query_string": (frame.get("query") or "").encode(),
            "root_path": "",
            "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in frame.get("headers") or []],
            "client": tuple(frame["client"]) if frame.get("client") else None,
            "server": tuple(frame["server"]) if frame.get("server") else None,
            "state": dict(self.state),
        }

        async def receive() -> dict[str, Any]:
            nonlocal body_done
            if not body_done:
                data, more = await q.get()
                body_done = not more
                return {"type": "http.request", "body": data, "more_body": more}
            await finished.wait()  # ASGI: after the body, receive waits for the disconnect
            return {"type": "http.disconnect"}

        async def send(msg: dict[str, Any]) -> None:
            nonlocal started
            if msg["type"] == "http.response.start":
                started = True
                headers = [[bytes(k).decode("latin-1"), bytes(v).decode("latin-1")]
                           for k, v in msg.get("headers") or []]
                self.send({"t": "event", "id": rid, "mode": "http.response.start",
                           "data": {"status": msg["status"], "headers": headers}})
            elif msg["type"] == "http.response.body":
                body = msg.get("body") or b""
                if body:
                    self.send({"t": "event", "id": rid, "mode": "http.response.body",
                               "data": base64.b64encode(body).decode()})
                if not msg.get("more_body"):
                    finished.set()

        try:
            await self.app(scope, receive, send)
            if not started:
                raise RuntimeError("the app returned without a response")
            self.send({"t": "done", "id": rid, "result": None})
        except asyncio.CancelledError:
            finished.set()
            self.send({"t": "done", "id": rid, "result": None})
        except Exception as e:  # noqa: BLE001 - the app's failure is the request's answer
            self.send({"t": "done", "id": rid, "error": {"class": type(e).__name__, "message": str(e),
                                                         "traceback": "", "started": started}})
        finally:
            finished.set()
            self.bodies.pop(rid, None)
