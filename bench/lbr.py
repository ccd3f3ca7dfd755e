"""Benchmark of local best response (solver/evaluation/lbr.py): LBR hands per second on 2 cores.

Two opponents, LBR's default action set (call before the turn, fold/call/pot/all-in on
turn and river):

* ``call``: the card-blind always-call bot in full hold'em
  (``holdem.nolimit.2p.reverse_blinds``): equity enumeration over the 1,081 opponent
  hands on turn and river dominates;
* ``short20``: the shipped ``holdem.nolimit.2p.short20`` strategy: a range query at
  each of its decisions and for each LBR raise (its fold probability);
* ``blueprint``: the shipped full-deck blueprint
  (``holdem.nolimit.2p.reverse_blinds.strategy``), its buckets read from the bucket
  tables of its model in the per-user cache (``open_playable(tables="auto")``: built
  first if missing, 3 to 8 minutes on two cores, not counted).

Each case runs in 2 worker processes (one per core), each on its own seed, after a
warm-up of a few hands (numba's cache and the strategy's tree); ``hands_per_s`` is all
hands over the wall time of the slower worker (target >= 100), ``per_core_hands_per_s``
each worker's own rate. The machine may be shared: ``machine`` records the load average.
The last line of stdout is one JSON object.

Usage: ``python bench/lbr.py [--quick] [--seed S]``
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

# One numba thread per worker: two workers on two cores, no oversubscription.
os.environ.setdefault("NUMBA_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CASES = {
    "call": ("holdem.nolimit.2p.reverse_blinds", None),
    "short20": ("holdem.nolimit.2p.short20", ROOT / "strategies" / "holdem.nolimit.2p.short20.strategy"),
    "blueprint": (
        "holdem.nolimit.2p.reverse_blinds",
        ROOT / "strategies" / "holdem.nolimit.2p.reverse_blinds.strategy",
    ),
}


def _worker(case: str, hands: int, seed: int) -> dict:
    from poker.game import load_game
    from solver.evaluation.lbr import BlindOpponent, LocalBestResponse, StrategyOpponent
    from solver.play.player import open_playable, translated

    game_name, path = CASES[case]
    game = load_game(game_name)
    if path is None:
        def opponent():
            return BlindOpponent("call", seed=seed)
    else:
        policy = translated(open_playable(path, game=game, tables="auto"))

        def opponent():
            return StrategyOpponent(policy, seed=seed, name=case)

    LocalBestResponse(game, opponent(), seed=seed + 10_000).run(20)  # warm-up
    lbr = LocalBestResponse(game, opponent(), seed=seed)
    t0 = time.perf_counter()
    r = lbr.run(hands)
    wall = time.perf_counter() - t0
    return {"hands": hands, "seconds": wall, "mbb_per_game": r.mbb_per_game, "ci95": list(r.ci95)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer hands")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if args.quick:
        per_worker = {"call": 1000, "short20": 300, "blueprint": 300}
    else:
        per_worker = {"call": 5000, "short20": 3000, "blueprint": 3000}
    from solver.play.player import open_playable

    open_playable(CASES["blueprint"][1], tables="auto")  # the tables, before any clock starts
    out: dict = {"quick": args.quick, "workers": 2, "machine": {"load_before": os.getloadavg()}}
    ctx = mp.get_context("fork")
    for case, hands in per_worker.items():
        print(f"{case}: 2 x {hands} hands ...", file=sys.stderr)
        with ctx.Pool(2) as pool:
            res = pool.starmap(_worker, [(case, hands, args.seed + 1000 * w) for w in range(2)])
        total = sum(r["hands"] for r in res)
        slowest = max(r["seconds"] for r in res)
        out[case] = {
            "game": CASES[case][0],
            "hands": total,
            "hands_per_s": total / slowest,
            "per_core_hands_per_s": [r["hands"] / r["seconds"] for r in res],
            "mbb_per_game_by_worker": [r["mbb_per_game"] for r in res],
            "ci95_by_worker": [r["ci95"] for r in res],
            "target_hands_per_s": 100,
            "meets_target": total / slowest >= 100,
        }
    out["machine"]["load_after"] = os.getloadavg()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
