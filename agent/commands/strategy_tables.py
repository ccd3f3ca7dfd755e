"""``--tables`` for the commands that open strategy files: where the card abstraction's
bucket tables come from (:func:`solver.strategy_io.open_strategy`'s ``tables``).

A full-deck strategy file carries its card abstraction as a model; computing a flop
bucket from the model takes milliseconds, so the evaluations that bucket every hand at
every decision use tables: built once from the file's model by the same stages as
``pokerbot abstract`` and cached by model hash (:mod:`abstraction.table_cache`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from poker.game import Game
from solver.strategy_io import TABLES_AUTO, TABLES_CACHED, StrategyFile, StrategyFileError, open_strategy

from .options import UserError
from ..progress import StageBars

__all__ = ["add_tables_option", "open_with_tables", "tables_mode"]

TablesArg = str | Path | None


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


def tables_mode(value: str | None) -> TablesArg:
    """The ``tables`` argument of :func:`open_strategy` for a ``--tables`` value; a
    directory that is not a card abstraction is a :class:`UserError`."""
    if value is None or value == "none":
        return None
    if value in (TABLES_AUTO, TABLES_CACHED):
        return value
    d = Path(value)
    if not (d / "meta.json").is_file():
        raise UserError(f"--tables {value}: no meta.json, not a card abstraction directory")
    return d


class _Announced(StageBars):
    """Progress bars of a table build, with one line first saying what is being built."""

    def __init__(self, source: str, enabled: bool) -> None:
        super().__init__(enabled)
        self.source = source
        self.said = False

    def __call__(self, stage: str, done: float, total: float) -> None:
        if not self.said:
            self.said = True
            print(
                f"building the bucket tables of {self.source}'s card abstraction from its model "
                "(once; cached for later runs)",
                file=sys.stderr,
                flush=True,
            )
        super().__call__(stage, done, total)


def open_with_tables(
    path: str | Path, tables: str | None, *, game: Game | None = None, quiet: bool = False
) -> StrategyFile:
    """Open the strategy file ``path`` with ``--tables`` value ``tables``; errors (a bad
    file, a table build that cannot run) become one line."""
    mode = tables_mode(tables)
    bars = _Announced(str(path), enabled=not quiet)
    try:
        return open_strategy(path, game=game, tables=mode, progress=bars)
    except (StrategyFileError, ValueError) as exc:
        raise UserError(str(exc)) from None
    finally:
        bars.close()
