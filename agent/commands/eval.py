"""``pokerbot eval``: measure a strategy (exploitability by exact best response)."""

from __future__ import annotations

import argparse
import json

from poker.game import load_game
from solver.best_response import exploitability
from solver.strategy_io import load_strategy

from ..cli import UserError


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``eval`` subcommand and its ``exploitability`` action."""
    p = sub.add_parser(
        "eval",
        help="evaluate a strategy: exploitability",
        description="Evaluate a strategy file written by 'pokerbot train'.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            "  pokerbot eval exploitability leduc.limit.2p leduc.strategy\n"
            "  pokerbot eval exploitability holdem.nolimit.2p.short20 short20.strategy --json"
        ),
    )
    what = p.add_subparsers(dest="what", metavar="WHAT")
    what.required = True
    e = what.add_parser(
        "exploitability",
        help="exact best response of each player against the strategy",
        description=(
            "Exact exploitability of STRATEGY in the abstract game it was trained on: each "
            "player's best-response value against the other's part of the strategy (the "
            "responder sees its exact hand), (BR_0 + BR_1) / 2 in chips per game and in "
            "mbb/g, and the first player's expected value when both follow the strategy."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  pokerbot eval exploitability leduc.limit.2p leduc.strategy --json",
    )
    e.add_argument("game", help="the game the strategy was trained for (name or .game file)")
    e.add_argument("strategy", help="strategy file written by 'pokerbot train'")
    e.add_argument("--json", action="store_true", help="print one JSON object")
    e.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Compute and print the exploitability."""
    game = load_game(args.game)
    strategy = load_strategy(args.strategy)
    if strategy.game != game:
        raise UserError(
            f"{args.strategy} was trained for {strategy.game.name or 'another game'}, not {game.name}"
        )
    r = exploitability(None, strategy)
    doc = {
        "game": game.name,
        "strategy": str(args.strategy),
        "algorithm": strategy.algorithm,
        "iterations": strategy.iterations,
        "betting": strategy.problem.tree.betting_spec,
        "exploitability": r.exploitability,
        "mbb_per_game": r.mbb_per_game,
        "br": list(r.br),
        "value": r.value,
    }
    if args.json:
        print(json.dumps(doc))
    else:
        print(
            f"{game.name}: {strategy.algorithm or 'strategy'} after {strategy.iterations:,} iterations"
        )
        print(f"best response P0 {r.br[0]:+.6f}  P1 {r.br[1]:+.6f} chips/game")
        print(f"exploitability {r.exploitability:.6f} chips/game = {r.mbb_per_game:.3f} mbb/g")
        print(f"value of the profile to P0 {r.value:+.6f} chips/game")
    return 0
