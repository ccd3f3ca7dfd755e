"""``pokerbot web``: play against a bot, or watch a match, in the browser.

The server (:mod:`agent.web.server`, aiohttp: the ``web`` extra) serves one page on
127.0.0.1. Play: the person's seat is one more ACPC client of our dealer, which runs
in the server's process and logs the match in the match directory; the bot plays in
its own ``pokerbot play`` process. Watch: a ``pokerbot match --watch`` in the same
match directory, read from its log and decision files as it is played.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import logging
import sys
from pathlib import Path

from .options import UserError, positive_float, positive_int

BOT_LABELS = {
    "call": "call: always checks or calls",
    "raise": "raise: always raises",
    "random": "random: folds, calls and raises at random",
    "allin": "allin: always all-in",
    "equity": "equity: bets its hand's equity",
}


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``web`` subcommand."""
    p = sub.add_parser(
        "web",
        help="play against a bot, or watch a running match, in the browser",
        description=(
            "Serve the table on http://HOST:PORT/. Play: sit down against a reference bot or a "
            "strategy file in any shipped heads-up game, hand after hand; the dealer logs the match "
            "in --matches. Watch: follow a 'pokerbot match --watch' writing into the same folder."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            "  pokerbot web                                    # http://127.0.0.1:8080/\n"
            "  pokerbot web --port 9000 --opponent resolve:strategies/leduc.nolimit.2p.strategy\n"
            "  pokerbot match holdem.nolimit.2p.reverse_blinds --players \\\n"
            "      strategy:strategies/holdem.nolimit.2p.reverse_blinds.strategy equity --hands 5000 --watch\n"
            "  (then the Watch tab of the page shows it live)\n"
            "The page offers the reference bots and every strategy file in --strategies; --opponent\n"
            "adds any player spec (a strategy with re-solving: resolve:FILE). --host 0.0.0.0 exposes\n"
            "the table to the network: anyone who reaches the port can play."
        ),
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="port to listen on (default 8080; 0 picks a free one)")
    p.add_argument("--matches", type=Path, default=Path("matches"), metavar="DIR",
                   help="where the table's logs are written and running matches are found (default matches)")
    p.add_argument("--strategies", type=Path, default=Path("strategies"), metavar="DIR",
                   help="offer every *.strategy file here as an opponent (default strategies)")
    p.add_argument("--opponent", action="append", default=[], metavar="SPEC",
                   help="offer this player too: a bot name, strategy:FILE or resolve:FILE (repeatable)")
    p.add_argument("--hands", type=positive_int, default=1000, metavar="N",
                   help="hands in a match at the table (default 1000)")
    p.add_argument("--timer", type=positive_float, default=60.0, metavar="SECONDS",
                   help="time for each of the person's decisions; then the server folds, or checks "
                        "where that is free (default 60)")
    p.add_argument("--seed", type=int, metavar="S",
                   help="card seed of the first match (later ones count up; default random)")
    p.add_argument("--game", help="the game the page offers first")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    if importlib.util.find_spec("aiohttp") is None:
        raise UserError("pokerbot web needs aiohttp: pip install -e '.[web]'")
    from ..web.server import WebApp, WebConfig, default_games

    if not 0 <= args.port < 65536:
        raise UserError(f"--port {args.port} is not in 0..65535")
    if args.seed is not None and not 0 <= args.seed <= 0xFFFFFFFF:
        raise UserError(f"--seed {args.seed} is not in 0..4294967295")
    games = default_games()
    if args.game is not None and args.game not in {g.name for g, _ in games}:
        raise UserError(f"--game {args.game}: the table plays {', '.join(g.name for g, _ in games)}")
    config = WebConfig(games=games, opponents=opponents(args.strategies, args.opponent, {g.name for g, _ in games}),
                       match_dir=args.matches, hands=args.hands, timer_s=args.timer, seed=args.seed,
                       default_game=args.game, loopback_only=_is_loopback(args.host))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s",
                        stream=sys.stderr)
    from aiohttp.web_runner import GracefulExit

    try:
        asyncio.run(_serve(WebApp(config).app(), args.host, args.port))
    except (KeyboardInterrupt, GracefulExit):  # Ctrl-C or SIGTERM: the server's normal end
        pass
    print("pokerbot web: stopped", file=sys.stderr)
    return 0


async def _serve(app: object, host: str, port: int) -> None:
    """Serve ``app`` until cancelled (Ctrl-C, SIGTERM); the table's match ends with it."""
    from aiohttp import web

    assert isinstance(app, web.Application)
    runner = web.AppRunner(app, access_log=None, handle_signals=True)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        try:
            await site.start()
        except OSError as exc:
            raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        bound = runner.addresses[0][1] if runner.addresses else port
        print(f"pokerbot web: serving http://{_url_host(host)}:{bound}/ (Ctrl-C stops)", file=sys.stderr, flush=True)
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def opponents(strategies: Path, extra: list[str], games: set[str]) -> list:  # type: ignore[type-arg]
    """The opponents the page offers: the reference bots, each strategy file in
    ``strategies`` whose game the table plays, and each spec in ``extra`` (refused in
    one line if it cannot be opened)."""
    from solver.strategy_io import StrategyFileError, open_strategy

    from ..players import PlayerSpec
    from ..web.server import Opponent

    out = [Opponent(PlayerSpec.parse(name), label) for name, label in BOT_LABELS.items()]
    files = sorted(strategies.glob("*.strategy")) if strategies.is_dir() else []
    specs = [(f"strategy:{f}", True) for f in files] + [(text, False) for text in extra]
    for text, found in specs:
        try:
            spec = PlayerSpec.parse(text)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        if spec.strategy is None:
            if spec.text not in {o.spec.text for o in out}:
                out.append(Opponent(spec, spec.text))
            continue
        try:
            game = open_strategy(spec.strategy).game.name
        except StrategyFileError as exc:
            if found:
                continue  # a file in the folder that is not a strategy is not offered
            raise UserError(str(exc)) from None
        if game not in games:
            if not found:
                raise UserError(f"{text}: its game {game} is not one the table plays")
            continue
        label = f"{spec.name} ({'re-solving ' if spec.resolve else ''}strategy)"
        out.append(Opponent(spec, label, game))
    return out


def _is_loopback(host: str) -> bool:
    """``host`` is a loopback address or name (the server then answers loopback names only)."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
