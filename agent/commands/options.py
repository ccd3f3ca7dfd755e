"""What several commands share: the error a user can cause, and the options that more
than one command takes (``--spin-us``; the MQTT telemetry options).

:class:`UserError` is printed by :func:`agent.cli.main` as one line on stderr with exit
status 2; so are the ``ValueError`` and ``OSError`` a command lets through.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from solver.resolve import GADGETS

from ..eventloop import DEFAULT_SPIN_US, SPIN_AUTO, PollingChoice, resolve_spin
from ..telemetry import MqttConfig

if TYPE_CHECKING:
    from ..players import ResolveSpec

__all__ = [
    "UserError",
    "add_mqtt_options",
    "add_resolve_options",
    "add_spin_option",
    "mqtt_config",
    "positive_float",
    "positive_int",
    "resolve_spec",
    "spin_choice",
    "spin_us",
]


class UserError(Exception):
    """A problem with the user's input: printed as one line, exit status 2."""


def _whole_number(text: str, least: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be {what}, not {value}")
    return value


def parse_buckets(text: str, flag: str = "--buckets") -> tuple[int, ...]:
    """Bucket counts per street from ``169,200,200,200``; :class:`UserError` naming
    ``flag`` on anything else."""
    try:
        values = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise UserError(f"{flag} {text!r}: expected comma-separated integers, e.g. 169,200,200,200") from None
    if any(v < 1 for v in values):
        raise UserError(f"{flag} {text!r}: every count must be at least 1")
    return values


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    return _whole_number(text, 1, "positive")


def nonnegative_int(text: str) -> int:
    """An argparse type: a whole number of at least 0."""
    return _whole_number(text, 0, "0 or more")


def positive_float(text: str) -> float:
    """An argparse type: a finite positive number (of seconds)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text}")
    return value


def _spin_value(text: str) -> float | str:
    """An argparse type: ``auto`` or a number of microseconds (checked by :func:`spin_us`)."""
    if text.strip().lower() == SPIN_AUTO:
        return SPIN_AUTO
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is neither {SPIN_AUTO!r} nor a number of microseconds") from None


def add_spin_option(p: argparse.ArgumentParser) -> None:
    """``--spin-us``, shared by ``play``, ``dealer`` and ``match``."""
    p.add_argument("--spin-us", type=_spin_value, default=SPIN_AUTO, metavar="US",
                   help="after each read, poll the socket this long before sleeping: the next "
                        "line of a fast match often comes sooner than a sleeping process wakes. "
                        f"auto (the default): time a loopback round trip sleeping and polling "
                        f"at start-up and poll {DEFAULT_SPIN_US:g} only where it saves the "
                        "wake-up; 0: never")


def spin_choice(args: argparse.Namespace, unix: bool = False) -> PollingChoice:
    """The checked ``--spin-us`` and what it decided: ``auto`` probes this machine once per
    process (:func:`agent.eventloop.choose_polling`; over a Unix socket pair with ``unix``),
    a number is taken as given."""
    value = args.spin_us
    if value != SPIN_AUTO and not 0 <= value <= 1_000_000:
        raise UserError(f"--spin-us must be auto or between 0 and 1000000, not {value:g}")
    return resolve_spin(value, unix)


def spin_us(args: argparse.Namespace, unix: bool = False) -> float:
    """The polling budget ``--spin-us`` comes to, in microseconds (``auto`` resolved:
    see :func:`spin_choice`)."""
    return spin_choice(args, unix).spin_us


def add_mqtt_options(p: argparse.ArgumentParser) -> None:
    """The telemetry options shared by ``play`` and ``match``."""
    g = p.add_argument_group("telemetry (MQTT; topics pokerbot/<name>/status|hand|score)")
    g.add_argument("--mqtt", metavar="HOST[:PORT]", help="publish status, hands and score to this broker")
    g.add_argument("--mqtt-user", metavar="USER", help="broker user name")
    g.add_argument("--mqtt-password", metavar="PASSWORD", help="broker password")
    g.add_argument("--mqtt-tls", action="store_true", help="connect with TLS (default port 8883)")
    g.add_argument("--mqtt-ca", metavar="FILE", help="CA certificate file for TLS")
    g.add_argument("--mqtt-insecure", action="store_true", help="do not verify the broker's certificate")


def mqtt_config(args: argparse.Namespace) -> MqttConfig | None:
    """The broker settings from the command line, or None without ``--mqtt``."""
    if not args.mqtt:
        return None
    return MqttConfig.parse(
        args.mqtt,
        username=args.mqtt_user,
        password=args.mqtt_password,
        tls=args.mqtt_tls or bool(args.mqtt_ca),
        ca_file=args.mqtt_ca,
        tls_insecure=args.mqtt_insecure,
    )


def add_resolve_options(p: argparse.ArgumentParser, flag: bool) -> None:
    """The re-solving options of a ``resolve:FILE`` player (``flag``: also ``--resolve``,
    which makes ``--strategy FILE`` re-solve)."""
    if flag:
        p.add_argument("--resolve", action="store_true",
                       help="the strategy re-solves when the opponent leaves its tree, from --resolve-from on "
                            "(default the turn; earlier streets to their end) (the same as resolve:FILE)")
    p.add_argument("--resolve-iterations", type=positive_int, default=200, metavar="N",
                   help="re-solving: Discounted CFR iterations a re-solve runs (default 200; the budget, "
                        "so that a match replays exactly)")
    p.add_argument("--resolve-seconds", type=positive_float, metavar="S",
                   help="re-solving: a seconds cap on top; a re-solve past it plays the blueprint, counted")
    p.add_argument("--resolve-sizes", default="0.5,1", metavar="LIST",
                   help="re-solving: the subgame's raise sizes in pots (default 0.5,1; the blueprint's "
                        "own and all-in are added)")
    p.add_argument("--resolve-at", default="", metavar="STREETS",
                   help="re-solving: also re-solve at the start of these streets (e.g. turn,river)")
    p.add_argument("--resolve-from", default="", metavar="STREET",
                   help="re-solving: the earliest street it re-solves on (default: the one before last, "
                        "the turn in hold'em; preflop re-solves the raise past the cap)")
    p.add_argument("--resolve-max-nodes", type=positive_int, default=10_000, metavar="N",
                   help="re-solving: a subgame to the end of the hand bigger than this stops at its street's "
                        "end instead (default 10000; a full-deck turn has tens of thousands)")
    p.add_argument("--resolve-runouts", type=nonnegative_int, default=100, metavar="N",
                   help="re-solving: a subgame stopped at its street's end shows the pot down over N seeded "
                        "boards (default 100); 0: the blueprint plays where the rest of the hand does not fit")
    p.add_argument("--resolve-gadget", choices=GADGETS, default="safe",
                   help="re-solving: the gadget's alternatives: 'safe' the opponent's best-response values "
                        "against what the re-solve replaces (default), 'estimated' its values playing on as the "
                        "blueprint or the last solution (no guarantee), 'none' its blueprint range trusted")


def resolve_spec(args: argparse.Namespace) -> ResolveSpec:
    """The ``--resolve-*`` flags as a :class:`agent.players.ResolveSpec` (raises
    :class:`UserError` with one line)."""
    from ..players import ResolveSpec

    try:
        return ResolveSpec.parse(args.resolve_iterations, args.resolve_seconds, args.resolve_sizes, args.resolve_at,
                                 args.resolve_from, args.resolve_max_nodes, args.resolve_runouts, args.resolve_gadget)
    except ValueError as exc:
        raise UserError(str(exc)) from None
