"""``pokerbot eval``: measure a strategy (exploitability by exact best response).

For a strategy over a card abstraction two figures are reported: the exploitability in
its abstract game (each best responder limited to the same buckets) and in the real card
game with the same betting tree (each best responder sees its exact cards; the strategy
is looked up through its buckets). See :mod:`solver.best_response`.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from poker.game import load_game
from solver.best_response import Result, abstract_and_real_exploitability
from solver.strategy_io import cards_record, describe_cards, load_strategy

from ..cli import UserError
from .train import load_abstraction


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
            "  pokerbot eval exploitability holdem.nolimit.2p.short20 short20.strategy --json\n"
            "  pokerbot eval exploitability leduc.limit.2p l3.strategy --abstraction abs/leduc"
        ),
    )
    what = p.add_subparsers(dest="what", metavar="WHAT")
    what.required = True
    e = what.add_parser(
        "exploitability",
        help="exact best response of each player against the strategy",
        description=(
            "Exact exploitability of STRATEGY: each player's best-response value against the "
            "other's part of the strategy, (BR_0 + BR_1) / 2 in chips per game and in mbb/g, "
            "and the first player's expected value when both follow the strategy. Two "
            "responders: one limited to the strategy's card buckets (the abstract game; with "
            "imperfect-recall buckets the best such responder found by backward induction, a "
            "lower bound) and one that sees its exact cards (the real card game, same betting "
            "tree). Without a card abstraction both are the same. A strategy trained with "
            "--abstraction DIR needs the same abstraction here."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            "  pokerbot eval exploitability leduc.limit.2p leduc.strategy --json\n"
            "  pokerbot eval exploitability leduc.limit.2p l3.strategy --abstraction abs/leduc --json\n"
            "JSON: exploitability, mbb_per_game and br are the abstract game's; "
            "real_exploitability, real_mbb_per_game and real_br the real game's."
        ),
    )
    e.add_argument("game", help="the game the strategy was trained for (name or .game file)")
    e.add_argument("strategy", help="strategy file written by 'pokerbot train'")
    e.add_argument(
        "--abstraction",
        metavar="DIR",
        help="the card abstraction the strategy was trained with (its content hash must match); "
        "needed only for files written before format 3, which do not carry the abstraction's model",
    )
    e.add_argument("--json", action="store_true", help="print one JSON object")
    e.set_defaults(func=run)


def _line(name: str, r: Result) -> str:
    return (
        f"{name}: best response P0 {r.br[0]:+.6f}  P1 {r.br[1]:+.6f} chips/game; "
        f"exploitability {r.exploitability:.6f} chips/game = {r.mbb_per_game:.3f} mbb/g"
    )


def run(args: argparse.Namespace) -> int:
    """Compute and print the exploitability."""
    game = load_game(args.game)
    abstraction = load_abstraction(args.abstraction)
    strategy = load_strategy(args.strategy, abstraction)
    if strategy.game != game:
        raise UserError(
            f"{args.strategy} was trained for {strategy.game.name or 'another game'}, not {game.name}"
        )
    abstract, real = abstract_and_real_exploitability(strategy)
    cards: dict[str, Any] | None = (
        cards_record(strategy.problem) if strategy.problem.abstraction is not None else None
    )
    doc = {
        "game": game.name,
        "strategy": str(args.strategy),
        "algorithm": strategy.algorithm,
        "iterations": strategy.iterations,
        "betting": strategy.problem.tree.betting_spec,
        "abstraction": cards,
        "exploitability": abstract.exploitability,
        "mbb_per_game": abstract.mbb_per_game,
        "br": list(abstract.br),
        "value": abstract.value,
        "real_exploitability": real.exploitability,
        "real_mbb_per_game": real.mbb_per_game,
        "real_br": list(real.br),
    }
    if args.json:
        print(json.dumps(doc))
        return 0
    over = describe_cards(cards) if cards is not None else "lossless buckets"
    print(
        f"{game.name}: {strategy.algorithm or 'strategy'} after {strategy.iterations:,} "
        f"iterations, {over}"
    )
    if cards is None:
        print(_line("exact", real))
    else:
        print(_line("abstract game", abstract))
        print(_line("real game", real))
    print(f"value of the profile to P0 {real.value:+.6f} chips/game")
    return 0
