"""Who plays a seat: a player spec, parsed once from the command line and opened once.

A player of ``pokerbot play``, ``match`` and ``eval`` is a reference bot by name (the
registry :data:`agent.bots.BOTS`) or a strategy file, ``strategy:FILE``, with its
options: the purification threshold, where its bucket tables come from (``--tables
DIR|auto|cached|none``) and the action translation; ``resolve:FILE`` is the same file
played by the re-solving player (:mod:`solver.resolve.player`), with the re-solving
options (:class:`ResolveSpec`: ``--resolve-iterations``, ``--resolve-seconds``,
``--resolve-sizes``, ``--resolve-at``). :meth:`PlayerSpec.parse` is the one
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
from typing import TYPE_CHECKING

from abstraction.translation import MAPPINGS
from poker.game import Game
from solver.resolve import GADGETS
from solver.play.player import TABLE_MODES, TABLES_AUTO, TABLES_CACHED, Tables, open_playable

from .bots import BOTS, Bot, make_bot
from .progress import StageBars

if TYPE_CHECKING:  # the solver is imported when a re-solving player is made, not at start-up
    from solver.resolve.player import ResolveOptions

__all__ = [
    "DEFAULT_MAPPING",
    "STRATEGY_PREFIX",
    "PlayerSpec",
    "PlayerSpecError",
    "RESOLVE_PREFIX",
    "ResolveSpec",
    "TableBars",
    "open_for_play",
    "parse_tables",
]

#: Prefix of a player spec that plays a strategy file: ``strategy:FILE``.
STRATEGY_PREFIX = "strategy:"
#: Prefix of a player spec that plays a strategy file re-solving: ``resolve:FILE``.
RESOLVE_PREFIX = "resolve:"
#: Street names ``--resolve-at`` takes (or street numbers).
STREET_NAMES = ("preflop", "flop", "turn", "river")


@dataclass(frozen=True)
class ResolveSpec:
    """How a ``resolve:`` player re-solves (see :class:`solver.resolve.player.ResolveOptions`):
    ``iterations`` a re-solve runs, a ``seconds`` cap on top (None: none), the subgame's
    raise ``sizes`` (pot fractions; the blueprint's are added), ``at``: the streets at
    whose start it also re-solves (it always does when the opponent leaves the tree),
    ``first``: the earliest street it re-solves on (None: the one before last),
    ``max_nodes``: a subgame to the end of the hand bigger than this stops at its street's
    end, where the pot is shown down over ``runouts`` seeded boards (0: the blueprint
    plays instead), and ``gadget``: what keeps a re-solve safe
    (:data:`solver.resolve.GADGETS`)."""

    iterations: int = 200
    seconds: float | None = None
    sizes: tuple[float, ...] = (0.5, 1.0)
    at: tuple[int, ...] = ()
    first: int | None = None
    max_nodes: int = 10_000
    runouts: int = 100
    gadget: str = "safe"

    @classmethod
    def parse(cls, iterations: int = 200, seconds: float | None = None, sizes: str = "0.5,1",
              at: str = "", first: str = "", max_nodes: int = 10_000, runouts: int = 100,
              gadget: str = "safe") -> ResolveSpec:
        """The spec of the ``--resolve-*`` flags; raises :class:`PlayerSpecError`."""
        if iterations < 1:
            raise PlayerSpecError(f"--resolve-iterations {iterations}: at least 1")
        if seconds is not None and not seconds > 0:
            raise PlayerSpecError(f"--resolve-seconds {seconds:g}: a positive number of seconds")
        try:
            fracs = tuple(sorted({float(x) for x in sizes.split(",") if x.strip()}))
        except ValueError:
            raise PlayerSpecError(f"--resolve-sizes {sizes!r}: pot fractions separated by commas") from None
        if not fracs or any(not x > 0 for x in fracs):
            raise PlayerSpecError(f"--resolve-sizes {sizes!r}: pot fractions above 0")
        streets = [_street(word, f"--resolve-at {at!r}") for word in at.split(",") if word.strip()]
        start = _street(first, f"--resolve-from {first!r}") if first.strip() else None
        if max_nodes < 1:
            raise PlayerSpecError(f"--resolve-max-nodes {max_nodes}: at least 1")
        if runouts < 0:
            raise PlayerSpecError(f"--resolve-runouts {runouts}: 0 or more")
        if gadget not in GADGETS:
            raise PlayerSpecError(f"--resolve-gadget {gadget!r}: one of {', '.join(GADGETS)}")
        return cls(int(iterations), seconds, fracs, tuple(sorted(set(streets))), start, int(max_nodes), int(runouts),
                   gadget)

    def options(self) -> ResolveOptions:
        """The player's :class:`~solver.resolve.player.ResolveOptions`."""
        from solver.resolve.player import ResolveOptions

        return ResolveOptions(iterations=self.iterations, seconds=self.seconds, sizes=self.sizes,
                              street_starts=self.at, first_street=self.first, max_nodes=self.max_nodes,
                              runouts=self.runouts, gadget=self.gadget)

    def args(self) -> list[str]:
        """The spec as ``pokerbot play`` flags."""
        out = [f"--resolve-iterations={self.iterations}", f"--resolve-sizes={','.join(repr(x) for x in self.sizes)}"]
        if self.seconds is not None:
            out.append(f"--resolve-seconds={self.seconds!r}")
        if self.at:
            out.append(f"--resolve-at={','.join(str(x) for x in self.at)}")
        if self.first is not None:
            out.append(f"--resolve-from={self.first}")
        out.append(f"--resolve-max-nodes={self.max_nodes}")
        out.append(f"--resolve-runouts={self.runouts}")
        out.append(f"--resolve-gadget={self.gadget}")
        return out


def _street(word: str, what: str) -> int:
    """A street by name (:data:`STREET_NAMES`) or number."""
    w = word.strip().lower()
    if w in STREET_NAMES:
        return STREET_NAMES.index(w)
    if w.isdigit():
        return int(w)
    raise PlayerSpecError(f"{what}: streets by name ({', '.join(STREET_NAMES)}) or number")
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
    #: re-solving (a ``resolve:`` spec), or None
    resolve: ResolveSpec | None = None

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
        resolve: ResolveSpec | None = None,
    ) -> PlayerSpec:
        """The spec of ``text``: ``strategy:FILE``, or a name in ``bots`` (the registry by
        default; ``eval lbr`` passes its card-blind bots); with ``bare_files`` any other
        text is a file too (``eval``'s arguments and ``play --strategy`` name files).

        The options come from their flags (``--purify``, ``--tables``, ``--mapping``) and
        are checked whoever plays. ``resolve:FILE`` re-solves with ``resolve`` (default
        :class:`ResolveSpec`'s defaults); a bare file re-solves when ``resolve`` is given.
        The file is checked to be readable, not opened. Raises :class:`PlayerSpecError`
        with one line.
        """
        if not 0.0 <= purify < 1.0:
            raise PlayerSpecError(f"--purify {purify:g}: the threshold must be in [0, 1)")
        if mapping not in MAPPINGS:
            raise PlayerSpecError(f"--mapping {mapping}: choose one of {', '.join(MAPPINGS)}")
        where = parse_tables(tables)
        resolving = None
        if text.startswith(RESOLVE_PREFIX):
            path = text[len(RESOLVE_PREFIX):]
            if not path:
                raise PlayerSpecError("resolve: needs a file, as in resolve:FILE")
            resolving = resolve or ResolveSpec()
        elif text.startswith(STRATEGY_PREFIX):
            path = text[len(STRATEGY_PREFIX):]
            if not path:
                raise PlayerSpecError("strategy: needs a file, as in strategy:FILE")
        elif text in bots:
            return cls(bot=text)
        elif bare_files:
            path = text
            resolving = resolve
            if bots and not Path(path).exists():
                raise PlayerSpecError(f"{text!r} is neither a bot ({', '.join(bots)}) nor a strategy file")
        else:
            raise PlayerSpecError(
                f"unknown bot {text!r}; choose one of {', '.join(sorted(bots))} or {STRATEGY_PREFIX}FILE")
        _check_readable(Path(path))
        return cls(strategy=Path(path), purify=float(purify), tables=where, mapping=mapping, resolve=resolving)

    @property
    def is_strategy(self) -> bool:
        """True for a strategy file, False for a bot."""
        return self.strategy is not None

    @property
    def text(self) -> str:
        """The spec as a player is named on the command line: the bot, ``strategy:FILE``
        or ``resolve:FILE``."""
        if self.strategy is None:
            return str(self.bot)
        return f"{RESOLVE_PREFIX if self.resolve is not None else STRATEGY_PREFIX}{self.strategy}"

    @property
    def name(self) -> str:
        """A short name: the bot's, or the file's without its suffix (``+resolve`` for a
        re-solving player)."""
        if self.strategy is None:
            return str(self.bot)
        return self.strategy.stem + ("+resolve" if self.resolve is not None else "")

    @property
    def log_name(self) -> str:
        """:attr:`name` as one word of a dealer's log (no ``|``, ``:`` or space), or ''."""
        return self.name.replace("|", "_").replace(":", "_").replace(" ", "_")

    def play_args(self) -> list[str]:
        """The spec as ``pokerbot play`` flags: ``--bot NAME``, or ``--strategy FILE`` with
        every option (so the seat plays what the spec says, whatever the defaults); as
        ``--flag=value``, so a file name starting with ``-`` stays a value."""
        if self.strategy is None:
            return [f"--bot={self.bot}"]
        args = [f"--strategy={self.strategy}", f"--purify={self.purify!r}", f"--mapping={self.mapping}",
                f"--tables={_tables_text(self.tables)}"]
        if self.resolve is not None:
            args += ["--resolve", *self.resolve.args()]
        return args

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
                  quiet: bool = False, deal_period: int | None = None) -> Bot:
    """What plays ``spec``: a new bot (seeded by ``seed``), or the strategy player of the
    file (:class:`StrategyPlayer`, keyed by ``seed``, default 0, and in a duplicate match
    by the hand's number within its pass of ``deal_period`` hands; bots ignore it) with
    the file opened once and its bucket tables attached (a build, where ``"auto"`` needs
    one, shows progress bars on stderr unless ``quiet``).

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
    options = spec.resolve.options() if spec.resolve is not None else None
    return StrategyPlayer(sf, seed=seed or 0, mapping=spec.mapping, purify=spec.purify, resolve=options,
                          deal_period=deal_period)
