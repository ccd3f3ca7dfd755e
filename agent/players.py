"""Who plays a seat: a player spec, parsed once from the command line and opened once.

A player of ``pokerbot play``, ``match`` and ``eval`` is a reference bot by name (the
registry :data:`agent.bots.BOTS`) or a strategy file, ``strategy:FILE``, with its
options: the purification threshold, where its bucket tables come from (``--tables
DIR|auto|cached|none``) and the action translation. :meth:`PlayerSpec.parse` is the one
place that reads that text (and the only one that knows the ``strategy:`` prefix);
a bad spec is one line (:class:`PlayerSpecError`). :func:`open_for_play` turns a spec
into what plays: the bot, or a :class:`agent.strategy_player.StrategyPlayer` whose file
is opened once, its tables attached; a command keeps what it opened and passes it on
(``pokerbot match`` gives the opened player's policy to AIVAT).

``pokerbot match`` starts one ``pokerbot play`` per seat; :meth:`PlayerSpec.play_args`
is the spec on that process's command line (``--bot NAME``, or ``--strategy FILE
--purify T --mapping M --tables ...``), which its :meth:`PlayerSpec.parse` reads back.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Collection
from dataclasses import dataclass, replace
from pathlib import Path

from abstraction.translation import MAPPINGS
from poker.game import Game
from solver.play.player import TABLE_MODES, TABLES_AUTO, TABLES_CACHED, Tables, open_playable

from .bots import BOTS, Bot, make_bot
from .progress import StageBars

__all__ = [
    "DEFAULT_MAPPING",
    "STRATEGY_PREFIX",
    "PlayerSpec",
    "PlayerSpecError",
    "TableBars",
    "open_for_play",
    "parse_tables",
]

#: Prefix of a player spec that plays a strategy file: ``strategy:FILE``.
STRATEGY_PREFIX = "strategy:"
#: The action translation a strategy player uses unless told otherwise.
DEFAULT_MAPPING = MAPPINGS[0]


class PlayerSpecError(ValueError):
    """A player spec that cannot be played: an unknown bot, a missing or unreadable file,
    a bad option. The message is one line."""


def parse_tables(text: str | None) -> Tables:
    """The bucket tables of a ``--tables`` value: None for ``none`` (or no value), the
    cache modes as they are, else a directory, which must hold a card abstraction
    (``meta.json``); raises :class:`PlayerSpecError`."""
    if text is None or text == "none":
        return None
    if text in TABLE_MODES:
        return text
    d = Path(text)
    if not (d / "meta.json").is_file():
        raise PlayerSpecError(f"--tables {text}: no meta.json, not a card abstraction directory")
    return d


def _tables_text(tables: Tables) -> str:
    return "none" if tables is None else str(tables)


def _check_readable(path: Path) -> None:
    """One line if ``path`` is not a file this process can read (checked without opening it)."""
    try:
        st = path.stat()
    except OSError as exc:
        raise PlayerSpecError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(st.st_mode):
        raise PlayerSpecError(f"{path}: cannot read (Is a directory)")
    if not os.access(path, os.R_OK):
        raise PlayerSpecError(f"{path}: cannot read (Permission denied)")


@dataclass(frozen=True)
class PlayerSpec:
    """One seat's player: ``bot`` (a name) or ``strategy`` (a file) with its options.

    ``purify``: drop actions below this probability and renormalize (0: none);
    ``tables``: where the bucket tables come from (:func:`solver.play.player.attach_tables`:
    None, ``"auto"``, ``"cached"`` or a directory); ``mapping``: the action translation
    (:data:`abstraction.translation.MAPPINGS`). A bot's spec keeps the defaults. Later
    options (re-solving, say) are more fields here, read by :meth:`parse` and written by
    :meth:`play_args`. Build one with :meth:`parse`.
    """

    bot: str | None = None
    strategy: Path | None = None
    purify: float = 0.0
    tables: Tables = None
    mapping: str = DEFAULT_MAPPING

    @classmethod
    def parse(
        cls,
        text: str,
        *,
        purify: float = 0.0,
        tables: str | None = None,
        mapping: str = DEFAULT_MAPPING,
        bots: Collection[str] = BOTS,
        bare_files: bool = False,
    ) -> PlayerSpec:
        """The spec of ``text``: ``strategy:FILE``, or a name in ``bots`` (the registry by
        default; ``eval lbr`` passes its card-blind bots); with ``bare_files`` any other
        text is a file too (``eval``'s arguments and ``play --strategy`` name files).

        The options come from their flags (``--purify``, ``--tables``, ``--mapping``) and
        are checked whoever plays. The file is checked to be readable, not opened.
        Raises :class:`PlayerSpecError` with one line.
        """
        if not 0.0 <= purify < 1.0:
            raise PlayerSpecError(f"--purify {purify:g}: the threshold must be in [0, 1)")
        if mapping not in MAPPINGS:
            raise PlayerSpecError(f"--mapping {mapping}: choose one of {', '.join(MAPPINGS)}")
        where = parse_tables(tables)
        if text.startswith(STRATEGY_PREFIX):
            path = text[len(STRATEGY_PREFIX):]
            if not path:
                raise PlayerSpecError("strategy: needs a file, as in strategy:FILE")
        elif text in bots:
            return cls(bot=text)
        elif bare_files:
            path = text
            if bots and not Path(path).exists():
                raise PlayerSpecError(f"{text!r} is neither a bot ({', '.join(bots)}) nor a strategy file")
        else:
            raise PlayerSpecError(
                f"unknown bot {text!r}; choose one of {', '.join(sorted(bots))} or {STRATEGY_PREFIX}FILE")
        _check_readable(Path(path))
        return cls(strategy=Path(path), purify=float(purify), tables=where, mapping=mapping)

    @property
    def is_strategy(self) -> bool:
        """True for a strategy file, False for a bot."""
        return self.strategy is not None

    @property
    def text(self) -> str:
        """The spec as a player is named on the command line: the bot, or ``strategy:FILE``."""
        return f"{STRATEGY_PREFIX}{self.strategy}" if self.strategy is not None else str(self.bot)

    @property
    def name(self) -> str:
        """A short name: the bot's, or the file's without its suffix."""
        return self.strategy.stem if self.strategy is not None else str(self.bot)

    def play_args(self) -> list[str]:
        """The spec as ``pokerbot play`` flags: ``--bot NAME``, or ``--strategy FILE`` with
        every option (so the seat plays what the spec says, whatever the defaults); as
        ``--flag=value``, so a file name starting with ``-`` stays a value."""
        if self.strategy is None:
            return [f"--bot={self.bot}"]
        return [f"--strategy={self.strategy}", f"--purify={self.purify!r}", f"--mapping={self.mapping}",
                f"--tables={_tables_text(self.tables)}"]

    def cached(self) -> PlayerSpec:
        """The spec with ``"auto"`` tables made ``"cached"``: for a process started after
        the tables were built (``pokerbot match`` builds them once, before the seats)."""
        return replace(self, tables=TABLES_CACHED) if self.tables == TABLES_AUTO else self


class TableBars(StageBars):
    """Progress bars of a bucket-table build (:func:`solver.play.player.attach_tables`),
    with one line first saying what is being built."""

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


def open_for_play(spec: PlayerSpec, game: Game | None = None, *, seed: int | None = None,
                  quiet: bool = False) -> Bot:
    """What plays ``spec``: a new bot (seeded by ``seed``), or the strategy player of the
    file (:class:`StrategyPlayer`, keyed by ``seed``, default 0) with the file opened once
    and its bucket tables attached (a build, where ``"auto"`` needs one, shows progress
    bars on stderr unless ``quiet``).

    ``game``: a strategy file for another game is refused; None takes the file's own
    (``player.strategy.game``). Raises ``ValueError`` with one line:
    :class:`agent.bots.UnknownBotError`, :class:`solver.strategy_io.StrategyFileError`,
    or a table build that cannot run.
    """
    if spec.strategy is None:
        return make_bot(str(spec.bot), seed)
    # Imported here: a bot's process never loads the solver's policy and kernels.
    from .strategy_player import StrategyPlayer

    bars = TableBars(str(spec.strategy), enabled=not quiet)
    try:
        sf = open_playable(spec.strategy, game=game, tables=spec.tables, progress=bars)
    finally:
        bars.close()
    return StrategyPlayer(sf, seed=seed or 0, mapping=spec.mapping, purify=spec.purify)
