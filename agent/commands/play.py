"""``pokerbot play``: connect a bot to an ACPC dealer and play one match.

The seat's player is a spec (:class:`agent.players.PlayerSpec`: ``--bot NAME``, or
``--bot strategy:FILE`` / ``--strategy FILE`` with ``--purify``, ``--mapping`` and
``--tables``) opened once (:func:`agent.players.open_for_play`). ``--summary FILE``
writes the result as JSON: the chips, how many actions the client had to make legal
(``legalized``) and, for a strategy, its translation counts and the repairs of its own
actions (``translation``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from abstraction.translation import MAPPINGS
from poker._atomic import atomic_write_bytes
from poker.game import Game, load_game

from .. import eventloop
from ..bots import BOTS, Bot
from ..client import ClientError, MatchSummary, play_match
from ..decisions import DecisionFile, WatchedBot
from ..players import DEFAULT_MAPPING, PlayerSpec, open_for_play
from ..protocol.codec import MatchState, ProtocolError, StateParseError
from ..telemetry import MqttConfig, Telemetry
from .options import (
    UserError,
    add_mqtt_options,
    add_resolve_options,
    add_spin_option,
    mqtt_config,
    positive_float,
    positive_int,
    resolve_spec,
    spin_us,
)
from .strategy_tables import add_tables_option


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``play`` subcommand."""
    p = sub.add_parser(
        "play",
        help="play a match against an ACPC dealer",
        description=(
            "Connect to an ACPC dealer (protocol 2.0.0), answer every state in which this "
            "seat is to act, and print a one-line summary when the dealer ends the match "
            "(hands, chips won - exact, never in exponent notation - and mbb/g)."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "exit status:\n"
            "  0  the match completed: the dealer closed the connection between hands, after\n"
            "     at least one hand (and after N hands or more with --hands N)\n"
            "  1  it did not: the dealer closed the connection (or aborted) in the middle of a\n"
            "     hand, before the first hand, or before hand N of --hands N; or the connection\n"
            "     broke, the dealer sent something that is not a valid state, or it sent nothing\n"
            "     for --read-timeout seconds. One line on stderr says why; the summary of the\n"
            "     hands played is still printed when there is one.\n"
            "  2  bad usage\n"
            "\n"
            "examples:\n"
            "  pokerbot play --host 127.0.0.1 --port 10822 --bot random --seed 1\n"
            "  pokerbot play --port 9001 --bot equity --game holdem.limit.2p.reverse_blinds\n"
            "  pokerbot play --port 9001 --hands 3000 --read-timeout 60\n"
            "  pokerbot play --port 9001 --game leduc.nolimit.2p --strategy strategies/leduc.nolimit.2p.strategy"
        ),
    )
    p.add_argument("--host", default="127.0.0.1", help="dealer address (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="this seat's dealer port (required unless --unix)")
    p.add_argument("--unix", metavar="PATH",
                   help="connect to this Unix socket instead of host:port (a dealer on this machine "
                        "listening with 'pokerbot dealer --unix DIR'; 'pokerbot match' uses it)")
    p.add_argument("--bot", default="call", metavar="BOT",
                   help=f"which bot plays: {', '.join(sorted(BOTS))}, or strategy:FILE (default call)")
    p.add_argument("--strategy", metavar="FILE",
                   help="play a strategy file written by 'pokerbot train' (the same as --bot strategy:FILE)")
    p.add_argument("--purify", type=float, default=0.0, metavar="T",
                   help="strategy: drop actions below probability T and renormalize (default 0: none)")
    p.add_argument("--mapping", choices=MAPPINGS, default=DEFAULT_MAPPING,
                   help=f"strategy: how opponent bets are translated (default {DEFAULT_MAPPING})")
    add_tables_option(p, "cached")
    add_resolve_options(p, flag=True)
    p.add_argument("--summary", type=Path, metavar="FILE",
                   help="write a JSON summary at the end (chips, hands, actions the client made "
                        "legal and, for a strategy, its translation and repair counts)")
    p.add_argument("--game", default=None,
                   help="the game the dealer runs (shipped name or .game file; default: a "
                        "strategy's own game, else holdem.nolimit.2p.reverse_blinds)")
    p.add_argument("--seed", type=int, help="seed of the bot's random choices (default: from the system)")
    p.add_argument("--duplicate-hands", type=positive_int, metavar="N",
                   help="strategy: the dealer plays a duplicate match of N hands a pass, numbering pass "
                        "k's hands k*N+h (as 'pokerbot dealer --duplicate' does): key the random choices "
                        "by h, so that players of the same --seed draw alike on a deal in the same seat "
                        "(common random numbers; 'pokerbot match --duplicate' passes it)")
    p.add_argument("--action-timeout", type=float, default=5.0, metavar="SECONDS",
                   help="deadline for an async bot's answer; after it the bot calls (default 5)")
    p.add_argument("--hands", type=positive_int, metavar="N",
                   help="the number of hands the dealer is to play: fewer completed is an incomplete "
                        "match, exit 1 (default: unknown; only a connection ending mid-hand is)")
    p.add_argument("--read-timeout", type=positive_float, metavar="SECONDS",
                   help="give up, exit 1, when nothing comes from the dealer for this long after "
                        "the connection, its last line or our last answer; the dealer starts when "
                        "every seat has connected (default: wait forever)")
    p.add_argument("--name", help="the bot's name in telemetry topics and decision events (default: the bot's name)")
    p.add_argument("--events", type=Path, metavar="FILE",
                   help="append every decision of this seat to FILE as a JSON line, flushed as it is made "
                        "(what 'pokerbot web' shows live; 'pokerbot match --watch' passes it)")
    add_spin_option(p)
    add_mqtt_options(p)
    p.set_defaults(func=run)


async def _play(args: argparse.Namespace, game: Game, bot: object, mqtt: MqttConfig | None,
                name: str) -> MatchSummary:
    sinks: list[Callable[[dict[str, Any]], None]] = []
    events = DecisionFile(args.events) if args.events is not None else None
    if events is not None:
        sinks.append(events)
    try:
        if mqtt is None:
            seat = WatchedBot(bot, name, sinks) if sinks else bot
            return await play_match(args.host, args.port, seat, game, action_timeout=args.action_timeout,
                                    spin_us=args.spin_us, read_timeout=args.read_timeout, unix_path=args.unix)
        async with Telemetry(mqtt, name) as tel:

            def on_hand(ms: MatchState, chips: float) -> None:
                tel.publish_hand(
                    {"hand": ms.hand_number, "position": ms.position, "betting": ms.state.betting_string(),
                     "cards": ms.text.rsplit(":", 1)[-1]},
                    chips,
                    game.big_blind,
                )

            sinks.append(lambda event: tel.publish("decision", event))
            return await play_match(args.host, args.port, WatchedBot(bot, name, sinks), game,
                                    action_timeout=args.action_timeout, on_hand=on_hand,
                                    spin_us=args.spin_us, read_timeout=args.read_timeout, unix_path=args.unix)
    finally:
        if events is not None:
            events.close()


DEFAULT_GAME = "holdem.nolimit.2p.reverse_blinds"


def player_spec(args: argparse.Namespace) -> PlayerSpec:
    """The seat's spec: ``--strategy FILE``, else ``--bot`` (a name or ``strategy:FILE``),
    with the options."""
    options = {"purify": args.purify, "tables": args.tables, "mapping": args.mapping}
    resolving = resolve_spec(args)
    try:
        if args.strategy is not None:
            return PlayerSpec.parse(args.strategy, bots=(), bare_files=True,
                                    resolve=resolving if args.resolve else None, **options)
        if args.resolve and not args.bot.startswith(("strategy:", "resolve:")):
            raise UserError("--resolve needs a strategy file (--strategy FILE or --bot resolve:FILE)")
        text = "resolve:" + args.bot[len("strategy:"):] if args.resolve and args.bot.startswith("strategy:") else args.bot
        return PlayerSpec.parse(text, resolve=resolving, **options)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def open_player(spec: PlayerSpec, game_name: str | None, seed: int | None = None,
                deal_period: int | None = None) -> tuple[Game, Bot]:
    """The match's game and the seat's player, its file opened once: the game is
    ``game_name`` (``--game``; a strategy for another game is refused), else a strategy's
    own game, else :data:`DEFAULT_GAME`; ``deal_period``: ``--duplicate-hands``."""
    game = load_game(game_name) if game_name is not None else None
    if game is None and not spec.is_strategy:
        game = load_game(DEFAULT_GAME)
    try:
        bot = open_for_play(spec, game, seed=seed, deal_period=deal_period)
    except ValueError as exc:  # StrategyFileError, UnknownBotError, a table build that cannot run
        raise UserError(str(exc)) from None
    if game is None:
        from ..strategy_player import StrategyPlayer  # a strategy's: the solver is loaded

        assert isinstance(bot, StrategyPlayer)
        game = bot.strategy.game
    return game, bot


def _other_game(exc: StateParseError, game: Game, given: str | None, strategy: bool) -> str:
    """The one line for a dealer whose states are not of the game this client plays:
    which game that was, where it came from, and what to pass instead."""
    if given is not None:
        source = "given with --game"
    elif strategy:
        source = "the strategy file's game"
    else:
        source = "the default: no --game given"
    return (
        f"the dealer's states do not parse as {game.name} ({source}); is the dealer running another "
        f"game? Pass --game with the dealer's game (pokerbot game lists them). ({exc})"
    )


def run(args: argparse.Namespace) -> int:
    """Play the match; print the summary. 0 if the match completed, else 1 (and why, on stderr)."""
    if (args.port is None) == (args.unix is None):
        raise UserError("give the dealer's --port, or its --unix socket path (not both)")
    spin_us(args, unix=args.unix is not None)
    spec = player_spec(args)
    game, bot = open_player(spec, args.game, args.seed, args.duplicate_hands)
    mqtt = mqtt_config(args)
    try:
        summary = eventloop.run(_play(args, game, bot, mqtt, args.name or spec.text))
    except (ClientError, ProtocolError) as exc:
        if isinstance(exc, StateParseError):
            exc = _other_game(exc, game, args.game, spec.is_strategy)
        print(f"pokerbot play: error: {exc}", file=sys.stderr)
        partial = getattr(exc, "summary", None)
        if partial is not None:
            print(partial)
        return 1
    why = summary.incomplete(args.hands)
    if why is not None:
        print(f"pokerbot play: error: {why}", file=sys.stderr)
    print(summary)
    if args.summary is not None:
        doc: dict[str, Any] = {"bot": spec.text, "completed": why is None, "summary": str(summary),
                               "legalized": summary.legalized,
                               "polling": summary.polling.to_json() if summary.polling else None}
        if spec.is_strategy:
            from ..strategy_player import StrategyPlayer

            assert isinstance(bot, StrategyPlayer)
            doc["translation"] = bot.summary()
        atomic_write_bytes(args.summary, (json.dumps(doc) + "\n").encode())
    return 0 if why is None else 1
