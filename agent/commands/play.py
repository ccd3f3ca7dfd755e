"""``pokerbot play``: connect a bot to an ACPC dealer and play one match."""

from __future__ import annotations

import argparse
import asyncio
import sys

from poker.game import load_game

from ..bots import BOTS, make_bot
from ..client import ClientError, play_match
from ..protocol import ProtocolError


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``play`` subcommand."""
    p = sub.add_parser(
        "play",
        help="play a match against an ACPC dealer",
        description=(
            "Connect to an ACPC dealer (protocol 2.0.0), answer every state in which this "
            "seat is to act, and print a one-line summary when the dealer ends the match. "
            "Exit 0 at the normal end (EOF), 1 if the connection breaks or the dealer "
            "sends something that is not a valid state."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            "  pokerbot play --host 127.0.0.1 --port 10822 --bot random --seed 1\n"
            "  pokerbot play --port 9001 --bot equity --game holdem.limit.2p.reverse_blinds"
        ),
    )
    p.add_argument("--host", default="127.0.0.1", help="dealer address (default 127.0.0.1)")
    p.add_argument("--port", type=int, required=True, help="this seat's dealer port")
    p.add_argument("--bot", default="call", choices=sorted(BOTS), help="which bot plays (default call)")
    p.add_argument("--game", default="holdem.nolimit.2p.reverse_blinds",
                   help="the game the dealer runs (shipped name or .game file)")
    p.add_argument("--seed", type=int, help="seed of the bot's random choices (default: from the system)")
    p.add_argument("--action-timeout", type=float, default=5.0, metavar="SECONDS",
                   help="deadline for an async bot's answer; after it the bot calls (default 5)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Play the match; print the summary."""
    game = load_game(args.game)
    bot = make_bot(args.bot, args.seed)
    try:
        summary = asyncio.run(play_match(args.host, args.port, bot, game, action_timeout=args.action_timeout))
    except (ClientError, ProtocolError) as exc:
        print(f"pokerbot play: error: {exc}", file=sys.stderr)
        return 1
    print(summary)
    return 0
