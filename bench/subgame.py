"""Benchmark of the subgame solver (solver/resolve/subgame.py): convergence and time of
CFR+ against Discounted CFR, on the same subgames in the same process.

* Rivers (every hand equally likely for both players, raises of 1/2 and 1 pot and
  all-in, no cap) of no-limit Leduc, the 20-card game and the full deck: exploitability
  of the average profile (chips) after 10, 100 and 500 iterations, and the seconds of
  the 500 iterations (the evaluations not counted).
* Full-deck rivers with at most two raises (1/2 and 1 pot and all-in; 1/3, 3/4 and 1 1/2
  pots and all-in): seconds per 100 Discounted CFR iterations, and the exploitability.
* The whole of limit Leduc from the first street (its value for the first player is
  about -0.0856), a 20-card turn with the river enumerated (pot raises, at most two),
  and a full-deck turn (1/2 and 1 pot and all-in, at most two raises): seconds an
  iteration.

One process, one core. The last line of stdout is one JSON object.

Usage: ``python bench/subgame.py [--quick]`` (``--quick``: 100 iterations where 500)
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
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from poker.cards import deck_cards  # noqa: E402
from poker.game import load_game  # noqa: E402
from poker.state import Action, State  # noqa: E402
from solver.resolve.subgame import SubgameBetting, SubgameSolver, deck_hands  # noqa: E402


def _street(game, street: int) -> tuple[State, list[int]]:
    """The state where ``street`` starts after checks and calls, and the highest cards of
    the deck as its board."""
    state = State.new_hand(game)
    while state.round < street:
        state = state.apply(Action.call())
    need = sum(game.num_board_cards[: street + 1])
    return state, sorted(deck_cards(game.num_ranks, game.num_suits))[len(deck_cards(game.num_ranks, game.num_suits)) - need:]


def _solver(game, street: int, betting: SubgameBetting, algorithm: str) -> SubgameSolver:
    state, board = _street(game, street)
    n = deck_hands(game).shape[0]
    return SubgameSolver(state, board, [np.ones(n), np.ones(n)], betting, algorithm=algorithm)


def _converge(game, street: int, betting: SubgameBetting, algorithm: str, checkpoints: list[int]) -> dict:
    solver = _solver(game, street, betting, algorithm)
    solver.solve(1)  # compile outside the clock (numba's cache makes later runs cheap)
    solver = _solver(game, street, betting, algorithm)
    spent = 0.0
    points = []
    for k in checkpoints:
        t0 = time.perf_counter()
        solver.solve(k - solver.iterations)
        spent += time.perf_counter() - t0
        points.append({"iterations": k, "exploitability": solver.exploitability()})
    return {"nodes": len(solver.tree), "points": points, "seconds": spent}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="100 iterations where 500")
    args = ap.parse_args()
    last = 100 if args.quick else 500
    checkpoints = [10, 100] if args.quick else [10, 100, 500]
    out: dict = {"quick": args.quick, "machine": {"load_before": os.getloadavg()}, "rivers": [], "capped": [], "whole": {}}
    for name in ("leduc.nolimit.2p", "holdem.nolimit.2p.short20", "holdem.nolimit.2p.reverse_blinds"):
        game = load_game(name)
        row = {"game": name}
        for algorithm in ("cfr+", "dcfr"):
            print(f"{name} river, {algorithm}, {last} iterations ...", file=sys.stderr, flush=True)
            row[algorithm] = _converge(game, game.num_rounds - 1, SubgameBetting(sizes=(0.5, 1.0)), algorithm, checkpoints)
        row["dcfr_over_cfr_plus_at_last"] = row["dcfr"]["points"][-1]["exploitability"] / row["cfr+"]["points"][-1]["exploitability"]
        out["rivers"].append(row)
    full = load_game("holdem.nolimit.2p.reverse_blinds")
    for sizes in ((0.5, 1.0), (1 / 3, 0.75, 1.5)):
        r = _converge(full, 3, SubgameBetting(sizes=sizes, cap=2), "dcfr", [100])
        out["capped"].append({"sizes": list(sizes), "cap": 2, **r})
    limit = load_game("leduc.limit.2p")
    solver = _solver(limit, 0, SubgameBetting(sizes=(1.0,), all_in=False), "dcfr")
    t0 = time.perf_counter()
    solver.solve(1000)
    seconds = time.perf_counter() - t0
    mass = float(solver.ranges[0] @ solver.values_of.disjoint(solver.ranges[1][None, :])[0])
    out["whole"]["leduc.limit.2p"] = {"iterations": 1000, "value_first_player": float(solver.ranges[0] @ solver.values(0)) / mass,
                                      "known_value": -0.0856, "exploitability": solver.exploitability(), "seconds": seconds}
    short = load_game("holdem.nolimit.2p.short20")
    out["turn_short20"] = _converge(short, 2, SubgameBetting(sizes=(1.0,), cap=2), "dcfr", [5, 200 if not args.quick else 50])
    print("full-deck turn, 20 iterations ...", file=sys.stderr, flush=True)
    turn = _converge(full, 2, SubgameBetting(sizes=(0.5, 1.0), cap=2), "dcfr", [20 if not args.quick else 5])
    turn["seconds_per_iteration"] = turn["seconds"] / turn["points"][-1]["iterations"]
    out["turn_full_deck"] = turn
    out["machine"]["load_after"] = os.getloadavg()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
