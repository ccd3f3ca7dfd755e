"""``pokerbot game``: list the shipped games, or show one definition."""

from __future__ import annotations

import argparse
import json

from poker.game import load_game, shipped_games


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``game`` subcommand."""
    p = sub.add_parser(
        "game",
        help="list the shipped games or show one game definition",
        description="List the shipped ACPC game definitions, or parse and show one.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            "  pokerbot game                       # list shipped games\n"
            "  pokerbot game leduc.limit.2p        # show a shipped game\n"
            "  pokerbot game ./my.game --json      # check your own file"
        ),
    )
    p.add_argument("game", nargs="?", help="a shipped game name (with or without .game) or a path")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """List games, or print one game's canonical definition and a summary."""
    if args.game is None:
        names = shipped_games()
        if args.json:
            print(json.dumps({"games": names}))
        else:
            print("\n".join(names))
        return 0
    g = load_game(args.game)
    summary = {
        "name": g.name,
        "betting": g.betting.value,
        "players": g.num_players,
        "rounds": g.num_rounds,
        "deck": g.deck_size,
        "stack": list(g.stack),
        "blind": list(g.blind),
        "big_blind": g.big_blind,
        "raise_size": list(g.raise_size),
        "first_player": [p + 1 for p in g.first_player],
        "max_raises": list(g.max_raises),
        "hole_cards": g.num_hole_cards,
        "board_cards": list(g.num_board_cards),
    }
    if args.json:
        print(json.dumps(summary))
    else:
        print(g.to_text(), end="")
    return 0
