"""The training loop shared by every algorithm: :func:`train` runs any solver with an
``iterate(n)`` method in timed batches until an iteration count or a time budget is
spent, and reports what it did as a :class:`TrainResult`.

It imports no solver module: choosing an algorithm by name and compiling its kernels
is the job of :mod:`solver.algorithms`, which drives this loop in :func:`solve
<solver.algorithms.solve>`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["TrainResult", "train"]


@dataclass
class TrainResult:
    """What :func:`train` did: iterations and nodes touched in this call, solving seconds."""

    iterations: int = 0
    nodes: int = 0
    seconds: float = 0.0
    stopped: bool = False  # the callback asked to stop
    interrupted: bool = False  # Ctrl-C (KeyboardInterrupt) ended the loop


def train(
    solver: Any,
    *,
    iterations: int | None = None,
    seconds: float | None = None,
    callback: Callable[[Any, TrainResult], bool | None] | None = None,
    batch_seconds: float = 0.1,
    batch: int | None = None,
) -> TrainResult:
    """Iterate ``solver`` (any solver with ``iterate(n)``) until ``iterations`` more
    iterations or ``seconds`` of solving, whichever comes first.

    Batches aim at ``batch_seconds`` each, or are ``batch`` iterations each if given;
    ``callback(solver, result)`` runs after each batch (its time is not counted) and may
    return True to stop. Ctrl-C ends the loop with ``interrupted`` set instead of raising,
    so the caller can save the run; the tables then hold the interrupted batch only partly
    counted, so a resumed run is statistically, not bit-for-bit, the uninterrupted one.
    """
    if iterations is None and seconds is None:
        raise ValueError("give iterations=N or seconds=T (or both)")
    if iterations is not None and iterations < 0:
        raise ValueError(f"iterations {iterations} must not be negative")
    if seconds is not None and seconds < 0:
        raise ValueError(f"seconds {seconds} must not be negative")
    if batch is not None and batch < 1:
        raise ValueError(f"batch {batch} must be at least 1")
    res = TrainResult()
    step = batch or 1
    while True:
        left = None if iterations is None else iterations - res.iterations
        if left is not None and left <= 0:
            break
        if seconds is not None and res.seconds >= seconds:
            break
        n = step if left is None else min(step, left)
        t0 = time.perf_counter()
        try:
            touched = solver.iterate(n)
        except KeyboardInterrupt:
            res.seconds += time.perf_counter() - t0
            res.interrupted = True
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
            res.interrupted = True
            break
    return res
