"""The event loop the ``dealer`` and ``play`` processes run on: uvloop where it is installed.

A match is a ping-pong of short lines over loopback: every action wakes the dealer and a
player once each. uvloop (libuv) does a wake-up (poll, read, callback, write) several times
cheaper than asyncio's pure-Python selector loop: a bare ping-pong here runs 5-8x faster,
a full call-vs-call match about 12% faster (the rest of its time is our own Python per
line). It is a runtime dependency on Linux and macOS; where it cannot be imported
(Windows, a stripped install) the stock asyncio loop runs the same code unchanged.
``POKERBOT_UVLOOP=0`` forces the stock loop (for comparisons, and for asyncio's debug mode).
"""

from __future__ import annotations

import asyncio
import gc
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop factory, or ``None`` for asyncio's default loop."""
    if os.environ.get("POKERBOT_UVLOOP", "1").strip().lower() in ("0", "no", "false", "off"):
        return None
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on the fastest available loop."""
    # Everything loaded so far (numpy, numba, our modules) lives as long as the process:
    # moving it out of the collector's generations spares every full collection a walk
    # over a few hundred thousand objects in the middle of a match.
    gc.freeze()
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)
