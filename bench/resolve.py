"""Benchmark of the re-solving player (solver/resolve/player.py): decision time per
street with and without re-solving, how often it re-solves, and how often the seconds
cap stops a re-solve.

The player plays seeded hands against the card-blind ``random`` bot (which bets sizes
anywhere, so the player leaves its tree often), in one process without sockets. At each
of its decisions both the blueprint (:class:`~solver.play.policy.HandWalk`) and the
re-solving player (:class:`~solver.resolve.player.ResolvingWalk`) are timed on the same
state; the re-solving player's action is the one played. Figures per street: p50 and
p99 of each, in seconds, and the re-solves.

* ``short20``: the shipped 20-card strategy, re-solving on the turn and river (default
  options: 200 Discounted CFR iterations, sizes 1/2 and 1 pot plus the blueprint's).
* ``full``: the shipped full-deck blueprint (its bucket tables from the per-user cache,
  built first if missing), re-solving on the river only (``first_street`` 3): a full-deck
  turn with the river enumerated takes seconds an iteration (``bench/subgame.py``).
* ``full_preflop``: the same blueprint re-solving from preflop (``first_street`` 0):
  preflop, flop and turn subgames stop at the street's end (leaves shown down over 100
  seeded run-outs, every river on the turn), the river's reach the end of the hand.

Run-outs (``runouts`` in the JSON): a depth-limited subgame's leaves show the pot down
over N seeded complete boards. On the full deck preflop, against a uniform range, each
hand's equity-like value (wins minus losses over the range's weight) with N = 25, 100,
400 drawn boards is compared with 4,000 (error: root mean square over the hands, and the
largest), and the showdown matrix the subgame multiplies by is timed for each N.

The last line of stdout is one JSON object.

Usage: ``python bench/resolve.py [--quick] [--hands N] [--seed S] [--cases NAME,...]
[--iterations N]``
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import random
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
from solver.play.blind import blind_action  # noqa: E402
from solver.play.player import open_playable, translated  # noqa: E402
from solver.play.policy import HandWalk  # noqa: E402
from solver.evaluation.runouts import RunOuts  # noqa: E402
from solver.resolve.player import ResolveCounts, ResolveOptions, ResolvingWalk  # noqa: E402
from solver.resolve.subgame import deck_hands  # noqa: E402

CASES = {
    "short20": ("holdem.nolimit.2p.short20", ROOT / "strategies" / "holdem.nolimit.2p.short20.strategy",
                ResolveOptions()),
    "full": ("holdem.nolimit.2p.reverse_blinds", ROOT / "strategies" / "holdem.nolimit.2p.reverse_blinds.strategy",
             ResolveOptions(first_street=3)),
    "full_preflop": ("holdem.nolimit.2p.reverse_blinds",
                     ROOT / "strategies" / "holdem.nolimit.2p.reverse_blinds.strategy",
                     ResolveOptions(first_street=0)),
}


def _quantiles(xs: list[float]) -> dict:
    if not xs:
        return {"n": 0, "p50": None, "p99": None, "max": None}
    a = np.asarray(xs)
    return {"n": int(a.size), "p50": float(np.quantile(a, 0.5)), "p99": float(np.quantile(a, 0.99)),
            "max": float(a.max())}


def run_case(name: str, hands: int, seed: int, iterations: int | None = None) -> dict:
    game_name, path, options = CASES[name]
    if iterations is not None:
        options = dataclasses.replace(options, iterations=iterations)
    game = load_game(game_name)
    policy = translated(open_playable(path, game=game, tables="auto"))
    counts = ResolveCounts()
    dealer = Dealer(game, seed)
    rng = random.Random(seed)
    plain: dict[int, list[float]] = {s: [] for s in range(game.num_rounds)}
    resolving: dict[int, list[float]] = {s: [] for s in range(game.num_rounds)}
    resolved: dict[int, list[float]] = {s: [] for s in range(game.num_rounds)}
    nodes: dict[int, list[float]] = {s: [] for s in range(game.num_rounds)}
    chips = []
    t_start = time.perf_counter()
    deal = None
    for h in range(hands):
        if h % 2 == 0:  # each deal played in both seats
            deal = dealer.next_deal()
        assert deal is not None
        position = h % 2
        walk = ResolvingWalk(policy, position, seed, h, options, resolve_counts=counts)
        twin = HandWalk(policy, position, seed, h)
        state = State.new_hand(game, deal)
        while state.actor is not None:
            board = deal.board_through(state.round)
            if state.actor == position:
                t0 = time.perf_counter()
                twin.decide(state, deal.holes[position], board)
                plain[state.round].append(time.perf_counter() - t0)
                before = counts.resolves + counts.timeouts
                t0 = time.perf_counter()
                action, _ = walk.decide(state, deal.holes[position], board)
                spent = time.perf_counter() - t0
                resolving[state.round].append(spent)
                if counts.resolves + counts.timeouts > before:
                    resolved[state.round].append(spent)
                    if walk.solution is not None and counts.resolves > before:
                        nodes[state.round].append(float(len(walk.solution[0].tree)))
            else:
                action = blind_action("random", state, rng)
                if action is None:
                    break
            state = state.apply(action)
        if state.actor is None:
            chips.append(state.values()[position])
    return {
        "game": game_name,
        "hands": hands,
        "seconds": time.perf_counter() - t_start,
        "resolve": counts.to_dict(),
        "options": {"iterations": options.iterations, "sizes": list(options.sizes),
                    "first_street": options.first_street, "runouts": options.runouts,
                    "max_nodes": options.max_nodes},
        "blueprint_seconds_by_street": {s: _quantiles(v) for s, v in plain.items()},
        "resolving_seconds_by_street": {s: _quantiles(v) for s, v in resolving.items()},
        "re_solves_seconds_by_street": {s: _quantiles(v) for s, v in resolved.items()},
        "subgame_nodes_by_street": {s: _quantiles(v) for s, v in nodes.items()},
        "mbb_per_game_vs_random": float(np.mean(chips)) * 1000.0 / game.big_blind if chips else None,
    }


def runouts_figures(seed: int) -> dict:
    """The run-outs' error and cost (module docstring)."""
    game = load_game("holdem.nolimit.2p.reverse_blinds")
    hands = deck_hands(game)
    reach = np.ones(hands.shape[0])
    ref = RunOuts(game, hands, (), 4000, seed + 1)
    norm = math.comb(game.num_ranks * game.num_suits - 2, 2)  # the opponent hands disjoint from one hand
    want = ref.values(reach) / norm
    out = {"reference_boards": 4000, "hands": int(hands.shape[0])}
    for n in (25, 100, 400):
        ro = RunOuts(game, hands, (), n, seed)
        got = ro.values(reach) / norm
        t0 = time.perf_counter()
        ro.matrix()
        cost = time.perf_counter() - t0
        err = got - want
        out[str(n)] = {"rms_error": float(np.sqrt(np.mean(err**2))), "max_error": float(np.abs(err).max()),
                       "matrix_seconds": cost}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer hands (20 a case)")
    ap.add_argument("--hands", type=int, help="hands a case (default 200)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, of {', '.join(CASES)}")
    ap.add_argument("--iterations", type=int, help="Discounted CFR iterations a re-solve runs (default: 200)")
    args = ap.parse_args()
    cases = [c for c in args.cases.split(",") if c]
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        ap.error(f"--cases: no case {unknown[0]!r} (cases: {', '.join(CASES)})")
    if args.iterations is not None and args.iterations < 1:
        ap.error(f"--iterations {args.iterations}: at least 1")
    hands = args.hands or (20 if args.quick else 200)
    out: dict = {"quick": args.quick, "machine": {"load_before": os.getloadavg()}}
    print("run-outs: error and cost ...", file=sys.stderr, flush=True)
    out["runouts"] = runouts_figures(args.seed)
    for name in cases:
        print(f"{name}: {hands} hands against random ...", file=sys.stderr, flush=True)
        out[name] = run_case(name, hands, args.seed, args.iterations)
    out["machine"]["load_after"] = os.getloadavg()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
