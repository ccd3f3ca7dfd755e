"""What writing and reading a training run's files holds in memory, beside its tables.

On 20-card hold'em (lossless suit classes, ``1p,cap1``: 9,623,025 entries a table,
external sampling, float32 regret and average tables, dealt from the deck), each step
is timed and its peak allocation measured by :mod:`tracemalloc` above what the process
held before it, per table entry and as a share of the two tables' own bytes (8 an
entry): the comparison travels between machines where the times do not.

* ``save_checkpoint``: the tables converted to vector CFR's layout and written piece by
  piece (:mod:`solver.arrayfile`);
* ``load_and_restore``: the checkpoint mapped and copied into a fresh solver's tables
  (checked equal);
* ``average_policy``: the float64 average strategy, unaveraged rows playing the current
  strategy (the policy itself is 8 bytes an entry);
* ``unaveraged_rows``: the count of rows never averaged, per street;
* ``quantized_average``: the one-byte table a strategy file stores, made node by node
  (checked equal to quantizing ``average_policy``);
* ``run_end``: a :func:`solver.training.run.run_training` run that evaluates nothing,
  from its last batch to its return (checkpoint and strategy file written).

Usage: ``python bench/training_memory.py [--iterations N]``. Progress goes to stderr;
the last line of stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GAME = "holdem.nolimit.2p.short20"
BETTING = "1p,cap1"


def _log(msg: str) -> None:
    print(f"[memory] {msg}", file=sys.stderr, flush=True)


def _measure(f: Callable[[], Any]) -> tuple[Any, int, float]:
    """``f()``, its peak allocation above what was held before, and its seconds."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        t0 = time.perf_counter()
        out = f()
        seconds = time.perf_counter() - t0
        return out, tracemalloc.get_traced_memory()[1] - base, seconds
    finally:
        tracemalloc.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iterations", type=int, default=200_000, help="iterations trained before the steps")
    args = ap.parse_args(argv)

    import numpy as np

    from solver.strategy_io import quantize
    from solver.training.checkpoint import load_checkpoint, restore_checkpoint, save_checkpoint
    from solver.training.config import AlgorithmConfig, Budget, CheckpointConfig, EvaluationConfig, TrainingConfig
    from solver.training.dealt import make_dealt_problem
    from solver.training.mccfr import ExternalSamplingSolver
    from solver.training.run import TrainingProgress, run_training
    from solver.training.sampled import SamplingOptions

    problem = make_dealt_problem(GAME, BETTING)
    n = problem.size

    def solver() -> ExternalSamplingSolver:
        return ExternalSamplingSolver(problem, SamplingOptions(seed=1, dtype="float32"))

    a = solver()
    a.iterate(args.iterations)
    a.quantized_average("current")  # compiles its kernel outside the measurements
    tables = a.regrets.nbytes + a.avg_sums.nbytes
    steps: dict[str, dict[str, float]] = {}

    def record(name: str, peak: int, seconds: float) -> None:
        steps[name] = {"bytes_per_entry": round(peak / n, 3), "share_of_tables": round(peak / tables, 4),
                       "seconds": round(seconds, 3)}  # fmt: skip
        _log(f"{name}: {peak / n:.2f} bytes an entry, {peak / tables:.3f} of the tables, {seconds:.2f} s")

    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as tmp:
        path = Path(tmp) / "run.ckpt"
        _, peak, s = _measure(lambda: save_checkpoint(path, a))
        record("save_checkpoint", peak, s)
        b = solver()
        _, peak, s = _measure(lambda: restore_checkpoint(b, load_checkpoint(path)))
        record("load_and_restore", peak, s)
        restored = bool(np.array_equal(a.regrets, b.regrets) and np.array_equal(a.avg_sums, b.avg_sums))
        policy, peak, s = _measure(lambda: a.average_policy("current"))
        record("average_policy", peak, s)
        _, peak, s = _measure(a.unaveraged_rows)
        record("unaveraged_rows", peak, s)
        table, peak, s = _measure(lambda: a.quantized_average("current"))
        record("quantized_average", peak, s)
        same_bytes = bool(np.array_equal(table, quantize(policy, problem.tree, problem.offset,
                                                         list(problem.chance.n_buckets))))  # fmt: skip

        config = TrainingConfig(GAME, AlgorithmConfig("es"), Budget(iterations=args.iterations), betting=BETTING,
                                out=Path(tmp) / "run.strategy", dtype="float32",
                                checkpoint=CheckpointConfig(Path(tmp) / "end.ckpt"),
                                evaluation=EvaluationConfig(enabled=False))  # fmt: skip
        held: dict[str, int] = {}

        def at(report: TrainingProgress) -> None:
            if report.stage == "batch":
                held["bytes"] = tracemalloc.get_traced_memory()[0]
                tracemalloc.reset_peak()

        tracemalloc.start()
        try:
            t0 = time.perf_counter()
            run_training(config, progress=at)
            seconds = time.perf_counter() - t0
            peak = tracemalloc.get_traced_memory()[1] - held["bytes"]
        finally:
            tracemalloc.stop()
        record("run_end", peak, seconds)
        files = {"checkpoint_bytes": path.stat().st_size, "strategy_bytes": (Path(tmp) / "run.strategy").stat().st_size}

    out = {"game": GAME, "betting": BETTING, "entries": n, "dtype": "float32", "table_bytes": tables,
           "iterations": args.iterations, "steps": steps, "restored_equal": restored,
           "quantized_same_bytes": same_bytes, **files, "cpus": os.cpu_count()}  # fmt: skip
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
