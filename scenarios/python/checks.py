"""What the SDK scenario scripts share: a failed check exits with FAIL, a state's message texts,
polling until a condition holds."""

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any


def check(cond: bool, what: str) -> None:
    """Exit non-zero with `FAIL: what` unless cond holds."""
    if not cond:
        sys.exit(f"FAIL: {what}")


def texts(values: Any) -> list[str]:
    """The contents of the messages of a state's values (none for None)."""
    return [m["content"] for m in (values or {}).get("messages", [])]


def until(what: str, cond: Callable[[], bool], timeout: float = 30) -> None:
    """Poll cond every 50 ms until it holds; FAIL after timeout seconds."""
    deadline = time.monotonic() + timeout
    while not cond():
        check(time.monotonic() < deadline, f"timed out waiting for {what}")
        time.sleep(0.05)


async def until_async(what: str, cond: Callable[[], Awaitable[bool]], timeout: float = 30) -> None:
    """until for a coroutine condition."""
    deadline = time.monotonic() + timeout
    while not await cond():
        check(time.monotonic() < deadline, f"timed out waiting for {what}")
        await asyncio.sleep(0.05)
