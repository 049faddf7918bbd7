"""The hosted Python scenario's custom routes (langgraph.json's http.app): a Starlette app."""

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


async def hello(request: Request) -> Response:
    return JSONResponse({"hello": request.query_params.get("name", "world")})


async def echo(request: Request) -> Response:
    body = b"".join([chunk async for chunk in request.stream()])
    return JSONResponse({"bytes": len(body), "upper": body.decode().upper()})


async def ticks(request: Request) -> Response:
    async def events():  # noqa: ANN202 - an async generator of str
        for i in range(3):
            yield f"event: tick\ndata: {i}\n\n"
            await asyncio.sleep(0.3)

    return StreamingResponse(events(), media_type="text/event-stream")


async def forever(request: Request) -> Response:
    """Ticks until the client goes away: jetgraph then cancels the request in the host."""

    async def events():  # noqa: ANN202 - an async generator of str
        i = 0
        try:
            while True:
                yield f"data: {i}\n\n"
                i += 1
                await asyncio.sleep(0.1)
        finally:
            print("forever: client gone", file=sys.stderr, flush=True)

    return StreamingResponse(events(), media_type="text/event-stream")


async def item(request: Request) -> Response:
    return JSONResponse({"item": request.path_params["item_id"]})


async def custom_threads(request: Request) -> Response:
    return JSONResponse({"custom": "threads"})


@contextlib.asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    """Says when it starts and stops: the scenario checks the host ran both."""
    print("visits app: lifespan startup", file=sys.stderr, flush=True)
    yield
    print("visits app: lifespan shutdown", file=sys.stderr, flush=True)


app = Starlette(lifespan=lifespan, routes=[
    Route("/hello", hello),
    Route("/echo", echo, methods=["POST"]),
    Route("/ticks", ticks),
    Route("/forever", forever),
    Route("/items/{item_id:int}", item),
    Route("/threads/custom", custom_threads),
])
