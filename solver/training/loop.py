"""The training loop shared by every algorithm: :func:`train` runs any solver with an
``iterate(n)`` method in timed batches until an iteration count or a time budget is
spent, and reports what it did as a :class:`TrainResult`.

A run that must survive SIGINT and SIGTERM wraps the loop in :func:`stop_on_signals`:
its handlers only set a :class:`StopRequest`, which :func:`train` reads between batches,
so a stopped run's tables hold whole batches only and a checkpoint written then
continues it exactly. :func:`table_stats` measures a solver's regret table (the share of
information sets ever updated, regret extremes) for progress reports.

It imports no solver module: choosing an algorithm by name and compiling its kernels
is the job of :mod:`solver.training.algorithms`, which drives this loop in :func:`solve
<solver.training.algorithms.solve>`.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from poker._stop import Interrupted, stop_all

T = TypeVar("T")

__all__ = ["StopRequest", "TableStats", "TrainResult", "stop_on_signals", "table_stats", "train"]


@dataclass
class TrainResult:
    """What :func:`train` did: iterations and nodes touched in this call, solving seconds."""

    iterations: int = 0
    nodes: int = 0
    seconds: float = 0.0
    stopped: bool = False  # the callback asked to stop
    interrupted: bool = False  # a signal (StopRequest) or Ctrl-C (KeyboardInterrupt) ended the loop
    signal: int | None = None  # the signal that ended it (SIGINT for a KeyboardInterrupt)


class StopRequest:
    """A flag a signal handler sets and :func:`train` reads between batches; true once
    set, ``signum`` the first signal that set it."""

    def __init__(self) -> None:
        self.signum: int | None = None

    def set(self, signum: int = signal.SIGINT) -> None:
        if self.signum is None:
            self.signum = int(signum)

    def __bool__(self) -> bool:
        return self.signum is not None


@contextmanager
def stop_on_signals(
    signals: Sequence[int] = (signal.SIGINT, signal.SIGTERM),
    request: StopRequest | None = None,
) -> Iterator[StopRequest]:
    """Within the block, ``signals`` only set the :class:`StopRequest` it yields
    (``request`` if given, which the caller may also set; else a new one: pass it to
    :func:`train` as ``stop``) and stop every compiled kernel under way
    (:func:`poker._stop.stop_all`: a walk of an evaluation returns within a second, and
    its caller raises :class:`poker._stop.Interrupted`); the previous handlers are
    restored on leaving. Outside
    the main thread (where Python cannot install handlers) nothing is installed and only
    the caller sets the request."""
    request = StopRequest() if request is None else request
    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in signals:
            previous[sig] = signal.signal(sig, lambda signum, frame: _stop(request, signum))
    try:
        yield request
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _stop(request: StopRequest, signum: int) -> None:
    request.set(signum)
    stop_all(signum)


class _Stopped(Exception):
    """Raised by :func:`until_signalled`'s check once a signal came."""


def until_signalled(work: Callable[[Callable[[], None]], T]) -> tuple[T | None, int | None]:
    """``work(check)`` with SIGINT and SIGTERM only noted while it runs: ``check()``, which
    ``work`` calls between its steps (from any thread), raises once one came, and the
    signal then ends it there. Returns ``(result, None)``, or ``(None, signum)`` when a
    signal stopped it; the previous handlers are put back either way."""
    with stop_on_signals() as request:

        def check() -> None:
            if request:
                raise _Stopped

        try:
            return work(check), None
        except (_Stopped, Interrupted):  # a kernel stopped by the signal raises Interrupted
            return None, request.signum


def check_budget(iterations: int | None, seconds: float | None) -> None:
    """Raise ``ValueError`` unless at least one budget is given and none is negative."""
    if iterations is None and seconds is None:
        raise ValueError("give iterations=N or seconds=T (or both)")
    if iterations is not None and iterations < 0:
        raise ValueError(f"iterations {iterations} must not be negative")
    if seconds is not None and seconds < 0:
        raise ValueError(f"seconds {seconds} must not be negative")


def train(
    solver: Any,
    *,
    iterations: int | None = None,
    seconds: float | None = None,
    callback: Callable[[Any, TrainResult], bool | None] | None = None,
    batch_seconds: float = 0.1,
    batch: int | None = None,
    stop: StopRequest | None = None,
    first_batch: int = 1,
) -> TrainResult:
    """Iterate ``solver`` (any solver with ``iterate(n)``) until ``iterations`` more
    iterations or ``seconds`` of solving, whichever comes first.

    Batches aim at ``batch_seconds`` each (the first is ``first_batch`` iterations, the
    next at most four times the last), or are ``batch`` iterations each if given;
    ``callback(solver, result)`` runs after each batch (its time is not counted) and may
    return True to stop. Once ``stop`` is set (see :func:`stop_on_signals`) the loop ends
    before the next batch with ``interrupted`` and ``signal`` set: a batch is never cut,
    so the tables and the iteration count agree and a run saved then continues exactly
    as if never stopped. Without handlers, Ctrl-C (KeyboardInterrupt) also ends the loop
    with ``interrupted`` set instead of raising, so the caller can save the run; but the
    tables may then hold an interrupted batch only partly counted, so a run resumed from
    there is statistically, not bit-for-bit, the uninterrupted one.
    """
    check_budget(iterations, seconds)
    if batch is not None and batch < 1:
        raise ValueError(f"batch {batch} must be at least 1")
    if first_batch < 1:
        raise ValueError(f"first_batch {first_batch} must be at least 1")
    res = TrainResult()
    step = batch or first_batch
    while True:
        left = None if iterations is None else iterations - res.iterations
        if left is not None and left <= 0:
            break
        if seconds is not None and res.seconds >= seconds:
            break
        if stop:
            res.interrupted, res.signal = True, stop.signum
            break
        n = step if left is None else min(step, left)
        t0 = time.perf_counter()
        try:
            touched = solver.iterate(n)
        except KeyboardInterrupt:
            res.seconds += time.perf_counter() - t0
            res.interrupted, res.signal = True, int(signal.SIGINT)
            break
        dt = time.perf_counter() - t0
        res.iterations += n
        res.nodes += int(touched or 0)
        res.seconds += dt
        if batch is None:
            target = batch_seconds
            if seconds is not None:
                target = min(target, max(seconds - res.seconds, 0.0))
            step = max(1, min(int(n / max(dt, 1e-9) * target), 4 * n))
        try:
            if callback is not None and callback(solver, res):
                res.stopped = True
                break
        except KeyboardInterrupt:
            res.interrupted, res.signal = True, int(signal.SIGINT)
            break
    return res


@dataclass
class TableStats:
    """:func:`table_stats`' figures of a regret table."""

    infosets: int  # information-set rows: (decision node, bucket)
    infosets_visited: int  # rows with any nonzero entry
    regret_max: float
    regret_mean_positive: float  # mean of max(R, 0) over every entry
    seconds: float  # what computing them took

    @property
    def infosets_visited_share(self) -> float:
        return self.infosets_visited / self.infosets if self.infosets else 0.0


#: :func:`table_stats` reads the table in pieces of about this many entries, so its
#: temporaries stay a few MiB whatever the table's size.
STATS_CHUNK = 1 << 20


def _row_groups(solver: Any) -> Iterator[tuple[int, int, int, np.ndarray]]:
    """The regret table's information-set rows as groups ``(base, n, width, starts)``:
    ``n`` consecutive runs of ``width`` entries from ``base``, each cut into rows at
    ``starts`` (ascending, from 0). Vector CFR's layout (and the sampled solvers' "node"
    layout): one group per decision node, its buckets' rows; the bucket-major layout of
    :class:`solver.training.sampled.TableLayout`: one group per (street, player) block, a run per
    bucket and a row per decision in it."""
    p = solver.problem
    tree = p.tree
    layout = getattr(solver, "layout", None)
    n_buckets = p.chance.n_buckets
    if layout is not None and layout.kind == "bucket":
        for st in range(tree.n_streets):
            for pl in range(2):
                nodes = tree.decision_nodes(street=st, player=pl)
                width = int(layout.block_width[st, pl])
                if nodes.size == 0 or width == 0:
                    continue
                base = int(layout.block_base[st, pl])
                starts = np.sort(layout.offset[nodes].astype(np.int64) - base)
                yield base, int(n_buckets[st]), width, starts
        return
    offset = layout.offset if layout is not None else p.offset
    zero = np.zeros(1, dtype=np.int64)
    for node in tree.decision_nodes():
        n = int(tree.n_child[node])
        yield int(offset[node]), int(n_buckets[tree.street[node]]), n, zero


def table_stats(solver: Any) -> TableStats:
    """How much of ``solver``'s regret table (``solver.regrets``, in the layout of
    ``solver.layout`` where it has one, else ``solver.problem.offset``'s) training has
    reached: the information sets (decision node, bucket) with any nonzero regret, the
    largest cumulative regret and the mean of the positive parts over every entry.
    Two passes over the table in pieces of :data:`STATS_CHUNK` entries (no temporary
    of the table's size): about a second per 100M float32 entries on one core."""
    t0 = time.perf_counter()
    table = solver.regrets
    size = table.shape[0]
    mx = -np.inf
    pos = 0.0
    for i in range(0, size, STATS_CHUNK):
        part = table[i : i + STATS_CHUNK]
        mx = max(mx, float(part.max()))
        pos += float(np.maximum(part, 0).sum(dtype=np.float64))
    rows = visited = 0
    for base, n, width, starts in _row_groups(solver):
        rows += n * starts.size
        step = max(1, STATS_CHUNK // width)
        for b in range(0, n, step):
            k = min(step, n - b)
            block = table[base + b * width : base + (b + k) * width].reshape(k, width)
            visited += int(np.logical_or.reduceat(block != 0, starts, axis=1).sum())
    return TableStats(
        infosets=rows,
        infosets_visited=visited,
        regret_max=float(mx) if size else 0.0,
        regret_mean_positive=pos / size if size else 0.0,
        seconds=time.perf_counter() - t0,
    )
