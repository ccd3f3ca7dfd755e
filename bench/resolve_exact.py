"""Benchmark of re-solving against translation: exact real-game exploitability on no-limit Leduc.

For the betting abstractions of ``bench/translation.py`` (``1p,a``, ``0.5p,1p,a``,
``0.5p,1p,2p,a``; lossless card buckets) of ``leduc.nolimit.2p`` (``--stack N`` chips a
player, default the game's 20), train once with CFR+ (2,000 iterations; ``--quick``:
6-chip stacks and 1,000), then measure, against a best responder that may bet every
legal amount:

* ``translated_mbb``: the blueprint played through pseudo-harmonic translation
  (:func:`solver.evaluation.real_response.real_exploitability`);
* ``resolved_mbb``: the same blueprint played by the re-solving player
  (:class:`solver.resolve.player.ResolvingWalk` with ``--iterations`` Discounted CFR
  iterations a re-solve, default 100, and its default sizes), tabulated over the real
  game exactly (:func:`solver.resolve.exact.resolved_exploitability`); in Leduc the
  player re-solves on both streets;
* ``ratio``: translated over re-solved; ``resolves``: subgames the two walks solved;
  ``seconds``: wall time of the row's re-solved evaluation;
* with ``--h2h``, ``h2h_mbb``: the re-solving player's exact value against the
  translated blueprint, the mean of its two seats (``h2h_seats``, chips)
  (:func:`solver.resolve.exact.resolved_head_to_head`).

Usage: ``python bench/resolve_exact.py [--quick] [--stack N] [--iterations N] [--at 0,1]
[--sizes LIST] [--max-nodes N] [--h2h] [--only BETTING]`` (``--at``: streets at whose start the player also
re-solves; ``--sizes``: the subgames' pot fractions; ``--max-nodes``: the largest
subgame it solves).
Progress goes to stderr; the last line of stdout is one JSON object::

    {"game", "stack", "iterations", "rows": [{"betting", "abstract_mbb", "translated_mbb",
     "resolved_mbb", "ratio", "br", "nodes", "resolves", "seconds"}], "total_seconds"}
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.players import PlayerSpecError, ResolveSpec
from poker.game import load_game
from solver.evaluation.best_response import exploitability
from solver.evaluation.real_response import real_exploitability, translated_policy
from solver.resolve.exact import resolved_exploitability, resolved_head_to_head
from solver.resolve.player import ResolveOptions
from solver.training.algorithms import solve

GAME = "leduc.nolimit.2p"
BETTINGS = ("1p,a", "0.5p,1p,a", "0.5p,1p,2p,a")


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run(stack: int | None, cfr_iterations: int, options: ResolveOptions, h2h: bool = False,
        bettings: tuple[str, ...] = BETTINGS) -> dict[str, Any]:
    """Every row of the module docstring, the player re-solving with ``options``
    (``h2h``: also its exact value against the translated blueprint)."""
    game = load_game(GAME)
    if stack is not None:
        game = dataclasses.replace(game, stack=(stack,) * game.num_players)
    rows = []
    for betting in bettings:
        strategy = solve(game, "cfr+", iterations=cfr_iterations, betting=betting)
        policy = translated_policy(strategy)
        abstract = exploitability(game, strategy).mbb_per_game
        translated = real_exploitability(policy, game, self_play=False, count_tree=False)
        t0 = time.perf_counter()

        def progress(nodes: int) -> None:
            if nodes % 5000 == 0:
                _log(f"  {betting}: {nodes} nodes, {time.perf_counter() - t0:.0f} s")

        resolved, info = resolved_exploitability(policy, options, game, progress=progress)
        row = {
            "betting": betting,
            "abstract_mbb": abstract,
            "translated_mbb": translated.mbb_per_game,
            "resolved_mbb": resolved.mbb_per_game,
            "ratio": translated.mbb_per_game / resolved.mbb_per_game if resolved.mbb_per_game > 0 else None,
            "br": {"translated": list(translated.br), "resolved": list(resolved.br)},
            "nodes": {"translated": translated.nodes, "resolved": resolved.nodes},
            "resolves": info["resolves"],
            "resolve_failed": info["failed"],
            "seconds": time.perf_counter() - t0,
        }
        if h2h:
            seats = resolved_head_to_head(policy, options, game)
            row["h2h_seats"] = list(seats)
            row["h2h_mbb"] = 1000.0 * (seats[0] + seats[1]) / 2.0 / game.big_blind
            _log(f"{betting}: against the translated blueprint {row['h2h_mbb']:+.2f} mbb/g")
        _log(f"{betting}: abstract {abstract:.2f}, translated {translated.mbb_per_game:.1f}, "
             f"re-solved {resolved.mbb_per_game:.1f} mbb/g ({row['ratio'] or 0:.1f}x), "
             f"{info['resolves']} re-solves, {row['seconds']:.0f} s")
        rows.append(row)
    return {"game": game.name, "stack": game.stack[0], "cfr_iterations": cfr_iterations,
            "iterations": options.iterations, "street_starts": list(options.street_starts),
            "sizes": list(options.sizes), "max_nodes": options.max_nodes, "gadget": options.gadget,
            "unit": "mbb/g = 1000 * chips per game / the ante (1 chip)",
            "rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="6-chip stacks: a few seconds")
    ap.add_argument("--stack", type=int, help="chips a player (default: the game's 20; quick 6)")
    ap.add_argument("--iterations", type=int, default=100, help="Discounted CFR iterations a re-solve")
    ap.add_argument("--at", default="", help="streets (0, 1) whose first decision also re-solves, e.g. 0,1")
    ap.add_argument("--sizes", help="the subgames' pot fractions (default: the player's, 0.5,1)")
    ap.add_argument("--max-nodes", type=int, help="the largest subgame solved (default: the player's)")
    ap.add_argument("--h2h", action="store_true", help="also the exact value against the translated blueprint")
    ap.add_argument("--only", choices=BETTINGS, help="one betting abstraction's row")
    ap.add_argument("--gadget", default="safe", help="the re-solving gadget: safe, estimated or none")
    args = ap.parse_args()
    stack = args.stack or (6 if args.quick else None)
    t0 = time.perf_counter()
    try:  # the play/match flags' own parser: one line for a bad list
        spec = ResolveSpec.parse(args.iterations, None, args.sizes or "0.5,1", args.at, "", args.max_nodes or 10_000,
                                 gadget=args.gadget)
    except PlayerSpecError as exc:
        ap.error(str(exc).replace("--resolve-", "--"))
    options = spec.options()
    out = run(stack, 1000 if args.quick else 2000, options, args.h2h, (args.only,) if args.only else BETTINGS)
    out["total_seconds"] = time.perf_counter() - t0
    print(json.dumps(out))


if __name__ == "__main__":
    main()
