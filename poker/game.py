"""Game definitions: reading and writing ACPC ``.game`` files.

The reader follows the reference dealer's ``readGame`` (SPEC §3): lines whose first
character is ``#`` or a newline are skipped; keys are matched case-insensitively as a
prefix at column 0, in a fixed order; values are read right after the key's own length,
each preceded by any run of white space and ``=``; a line that matches no key is ignored;
``end gamedef`` stops reading. Unlike the reference dealer, every failure raises one
:class:`GameError` that names the file and, where there is one, the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from importlib import resources
from pathlib import Path

from .cards import NUM_RANKS, NUM_SUITS

MAX_PLAYERS = 10
MAX_ROUNDS = 4
MAX_HOLE_CARDS = 3
INT32_MAX = 2**31 - 1
UINT8_MAX = 255
# The reference dealer fills only this many stack slots when no stack line is given.
_DEFAULT_STACK_SLOTS = 4


class GameError(ValueError):
    """A game definition that cannot define a game; the message names file and line."""


class Betting(Enum):
    """Betting structure of a game."""

    LIMIT = "limit"
    NOLIMIT = "nolimit"


@dataclass(frozen=True)
class Game:
    """An ACPC game definition (all per-position and per-round lists are tuples).

    ``first_player`` is 0-based here (the file is 1-based). ``stack`` holds
    ``INT32_MAX`` for the "unlimited" default of limit games.
    """

    betting: Betting
    num_players: int
    num_rounds: int
    stack: tuple[int, ...]
    blind: tuple[int, ...]
    raise_size: tuple[int, ...]
    first_player: tuple[int, ...]
    max_raises: tuple[int, ...]
    num_suits: int
    num_ranks: int
    num_hole_cards: int
    num_board_cards: tuple[int, ...]
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        _validate(self, "<Game>")

    @property
    def is_limit(self) -> bool:
        """True for fixed-limit betting."""
        return self.betting is Betting.LIMIT

    @property
    def big_blind(self) -> int:
        """The largest blind: the unit of mbb/g."""
        return max(self.blind)

    @property
    def deck_size(self) -> int:
        """Cards in the (possibly reduced) deck."""
        return self.num_ranks * self.num_suits

    @property
    def total_board_cards(self) -> int:
        """Board cards dealt over all rounds."""
        return sum(self.num_board_cards)

    @property
    def cards_per_hand(self) -> int:
        """Cards drawn for one hand: every player's hole cards and the whole board."""
        return self.num_players * self.num_hole_cards + self.total_board_cards

    def board_cards_through(self, round_: int) -> int:
        """Board cards visible once ``round_`` (0-based) has been reached."""
        return sum(self.num_board_cards[: round_ + 1])

    def to_text(self) -> str:
        """The definition in ACPC's ``.game`` syntax; :func:`parse_game` reads it back equal."""
        n, r = self.num_players, self.num_rounds
        lines = ["GAMEDEF", self.betting.value, f"numPlayers = {n}", f"numRounds = {r}"]
        if any(s != INT32_MAX for s in self.stack) or n > _DEFAULT_STACK_SLOTS:
            lines.append("stack = " + " ".join(map(str, self.stack)))
        lines.append("blind = " + " ".join(map(str, self.blind)))
        if self.is_limit:
            lines.append("raiseSize = " + " ".join(map(str, self.raise_size)))
        lines.append("firstPlayer = " + " ".join(str(p + 1) for p in self.first_player))
        if any(m != UINT8_MAX for m in self.max_raises):
            lines.append("maxRaises = " + " ".join(map(str, self.max_raises)))
        lines += [
            f"numSuits = {self.num_suits}",
            f"numRanks = {self.num_ranks}",
            f"numHoleCards = {self.num_hole_cards}",
            "numBoardCards = " + " ".join(map(str, self.num_board_cards)),
            "END GAMEDEF",
        ]
        return "\n".join(lines) + "\n"


# Keys in the order the reference dealer tests them; the order matters for prefixes.
_KEYS = (
    "end gamedef",
    "gamedef",
    "stack",
    "blind",
    "raisesize",
    "limit",
    "nolimit",
    "numplayers",
    "numrounds",
    "firstplayer",
    "maxraises",
    "numsuits",
    "numranks",
    "numholecards",
    "numboardcards",
)
# How many numbers each list key reads at most (as the reference dealer does).
_LIST_LIMITS = {
    "stack": MAX_PLAYERS,
    "blind": MAX_PLAYERS,
    "raisesize": MAX_PLAYERS,
    "firstplayer": MAX_ROUNDS,
    "maxraises": MAX_ROUNDS,
    "numboardcards": MAX_ROUNDS,
}
_NUMBER = re.compile(r"[\s=]*([+-]?\d+)")
_DISPLAY = {
    "stack": "stack",
    "blind": "blind",
    "raisesize": "raiseSize",
    "numplayers": "numPlayers",
    "numrounds": "numRounds",
    "firstplayer": "firstPlayer",
    "maxraises": "maxRaises",
    "numsuits": "numSuits",
    "numranks": "numRanks",
    "numholecards": "numHoleCards",
    "numboardcards": "numBoardCards",
}


def _read_numbers(text: str, limit: int) -> list[int]:
    """Numbers after a key: each preceded by white space and ``=``; stop at the first non-number."""
    values: list[int] = []
    pos = 0
    while len(values) < limit:
        m = _NUMBER.match(text, pos)
        if not m:
            break
        values.append(int(m.group(1)))
        pos = m.end()
    return values


def parse_game(text: str, source: str = "<string>", name: str = "") -> Game:
    """Parse the text of an ACPC game definition.

    Raises :class:`GameError` naming ``source`` and the offending line.
    """
    seen: dict[str, tuple[list[int], int]] = {}
    betting = Betting.LIMIT
    for lineno, raw in enumerate(text.splitlines(keepends=True), start=1):
        if raw[:1] in ("#", "\n", ""):
            continue
        low = raw.lower()
        key = next((k for k in _KEYS if low.startswith(k)), None)
        if key is None:
            continue  # unknown lines are ignored, as the reference dealer does
        if key == "end gamedef":
            break
        if key == "gamedef":
            continue
        if key == "limit":
            betting = Betting.LIMIT
            continue
        if key == "nolimit":
            betting = Betting.NOLIMIT
            continue
        values = _read_numbers(raw[len(key) :], _LIST_LIMITS.get(key, 1))
        seen[key] = (values, lineno)
    return _build(betting, seen, source, name)


def _build(betting: Betting, seen: dict[str, tuple[list[int], int]], source: str, name: str) -> Game:
    def where(key: str) -> str:
        return f"{source}:{seen[key][1]}" if key in seen else source

    def scalar(key: str) -> int:
        vals = seen.get(key, ([], 0))[0]
        if not vals:
            raise GameError(f"{where(key)}: {_DISPLAY[key]} is missing or has no value")
        return vals[0]

    def per_round(key: str, count: int, default: int | None) -> tuple[int, ...]:
        vals = seen.get(key, ([], 0))[0]
        if not vals:
            if default is None:
                raise GameError(f"{where(key)}: {_DISPLAY[key]} is missing (need {count} values)")
            return (default,) * count
        if len(vals) < count:
            raise GameError(
                f"{where(key)}: {_DISPLAY[key]} has {len(vals)} values, need {count} (one per round)"
            )
        return tuple(vals[:count])

    num_players = scalar("numplayers")
    if not 2 <= num_players <= MAX_PLAYERS:
        raise GameError(f"{where('numplayers')}: numPlayers {num_players} is not in 2..{MAX_PLAYERS}")
    num_rounds = scalar("numrounds")
    if not 1 <= num_rounds <= MAX_ROUNDS:
        raise GameError(f"{where('numrounds')}: numRounds {num_rounds} is not in 1..{MAX_ROUNDS}")

    # Only a missing stack line means "unlimited"; a stack line with no readable value is an error.
    stack_vals = seen.get("stack", ([], 0))[0]
    if "stack" not in seen:
        if num_players > _DEFAULT_STACK_SLOTS:
            raise GameError(
                f"{source}: a game with {num_players} players needs a stack line "
                f"(the reference dealer's default covers only {_DEFAULT_STACK_SLOTS} positions)"
            )
        stack_vals = [INT32_MAX] * num_players
    if len(stack_vals) < num_players:
        raise GameError(f"{where('stack')}: only {len(stack_vals)} stack sizes, need {num_players}")
    blind_vals = seen.get("blind", ([], 0))[0]
    if len(blind_vals) < num_players:
        raise GameError(f"{where('blind')}: only {len(blind_vals)} blinds, need {num_players}")
    raise_size: tuple[int, ...] = ()
    if betting is Betting.LIMIT:
        raise_size = per_round("raisesize", num_rounds, None)
    first = per_round("firstplayer", num_rounds, 1)
    for r, p in enumerate(first):
        if not 1 <= p <= num_players:
            raise GameError(
                f"{where('firstplayer')}: firstPlayer {p} in round {r + 1} is not in 1..{num_players}"
            )
    try:
        return Game(
            betting=betting,
            num_players=num_players,
            num_rounds=num_rounds,
            stack=tuple(stack_vals[:num_players]),
            blind=tuple(blind_vals[:num_players]),
            raise_size=raise_size,
            first_player=tuple(p - 1 for p in first),
            max_raises=per_round("maxraises", num_rounds, UINT8_MAX),
            num_suits=scalar("numsuits"),
            num_ranks=scalar("numranks"),
            num_hole_cards=scalar("numholecards"),
            num_board_cards=per_round("numboardcards", num_rounds, None),
            name=name,
        )
    except GameError as exc:
        raise GameError(f"{source}: {exc}") from None


def _validate(g: Game, source: str) -> None:
    """Check every rule of SPEC §3.3; raise one GameError naming the first that fails."""
    n, r = g.num_players, g.num_rounds
    checks: list[tuple[bool, str]] = [
        (2 <= n <= MAX_PLAYERS, f"numPlayers {n} is not in 2..{MAX_PLAYERS}"),
        (1 <= r <= MAX_ROUNDS, f"numRounds {r} is not in 1..{MAX_ROUNDS}"),
        (len(g.stack) == n, f"{len(g.stack)} stack sizes for {n} players"),
        (len(g.blind) == n, f"{len(g.blind)} blinds for {n} players"),
        (all(s > 0 for s in g.stack), f"stack sizes {list(g.stack)} must all be positive"),
        (all(b >= 0 for b in g.blind), f"blinds {list(g.blind)} must not be negative"),
        (
            all(b <= s for b, s in zip(g.blind, g.stack)),
            f"a blind is larger than its stack (blinds {list(g.blind)}, stacks {list(g.stack)})",
        ),
        (
            not g.is_limit or (len(g.raise_size) == r and all(x > 0 for x in g.raise_size)),
            f"a limit game needs {r} positive raise sizes, got {list(g.raise_size)}",
        ),
        (
            len(g.first_player) == r and all(0 <= p < n for p in g.first_player),
            f"firstPlayer must give one position in 1..{n} per round",
        ),
        (
            len(g.max_raises) == r and all(0 <= m <= UINT8_MAX for m in g.max_raises),
            f"maxRaises must give one value in 0..{UINT8_MAX} per round",
        ),
        (1 <= g.num_suits <= NUM_SUITS, f"numSuits {g.num_suits} is not in 1..{NUM_SUITS}"),
        (1 <= g.num_ranks <= NUM_RANKS, f"numRanks {g.num_ranks} is not in 1..{NUM_RANKS}"),
        (
            1 <= g.num_hole_cards <= MAX_HOLE_CARDS,
            f"numHoleCards {g.num_hole_cards} is not in 1..{MAX_HOLE_CARDS}",
        ),
        (
            len(g.num_board_cards) == r and all(0 <= b <= UINT8_MAX for b in g.num_board_cards),
            f"numBoardCards must give one count per round, got {list(g.num_board_cards)}",
        ),
    ]
    for ok, message in checks:
        if not ok:
            raise GameError(message)
    needed = n * g.num_hole_cards + sum(g.num_board_cards)
    if needed > g.num_ranks * g.num_suits:
        raise GameError(
            f"{n} x {g.num_hole_cards} hole cards + {sum(g.num_board_cards)} board cards = "
            f"{needed} cards do not fit a deck of {g.num_ranks * g.num_suits}"
        )


def shipped_games() -> list[str]:
    """Names (without ``.game``) of the game definitions shipped in ``poker/games``."""
    root = resources.files("poker") / "games"
    return sorted(p.name[: -len(".game")] for p in root.iterdir() if p.name.endswith(".game"))


def load_game(spec: str | Path) -> Game:
    """Load a game from a path, or by the name of a shipped game (with or without ``.game``)."""
    path = Path(spec)
    if path.is_file():
        return read_game_file(path)
    name = str(spec)
    stem = name[: -len(".game")] if name.endswith(".game") else name
    if "/" not in name and "\\" not in name:
        shipped = resources.files("poker") / "games" / f"{stem}.game"
        if shipped.is_file():
            return parse_game(shipped.read_text(encoding="latin-1"), source=f"{stem}.game", name=stem)
    raise GameError(
        f"unknown game {name!r}: not a readable file, and not one of the shipped games "
        f"({', '.join(shipped_games())})"
    )


def read_game_file(path: str | Path) -> Game:
    """Read a ``.game`` file; the game's name is the file name without ``.game``."""
    p = Path(path)
    try:
        text = p.read_bytes().decode("latin-1")
    except OSError as exc:
        raise GameError(f"{p}: cannot read game file ({exc.strerror})") from None
    stem = p.name[: -len(".game")] if p.name.endswith(".game") else p.name
    return parse_game(text, source=str(p), name=stem)


def write_game_file(game: Game, path: str | Path) -> None:
    """Write ``game`` to ``path`` atomically (temporary file, fsync, rename)."""
    from ._atomic import atomic_write_bytes

    atomic_write_bytes(Path(path), game.to_text().encode("ascii"))
