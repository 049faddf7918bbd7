"""What the scenario scripts share: stop on the first wrong answer, wait for a read or a
condition, a state's message texts, note a traced run."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")

# Names the script (and mode) in every failure.
label = "scenario"


def check(cond: bool, what: str) -> None:
    """Exits with FAIL and what was wrong unless cond holds."""
    if not cond:
        sys.exit(f"FAIL [{label}]: {what}")


def texts(values: Any) -> list[str]:
    """The contents of the messages of a state's values (none for None)."""
    return [m["content"] for m in (values or {}).get("messages", [])]


def until(what: str, cond: Callable[[], bool], timeout: float = 30) -> None:
    """Polls cond every 50 ms until it holds; FAIL after timeout seconds."""
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


def poll(what: str, f: Callable[[], T | None], timeout: float = 30) -> T:
    """Calls f until it returns something truthy: reads see what the trace projection has
    applied a moment after ingestion answered (a read before then may raise, as a 404)."""
    last: Exception | None = None
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            v = f()
            if v:
                return v
        except Exception as e:  # noqa: BLE001 - not there yet
            last = e
        time.sleep(0.05)
    sys.exit(f"FAIL [{label}]: timed out waiting for {what}" + (f": {last!r}" if last else ""))


def note_run(ids: dict[str, str], role: str) -> None:
    """Keeps the id of the run being traced (inside a @traceable function) under role."""
    from langsmith.run_helpers import get_current_run_tree

    rt = get_current_run_tree()
    assert rt is not None
    ids[role] = str(rt.id)


def native_reply(usage: dict[str, int]) -> Callable[[list[str]], dict[str, Any]]:
    """A streamed model's reduce_fn: its chunks become one assistant message in the native
    format of the trace spec, with the usage."""

    def reduce(chunks: list[str]) -> dict[str, Any]:
        return {
            "messages": [{"role": "assistant", "content": [{"type": "text", "text": "".join(chunks)}]}],
            "usage_metadata": usage,
        }

    return reduce
