"""The event loop the ``dealer`` and ``play`` processes run on, and whether they poll.

A match is a ping-pong of short lines over local sockets: every action wakes the dealer and a
player once each. uvloop (libuv) does a wake-up (poll, read, callback, write) several times
cheaper than asyncio's pure-Python selector loop: a bare ping-pong here runs 5-8x faster,
a full call-vs-call match about 12% faster (the rest of its time is our own Python per
line). It is a runtime dependency on Linux and macOS; where it cannot be imported
(Windows, a stripped install) the stock asyncio loop runs the same code unchanged.
``POKERBOT_UVLOOP=0`` forces the stock loop (for comparisons, and for asyncio's debug mode).

:func:`busy_read` is the other half of a fast ping-pong: after a process has answered,
the next line usually arrives within tens of microseconds, and reading it straight away
spares the sleep and the wake-up, at the price of the CPU time spent polling. It pays
where waking a process is slow. On a virtual machine whose idle CPUs must be woken by the
hypervisor, a loopback round trip took 65 µs with both ends asleep and 8 µs with both
polling, and polling made a ``call``-vs-``call`` match 1.6-1.9x faster; on the 2-vCPU
machine, with both vCPUs otherwise idle (52-64 µs asleep, 10-12 polling), it makes one
1.7x faster for the same CPU per hand as the cross-CPU wake-ups it spares (0.87 ms). Where
the scheduler keeps the two ends on one CPU (19 µs either way, as when other work keeps
the machine busy) a wake-up is cheap and polling only adds CPU: it made a match slower
there (752 hands/s against 1,262) with a dealer that wrote every state to every seat at
once. So ``--spin-us auto`` (the commands' default) measures both round trips once per
process with a short probe (:func:`measure_round_trips`, a few tens of milliseconds) and
polls only where the rule (:func:`polling_rule`) finds the wake-up slow enough;
:func:`choose_polling` does both and keeps the answer (:class:`PollingChoice`).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import select
import socket
import statistics
import sys
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeVar

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
#: Polling budget of the dealer and the players when they poll, microseconds.
DEFAULT_SPIN_US = 100.0
#: ``--spin-us auto``: measure, then poll only where it pays (:func:`choose_polling`).
SPIN_AUTO: Final = "auto"
#: A polling budget in microseconds, or :data:`SPIN_AUTO`.
SpinSetting = float | Literal["auto"]
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


# ---------------------------------------------------------------------------- polling or not

#: Round trips the probe times in each mode (after a few to warm up).
PROBE_TRIPS = 200
#: Polling pays when it saves at least this much per round trip, microseconds (two
#: wake-ups). Measured: where polling made a match 1.6-1.9x faster it saved 57 µs (65 µs
#: asleep, 8 µs polling), and 40-50 µs where it made one 1.7x faster for no more CPU;
#: where it made one slower, or cost CPU for nothing, the whole sleeping round trip was
#: 19-19.5 µs, an upper bound of the saving. The threshold sits between the two.
POLL_MIN_SAVING_US = 30.0
#: Longest the probe waits for one reply before it gives up, seconds.
_PROBE_WAIT_S = 1.0


@dataclass(frozen=True)
class PollingChoice:
    """Whether a process polls its sockets, and why.

    ``spin_us`` is the polling budget after each read (0: no polling). ``auto`` says the
    probe and :func:`polling_rule` chose it (``False``: the caller fixed it); the probe's
    figures are then ``sleeping_us`` and ``polling_us`` (median loopback round trips,
    microseconds, ``None`` if it could not run) and ``cpus`` the CPUs this process may use.
    """

    spin_us: float
    auto: bool
    reason: str
    sleeping_us: float | None = None
    polling_us: float | None = None
    cpus: int | None = None

    def to_json(self) -> dict[str, object]:
        """The choice as plain JSON values (for summaries)."""
        return {
            "spin_us": self.spin_us,
            "auto": self.auto,
            "reason": self.reason,
            "sleeping_round_trip_us": None if self.sleeping_us is None else round(self.sleeping_us, 1),
            "polling_round_trip_us": None if self.polling_us is None else round(self.polling_us, 1),
            "cpus": self.cpus,
        }


def polling_rule(sleeping_us: float | None, polling_us: float | None, cpus: int | None) -> tuple[float, str]:
    """The polling budget to use (:data:`DEFAULT_SPIN_US` or 0) and why, from the probe's
    median loopback round trips with both ends sleeping and both polling (microseconds)
    and the number of CPUs this process may use.

    Poll only when all of these hold: polling is possible here (:data:`CAN_POLL`), the
    probe ran, at least two CPUs are available (on one CPU a polling process only keeps
    the one it waits for off the CPU), and polling saves at least
    :data:`POLL_MIN_SAVING_US` per round trip. A saving smaller than that buys less
    than polling costs: its CPU time, and on a machine running the dealer and two players
    on two CPUs, the CPU the process it waits for needs.
    """
    if not CAN_POLL:
        return 0.0, "polling needs POSIX descriptors and sched_yield"
    if sleeping_us is None or polling_us is None:
        return 0.0, "the loopback probe could not run"
    if cpus is not None and cpus < 2:
        return 0.0, "one CPU: a polling process would keep the one it waits for waiting"
    saving = sleeping_us - polling_us
    if saving < POLL_MIN_SAVING_US:
        return 0.0, (f"polling saves {saving:.1f} µs a round trip ({sleeping_us:.1f} asleep, "
                     f"{polling_us:.1f} polling), under {POLL_MIN_SAVING_US:g}")
    return DEFAULT_SPIN_US, (f"polling saves {saving:.1f} µs a round trip ({sleeping_us:.1f} asleep, "
                             f"{polling_us:.1f} polling)")


def _usable_cpus() -> int | None:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count()


def _receive(sock: socket.socket, poll_s: float) -> bytes:
    """The next bytes of the non-blocking ``sock``: polled for ``poll_s`` first, then
    waited for asleep (at most :data:`_PROBE_WAIT_S`; ``b""`` if nothing came)."""
    data = busy_read(sock.fileno(), poll_s)
    if data is None:
        readable, _, _ = select.select([sock], [], [], _PROBE_WAIT_S)
        if not readable:
            return b""
        try:
            data = sock.recv(64)
        except BlockingIOError:
            return b""
    return data


def _echo(sock: socket.socket) -> None:
    """The probe's other end: send back every byte; after a ``p`` poll for the next one."""
    poll_s = 0.0
    while data := _receive(sock, poll_s):
        sock.sendall(data)
        poll_s = 0.001 if data[-1:] == b"p" else 0.0


def _time_trips(sock: socket.socket, trips: int, polling: bool) -> float | None:
    """Median microseconds of ``trips`` one-byte round trips (after ten to warm up)."""
    message = b"p" if polling else b"s"
    poll_s = 0.001 if polling else 0.0
    clock = time.perf_counter
    times = []
    for k in range(trips + 10):
        t0 = clock()
        sock.sendall(message)
        if not _receive(sock, poll_s):
            return None
        if k >= 10:
            times.append(clock() - t0)
    return statistics.median(times) * 1e6


def measure_round_trips(trips: int = PROBE_TRIPS, unix: bool = False) -> tuple[float, float] | None:
    """Median loopback TCP round trips (microseconds; with ``unix``, over a Unix socket
    pair) between this process and a forked copy of it: ``(sleeping, polling)``, with
    both ends sleeping until a byte comes, then both polling (:func:`busy_read`) for it.
    ``None`` where it cannot run (no fork, no loopback, no reply within a second). With
    the default 200 trips of each kind it takes a few tens of milliseconds, most of it
    the fork."""
    if not CAN_POLL or not hasattr(os, "fork"):
        return None
    try:
        if unix:
            near, far = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        else:
            with socket.create_server(("127.0.0.1", 0)) as server:
                near = socket.create_connection(server.getsockname()[:2], timeout=_PROBE_WAIT_S)
                far, _ = server.accept()
    except (OSError, AttributeError):  # (AttributeError: no AF_UNIX here)
        return None
    with near, far:
        for sock in (near, far):
            if not unix:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setblocking(False)
        pid = os.fork()
        if pid == 0:  # the echo: it touches nothing of the parent's and never returns
            try:
                near.close()
                _echo(far)
            finally:
                os._exit(0)
        far.close()
        try:
            sleeping = _time_trips(near, trips, polling=False)
            polling = _time_trips(near, trips, polling=True)
        except OSError:
            sleeping = polling = None
        finally:
            near.close()  # the echo sees end of file and exits
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
    if sleeping is None or polling is None:
        return None
    return sleeping, polling


_chosen: dict[bool, PollingChoice] = {}


def choose_polling(unix: bool = False) -> PollingChoice:
    """Probe this machine once per process and transport (:func:`measure_round_trips`:
    loopback TCP, or with ``unix`` a Unix socket pair) and apply :func:`polling_rule`;
    later calls return the same choice."""
    chosen = _chosen.get(unix)
    if chosen is None:
        cpus = _usable_cpus()
        measured = measure_round_trips(unix=unix) if CAN_POLL and (cpus is None or cpus >= 2) else None
        sleeping, polling = measured if measured is not None else (None, None)
        spin, reason = polling_rule(sleeping, polling, cpus)
        chosen = _chosen[unix] = PollingChoice(spin, True, reason, sleeping, polling, cpus)
    return chosen


def resolve_spin(setting: SpinSetting, unix: bool = False) -> PollingChoice:
    """The polling to use for ``setting``: :data:`SPIN_AUTO` decides by :func:`choose_polling`
    (for a Unix socket with ``unix``), a number of microseconds is taken as given (0: no
    polling)."""
    if setting == SPIN_AUTO:
        return choose_polling(unix)
    spin = float(setting)
    if not spin >= 0:
        raise ValueError(f"the polling budget must be a number of microseconds >= 0 or {SPIN_AUTO!r}, not {setting!r}")
    return PollingChoice(spin, False, "given" if spin > 0 else "polling turned off")
