"""Benchmark of action translation: the real-game exploitability of a translated player.

For a few betting abstractions of ``leduc.nolimit.2p`` (``1p,a``, ``0.5p,1p,a``,
``0.5p,1p,2p,a``; lossless card buckets), train once with CFR+ (``--iterations N``;
default 2000, ``--quick`` 300), then measure:

* ``abstract_mbb``: the strategy's exploitability in its abstract game (the responder
  sees its cards but bets only the abstraction's sizes; :func:`solver.evaluation.best_response.exploitability`);
* ``real_mbb[mapping]``: the exploitability in the real game of the player that plays
  the strategy through action translation with each mapping of Ganzfried & Sandholm
  2013 (IJCAI): ``pseudo_harmonic``, and their baselines ``nearest`` and ``geometric``.
  The best responder may make every legal bet (every integer raise-to); the player's
  randomized mapping is a mixed strategy, evaluated exactly, never sampled
  (:func:`solver.evaluation.real_response.real_exploitability`);
* ``real_nodes[mapping]``: real public nodes the two best-response walks evaluated (the
  full real betting tree has ``real_tree_nodes``); ``seconds``: wall time of the row
  (training and every evaluation); ``self_play_value``: seat 0's value when the
  translated player plays both seats (every action is then on the tree, so it equals
  the abstract profile's value).

mbb/g are thousandths of the game's big blind, :attr:`poker.game.Game.big_blind` = the
largest blind; Leduc has no blinds but an ante of 1 chip per player, so the unit is 1 chip
(1000 mbb/g = 1 chip per game).

Usage: ``python bench/translation.py [--quick] [--iterations N]``. Progress and the
finding go to stderr; the last line of stdout is one JSON object::

    {"game": ..., "big_blind": ..., "rows": [{"betting", "iterations", "abstract_mbb",
     "real_mbb": {mapping: ...}, "real_nodes": {...}, "seconds", ...}],
     "lowest": {betting: mapping}, "finding": "..."}
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from abstraction.translation import MAPPINGS
from poker.game import load_game
from solver.training.algorithms import solve
from solver.evaluation.best_response import exploitability
from solver.evaluation.real_response import real_exploitability, real_tree_size, translated_policy

GAME = "leduc.nolimit.2p"
BETTINGS = ("1p,a", "0.5p,1p,a", "0.5p,1p,2p,a")


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run(iterations: int, bettings: tuple[str, ...] = BETTINGS) -> dict[str, Any]:
    """Train each betting abstraction and measure every mapping (see the module docstring)."""
    game = load_game(GAME)
    _log(f"{GAME}: big blind {game.big_blind} chip(s) (the ante); CFR+ {iterations} iterations each")
    tree_nodes = real_tree_size(game)
    _log(f"real betting tree: {tree_nodes} nodes (every integer raise-to)")
    rows: list[dict[str, Any]] = []
    for betting in bettings:
        t0 = time.perf_counter()
        strategy = solve(game, "cfr+", iterations=iterations, betting=betting)
        abstract = exploitability(game, strategy)
        row: dict[str, Any] = {
            "betting": betting,
            "iterations": strategy.iterations,
            "abstract_nodes": strategy.problem.tree.n_nodes,
            "abstract_mbb": abstract.mbb_per_game,
            "real_mbb": {},
            "real_br": {},
            "real_nodes": {},
            "self_play_value": None,
        }
        _log(f"{betting}: trained in {time.perf_counter() - t0:.1f} s, abstract {abstract.mbb_per_game:.3f} mbb/g")
        for mapping in MAPPINGS:
            res = real_exploitability(translated_policy(strategy, mapping), game, count_tree=False)
            row["real_mbb"][mapping] = res.mbb_per_game
            row["real_br"][mapping] = list(res.br)
            row["real_nodes"][mapping] = res.nodes
            row["self_play_value"] = res.value
            _log(f"  {mapping:16s} {res.mbb_per_game:9.3f} mbb/g  BR {res.br[0]:+.4f} {res.br[1]:+.4f}"
                 f"  nodes {res.nodes}  {res.seconds:.1f} s")
        row["abstract_value"] = abstract.value
        row["seconds"] = time.perf_counter() - t0
        rows.append(row)
    lowest = {r["betting"]: min(r["real_mbb"], key=r["real_mbb"].get) for r in rows}
    wins = {m: sum(1 for v in lowest.values() if v == m) for m in MAPPINGS}
    best = max(wins, key=wins.get)  # type: ignore[arg-type]
    ratio = [r["real_mbb"][best] / r["abstract_mbb"] for r in rows if r["abstract_mbb"] > 0]
    first, last = rows[0]["real_mbb"][best], rows[-1]["real_mbb"][best]
    trend = "falls" if last < first else "does not fall"
    finding = (
        f"{best} gives the lowest real-game exploitability in {wins[best]} of {len(rows)} "
        f"abstractions (" + ", ".join(f"{b}: {m}" for b, m in lowest.items()) + "); the "
        f"translated player is {min(ratio):.0f} to {max(ratio):.0f} times as exploitable as "
        f"the strategy in its abstract game, and its real exploitability {trend} as sizes "
        f"are added ({rows[0]['betting']}: {first:.0f}, {rows[-1]['betting']}: {last:.0f} mbb/g)."
        if ratio
        else f"{best} is lowest in {wins[best]} of {len(rows)} abstractions."
    )
    return {
        "game": GAME,
        "big_blind": game.big_blind,
        "unit": "mbb/g = 1000 * chips per game / big blind (Leduc: the ante, 1 chip)",
        "real_tree_nodes": tree_nodes,
        "rows": rows,
        "lowest": lowest,
        "finding": finding,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer iterations: well within a minute")
    ap.add_argument("--iterations", type=int, help="CFR+ iterations per abstraction (default 2000, quick 300)")
    args = ap.parse_args()
    iterations = args.iterations or (300 if args.quick else 2000)
    t0 = time.perf_counter()
    out = run(iterations)
    out["total_seconds"] = time.perf_counter() - t0
    _log(out["finding"])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
