"""``pokerbot dealer``: run an ACPC match server that behaves like the reference dealer."""

from __future__ import annotations

import argparse
from pathlib import Path

from poker.game import load_game

from .. import eventloop
from .options import UserError
from ..dealer import DealerConfig, parse_names, run_dealer, seat_socket_paths
from ..protocol.dealer_state import TimeLimits
from .options import add_spin_option, spin_us


def _ports(values: list[str] | None) -> tuple[int, ...]:
    if not values:
        return ()
    ports = []
    for v in values:
        for p in v.split(","):
            if not p:
                continue
            if not p.isdigit() or int(p) > 65535:
                raise UserError(f"port {p!r} is not a number in 0..65535")
            ports.append(int(p))
    return tuple(ports)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``dealer`` subcommand."""
    p = sub.add_parser(
        "dealer",
        help="run an ACPC dealer (match server) for 2-10 players",
        description=(
            "Deal an ACPC match: one listening port per seat (printed on stdout), the same "
            "cards as the reference dealer for the same seed, the same repairs of bad "
            "actions, time limits and hand log. Exit 0 when the match finished, 1 when it "
            "was aborted (timeout, disconnect, bad version line)."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            "  pokerbot dealer holdem.nolimit.2p.reverse_blinds --hands 1000 --seed 42 \\\n"
            "      --players alice bob --log match.log\n"
            "  pokerbot dealer kuhn.limit.3p --hands 60 --seed 7 --port 9001 9002 9003 --duplicate"
        ),
    )
    p.add_argument("game", help="a shipped game name or a .game file")
    p.add_argument("--hands", type=int, required=True, metavar="N", help="hands to play (per pass with --duplicate)")
    p.add_argument("--seed", type=int, required=True, metavar="S", help="card seed, 0..4294967295")
    p.add_argument("--players", nargs="+", metavar="NAME", help="names in seat order (default player1..playerN)")
    p.add_argument("--port", nargs="+", metavar="P", help="listening port per seat (default: free ports)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--unix", type=Path, metavar="DIR",
                   help="listen on Unix sockets DIR/seat1 .. DIR/seatN instead of TCP ports (clients on this "
                        "machine: 'pokerbot play --unix PATH'); their paths are printed instead of the ports")
    p.add_argument("--duplicate", action="store_true",
                   help="play every deal again with the seats rotated (N passes in all)")
    p.add_argument("--fixed-seats", action="store_true", help="no seat rotation between hands (reference -f)")
    p.add_argument("--log", type=Path, metavar="FILE", help="write the hand log here")
    p.add_argument("--match-name", help="name in the log header (default: the log file's name, or 'match')")
    p.add_argument("--t-response", type=int, default=600_000, metavar="MS", help="longest single response (ms)")
    p.add_argument("--t-hand", type=int, default=600_000, metavar="MS", help="most time per seat per hand (ms)")
    p.add_argument("--t-per-hand", type=int, default=7_000, metavar="MS",
                   help="average time per hand; the match budget per seat is MS x hands")
    p.add_argument("--start-timeout", type=int, metavar="MS", help="longest wait for every seat to connect")
    p.add_argument("-v", "--verbose", action="store_true", help="TO/FROM lines on stderr")
    add_spin_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the match; 0 if it finished, 1 if it was aborted."""
    game = load_game(args.game)
    if args.hands < 1:
        raise UserError(f"--hands must be positive, not {args.hands}")
    if not 0 <= args.seed <= 0xFFFFFFFF:
        raise UserError(f"--seed {args.seed} is not in 0..4294967295")
    for name in ("t_response", "t_hand", "t_per_hand"):
        if getattr(args, name) < 0:
            raise UserError(f"--{name.replace('_', '-')} must not be negative")
    if args.unix is not None:
        if args.port:
            raise UserError("--unix listens on Unix sockets: give no --port with it")
        if not args.unix.is_dir():
            raise UserError(f"--unix {args.unix}: not a directory")
        try:
            seat_socket_paths(args.unix, game.num_players)
        except ValueError as exc:
            raise UserError(f"--unix {exc}") from None
    match_name = args.match_name
    if match_name is None:
        match_name = args.log.name.removesuffix(".log") if args.log else "match"
    config = DealerConfig(
        game=game,
        num_hands=args.hands,
        seed=args.seed,
        names=parse_names(args.players, game.num_players),
        host=args.host,
        ports=_ports(args.port),
        unix_dir=args.unix,
        limits=TimeLimits(args.t_response, args.t_hand, args.t_per_hand),
        fixed_seats=args.fixed_seats,
        duplicate=args.duplicate,
        log_path=args.log,
        match_name=match_name,
        game_file=args.game,
        start_timeout=None if args.start_timeout is None else args.start_timeout / 1000,
        verbose=args.verbose,
        spin_us=spin_us(args, unix=args.unix is not None),
    )
    result = eventloop.run(run_dealer(config))
    return result.exit_status
