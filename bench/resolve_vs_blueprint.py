"""Benchmark: what re-solving is worth against the blueprint itself, by gadget, paired.

For each seeded deal and each seat, the hand is played twice in one process with the
same keyed draws: the blueprint (:class:`~solver.play.policy.HandWalk`) in both seats,
and the re-solving player (:class:`~solver.resolve.player.ResolvingWalk`) in that seat
against the same blueprint opponent. The re-solving player meets no action off its tree
here, so it re-solves at the start of the chosen streets (``--at``, default the turn
and the river). Each pair of hands shares everything up to the first re-solve, so the
difference of the two results has little variance: its mean over every hand (hands
that end before the first re-solve count zero) is the re-solving player's gain over its
blueprint in mbb/g, with a 95% normal interval over the deals. One row per gadget
(:data:`solver.resolve.GADGETS`): ``safe`` (the opponent's best-response values against
the blueprint as the gadget's alternatives), ``estimated`` (its blueprint values) and
``none`` (its blueprint range trusted).

The last line of stdout is one JSON object.

Usage: ``python bench/resolve_vs_blueprint.py [--quick] [--deals N] [--seed S]
[--iterations N] [--at STREETS] [--gadgets LIST]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from poker.game import load_game  # noqa: E402
from poker.rng import Dealer  # noqa: E402
from poker.state import State  # noqa: E402
from solver.play.player import translated  # noqa: E402
from solver.play.policy import HandWalk  # noqa: E402
from solver.resolve import GADGETS  # noqa: E402
from solver.resolve.player import ResolveOptions, ResolvingWalk  # noqa: E402
from solver.strategy_io import open_strategy  # noqa: E402

GAME = "holdem.nolimit.2p.short20"


def _play(game, deal, policy, position: int, hand: int, options: ResolveOptions | None) -> tuple[float, int]:
    """Seat ``position``'s chips in one hand, the blueprint or (``options``) the
    re-solving player there against the blueprint; and its re-solves."""
    me = (HandWalk(policy, position, 5, hand) if options is None
          else ResolvingWalk(policy, position, 5, hand, options))
    other = HandWalk(policy, 1 - position, 6, hand)
    state = State.new_hand(game, deal)
    while state.actor is not None:
        walk = me if state.actor == position else other
        action, _ = walk.decide(state, deal.holes[state.actor], deal.board_through(state.round))
        state = state.apply(action)
    return float(state.values()[position]), (me.counts.resolves if options is not None else 0)


def run(deals: int, seed: int, iterations: int, at: tuple[int, ...], gadget: str) -> dict:
    game = load_game(GAME)
    policy = translated(open_strategy(ROOT / "strategies" / f"{GAME}.strategy", game=game))
    options = ResolveOptions(iterations=iterations, street_starts=at, first_street=min(at), gadget=gadget)
    dealer = Dealer(game, seed)
    diffs, resolves = [], 0
    t0 = time.perf_counter()
    for d in range(deals):
        deal = dealer.next_deal()
        pair = 0.0
        for position in (0, 1):
            plain, _ = _play(game, deal, policy, position, d, None)
            got, n = _play(game, deal, policy, position, d, options)
            pair += got - plain
            resolves += n
        diffs.append(pair / 2.0)  # per hand, the deal's two seats averaged
    x = np.asarray(diffs) * 1000.0 / game.big_blind
    half = 1.96 * float(x.std(ddof=1)) / np.sqrt(len(x)) if len(x) > 1 else float("nan")
    return {"gadget": gadget, "deals": deals, "hands": 2 * deals, "resolves": resolves,
            "mbb_per_game": float(x.mean()), "ci95": [float(x.mean() - half), float(x.mean() + half)],
            "seconds": time.perf_counter() - t0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="40 deals")
    ap.add_argument("--deals", type=int, help="deals, each played in both seats (default 800)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--iterations", type=int, default=100, help="Discounted CFR iterations a re-solve (default 100)")
    ap.add_argument("--at", default="2,3", help="streets whose start re-solves (default 2,3: turn and river)")
    ap.add_argument("--gadgets", default=",".join(GADGETS), help=f"comma-separated, of {', '.join(GADGETS)}")
    args = ap.parse_args()
    gadgets = [g for g in args.gadgets.split(",") if g]
    bad = [g for g in gadgets if g not in GADGETS]
    if bad:
        ap.error(f"--gadgets: no gadget {bad[0]!r} (gadgets: {', '.join(GADGETS)})")
    try:
        at = tuple(sorted({int(x) for x in args.at.split(",") if x.strip()}))
    except ValueError:
        ap.error(f"--at {args.at!r}: street numbers separated by commas")
    if not at:
        ap.error("--at: at least one street")
    if args.iterations < 1 or (args.deals is not None and args.deals < 2):
        ap.error("--iterations: at least 1; --deals: at least 2")
    deals = args.deals or (40 if args.quick else 800)
    out: dict = {"game": GAME, "iterations": args.iterations, "at": list(at), "seed": args.seed, "rows": []}
    for g in gadgets:
        print(f"{g}: {deals} deals ...", file=sys.stderr, flush=True)
        row = run(deals, args.seed, args.iterations, at, g)
        print(f"{g}: {row['mbb_per_game']:+.1f} [{row['ci95'][0]:+.1f}, {row['ci95'][1]:+.1f}] mbb/g, "
              f"{row['resolves']} re-solves, {row['seconds']:.0f} s", file=sys.stderr, flush=True)
        out["rows"].append(row)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
