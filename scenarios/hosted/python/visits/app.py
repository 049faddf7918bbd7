"""The hosted Python scenario's custom routes (langgraph.json's http.app): a Starlette app."""

import asyncio

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


async def custom_threads(request: Request) -> Response:
    return JSONResponse({"custom": "threads"})


app = Starlette(routes=[
    Route("/hello", hello),
    Route("/echo", echo, methods=["POST"]),
    Route("/ticks", ticks),
    Route("/threads/custom", custom_threads),
])
