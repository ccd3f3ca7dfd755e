"""Benchmark of full-deck blueprint training: Targeted CFR dealing from the deck.

The setting of the Targeted CFR paper's game 2 (Jackson 2017) at our scale: heads-up
no-limit hold'em (``holdem.nolimit.2p.reverse_blinds``, the full 52-card deck),
169/1000/1000/1000 imperfect-recall buckets (built by the project's own code, cached:
see ``bench/_fulldeck.py``), one pot-size bet per betting round (``--betting 1p,cap1``:
160 decision nodes, 313,521 table entries), float32 tables, the paper's targeting
``{all 0.025; 2,3 0.75; 1,3 0.175; 0,3 0.05}``.

A deal is one dealt hand (both players' hole cards and the board) and the iteration on
it: one walk per player, both players updated, as in the paper and in Slumbot. Reported:

* ``deals_per_s`` (2 threads, Hogwild), ``deals_per_s_1t``, ``threads_speedup``: each
  the median of ``--repeats`` timed runs of ``--deals`` deals after a warm-up run (the
  bucket tables are read into memory as training reads them:
  :func:`solver.training.dealt.load_training_abstraction`);
* ``peak_rss_gib``: the process's peak resident memory over the timed runs and the cost
  split (bucket tables included; read before the resume check, whose runs read the
  tables again);
* ``resume``: a one-thread seeded run as ``pokerbot train`` makes it
  (:func:`solver.training.run.run_training`) stopped twice between batches and resumed
  from its checkpoint ends with tables bit-identical to the run never stopped
  (``bit_identical``; ``stops``: how many stops it took);
* ``cost_ns``: the per-deal cost split into dealing the cards, indexing the 8 hands
  (2 players x 4 streets), reading their buckets, ranking the two showdown hands, and
  the tree walks (the rest of a 1-thread deal); ``bucket_lookup_ns`` is one bucket
  read (the lookup part over 8).

The machine may be shared: ``machine`` records the load average. The last line of
stdout is one JSON object.

Usage: ``python bench/blueprint.py [--quick] [--deals N] [--repeats R] [--seed S]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._fulldeck import FULL_DECK_GAME, FULL_DECK_PARAMS, cached_abstraction, log  # noqa: E402
from poker._sysinfo import peak_memory_gib  # noqa: E402

BETTING = "1p,cap1"
#: The Targeted CFR paper's targeting for its game 2 (``solver.training.tcfr``'s name for it).
TARGETING = "game2"


def _rate(solver, deals: int, repeats: int) -> tuple[float, list[float]]:
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        solver.iterate(deals)
        rates.append(deals / (time.perf_counter() - t0))
    return statistics.median(rates), rates


def _costs(problem, deals: int, seed: int) -> dict[str, float]:
    """Per-deal nanoseconds of each stage of dealing (median of 3 runs each)."""
    import numpy as np

    from solver.training import _sampling_kernels as SK
    from solver.training.sampled import chance_key

    cd = problem.cards
    key = chance_key(seed)
    n_s = problem.tree.n_streets
    pc = np.zeros((2, cd.hole + cd.n_board), np.int64)
    out = {}
    for stage in (SK.STAGE_DEAL, SK.STAGE_INDEX, SK.STAGE_LOOKUP, SK.STAGE_SHOWDOWN):
        SK.deal_costs(cd, key, 1000, n_s, stage, pc)  # compiled, lines warm
        runs = []
        for _ in range(3):
            t0 = time.perf_counter()
            SK.deal_costs(cd, key, deals, n_s, stage, pc)
            runs.append((time.perf_counter() - t0) / deals * 1e9)
        out[stage] = statistics.median(runs)
    return {
        "deal": out[SK.STAGE_DEAL],
        "index": out[SK.STAGE_INDEX] - out[SK.STAGE_DEAL],
        "lookup": out[SK.STAGE_LOOKUP] - out[SK.STAGE_INDEX],
        "showdown": out[SK.STAGE_SHOWDOWN] - out[SK.STAGE_LOOKUP],
        "cards_total": out[SK.STAGE_SHOWDOWN],
    }


def _resume_check(abstraction_dir: str, deals: int, seed: int) -> dict:
    """A one-thread seeded training run of ``deals`` iterations, as ``pokerbot train``
    makes it (:func:`solver.training.run.run_training`), stopped twice between batches
    (a third and two thirds of the way) and resumed from its checkpoint each time,
    against the same run never stopped: are the tables bit-identical?"""
    import tempfile

    import numpy as np

    from solver.training.checkpoint import load_checkpoint
    from solver.training.config import (
        AlgorithmConfig,
        Budget,
        CheckpointConfig,
        EvaluationConfig,
        TrainingConfig,
    )
    from solver.training.loop import StopRequest
    from solver.training.run import TrainingProgress, run_training

    def config(ckpt: Path, resume: Path | None = None) -> TrainingConfig:
        return TrainingConfig(
            FULL_DECK_GAME,
            AlgorithmConfig("tcfr", targeting=TARGETING),
            Budget(iterations=deals),
            betting=BETTING,
            abstraction=Path(abstraction_dir),
            seed=seed,
            dtype="float32",
            checkpoint=CheckpointConfig(ckpt, resume=resume),
            evaluation=EvaluationConfig(enabled=False),
        )

    with tempfile.TemporaryDirectory() as tmp:
        whole, part = Path(tmp) / "whole.ckpt", Path(tmp) / "part.ckpt"
        run_training(config(whole))
        done, stops = 0, 0
        for target in (deals // 3, 2 * deals // 3):
            stop = StopRequest()

            def at(report: TrainingProgress, left: int = target - done, stop: StopRequest = stop) -> None:
                if report.stage == "batch" and report.iterations >= left:
                    stop.set()  # the run ends before its next batch

            run = run_training(config(part, part if done else None), progress=at, stop=stop)
            stops += int(run.interrupted)
            done = run.iterations
        run_training(config(part, part))
        a, b = load_checkpoint(whole), load_checkpoint(part)
    same = (a.iterations, a.nodes) == (b.iterations, b.nodes) and all(
        np.array_equal(a.arrays[k], b.arrays[k]) for k in a.arrays
    )
    return {"deals": deals, "stops": stops, "bit_identical": bool(same)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer deals and repeats (the abstraction is still built once)")
    ap.add_argument("--deals", type=int, help="deals per timed run (default 20M, quick 3M)")
    ap.add_argument("--repeats", type=int, help="timed runs per thread count (default 3, quick 1)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    deals = args.deals or (3_000_000 if args.quick else 20_000_000)
    repeats = args.repeats or (1 if args.quick else 3)
    t_start = time.perf_counter()

    from poker.game import load_game
    from solver.training.algorithms import make_training_solver
    from solver.training.dealt import make_dealt_problem
    from solver.training.sampled import SamplingOptions

    game = load_game(FULL_DECK_GAME)
    ab, info = cached_abstraction(game, FULL_DECK_PARAMS, training=True)
    t0 = time.perf_counter()
    problem = make_dealt_problem(game, BETTING, abstraction=ab)
    setup_s = time.perf_counter() - t0
    result: dict = {
        "game": FULL_DECK_GAME,
        "buckets": list(ab.bucket_counts),
        "abstraction": info,
        "betting": BETTING,
        "decision_nodes": len(problem.tree.decision_nodes()),
        "table_entries": int(problem.size),
        "algorithm": "tcfr",
        "targeting": TARGETING,
        "dtype": "float32",
        "setup_s": round(setup_s, 3),
        "deals_per_run": deals,
        "repeats": repeats,
    }
    by_threads = {}
    for threads in (1, 2):
        sampling = SamplingOptions(seed=args.seed, threads=threads, dtype="float32")
        solver = make_training_solver(problem, "tcfr", sampling, targeting=TARGETING)
        solver.iterate(min(deals, 2_000_000))  # compile, fault the tables' pages in
        med, runs = _rate(solver, deals, repeats)
        by_threads[threads] = med
        log(f"{threads} thread(s): {med:,.0f} deals/s (runs {[round(r) for r in runs]})")
        result[f"runs_{threads}t"] = [round(r) for r in runs]
        result[f"nodes_per_deal_{threads}t"] = round(solver.nodes / solver.iterations, 2)
    costs = _costs(problem, min(deals, 5_000_000), args.seed)
    # before the resume check: its runs map the bucket tables again, beside this problem's
    peak_gib = peak_memory_gib()
    result["resume"] = _resume_check(info["directory"], min(deals, 3_000_000), args.seed)
    log(f"resume from checkpoints: {result['resume']}")
    per_deal_1t = 1e9 / by_threads[1]
    costs["walk"] = per_deal_1t - costs["cards_total"]
    result.update(
        deals_per_s=round(by_threads[2]),
        deals_per_s_1t=round(by_threads[1]),
        threads_speedup=round(by_threads[2] / by_threads[1], 3),
        peak_rss_gib=round(peak_gib, 3),
        bucket_lookup_ns=round(costs["lookup"] / 8, 1),
        cost_ns={k: round(v, 1) for k, v in costs.items()},
        per_deal_ns_1t=round(per_deal_1t, 1),
        targets={"deals_per_s": 460_000, "peak_rss_gib": 1.0, "threads_speedup": 1.8},
        machine={"cpus": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()]},
        quick=bool(args.quick),
        total_s=round(time.perf_counter() - t_start, 1),
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
