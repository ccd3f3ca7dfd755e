"""Stopping a long compiled kernel when asked, and watching its progress from outside.

A signal handler runs in Python's main thread between bytecodes, so it cannot run while
that thread is inside a numba kernel: a Ctrl-C or SIGTERM would wait for the kernel to
return, minutes on a large walk. Long kernels therefore

- take a :class:`Stop`'s ``flag`` (``int64[1]``, nonzero once a stop is asked) and read
  it at safe points often enough that a stop acts within a second, returning early with
  their outputs incomplete (the caller raises :class:`Interrupted` and drops them);
- count their units of work (nodes, boards, points) in a ``counter`` array of their own,
  which the waiting thread reads to draw a progress bar within the walk;
- are compiled ``nogil=True`` and run off the main thread (:func:`run_stoppable`), so
  the main thread stays free to run signal handlers and redraw the bar.

:func:`stoppable` scopes a :class:`Stop` for a whole job (every walk of an evaluation, say)
and registers it, so that :func:`stop_all`, which the command line's signal handlers call
(:func:`signals_stop_kernels`), reaches kernels on any thread, including walks that start
after the signal. Nothing here imports numba: kernels read the flag as a plain array.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")

__all__ = [
    "Interrupted",
    "Stop",
    "counter",
    "run_stoppable",
    "signals_stop_kernels",
    "stop_all",
    "stoppable",
]


class Interrupted(KeyboardInterrupt):
    """A stop asked by SIGINT or SIGTERM (``signum``), raised as a KeyboardInterrupt so that
    every clean-up written for Ctrl-C runs for SIGTERM too."""

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = int(signum)


class Stop:
    """A stop flag shared by the kernels of one job: ``flag[0]`` is 0 until a stop is
    asked, then the signal's number (compiled code reads the array; Python calls
    :meth:`set`, ``bool()`` and :meth:`check`)."""

    def __init__(self) -> None:
        self.flag = np.zeros(1, dtype=np.int64)

    def set(self, signum: int = signal.SIGINT) -> None:
        """Ask every kernel reading this flag to stop (the first signal is kept)."""
        if self.flag[0] == 0:
            self.flag[0] = int(signum)

    @property
    def signum(self) -> int | None:
        return int(self.flag[0]) or None

    def __bool__(self) -> bool:
        return bool(self.flag[0])

    def check(self) -> None:
        """Raise :class:`Interrupted` once a stop was asked: a kernel that returned after
        a stop left its outputs incomplete."""
        if self.flag[0]:
            raise Interrupted(int(self.flag[0]))


def counter(n: int = 1) -> np.ndarray:
    """A kernel's progress counter(s): ``int64[n]`` zeros, written by one kernel only."""
    return np.zeros(n, dtype=np.int64)


#: The signals that stop kernels.
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

_live: list[Stop] = []
_live_lock = threading.Lock()


@contextmanager
def stoppable(stop: Stop | None = None) -> Iterator[Stop]:
    """A :class:`Stop` (``stop`` or a new one) that :func:`stop_all` reaches while the block
    runs: open it around a whole job, so that a signal between two of its kernels still
    stops the next."""
    stop = Stop() if stop is None else stop
    with _live_lock:
        _live.append(stop)
    try:
        yield stop
    finally:
        with _live_lock:
            _live.remove(stop)


def stop_all(signum: int = signal.SIGINT) -> None:
    """Set every live :class:`Stop` (safe in a signal handler: no lock is taken, and the
    list is only read)."""
    for stop in tuple(_live):
        stop.set(signum)


def run_stoppable(
    work: Callable[[], T],
    stop: Stop,
    *,
    on_poll: Callable[[], None] | None = None,
    poll: float = 0.1,
) -> T:
    """``work()``, which runs kernels reading ``stop.flag``; then :meth:`Stop.check`.

    From the main thread, ``work`` runs on a worker thread while this one waits in steps
    of ``poll`` seconds, calling ``on_poll()`` (to redraw progress from the kernels'
    counters) and leaving signal handlers free to run. A KeyboardInterrupt (Ctrl-C, or
    :class:`Interrupted` from :func:`signals_stop_kernels`' handlers) sets ``stop``,
    waits for ``work`` to return and is raised again. From any other thread ``work`` runs
    right there: the main thread's handlers reach it through ``stop``."""
    if threading.current_thread() is not threading.main_thread():
        out = work()
        if on_poll is not None:
            on_poll()
        stop.check()
        return out
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["out"] = work()
        except BaseException as exc:  # handed to the caller's thread below
            box["exc"] = exc

    worker = threading.Thread(target=target, name="kernel", daemon=True)
    # The signals are blocked while the thread starts (it inherits the mask, so they are
    # never delivered to it): one that came in between would raise before the worker
    # could be joined, leaving it running compiled code while the interpreter exits.
    # Unblocked, a pending one raises here, inside the try.
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        try:
            worker.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        while worker.is_alive():
            worker.join(poll)
            if on_poll is not None and worker.is_alive():
                on_poll()
    except KeyboardInterrupt as exc:
        stop.set(getattr(exc, "signum", signal.SIGINT))
        worker.join()
        raise
    if "exc" in box:
        raise box["exc"]
    if on_poll is not None:
        on_poll()
    stop.check()
    return box["out"]


@contextmanager
def signals_stop_kernels(signals: Sequence[int] = _STOP_SIGNALS) -> Iterator[None]:
    """Within the block (main thread only), each of ``signals`` stops every live kernel
    (:func:`stop_all`) and raises :class:`Interrupted` with its number in the main thread;
    the previous handlers are restored on leaving."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        stop_all(signum)
        raise Interrupted(signum)

    previous = {sig: signal.signal(sig, handler) for sig in signals}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
