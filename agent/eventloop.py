"""The event loop the ``dealer`` and ``play`` processes run on: uvloop where it is installed.

A match is a ping-pong of short lines over loopback: every action wakes the dealer and a
player once each. uvloop (libuv) does a wake-up (poll, read, callback, write) several times
cheaper than asyncio's pure-Python selector loop: a bare ping-pong here runs 5-8x faster,
a full call-vs-call match about 12% faster (the rest of its time is our own Python per
line). It is a runtime dependency on Linux and macOS; where it cannot be imported
(Windows, a stripped install) the stock asyncio loop runs the same code unchanged.
``POKERBOT_UVLOOP=0`` forces the stock loop (for comparisons, and for asyncio's debug mode).

:func:`busy_read` is the other half of a fast ping-pong: after a process has answered,
the next line usually arrives within tens of microseconds, and reading it straight away
spares the sleep and the wake-up. Waking a sleeping process costs little on one CPU, but
on a virtual machine a wake-up on another CPU is slow: there a loopback round trip
between two processes took about 60 µs when both slept and 8 µs when both polled
(``bench/match_throughput.py``, ``loopback_round_trip_us``).
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import time
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


#: Whether :func:`busy_read` can poll (POSIX: reading a socket's descriptor, sched_yield).
CAN_POLL = sys.platform != "win32" and hasattr(os, "sched_yield")
#: Default polling budget of the dealer and the players, microseconds (``--spin-us``).
DEFAULT_SPIN_US = 100.0
#: Most reads one callback handles by polling before it returns to the event loop.
POLLED_READS = 64


def busy_read(fd: int, budget_s: float) -> bytes | None:
    """Poll the non-blocking descriptor ``fd`` for up to ``budget_s`` seconds and return
    what it delivers: data, ``b""`` at end of file, or ``None`` if nothing came (or it
    failed: the event loop's own read then reports the error).

    Between tries the CPU is offered to any other runnable process (``sched_yield``), so
    on a busy CPU polling takes no time from the process it waits for.
    """
    if not CAN_POLL or budget_s <= 0:
        return None
    read = os.read
    give_way = os.sched_yield
    clock = time.perf_counter
    end = clock() + budget_s
    while True:
        try:
            return read(fd, 65536)
        except BlockingIOError:
            if clock() >= end:
                return None
            give_way()
        except OSError:
            return None
