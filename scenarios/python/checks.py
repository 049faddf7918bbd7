"""The checks the scenario scripts share: stop on the first wrong answer, wait for a read."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

# Names the script (and mode) in every failure.
label = "scenario"


def check(cond: bool, what: str) -> None:
    """Exits with FAIL and what was wrong unless cond holds."""
    if not cond:
        sys.exit(f"FAIL [{label}]: {what}")


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
