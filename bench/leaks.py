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

With ``--only resolve``, the planted leak against the re-solving player (``--resolve-on
original``: the shipped file instead): LBR's ``leaks``
set against the altered file played by the re-solving player (re-solving from its first
preflop decision on, every street, Discounted CFR with ``--resolve-iterations``, the
``--resolve-gadget`` alternatives; iteration budgets, so the range LBR keeps is exact),
paired with the altered file played by translation on the same seeds and deals. Each
hand costs several re-solves (one for every action LBR weighs that the player answers),
so this part plays ``--resolve-hands`` hands (default 2,000; ``--quick``: 200).

Each run is split over 2 worker processes (one per core, each its own seed; a paired run
uses the same two seeds on both files); intervals are over deals (a deal is played in
both seats). mbb/g per big blind. The last line of stdout is one JSON object.

Usage: ``python bench/leaks.py [--quick] [--hands N] [--seed S] [--only short20|blueprint|leak|resolve]
[--resolve-hands N] [--resolve-iterations N] [--resolve-gadget G] [--resolve-on planted|original]``
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


def _worker(player: str, actions: str, hands: int, seed: int, planted: bool, resolve: dict | None = None) -> dict:
    from poker.game import load_game
    from solver.evaluation.lbr import LocalBestResponse, Opponent, StrategyOpponent
    from solver.evaluation.leaks import planted_policy
    from solver.play.player import open_playable, translated

    game_name, path = PLAYERS[player]
    game = load_game(game_name)
    policy = translated(open_playable(path, game=game, tables="auto"))
    if planted:
        policy, _ = planted_policy(policy, LEAK_STREET)
    opponent: Opponent
    if resolve is not None:
        from solver.resolve.opponent import ResolvingOpponent
        from solver.resolve.player import ResolveOptions

        opponent = ResolvingOpponent(policy, ResolveOptions(**resolve), seed=seed, name=player)
    else:
        opponent = StrategyOpponent(policy, seed=seed, name=player)
    lbr = LocalBestResponse(game, opponent, actions=actions, seed=seed)
    t0 = time.perf_counter()
    r = lbr.run(hands)
    return {"seconds": time.perf_counter() - t0, "deal_mbb": r.deal_mbb_values.tolist(), "spec": r.actions,
            "translation": r.translation, "resolve": r.resolve}


def _interval(deals: np.ndarray) -> tuple[float, list[float]]:
    mean = float(deals.mean())
    half = 1.96 * float(deals.std(ddof=1)) / math.sqrt(deals.size) if deals.size > 1 else math.inf
    return mean, [mean - half, mean + half]


def _run(pool, player: str, actions: str, hands: int, seed: int, planted: bool = False,
         resolve: dict | None = None) -> tuple[dict, np.ndarray]:
    jobs = [(player, actions, hands // 2, seed + 1000 * w, planted, resolve) for w in range(2)]
    res = pool.starmap(_worker, jobs)
    deals = np.concatenate([np.asarray(r["deal_mbb"]) for r in res])
    mean, ci = _interval(deals)
    counts = None
    if resolve is not None:
        counts = {k: sum(r["resolve"][k] for r in res) for k in res[0]["resolve"]}
    return {
        "player": player + (" (planted leak)" if planted else "") + (", re-solving" if resolve else ""),
        **({"resolve_options": resolve, "resolve": counts} if resolve is not None else {}),
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
    ap.add_argument("--only", choices=("short20", "blueprint", "leak", "resolve"),
                    help="one part only (resolve: only with --only)")
    ap.add_argument("--resolve-hands", type=int, help="hands of the re-solving part (default 2000; --quick 200)")
    ap.add_argument("--resolve-iterations", type=int, default=100, help="Discounted CFR iterations a re-solve")
    ap.add_argument("--resolve-gadget", default="estimated", choices=("safe", "estimated", "none"))
    ap.add_argument("--resolve-on", default="planted", choices=("planted", "original"),
                    help="the re-solving part's file: with the planted leak (default) or the shipped one")
    args = ap.parse_args()
    hands = args.hands or (2000 if args.quick else 20000)
    if args.resolve_iterations < 1 or (args.resolve_hands is not None and args.resolve_hands < 2):
        ap.error("--resolve-iterations must be positive and --resolve-hands at least 2")
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
        if args.only == "resolve":
            n = args.resolve_hands or (200 if args.quick else 2000)
            # max_cells: the preflop root's subgame (874 nodes) fits; it is solved once a process
            resolve = {"iterations": args.resolve_iterations, "street_starts": (0,), "first_street": 0,
                       "gadget": args.resolve_gadget, "max_cells": 1_200_000}
            planted = args.resolve_on == "planted"
            what = f"planted leak (street {LEAK_STREET})" if planted else "the shipped blueprint"
            print(f"{what} against the re-solving player: {n} hands on each ...", file=sys.stderr, flush=True)
            altered, a = _run(pool, "blueprint", "leaks", n, args.seed, planted=planted)
            resolving, b = _run(pool, "blueprint", "leaks", n, args.seed, planted=planted, resolve=resolve)
            mean, ci = _interval(b - a)
            out["resolve"] = {"file": args.resolve_on, "street": LEAK_STREET if planted else None,
                              "hands": 2 * (n // 2), "translated": altered,
                              "resolving": resolving, "paired_difference_mbb_per_game": mean, "paired_ci95": ci}
            print(f"  translated {altered['mbb_per_game']:+.0f} {altered['ci95']}, re-solving "
                  f"{resolving['mbb_per_game']:+.0f} {resolving['ci95']}, paired difference {mean:+.0f} "
                  f"[{ci[0]:+.0f}, {ci[1]:+.0f}]", file=sys.stderr, flush=True)
    out["seconds"] = time.perf_counter() - t0
    out["machine"]["load_after"] = os.getloadavg()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
