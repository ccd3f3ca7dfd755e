"""The ``pokerbot`` command line: one entry point, one subcommand per pipeline stage.

Each subcommand lives in ``agent/commands/<name>.py`` and provides ``register(subparsers)``,
which adds its parser and sets ``func`` to a function ``(args) -> int`` (the exit status).
Errors a user can cause are reported as one line on stderr with a non-zero status.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import signal
import sys
from collections.abc import Sequence
from contextlib import nullcontext

from poker._stop import signals_stop_kernels

from .commands.options import UserError

# Subcommands in the order ``--help`` lists them; each must exist (a missing one is a bug
# of the installation, reported as such, never skipped).
COMMANDS = ("abstract", "tree", "train", "eval", "dealer", "play", "match", "inspect", "game", "web")

# Commands that run long compiled kernels: there SIGINT and SIGTERM stop every kernel
# under way (poker._stop) and end the command with one line and status 130 or 143. The
# others keep their own handling (a match stops its children; a player dies with its
# match; the web server ends gracefully).
_KERNEL_COMMANDS = frozenset({"abstract", "tree", "train", "eval", "inspect"})


class MissingCommandError(ImportError):
    """A subcommand listed in :data:`COMMANDS` whose module cannot be found."""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The top-level parser with every subcommand, or with the one named ``only``.

    Parsing a subcommand's arguments needs its own parser alone, and importing every
    command module would load what the others need (numba, the solver): a process
    started as ``pokerbot play`` or ``pokerbot dealer`` for a match would spend most of
    its start-up on that."""
    parser = argparse.ArgumentParser(
        prog="pokerbot",
        description="Heads-up poker bot: ACPC rules, card abstraction, CFR training, ACPC play.",
        epilog="Run 'pokerbot COMMAND --help' for a command's options and examples.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMANDS if only is None else (only,):
        try:
            module = importlib.import_module(f"agent.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"agent.commands.{name}":
                raise MissingCommandError(
                    f"pokerbot: the '{name}' command's module agent/commands/{name}.py is "
                    "missing; the installation is incomplete"
                ) from None
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args_list = sys.argv[1:] if argv is None else list(argv)
    # The command is the first argument when there is one (no top-level option takes a value).
    only = args_list[0] if args_list and args_list[0] in COMMANDS else None
    try:
        parser = build_parser(only)
    except MissingCommandError as exc:
        print(exc, file=sys.stderr)
        return 1
    args = parser.parse_args(args_list)
    # whether this command owns the process (the command line's, not a call from Python):
    # a command may then hand its work to a child process it watches (train --cluster)
    args.own_process = argv is None
    stops = signals_stop_kernels() if args.command in _KERNEL_COMMANDS else nullcontext()
    try:
        with stops:
            return int(args.func(args) or 0)
    except KeyboardInterrupt as exc:
        signum = int(getattr(exc, "signum", signal.SIGINT))
        print(f"pokerbot {args.command}: interrupted ({signal.Signals(signum).name})", file=sys.stderr)
        if argv is None:  # the process's own command line: it ends now
            # exit at once: the collection at interpreter exit frees numba's compiled code
            # object by object, about a second after a walk; an interrupted command keeps nothing
            gc.freeze()
        return 128 + signum  # 130 for SIGINT, 143 for SIGTERM, as a shell reports them
    except (UserError, ValueError, OSError) as exc:
        # Rule and input errors (GameError, IllegalActionError, ...) are ValueErrors whose
        # message already names the file, line or rule.
        print(f"pokerbot {args.command}: error: {exc}", file=sys.stderr)
        return 2

