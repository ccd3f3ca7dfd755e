"""The leaks of the shipped strategies in figures: local best response per action set, and
a planted leak found.

For each shipped no-limit hold'em strategy (``short20``: the 20-card file; ``blueprint``:
the full-deck file, its bucket tables from the per-user cache, built first if missing)
LBR (solver/evaluation/lbr.py, the exact translated range) plays with each action set:

* ``c/c/fcpa/fcpa``: the paper's (call only before the turn);
* ``fcpa``: fold, call, pot, all-in on every street;
* ``fc0.75p1.5pa`` and ``fc0.25p0.75p1.5p3pa``: sizes the trees do not hold;
* ``leaks``: the preset derived from the strategy's own tree (minimum raise, sizes
  between its sizes, twice its largest, all-in; re-raises past its cap).

Then the planted leak (solver/evaluation/leaks.py): the full-deck file changed to call
every preflop all-in with every hand, against the original, with the ``leaks`` set: the
same seeds and deals for both, so the paired difference per deal has a narrow interval.

Each run is split over 2 worker processes (one per core, each its own seed; a paired run
uses the same two seeds on both files); intervals are over deals (a deal is played in
both seats). mbb/g per big blind. The last line of stdout is one JSON object.

Usage: ``python bench/leaks.py [--quick] [--hands N] [--seed S] [--only short20|blueprint|leak]``
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PLAYERS = {
    "short20": ("holdem.nolimit.2p.short20", ROOT / "strategies" / "holdem.nolimit.2p.short20.strategy"),
    "blueprint": ("holdem.nolimit.2p.reverse_blinds", ROOT / "strategies" / "holdem.nolimit.2p.reverse_blinds.strategy"),
}
ACTION_SETS = ("c/c/fcpa/fcpa", "fcpa", "fc0.75p1.5pa", "fc0.25p0.75p1.5p3pa", "leaks")
LEAK_STREET = 0


def _worker(player: str, actions: str, hands: int, seed: int, planted: bool) -> dict:
    from poker.game import load_game
    from solver.evaluation.lbr import LocalBestResponse, StrategyOpponent
    from solver.evaluation.leaks import planted_policy
    from solver.play.player import open_playable, translated

    game_name, path = PLAYERS[player]
    game = load_game(game_name)
    policy = translated(open_playable(path, game=game, tables="auto"))
    if planted:
        policy, _ = planted_policy(policy, LEAK_STREET)
    lbr = LocalBestResponse(game, StrategyOpponent(policy, seed=seed, name=player), actions=actions, seed=seed)
    t0 = time.perf_counter()
    r = lbr.run(hands)
    return {"seconds": time.perf_counter() - t0, "deal_mbb": r.deal_mbb_values.tolist(), "spec": r.actions,
            "translation": r.translation}


def _interval(deals: np.ndarray) -> tuple[float, list[float]]:
    mean = float(deals.mean())
    half = 1.96 * float(deals.std(ddof=1)) / math.sqrt(deals.size) if deals.size > 1 else math.inf
    return mean, [mean - half, mean + half]


def _run(pool, player: str, actions: str, hands: int, seed: int, planted: bool = False) -> tuple[dict, np.ndarray]:
    jobs = [(player, actions, hands // 2, seed + 1000 * w, planted) for w in range(2)]
    res = pool.starmap(_worker, jobs)
    deals = np.concatenate([np.asarray(r["deal_mbb"]) for r in res])
    mean, ci = _interval(deals)
    return {
        "player": player + (" (planted leak)" if planted else ""),
        "actions": actions,
        "spec": res[0]["spec"],
        "hands": 2 * (hands // 2),
        "mbb_per_game": mean,
        "ci95": ci,
        "seconds": max(r["seconds"] for r in res),
    }, deals


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2,000 hands a run instead of 20,000")
    ap.add_argument("--hands", type=int, help="hands a run (even; split over the two workers)")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--only", choices=("short20", "blueprint", "leak"), help="one part only")
    args = ap.parse_args()
    hands = args.hands or (2000 if args.quick else 20000)
    from solver.play.player import open_playable

    open_playable(PLAYERS["blueprint"][1], tables="auto")  # the bucket tables, before any clock starts
    out: dict = {"quick": args.quick, "hands": hands, "seed": args.seed, "workers": 2,
                 "machine": {"load_before": os.getloadavg()}, "lbr": [], "leak": None}
    ctx = mp.get_context("fork")
    t0 = time.perf_counter()
    with ctx.Pool(2) as pool:
        for player in ("short20", "blueprint"):
            if args.only not in (None, player):
                continue
            for actions in ACTION_SETS:
                print(f"LBR {actions} vs {player}: {hands} hands ...", file=sys.stderr, flush=True)
                row, _ = _run(pool, player, actions, hands, args.seed)
                out["lbr"].append(row)
                print(f"  {row['mbb_per_game']:+.0f} [{row['ci95'][0]:+.0f}, {row['ci95'][1]:+.0f}] "
                      f"in {row['seconds']:.0f} s", file=sys.stderr, flush=True)
        if args.only in (None, "leak"):
            print(f"planted leak (street {LEAK_STREET}): {hands} hands on each file ...", file=sys.stderr, flush=True)
            original, a = _run(pool, "blueprint", "leaks", hands, args.seed)
            altered, b = _run(pool, "blueprint", "leaks", hands, args.seed, planted=True)
            mean, ci = _interval(b - a)
            out["leak"] = {"street": LEAK_STREET, "rule": "call every all-in on the street with every hand",
                           "original": original, "altered": altered,
                           "paired_difference_mbb_per_game": mean, "paired_ci95": ci}
            print(f"  original {original['mbb_per_game']:+.0f}, altered {altered['mbb_per_game']:+.0f}, "
                  f"paired difference {mean:+.0f} [{ci[0]:+.0f}, {ci[1]:+.0f}]", file=sys.stderr, flush=True)
    out["seconds"] = time.perf_counter() - t0
    out["machine"]["load_after"] = os.getloadavg()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
