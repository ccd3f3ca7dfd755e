"""Exact best response: the walks of an evaluation one at a time against side by side.

:func:`solver.evaluation.best_response.abstract_and_real_exploitability` walks the public
tree once for each player's real best response, once for the profile's value, and (over
an imperfect-recall card abstraction) once per level of each abstract responder's
decisions plus one. The walks are independent and the walk kernel releases the GIL, so
``threads`` runs them side by side. This bench evaluates the same strategy both ways in
one process, on the same input, one after the other: the seconds of each, their ratio,
the walks made, and whether every figure is the same (it must be, bit for bit).

* default: the shipped ``strategies/holdem.nolimit.2p.short20.strategy`` (lossless
  20-card hold'em under a 25/255/115/66 card abstraction), abstract and real game:
  20 walks, about 30 minutes on the 2-vCPU development VM for both sides;
* ``--quick``: the same file, the real game only (three walks: both responders and
  the profile's value), about 3 minutes.

Usage: ``python bench/best_response.py [--quick] [--threads N] [--strategy FILE]``.
Progress goes to stderr; the last line of stdout is one JSON object::

    {"strategy", "scope", "threads", "walks", "one_at_a_time_s", "side_by_side_s",
     "speedup", "same_figures", "mbb_per_game", "real_mbb_per_game", "cpus"}
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from solver.evaluation.best_response import (  # noqa: E402  (after the path)
    abstract_and_real_exploitability,
    exploitability,
    walk_units,
)
from solver.strategy_io import load_strategy  # noqa: E402

SHIPPED = ROOT / "strategies" / "holdem.nolimit.2p.short20.strategy"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the real game only: three walks")
    ap.add_argument("--threads", type=int, default=2, help="walks at once on the side-by-side run (default 2)")
    ap.add_argument("--strategy", type=Path, default=SHIPPED, help="a strategy file that carries its abstraction")
    args = ap.parse_args(argv)
    strategy = load_strategy(args.strategy)
    walks: list[int] = []

    per_walk = walk_units(strategy.problem)

    def count(done: int, total: int) -> None:
        walks[:] = [total // per_walk]
        if done in (0, total):
            print(f"[bench] {done:,}/{total:,} nodes ({total // per_walk} walks)", file=sys.stderr, flush=True)

    def evaluate(threads: int) -> tuple[float, Any]:
        start = time.perf_counter()
        if args.quick:
            out: Any = exploitability(None, strategy, threads=threads, progress=count)
        else:
            out = abstract_and_real_exploitability(strategy, threads=threads, progress=count)
        return time.perf_counter() - start, out

    print("[bench] one walk at a time", file=sys.stderr, flush=True)
    alone_s, alone = evaluate(1)
    print(f"[bench] {args.threads} walks at once", file=sys.stderr, flush=True)
    together_s, together = evaluate(args.threads)
    real = alone if args.quick else alone[1]
    doc = {
        "strategy": str(args.strategy.relative_to(ROOT) if args.strategy.is_relative_to(ROOT) else args.strategy),
        "scope": "real game" if args.quick else "abstract and real game",
        "threads": args.threads,
        "walks": walks[0] if walks else None,
        "one_at_a_time_s": round(alone_s, 2),
        "side_by_side_s": round(together_s, 2),
        "speedup": round(alone_s / together_s, 3),
        "same_figures": together == alone,
        "mbb_per_game": None if args.quick else alone[0].mbb_per_game,
        "real_mbb_per_game": real.mbb_per_game,
        "cpus": os.cpu_count(),
    }
    print(json.dumps(doc))
    return 0 if doc["same_figures"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
