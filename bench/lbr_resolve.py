"""Benchmark: local best response against the re-solving player, exactly, on no-limit Leduc.

LBR (``solver/evaluation/lbr.py``, the ``leaks`` action set derived from the strategy's
tree) is computed exactly over every deal of ``leduc.nolimit.2p`` (``--stack N`` chips a
player, default the game's 20), the player's draws summed over, against the shipped
``strategies/leduc.nolimit.2p.strategy``, and against the same file with a planted leak
(``solver/evaluation/leaks.py``: every all-in on one street called with every hand), each
played (with another stack, the shipped file's betting abstraction, ``0.5p,1p,2p,a``,
is trained for it: CFR+, 1,000 iterations):

* ``translated``: through pseudo-harmonic translation (LBR's range:
  :class:`~solver.evaluation.player_range.PlayerRange`);
* ``resolve``: by the re-solving player with its defaults (re-solving where the
  opponent leaves the tree, the safe gadget);
* ``resolve at starts, G``: re-solving also at the start of both streets, with gadget
  ``G`` (``safe``, ``estimated``, ``none``).

The re-solving player's range is :func:`solver.resolve.opponent.resolving_range`, its
re-solves (``--iterations`` Discounted CFR iterations, default 100) made as the player
makes them. With ``--br`` each row also gets the exact real best response against every
legal amount (:func:`solver.resolve.exact.resolved_exploitability`), which LBR's value
never exceeds. Progress goes to stderr; the last line of stdout is one JSON object::

    {"game", "stack", "iterations", "rows": [{"file", "player", "lbr_mbb", "lbr_seats_mbb",
     "br_mbb", "seconds"}], "total_seconds"}

Usage: ``python bench/lbr_resolve.py [--stack N] [--iterations N] [--br] [--quick]``
(``--quick``: 6-chip stacks, 40 iterations).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from poker.game import load_game
from solver.evaluation.lbr import LocalBestResponse, StrategyOpponent
from solver.evaluation.leaks import planted_policy
from solver.evaluation.real_response import real_exploitability, translated_policy
from solver.play.player import translated
from solver.resolve.exact import resolved_exploitability
from solver.resolve.opponent import ResolvingOpponent
from solver.resolve.player import ResolveOptions
from solver.strategy_io import open_strategy
from solver.training.algorithms import solve

ROOT = Path(__file__).resolve().parent.parent
STRATEGY = ROOT / "strategies" / "leduc.nolimit.2p.strategy"
SHIPPED_BETTING = "0.5p,1p,2p,a"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stack", type=int, help="chips a player (default the game's)")
    ap.add_argument("--iterations", type=int, help="Discounted CFR iterations a re-solve (default 100)")
    ap.add_argument("--br", action="store_true", help="also the exact best response of every row")
    ap.add_argument("--quick", action="store_true", help="6-chip stacks, 40 iterations")
    args = ap.parse_args()
    stack = args.stack or (6 if args.quick else None)
    iterations = args.iterations or (40 if args.quick else 100)
    if iterations < 1 or (stack is not None and stack < 2):
        ap.error("--iterations must be positive and --stack at least 2")
    game = load_game("leduc.nolimit.2p")
    if stack is not None:
        game = dataclasses.replace(game, stack=(stack, stack))
    if stack is None:
        base = translated(open_strategy(STRATEGY, game=game))
    else:  # the shipped file is for 20-chip stacks: the same betting abstraction trained here
        base = translated_policy(solve(game, "cfr+", iterations=1000, betting=SHIPPED_BETTING))
    files = {"shipped": base, "planted preflop": planted_policy(base, 0)[0], "planted flop": planted_policy(base, 1)[0]}
    default = ResolveOptions(iterations=iterations)
    players = [("translated", None), ("resolve", default)] + [
        (f"resolve at starts, {g}", dataclasses.replace(default, street_starts=(0, 1), gadget=g))
        for g in ("safe", "estimated", "none")]
    out: dict = {"game": game.name, "stack": game.stack[0], "iterations": iterations, "rows": []}
    t_all = time.perf_counter()
    scale = 1000.0 / game.big_blind
    for file, policy in files.items():
        for player, options in players:
            t0 = time.perf_counter()
            opponent = StrategyOpponent(policy) if options is None else ResolvingOpponent(policy, options)
            seats = LocalBestResponse(game, opponent, actions="leaks").exact_values()
            row = {"file": file, "player": player, "lbr_mbb": scale * sum(seats) / 2,
                   "lbr_seats_mbb": [scale * v for v in seats]}
            if args.br:
                if options is None:
                    br = real_exploitability(policy, game, self_play=False, count_tree=False).mbb_per_game
                else:
                    br = resolved_exploitability(policy, options, game)[0].mbb_per_game
                row["br_mbb"] = br
            row["seconds"] = time.perf_counter() - t0
            out["rows"].append(row)
            extra = f", best response {row['br_mbb']:.1f}" if args.br else ""
            print(f"{file:16} {player:28} LBR {row['lbr_mbb']:+8.1f} mbb/g{extra} ({row['seconds']:.0f} s)",
                  file=sys.stderr, flush=True)
    out["total_seconds"] = time.perf_counter() - t_all
    print(json.dumps(out))


if __name__ == "__main__":
    main()
