"""The reference dealer's hand log (``<matchName>.log``, SPEC §8.1): write and read it.

A log is one or more header blocks (a resumed match appends a second one), one STATE
line per finished hand and, if the match finished, one SCORE line::

    # name/game/hands/seed <matchName> <gameDefFile> <numHands> <seed>
    #--t_response <ms>
    #--t_hand <ms>
    #--t_per_hand <ms>
    STATE:<hand>:<betting>:<hole_0>|...|<hole_N-1><board r0>/.../<board r_end>:<v_0>|...:<name_0>|...
    SCORE:<total_seat1>|...|<total_seatN>:<name_seat1>|...|<name_seatN>

STATE values and names are in **position** order and every hole card is shown; the board
is shown through the round the hand ended in. SCORE is in **seat** order. Numbers are
printed with ``%.6f``, then trailing zeros and a trailing ``.`` are cut, and ``-0`` is
printed ``0``. Without ``-f`` seat ``s`` plays hand ``h`` at position ``(s - h) mod N``.

The same cards field, with the visibility rules of SPEC §2.3, is the last field of a
MATCHSTATE message; :func:`format_cards_field` writes both.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from .cards import format_cards, parse_cards
from .state import State


class LogFormatError(ValueError):
    """A log line that does not have the reference dealer's format; names the line."""


def format_value(value: float) -> str:
    """A chip value as the dealer prints it: ``%.6f``, trailing zeros and ``.`` cut, no ``-0``.

    >>> [format_value(v) for v in (20000.0, -50.0, -0.0, 12.5, 1 / 3)]
    ['20000', '-50', '0', '12.5', '0.333333']
    """
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def format_cards_field(state: State, viewer: int | None = None) -> str:
    """The cards field of a state: holes by position joined by ``|``, then the board.

    ``viewer=None`` shows every hole card (the log). ``viewer=p`` applies MATCHSTATE
    visibility (SPEC §2.3): p's own cards always; other players' cards only in the final
    state of a showdown, and then only those who did not fold.
    """
    deal = state.deal
    if deal is None:
        raise ValueError("this state has no deal, so it has no cards field")
    if viewer is None:
        holes = [format_cards(h) for h in deal.holes]
    else:
        show_all = state.is_showdown
        holes = [
            format_cards(h) if p == viewer or (show_all and not state.folded[p]) else ""
            for p, h in enumerate(deal.holes)
        ]
    boards = "/".join(format_cards(b) for b in deal.boards[: state.round + 1])
    return "|".join(holes) + boards


def format_state_line(
    hand_no: int, state: State, names: Sequence[str], *, values: Sequence[float] | None = None
) -> str:
    """The STATE line for a finished hand (no line end); ``names`` are in position order.

    ``values`` are ``state.values()`` if the caller has them already (the dealer does: a
    showdown's values cost two hand evaluations).
    """
    if not state.is_terminal:
        raise ValueError(
            f"hand {hand_no} is not over (betting {state.betting_string()!r}); "
            "only finished hands are logged"
        )
    if len(names) != state.game.num_players:
        raise ValueError(f"{len(names)} names for {state.game.num_players} players")
    if values is None:
        values = state.values()
    elif len(values) != state.game.num_players:
        raise ValueError(f"{len(values)} values for {state.game.num_players} players")
    value_text = "|".join([format_value(v) for v in values])
    return (
        f"STATE:{hand_no}:{state.betting_string()}:{format_cards_field(state)}:"
        f"{value_text}:{'|'.join(names)}"
    )


def format_score_line(totals: Sequence[float], names: Sequence[str]) -> str:
    """The SCORE line (no line end): per-seat totals and names, in seat order."""
    if len(totals) != len(names):
        raise ValueError(f"{len(totals)} totals for {len(names)} names")
    return f"SCORE:{'|'.join(format_value(v) for v in totals)}:{'|'.join(names)}"


def format_header(
    match_name: str,
    game_file: str,
    num_hands: int,
    seed: int,
    t_response: int = 600000,
    t_hand: int = 600000,
    t_per_hand: int = 7000,
) -> list[str]:
    """The four header lines (no line ends); the defaults are the dealer's compiled ones."""
    return [
        f"# name/game/hands/seed {match_name} {game_file} {num_hands} {seed}",
        f"#--t_response {t_response}",
        f"#--t_hand {t_hand}",
        f"#--t_per_hand {t_per_hand}",
    ]


def seat_of_position(position: int, hand_no: int, num_players: int, fixed: bool = False) -> int:
    """The seat (0-based) holding ``position`` in hand ``hand_no``: ``(position + hand) mod N``."""
    return position if fixed else (position + hand_no) % num_players


def names_by_position(seat_names: Sequence[str], hand_no: int, fixed: bool = False) -> list[str]:
    """Player names in position order for hand ``hand_no`` (seat names are in seat order)."""
    n = len(seat_names)
    return [seat_names[seat_of_position(p, hand_no, n, fixed)] for p in range(n)]


# ---------------------------------------------------------------------- reading


@dataclass(frozen=True)
class LogHeader:
    """One header block: the dealer's command-line match name, game file, hands and seed."""

    match_name: str
    game_file: str
    num_hands: int
    seed: int
    #: ``#--name value`` lines, e.g. ``{"t_response": 600000}``.
    options: dict[str, int] = field(default_factory=dict)

    @property
    def game_name(self) -> str:
        """The game file's name without folders and ``.game``: the shipped game's name."""
        base = re.split(r"[\\/]", self.game_file)[-1]
        return base.removesuffix(".game")


@dataclass(frozen=True)
class LogHand:
    """One STATE line, split into its fields (cards parsed, values as printed and as floats)."""

    hand_no: int
    betting: str
    holes: tuple[tuple[int, ...], ...]
    boards: tuple[tuple[int, ...], ...]
    value_texts: tuple[str, ...]
    values: tuple[float, ...]
    names: tuple[str, ...]
    line: str
    #: Index into :attr:`MatchLog.headers` of the block this hand belongs to.
    block: int = 0


@dataclass(frozen=True)
class LogScore:
    """The SCORE line: totals and names in seat order."""

    value_texts: tuple[str, ...]
    values: tuple[float, ...]
    names: tuple[str, ...]
    line: str


@dataclass(frozen=True)
class MatchLog:
    """A parsed log: header blocks, hands in file order, and the SCORE line if any."""

    headers: tuple[LogHeader, ...]
    hands: tuple[LogHand, ...]
    score: LogScore | None


_HEADER_RE = re.compile(r"# name/game/hands/seed (\S+) (\S+) (\d+) (\d+)")
_OPTION_RE = re.compile(r"#--(\w+) (-?\d+)")


def parse_cards_field(
    text: str, num_players: int
) -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]:
    """Split a cards field into hole groups (by position) and board groups (by round shown).

    The board of round 0 follows the last hole group directly (``Ks|As|Js``,
    ``7d3d|2hAc/5sKs7s``).
    """
    groups = text.split("|")
    if len(groups) != num_players:
        raise ValueError(f"cards {text!r} have {len(groups)} hole groups, expected {num_players}")
    last, *boards = groups[-1].split("/")
    holes = groups[:-1]
    # The last group holds the last player's hole cards then round 0's board; the hole
    # groups before it tell how many hole cards a group has.
    width = len(holes[0]) if holes else len(last)
    holes.append(last[:width])
    boards.insert(0, last[width:])
    return (
        tuple(tuple(parse_cards(h)) for h in holes),
        tuple(tuple(parse_cards(b)) for b in boards),
    )


def parse_log(text: str) -> MatchLog:
    """Read a hand log. Raises :class:`LogFormatError` naming the line that does not parse."""
    headers: list[LogHeader] = []
    hands: list[LogHand] = []
    score: LogScore | None = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line:
            continue
        try:
            if line.startswith("# name/game/hands/seed "):
                m = _HEADER_RE.fullmatch(line)
                if m is None:
                    raise ValueError(
                        "header line is not '# name/game/hands/seed NAME GAME HANDS SEED'"
                    )
                headers.append(
                    LogHeader(m.group(1), m.group(2), int(m.group(3)), int(m.group(4)), {})
                )
            elif line.startswith("#--"):
                m = _OPTION_RE.fullmatch(line)
                if m is None or not headers:
                    raise ValueError("option line outside a header, or not '#--name number'")
                headers[-1].options[m.group(1)] = int(m.group(2))
            elif line.startswith("#"):
                continue
            elif line.startswith("STATE:"):
                hands.append(_parse_state_line(line, max(len(headers) - 1, 0)))
            elif line.startswith("SCORE:"):
                parts = line.split(":")
                if len(parts) != 3:
                    raise ValueError("SCORE line is not 'SCORE:values:names'")
                texts = tuple(parts[1].split("|"))
                names = tuple(parts[2].split("|"))
                if len(texts) != len(names):
                    raise ValueError(f"{len(texts)} totals for {len(names)} names")
                score = LogScore(texts, tuple(float(t) for t in texts), names, line)
            else:
                raise ValueError("not a header, STATE or SCORE line")
        except ValueError as exc:
            raise LogFormatError(f"log line {lineno}: {exc}: {line!r}") from None
    return MatchLog(tuple(headers), tuple(hands), score)


def _parse_state_line(line: str, block: int) -> LogHand:
    parts = line.split(":")
    if len(parts) != 6:
        raise ValueError("STATE line is not 'STATE:hand:betting:cards:values:names'")
    _, hand, betting, cards, values, names = parts
    name_list = tuple(names.split("|"))
    texts = tuple(values.split("|"))
    if len(texts) != len(name_list):
        raise ValueError(f"{len(texts)} values for {len(name_list)} names")
    holes, boards = parse_cards_field(cards, len(name_list))
    return LogHand(
        hand_no=int(hand),
        betting=betting,
        holes=holes,
        boards=boards,
        value_texts=texts,
        values=tuple(float(t) for t in texts),
        names=name_list,
        line=line,
        block=block,
    )
