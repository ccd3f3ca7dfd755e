"""``--tables`` for the commands that open strategy files: where the card abstraction's
bucket tables come from (:func:`solver.play.player.attach_tables`).

A full-deck strategy file carries its card abstraction as a model; computing a flop
bucket from the model takes milliseconds, so the evaluations that bucket every hand at
every decision use tables: built once from the file's model by the same stages as
``pokerbot abstract`` and cached by model hash (:mod:`abstraction.table_cache`). The
players of ``play``, ``match`` and ``eval`` take the value in their spec
(:class:`agent.players.PlayerSpec`); ``inspect`` opens its file with
:func:`open_with_tables`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from solver.play.player import Tables, open_playable

from ..players import PlayerSpecError, TableBars, parse_tables
from .options import UserError

if TYPE_CHECKING:  # the format is imported where a file is opened (see agent.players)
    from poker.game import Game
    from solver.strategy_io import StrategyFile

__all__ = ["add_tables_option", "open_with_tables", "tables_mode"]


def add_tables_option(p: argparse.ArgumentParser, default: str) -> None:
    """Add ``--tables DIR|auto|cached|none`` to ``p`` with ``default``."""
    p.add_argument(
        "--tables",
        default=default,
        metavar="DIR|auto|cached|none",
        help="bucket tables of a card abstraction: a directory built by 'pokerbot abstract' "
        "(used if its model is the file's), 'auto' (the per-user cache of tables built "
        "from the file's model; built there first, once, where the model needs them: the "
        "full deck takes 3 to 8 minutes), 'cached' (the cache if the tables are there), "
        f"'none' (compute every bucket from the model) (default {default})",
    )


def tables_mode(value: str | None) -> Tables:
    """The tables of a ``--tables`` value (:func:`agent.players.parse_tables`); a
    directory that is not a card abstraction is a :class:`UserError`."""
    try:
        return parse_tables(value)
    except PlayerSpecError as exc:
        raise UserError(str(exc)) from None


def open_with_tables(
    path: str | Path, tables: str | None, *, game: Game | None = None, quiet: bool = False
) -> StrategyFile:
    """Open the strategy file ``path`` with ``--tables`` value ``tables`` (for looking into
    it; players are opened by :func:`agent.players.open_for_play`); errors (a bad file, a
    table build that cannot run) become one line."""
    from solver.strategy_io import StrategyFileError

    mode = tables_mode(tables)
    bars = TableBars(str(path), enabled=not quiet)
    try:
        return open_playable(path, game=game, tables=mode, progress=bars)
    except (StrategyFileError, ValueError) as exc:
        raise UserError(str(exc)) from None
    finally:
        bars.close()
