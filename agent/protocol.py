"""ACPC protocol 2.0.0 without I/O: the MATCHSTATE codec and both ends of a connection.

Nothing here touches a socket, a clock or asyncio (the h11 pattern): bytes go in through
``receive_data`` / ``receive_line``, events and bytes to send come out, and the caller
passes in the time where time matters. :mod:`agent.client` and :mod:`agent.dealer` are
the thin asyncio shells around these objects.

The rules, from SPEC §1-2 and §6-7 (the reference dealer's behaviour):

* A message is ``MATCHSTATE:<position>:<hand>:<betting>:<cards>``; the dealer ends every
  line with CRLF. Blinds never appear in the betting; ``c`` is check or call, ``r`` is
  bet or raise, and a no-limit ``r`` carries the raise-**to** total for the hand. When a
  round ends the next message already carries the ``/`` and the new board cards; an
  all-in jump shows one ``/`` per skipped round.
* ``<cards>`` is N hole groups joined by ``|`` (a group is empty when hidden), then the
  board: round 0's cards right after the last hole group, later rounds after a ``/``.
  A client sees its own cards; others' only in the final state of a showdown.
* Nothing says "your turn": the client works it out from the betting, answers exactly
  those states with ``<state as received>:<action>`` and never answers a finished hand.
  EOF is the normal end of a match.
* The dealer reads at most 4095 bytes per line; a longer line is cut and the rest read as
  a new line. Lines starting with ``#`` or ``;`` are skipped (and not charged time).
* A response is judged in this order: comment? -> charge the time since the state was
  sent and check the limits -> parse the echoed state -> compare it with the current
  state by meaning -> read ``:`` and the action -> repair the action. Unparseable and
  stale lines are ignored with a warning; a bad or illegal action becomes a call (or a
  clamped raise) with a warning; it never ends the match. Timeouts and disconnects do.

Errors say whose fault they were: :class:`RemoteProtocolError` when the peer sent
something the protocol does not allow, :class:`LocalProtocolError` when this side tried
to. After either, a connection object refuses further use.

Speed: a match is a ping-pong of short lines, so every action costs the dealer one
response and two messages, and each client one line; these paths are kept short without
checking less (``tests/test_fast_paths.py`` compares each with the general code):

* the client reads a line incrementally against the previous one: fields that did not
  change are taken over, only the new actions are applied and only new cards (a board, or
  hole cards shown at a showdown) are parsed and checked; a finished hand's cards, read
  and checked here, are not checked again to value it;
* the dealer answers an echoed call without parsing or repairing anything, builds each
  seat's message from per-hand pieces (head, visible cards, board) and the betting it
  keeps, and passes its hand values to the log line instead of ranking the hands twice;
* the event objects made for every line (:class:`MatchState`, :class:`StateMessage`,
  :class:`Send`) are built from checked parts through their slots, skipping the frozen
  dataclass ``__init__``; shared :class:`~poker.state.Action` objects stand for fold,
  call and a limit raise.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from poker.cards import RANKS, SUITS, deck_cards, format_cards
from poker.game import Game
from poker.log import format_header, format_score_line, format_value
from poker.rng import Dealer as CardDealer
from poker.state import (
    MAX_ACTIONS_PER_ROUND,
    Action,
    ActionKind,
    Deal,
    IllegalActionError,
    State,
    _evaluator,
    _showdown_value,
    repair,
)

__all__ = [
    "DEALER_MAX_LINE",
    "NEED_DATA",
    "VERSION_LINE",
    "ClientConnection",
    "DealerMatch",
    "Diagnostic",
    "LineBuffer",
    "LocalProtocolError",
    "LogLine",
    "MatchEnded",
    "MatchOver",
    "MatchState",
    "Output",
    "ProtocolError",
    "RemoteProtocolError",
    "Send",
    "StateMessage",
    "TimeLimits",
    "format_match_state",
    "format_response",
    "hand_values",
    "legalize",
    "parse_action",
    "parse_match_state",
    "parse_response",
    "parse_version",
]

#: What a client sends first (``example_player`` sends it with LF only; either is fine).
VERSION_LINE: Final = b"VERSION:2.0.0\r\n"
#: The reference dealer reads a line through a 4096-byte buffer: 4095 bytes and a NUL.
DEALER_MAX_LINE: Final = 4095
#: Longest dealer line a client accepts. Real ones are < 2 KiB even with 10 players.
CLIENT_MAX_LINE: Final = 64 * 1024


# ---------------------------------------------------------------------------- errors


class ProtocolError(Exception):
    """Something broke the ACPC protocol; the subclass says whose fault it was."""


class LocalProtocolError(ProtocolError):
    """This side tried to do something the protocol does not allow (a bug here)."""


class RemoteProtocolError(ProtocolError):
    """The peer sent something the protocol does not allow."""


# ---------------------------------------------------------------------------- framing


class LineBuffer:
    """Splits a byte stream into lines; the buffer never holds more than one line's worth.

    ``cut_long_lines=True`` reads like the reference dealer: a line is at most
    ``max_line`` bytes including its ``\\n``; a longer one comes out in ``max_line``-byte
    pieces. ``False`` (the client side) raises :class:`RemoteProtocolError` instead.
    Lines come out with their terminator, if they had one; bytes after the last ``\\n``
    wait for more data and are dropped at EOF (an unfinished line is no line).
    """

    __slots__ = ("_buf", "_cut", "_eof", "_max", "_ready", "_scanned")

    def __init__(self, max_line: int, *, cut_long_lines: bool) -> None:
        if max_line < 1:
            raise ValueError(f"max_line must be positive, not {max_line}")
        self._buf = bytearray()
        self._max = max_line
        self._cut = cut_long_lines
        self._scanned = 0  # bytes already searched for b"\n" (no quadratic rescans)
        self._eof = False
        # In a match almost every read is one or two whole lines: kept as they came (last
        # line first), they are handed out without a trip through the buffer, which is
        # empty whenever lines are ready.
        self._ready: list[bytes] = []

    def feed(self, data: bytes) -> None:
        """Add received bytes; ``b""`` means end of file."""
        if not data:
            self._eof = True
            return
        if self._eof:
            raise LocalProtocolError("data fed after end of file")
        buf = self._buf
        if not buf and not self._ready and type(data) is bytes and data[-1:] == b"\n":
            if self.is_one_line(data):
                self._ready.append(data)
                return
            if data.find(b"\n") < len(data) - 1:
                lines = data.split(b"\n")
                lines.pop()  # the empty text after the last line end
                if max(map(len, lines)) < self._max:
                    self._ready = [line + b"\n" for line in reversed(lines)]
                    return
        buf += data

    def is_one_line(self, data: bytes) -> bool:
        """``data`` is exactly one whole line (ending in its only ``\\n``) within the limit."""
        return 0 <= data.find(b"\n") == len(data) - 1 < self._max

    @property
    def at_eof(self) -> bool:
        """End of file was fed (lines already buffered can still be taken)."""
        return self._eof

    @property
    def empty(self) -> bool:
        """Nothing is waiting: no partial line, no line not yet taken, no end of file."""
        return not self._buf and not self._ready and not self._eof

    @property
    def buffered(self) -> int:
        """Bytes waiting (a partial line, or lines not yet taken)."""
        return len(self._buf) + sum(map(len, self._ready))

    def next_line(self) -> bytes | None:
        """The next complete line (with its terminator), or ``None`` if there is none yet."""
        if self._ready:
            return self._ready.pop()
        buf = self._buf
        limit = self._max
        i = buf.find(b"\n", self._scanned, limit)
        if i >= 0:
            line = bytes(buf[: i + 1])
            del buf[: i + 1]
            self._scanned = 0
            return line
        if len(buf) >= limit:
            if not self._cut:
                raise RemoteProtocolError(f"line longer than {limit} bytes without a line end")
            line = bytes(buf[:limit])
            del buf[:limit]
            self._scanned = 0
            return line
        self._scanned = len(buf)
        return None


def _strip_eol(line: bytes) -> bytes:
    if line.endswith(b"\n"):
        line = line[:-1]
        if line.endswith(b"\r"):
            line = line[:-1]
    return line


# ---------------------------------------------------------------------------- codec

_RAISE = ActionKind.RAISE
_CALL = ActionKind.CALL
_FOLD = ActionKind.FOLD
# The dealer's 256-entry action table (SPEC §2.7): every other byte is an invalid action.
_ACTION_LETTERS: Final = {
    "f": _FOLD, "F": _FOLD,
    "c": _CALL, "C": _CALL, "k": _CALL, "K": _CALL,
    "r": _RAISE, "R": _RAISE, "b": _RAISE, "B": _RAISE,
}
# Cards in either case for rank and suit, as the dealer reads them (SPEC §2.2).
_RANK_OF: Final = {**{c: i for i, c in enumerate(RANKS)}, **{c.lower(): i for i, c in enumerate(RANKS)}}
_SUIT_OF: Final = {**{c: i for i, c in enumerate(SUITS)}, **{c.upper(): i for i, c in enumerate(SUITS)}}
_CARD_OF: Final = {r + s: rv * 4 + sv for r, rv in _RANK_OF.items() for s, sv in _SUIT_OF.items()}
_DIGITS: Final = frozenset("0123456789")
_new_object = object.__new__  # with slot setters: frozen dataclasses built without __init__
_CALL_ACTION: Final = Action.call()
# Fold, call and a limit raise carry no amount: one shared (immutable) Action for each.
_SIMPLE_ACTIONS: Final = {_FOLD: Action.fold(), _CALL: _CALL_ACTION, _RAISE: Action(_RAISE)}
_CALL_BYTES: Final = frozenset((b"c", b"C", b"k", b"K"))  # a response's call letters
_AMOUNT_RE: Final = re.compile(r"[0-9]+")
_UINT32_MAX: Final = 2**32 - 1


@dataclass(frozen=True, slots=True)
class MatchState:
    """One MATCHSTATE message: who is looking, which hand, the betting and the visible cards.

    ``state`` carries the betting (and no deal: most cards are hidden). ``holes[p]`` is
    position p's hole cards, ``()`` when not shown; ``boards[r]`` the board cards of round
    r for every round reached. ``text`` is the line exactly as received (without its line
    end), which is what a response must echo; it is empty for a state built here.
    """

    position: int
    hand_number: int
    state: State
    holes: tuple[tuple[int, ...], ...]
    boards: tuple[tuple[int, ...], ...]
    text: str = field(default="", compare=False, repr=False)

    @property
    def game(self) -> Game:
        """The game being played."""
        return self.state.game

    @property
    def hole(self) -> tuple[int, ...]:
        """The receiver's own hole cards."""
        return self.holes[self.position]

    @property
    def board(self) -> tuple[int, ...]:
        """Every board card shown so far, in the order dealt."""
        return tuple(c for b in self.boards for c in b)

    @property
    def is_my_turn(self) -> bool:
        """The receiver must answer this state (the hand is on and it is to act)."""
        return self.state.actor == self.position

    def __str__(self) -> str:
        return format_match_state(self)


def format_match_state(ms: MatchState) -> str:
    """The canonical MATCHSTATE text (no line end), as the reference dealer writes it."""
    holes = "|".join(format_cards(h) for h in ms.holes)
    boards = "/".join(format_cards(b) for b in ms.boards)
    return f"MATCHSTATE:{ms.position}:{ms.hand_number}:{ms.state.betting_string()}:{holes}{boards}"


def format_response(ms: MatchState, action: Action) -> str:
    """A client's answer to ``ms`` (no line end): the state as received, ``:``, the action.

    The echo is ``ms.text`` when ``ms`` came off the wire (the dealer compares by meaning,
    but echoing the exact text is what the protocol asks), else the canonical text.
    """
    return f"{ms.text or format_match_state(ms)}:{action.to_acpc(ms.game.is_limit)}"


(
    _set_ms_position,
    _set_ms_hand_number,
    _set_ms_state,
    _set_ms_holes,
    _set_ms_boards,
    _set_ms_text,
) = (MatchState.__dict__[name].__set__ for name in ("position", "hand_number", "state", "holes", "boards", "text"))


def _match_state(
    position: int,
    hand: int,
    state: State,
    holes: tuple[tuple[int, ...], ...],
    boards: tuple[tuple[int, ...], ...],
    text: str,
) -> MatchState:
    """``MatchState(...)`` from checked parts, without the frozen dataclass's ``__init__``
    (a client makes one per line)."""
    ms = _new_object(MatchState)
    _set_ms_position(ms, position)
    _set_ms_hand_number(ms, hand)
    _set_ms_state(ms, state)
    _set_ms_holes(ms, holes)
    _set_ms_boards(ms, boards)
    _set_ms_text(ms, text)
    return ms


def _decode(line: str | bytes) -> str:
    if isinstance(line, bytes):
        try:
            return line.decode("ascii")
        except UnicodeDecodeError:
            raise RemoteProtocolError(f"line {line[:80]!r} is not ASCII") from None
    return line


def _uint(text: str, what: str, line: str) -> int:
    if not (text.isdigit() and text.isascii() and len(text) <= 10) or int(text) > _UINT32_MAX:
        raise RemoteProtocolError(f"{what} {text!r} is not a decimal number in 0..{_UINT32_MAX}: {line!r}")
    return int(text)


def _apply_betting(state: State, text: str, group: int, line: str) -> State:
    """Apply the actions written in ``text`` to ``state``; ``group`` = ``/`` seen before ``text``.

    Every action must be legal as written (nothing is repaired) and every ``/`` must stand
    exactly where a round ends, so that only the dealer's own spelling of the history
    (in any accepted letter case) is read.
    """
    limit = None  # the game's is_limit, looked up at the first raise
    letters = _ACTION_LETTERS
    n = len(text)
    i = 0
    while i < n:
        ch = text[i]
        if ch == "/":
            group += 1
            if state.round < group:
                raise RemoteProtocolError(
                    f"betting {text!r}: '/' at offset {i} but round {state.round} has not ended: {line!r}"
                )
            i += 1
            continue
        kind = letters.get(ch)
        if kind is None:
            raise RemoteProtocolError(
                f"betting {text!r}: {ch!r} at offset {i} is not an action (f, c, r): {line!r}"
            )
        start = i
        i += 1
        amount = None
        if kind is _RAISE and limit is None:
            limit = state.game.is_limit
        if kind is _RAISE and not limit:
            m = _AMOUNT_RE.match(text, i)
            if m is None:
                raise RemoteProtocolError(
                    f"betting {text!r}: no-limit raise at offset {start} has no raise-to amount: {line!r}"
                )
            digits = m.group()
            if len(digits) > 10:
                raise RemoteProtocolError(f"betting {text!r}: raise amount {digits[:20]!r}... is too long: {line!r}")
            amount = int(digits)
            i = m.end()
        if state.round != group:
            raise RemoteProtocolError(
                f"betting {text!r}: action at offset {start} is written in round {group} but the hand "
                f"is in round {state.round} there (a '/' is missing or misplaced): {line!r}"
            )
        try:
            state = state.apply(_SIMPLE_ACTIONS[kind] if amount is None else Action(kind, amount))
        except IllegalActionError as exc:
            raise RemoteProtocolError(f"betting {text!r}: action at offset {start}: {exc}: {line!r}") from None
    if state.round != group:
        raise RemoteProtocolError(
            f"betting {text!r} ends in round {group} but its actions bring the hand to round "
            f"{state.round} (each round's end is written as '/'): {line!r}"
        )
    return state


def _cards(text: str, line: str) -> tuple[int, ...]:
    try:
        return tuple([_CARD_OF[text[i : i + 2]] for i in range(0, len(text), 2)])
    except KeyError:
        raise RemoteProtocolError(f"cards {text!r} are not cards (rank {RANKS}, suit {SUITS}): {line!r}") from None


def _parse_cards_field(
    game: Game, text: str, round_: int, position: int, line: str
) -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]:
    groups = text.split("|")
    n = game.num_players
    if len(groups) != n:
        raise RemoteProtocolError(f"cards {text!r} have {len(groups)} hole groups, the game has {n} players: {line!r}")
    last, *later = groups[-1].split("/")
    if len(later) != round_:
        raise RemoteProtocolError(
            f"cards {text!r} show {len(later) + 1} board groups, but the betting is in round {round_}: {line!r}"
        )
    hole_chars = 2 * game.num_hole_cards
    board0_chars = 2 * game.num_board_cards[0]
    if len(last) == hole_chars + board0_chars:
        groups[-1] = last[:hole_chars]
        board_texts = [last[hole_chars:], *later]
    elif len(last) == board0_chars:
        groups[-1] = ""
        board_texts = [last, *later]
    else:
        raise RemoteProtocolError(f"cards {text!r}: last hole group and round-0 board {last!r} have the wrong length: {line!r}")
    holes = []
    for g in groups:
        if g and len(g) != hole_chars:
            raise RemoteProtocolError(
                f"cards {text!r}: hole group {g!r} must be empty or {game.num_hole_cards} cards: {line!r}"
            )
        holes.append(_cards(g, line) if g else ())
    boards = []
    for r, b in enumerate(board_texts):
        if len(b) != 2 * game.num_board_cards[r]:
            raise RemoteProtocolError(
                f"cards {text!r}: round {r} shows {b!r}, the game deals {game.num_board_cards[r]} board cards: {line!r}"
            )
        boards.append(_cards(b, line) if b else ())
    if not holes[position]:
        raise RemoteProtocolError(f"cards {text!r} do not show the receiver's own hole cards (position {position}): {line!r}")
    seen = [c for h in holes for c in h] + [c for b in boards for c in b]
    if len(set(seen)) != len(seen):
        raise RemoteProtocolError(f"cards {text!r} repeat a card: {line!r}")
    deck = _deck_set(game)
    if len(deck) < _FULL_DECK and any(c not in deck for c in seen):  # every card is in a full deck
        raise RemoteProtocolError(f"cards {text!r} are not all in this game's {game.num_ranks}x{game.num_suits} deck: {line!r}")
    return tuple(holes), tuple(boards)


def _extend_cards(
    game: Game, previous: MatchState, prev_cards: str, cards: str, round_: int, line: str
) -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]] | None:
    """The cards field read cheaply from the previous one (whose cards field was
    ``prev_cards``): unchanged, with new board rounds appended (the usual cases within a
    hand), or with the same board and more hole cards shown (a showdown). ``None``: read
    it in full."""
    prev_round = previous.state.round
    if cards == prev_cards:
        return (previous.holes, previous.boards) if round_ == prev_round else None
    if round_ == prev_round:
        return _show_holes(game, previous, prev_cards, cards, line)
    n = len(prev_cards)
    if round_ < prev_round or not cards.startswith(prev_cards) or cards[n : n + 1] != "/":
        return None
    added = cards[n + 1 :].split("/")
    if len(added) != round_ - prev_round:
        return None
    reader = _deck_reader(game)
    # The previous cards were checked: only the new ones can repeat a card or be outside
    # the deck (then the full read names the problem).
    used = set().union(*previous.holes, *previous.boards)
    count = len(used)
    new_boards = []
    for r, group in enumerate(added, start=prev_round + 1):
        if len(group) != 2 * game.num_board_cards[r]:
            return None
        board = _read_deck_cards(group, reader)
        if board is None:
            return None
        used.update(board)
        count += len(board)
        new_boards.append(board)
    if len(used) != count:
        return None
    return previous.holes, previous.boards + tuple(new_boards)


def _show_holes(
    game: Game, previous: MatchState, prev_cards: str, cards: str, line: str
) -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]] | None:
    """:func:`_extend_cards` when only hole groups that were empty are filled in."""
    holes = previous.holes
    # The previous field is the hole groups joined by "|", then the board (round 0's board
    # right after the last group): so its board text starts after this many characters.
    start = 2 * sum(len(h) for h in holes) + len(holes) - 1
    board_text = prev_cards[start:]
    if not cards.endswith(board_text):
        return None
    groups = cards[: len(cards) - len(board_text)].split("|")
    if len(groups) != len(holes):
        return None
    hole_chars = 2 * game.num_hole_cards
    reader = _deck_reader(game)
    used = set().union(*holes, *previous.boards)
    count = len(used)
    shown = []
    for g, old_text, old in zip(groups, prev_cards[:start].split("|"), holes):
        if g == old_text:
            shown.append(old)
        elif old_text or len(g) != hole_chars:
            return None  # a group shown before cannot change; a new one must be complete
        else:
            hole = _read_deck_cards(g, reader)
            if hole is None:
                return None  # the full read names the problem
            used.update(hole)
            count += len(hole)
            shown.append(hole)
    if len(used) != count:
        return None
    return tuple(shown), previous.boards


def _read_deck_cards(text: str, reader: dict[str, int]) -> tuple[int, ...] | None:
    """The cards written in ``text`` if all are cards of the deck ``reader`` reads."""
    if len(text) == 2:
        card = reader.get(text)
        return None if card is None else (card,)
    try:
        return tuple([reader[text[i : i + 2]] for i in range(0, len(text), 2)])
    except KeyError:
        return None


_READERS: dict[tuple[int, int], dict[str, int]] = {}


def _deck_reader(game: Game) -> dict[str, int]:
    """Card text (either case) -> card, for the cards of the game's deck only (cached)."""
    key = (game.num_ranks, game.num_suits)
    reader = _READERS.get(key)
    if reader is None:
        deck = _deck_set(game)
        reader = _READERS[key] = {text: c for text, c in _CARD_OF.items() if c in deck}
    return reader


_DECKS: dict[tuple[int, int], frozenset[int]] = {}
_DECK_LISTS: dict[tuple[int, int], tuple[int, ...]] = {}
_FULL_DECK: Final = len(_CARD_OF) // 4  # 52: each card has four spellings (rank, suit case)


def _deck_set(game: Game) -> frozenset[int]:
    key = (game.num_ranks, game.num_suits)
    deck = _DECKS.get(key)
    if deck is None:
        deck = _DECKS[key] = frozenset(deck_cards(*key))
    return deck


def _deck_list(game: Game) -> tuple[int, ...]:
    """The game's deck in dealing order (cached)."""
    key = (game.num_ranks, game.num_suits)
    deck = _DECK_LISTS.get(key)
    if deck is None:
        deck = _DECK_LISTS[key] = tuple(deck_cards(*key))
    return deck


def parse_match_state(line: str | bytes, game: Game, previous: MatchState | None = None) -> MatchState:
    """Read one MATCHSTATE message (without its line end) for ``game``.

    Accepts the spellings the reference dealer reads (SPEC §2.2, §2.7): cards with rank
    and suit in either case, and the action letters ``f F c C k K r R b B``; everything
    else must be exactly as the dealer writes it, and the betting must be legal, so that
    a desynchronised or corrupted line is caught here and not three hands later.

    ``previous``, the last state read on the same connection, makes reading incremental:
    when the new line continues the same hand, only the new actions are applied.

    Raises :class:`RemoteProtocolError` (and nothing else) for any line that is not a
    valid MATCHSTATE for ``game``.
    """
    text = _decode(line)
    if previous is not None and (previous.state.game is not game or not previous.text):
        previous = None  # only a state read off the wire for the same game can be extended
    prev_parts = None if previous is None else previous.text.split(":")
    return _read_match_state(text, text.split(":"), game, previous, prev_parts)


def _read_match_state(
    text: str,
    parts: list[str],
    game: Game,
    previous: MatchState | None,
    prev_parts: list[str] | None,
    states: dict[str, State] | None = None,
) -> MatchState:
    """:func:`parse_match_state` of ``text``, whose fields are ``parts`` (``text.split(":")``);
    ``prev_parts`` is ``previous.text.split(":")``.

    A client reads every state of a hand, each the previous one with an action (and
    perhaps a board) more, so the incremental case is the hot path of a match: fields
    equal to the previous line's are taken from it, not parsed again (they were checked
    when it was read), and only the new actions and cards are applied and checked.

    ``states`` maps betting texts already read for ``game`` to their states: a client's
    state carries no cards, so it is a function of the betting text alone, and the same
    few bettings recur hand after hand (a miss is read and added; the map is emptied when
    it reaches :data:`STATE_CACHE_SIZE` entries).
    """
    if len(parts) != 5 or parts[0] != "MATCHSTATE":
        raise RemoteProtocolError(f"not a MATCHSTATE:<position>:<hand>:<betting>:<cards> line: {text[:200]!r}")
    _, pos_text, hand_text, betting, cards = parts
    if previous is None or prev_parts is None:
        previous, prev_parts = None, _NO_PARTS
    if previous is not None and pos_text == prev_parts[1]:
        position = previous.position
    else:
        position = _uint(pos_text, "position", text)
        if position >= game.num_players:
            raise RemoteProtocolError(f"position {position} is not below the {game.num_players} players: {text!r}")
    if previous is not None and hand_text == prev_parts[2]:
        hand = previous.hand_number
    else:
        hand = _uint(hand_text, "hand number", text)
    if previous is not None and previous.position != position:
        previous = None  # another seat's view: nothing to continue from
    state = None if states is None else states.get(betting)
    if state is None:
        if previous is not None and previous.hand_number == hand:
            prev_betting = prev_parts[3]
            n = len(prev_betting)
            if betting.startswith(prev_betting) and (
                # the old text must end on an action boundary: "r20" is no prefix of "r200"
                not prev_betting or not (betting[n : n + 1] in _DIGITS and prev_betting[-1] in _DIGITS)
            ):
                state = _apply_betting(previous.state, betting[n:], prev_betting.count("/"), text)
        if state is None:
            state = _apply_betting(State.new_hand(game), betting, 0, text)
        if states is not None:
            if len(states) >= STATE_CACHE_SIZE:
                states.clear()
            states[betting] = state
    if previous is not None and cards == prev_parts[4] and state.round == previous.state.round:
        return _match_state(position, hand, state, previous.holes, previous.boards, text)
    cards_read = None
    if previous is not None:
        cards_read = _extend_cards(game, previous, prev_parts[4], cards, state.round, text)
    if cards_read is None:
        cards_read = _parse_cards_field(game, cards, state.round, position, text)
    holes, boards = cards_read
    return _match_state(position, hand, state, holes, boards, text)


_NO_PARTS: Final = ("",) * 5  # no previous line (its fields are compared, never used)
#: Most betting texts a client remembers the state of (see :func:`_read_match_state`).
STATE_CACHE_SIZE: Final = 4096
_TRANSITIONS_KEPT: Final = 4096  # the dealer's remembered transitions (DealerMatch._apply)


def _parse_action_text(text: str, game: Game) -> tuple[ActionKind | None, int | None, bool]:
    """The dealer's ``readAction`` on ``text``: (kind or None if invalid, amount, format ok).

    No-limit amounts are read like C ``sscanf("%d")``: leading blanks and a sign are
    allowed, the value is wrapped to a 32-bit int, and anything after it is ignored.
    """
    kind = _ACTION_LETTERS.get(text[:1])
    if kind is not _RAISE or game.is_limit:
        return kind, None, True
    amount = _scan_c_int(text, 1)
    if amount is None:
        return kind, None, False
    return kind, amount, True


def parse_action(text: str, game: Game) -> Action:
    """Read a response's action the way the reference dealer does (SPEC §2.7).

    ``f F`` fold, ``c C k K`` call, ``r R b B`` raise; a no-limit raise needs a raise-to
    (``r 200`` and ``r-5`` read as 200 and -5); a limit raise's digits and anything after
    the action are ignored. The action is not checked against a state (see :func:`repair`).
    Raises :class:`RemoteProtocolError` for an unknown letter or a missing amount.
    """
    kind, amount, ok = _parse_action_text(text, game)
    if kind is None:
        raise RemoteProtocolError(f"action {text[:40]!r} does not start with an action letter (f, c, r)")
    if not ok:
        raise RemoteProtocolError(f"no-limit raise {text[:40]!r} has no raise-to amount")
    return Action(kind, amount)


def parse_response(line: str | bytes, game: Game) -> tuple[MatchState, Action]:
    """Read a client's response line (without its line end): the echoed state and the action.

    The state part is read as strictly as :func:`parse_match_state`; the action part as
    :func:`parse_action`. Raises :class:`RemoteProtocolError` only.
    """
    text = _decode(line)
    # anything after the action is ignored, including further ':'
    parts = text.split(":", 5)
    if len(parts) != 6:
        raise RemoteProtocolError(f"response {text[:200]!r} is not <matchstate>:<action>")
    head, action_text = ":".join(parts[:5]), parts[5]
    return parse_match_state(head, game), parse_action(action_text, game)


def parse_version(line: str | bytes) -> tuple[int, int, int] | None:
    """Read ``VERSION:<major>.<minor>.<revision>`` as C ``sscanf("VERSION:%u.%u.%u")`` does."""
    text = line.decode("latin-1") if isinstance(line, bytes) else line
    text = text.split("\0", 1)[0]
    if not text.startswith("VERSION:"):
        return None
    numbers = []
    i = len("VERSION:")
    for k in range(3):
        if k:
            if text[i : i + 1] != ".":
                return None
            i += 1
        value, i = _scan_c_unsigned(text, i, 32)
        if value is None:
            return None
        numbers.append(value)
    return numbers[0], numbers[1], numbers[2]


# ---------------------------------------------------------------------------- C number scans

_C_SPACE: Final = " \t\n\v\f\r"
_NUMBER_RE: Final = re.compile(r"[ \t\n\v\f\r]*([+-]?)([0-9]+)")


def _scan_c_unsigned(text: str, i: int, bits: int) -> tuple[int | None, int]:
    """``sscanf("%u")`` into a ``bits``-bit unsigned: strtoul, then truncation."""
    m = _NUMBER_RE.match(text, i)
    if m is None:
        return None, i
    sign, digits = m.groups()
    if len(digits.lstrip("0")) > 20 or int(digits) > 2**64 - 1:
        value = 2**64 - 1  # strtoul saturates
    else:
        value = -int(digits) if sign == "-" else int(digits)
    return value % (1 << bits), m.end()


def _scan_c_int(text: str, i: int) -> int | None:
    """``sscanf("%d")`` into an ``int32_t``: strtol (saturating at 64 bits), then truncation."""
    m = _NUMBER_RE.match(text, i)
    if m is None:
        return None
    sign, digits = m.groups()
    if len(digits.lstrip("0")) > 19 or int(digits) > 2**63 - (sign != "-"):
        value = -(2**63) if sign == "-" else 2**63 - 1
    else:
        value = -int(digits) if sign == "-" else int(digits)
    value &= 0xFFFFFFFF
    return value - 2**32 if value >= 2**31 else value


# ---------------------------------------------------------------------------- legality


def legalize(state: State, action: object) -> Action:
    """Turn whatever a bot returned into an action ``state.verify`` accepts.

    A raise is clamped into ``[min_raise_to, max_raise_to]`` (a missing amount means the
    minimum), and becomes a call where no raise is allowed; a fold becomes a check when
    checking is free; anything that is not an :class:`Action` becomes a call. Raises
    :class:`LocalProtocolError` if nobody is to act (a finished hand is never answered).
    """
    if state.actor is None:
        raise LocalProtocolError(f"the hand is over (betting {state.betting_string()!r}); nothing to answer")
    if not isinstance(action, Action):
        return Action.call()
    kind = action.kind
    if kind is _FOLD:
        return action if state.can_fold() else Action.call()
    if kind is _RAISE:
        lo = state.min_raise_to
        if lo is None:
            return Action.call()
        hi = state.max_raise_to
        assert hi is not None
        amount = action.amount
        if amount is None or amount < lo:
            return Action(_RAISE, lo)
        if amount > hi:
            return Action(_RAISE, hi)
        if state.game.is_limit:
            return Action(_RAISE, lo)
        return action
    return Action.call()


def hand_values(ms: MatchState) -> tuple[float, ...] | None:
    """Per-position chips won in a finished hand, or ``None`` if the hand is not over or a
    showdown hand's cards were not all shown.

    Folded players' hidden cards do not matter for the result, so any unused cards stand
    in for them when the showdown is evaluated.
    """
    state = ms.state
    if not state.is_terminal:
        return None
    if not state.is_showdown:
        return state.values()
    game = state.game
    if len(ms.boards) != game.num_rounds:
        return None
    holes = ms.holes
    if any(not h and not state.folded[p] for p, h in enumerate(holes)):
        return None
    if not all(holes):
        used = {c for h in holes for c in h} | {c for b in ms.boards for c in b}
        spare = iter(c for c in _deck_list(game) if c not in used)
        holes = tuple(h or tuple(next(spare) for _ in range(game.num_hole_cards)) for h in holes)
    return state.with_deal(Deal(holes, ms.boards)).values()


def _own_value(ms: MatchState) -> float | None:
    """``hand_values(ms)[ms.position]`` for a finished hand read by this module (its cards
    are known to be distinct cards of the deck): the client's hot path at every hand's
    end, so it ranks the shown hands directly instead of building a dealt state."""
    state = ms.state
    spent = state.spent
    folded = state.folded
    me = ms.position
    if folded[me]:
        return float(-spent[me])
    n = len(spent)
    if sum(folded) + 1 >= n:  # everyone else folded
        return float(sum(spent) - spent[me])
    if len(ms.boards) != state.game.num_rounds:
        return None
    holes = ms.holes
    board = tuple([c for b in ms.boards for c in b])
    evaluate = _evaluator()
    ranks: list[int | None] = []
    for p in range(n):
        if folded[p]:
            ranks.append(None)
        elif holes[p]:
            ranks.append(evaluate(holes[p] + board))
        else:
            return None  # a showdown hand that was not shown
    return _showdown_value(spent, ranks, me)




# ---------------------------------------------------------------------------- client side


class _NeedData:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NEED_DATA"


#: Returned by :meth:`ClientConnection.next_event` when more bytes are needed.
NEED_DATA: Final = _NeedData()


@dataclass(frozen=True, slots=True)
class StateMessage:
    """The dealer sent a state. ``my_turn``: it must be answered (:meth:`ClientConnection.send_action`).

    ``value`` is the receiver's result for a finished hand (``None`` otherwise, or when a
    showdown's cards were not shown).
    """

    match_state: MatchState
    my_turn: bool
    value: float | None = None


_set_event_state, _set_event_my_turn, _set_event_value = (
    StateMessage.__dict__[name].__set__ for name in ("match_state", "my_turn", "value")
)


def _state_message(ms: MatchState, my_turn: bool, value: float | None) -> StateMessage:
    """``StateMessage(...)`` without the frozen dataclass's ``__init__`` (one per line)."""
    event = _new_object(StateMessage)
    _set_event_state(event, ms)
    _set_event_my_turn(event, my_turn)
    _set_event_value(event, value)
    return event


@dataclass(frozen=True, slots=True)
class MatchEnded:
    """The dealer closed the connection: the normal end of a match (SPEC §2.5)."""


class ClientConnection:
    """The client end of an ACPC connection, without I/O.

    Usage: send :meth:`initiate`'s bytes; feed everything received to
    :meth:`receive_data` (``b""`` at EOF); call :meth:`next_event` until it returns
    :data:`NEED_DATA`; when a :class:`StateMessage` has ``my_turn``, send the bytes of
    :meth:`send_action`. Results of finished hands are totted up in :attr:`hands` and
    :attr:`chips`.
    """

    def __init__(self, game: Game, *, max_line: int = CLIENT_MAX_LINE) -> None:
        self.game = game
        self._lines = LineBuffer(max_line, cut_long_lines=False)
        self._started = False
        self._ended = False
        self._error: ProtocolError | None = None
        self._last: MatchState | None = None
        self._last_parts: list[str] | None = None  # the fields of its text
        self._states: dict[str, State] = {}  # betting text -> state (see _read_match_state)
        self._owed: MatchState | None = None  # the state we must answer
        #: Finished hands seen, and the receiver's chips won over them.
        self.hands = 0
        self.chips = 0.0
        #: Finished hands whose result could not be computed (cards not shown).
        self.unscored_hands = 0

    def initiate(self) -> bytes:
        """The version line, to be sent once, first."""
        self._check()
        if self._started:
            raise self._fail(LocalProtocolError("the version line was already sent"))
        self._started = True
        return VERSION_LINE

    def receive_data(self, data: bytes) -> None:
        """Bytes from the dealer; ``b""`` means it closed the connection."""
        self._check()
        try:
            self._lines.feed(data)
        except ProtocolError as exc:
            raise self._fail(exc) from None

    @property
    def owed(self) -> MatchState | None:
        """The state waiting for this side's answer, if any."""
        return self._owed

    def next_event(self) -> StateMessage | MatchEnded | _NeedData:
        """The next event: :class:`StateMessage`, :class:`MatchEnded` or :data:`NEED_DATA`.

        Comment lines (``#``, ``;``) are skipped. Raises :class:`RemoteProtocolError` for
        a line that is not a valid MATCHSTATE (and on every call after that), and
        :class:`LocalProtocolError` if called before :meth:`initiate`.
        """
        if self._error is not None:
            self._check()
        if not self._started:
            raise self._fail(LocalProtocolError("next_event before the version line was sent"))
        if self._ended:
            return MatchEnded()
        lines = self._lines
        while True:
            try:
                raw = lines.next_line()
            except ProtocolError as exc:
                raise self._fail(exc) from None
            if raw is None:
                if lines.at_eof:
                    self._ended = True
                    self._owed = None
                    return MatchEnded()
                return NEED_DATA
            if raw[-1:] != b"\n":  # cannot happen with cut_long_lines=False
                raise self._fail(RemoteProtocolError("line without a line end"))
            event = self._read_line(raw)
            if event is not None:
                return event

    def receive_data_event(self, data: bytes) -> StateMessage | MatchEnded | _NeedData:
        """:meth:`receive_data` then :meth:`next_event`, in one call (after the event,
        keep calling :meth:`next_event` until :data:`NEED_DATA` as usual)."""
        lines = self._lines
        # The usual read in a match: one whole line with nothing waiting. It needs no
        # buffer; the event is the one receive_data then next_event would give.
        if (
            type(data) is bytes
            and self._error is None
            and self._started
            and not self._ended
            and lines.empty
            and lines.is_one_line(data)
        ):
            event = self._read_line(data)
            return NEED_DATA if event is None else event
        self.receive_data(data)
        return self.next_event()

    @property
    def idle(self) -> bool:
        """Nothing received waits to be read: :meth:`next_event` would return
        :data:`NEED_DATA` (no line, no partial line, no end of file)."""
        return self._lines.empty

    def _read_line(self, raw: bytes) -> StateMessage | None:
        """The event of one whole line (with its line end); ``None`` for a comment."""
        line = raw[:-2] if raw[-2:-1] == b"\r" else raw[:-1]
        if line[:1] in (b"#", b";"):
            return None
        try:
            text = _decode(line)
            parts = text.split(":")
            ms = _read_match_state(text, parts, self.game, self._last, self._last_parts, self._states)
        except ProtocolError as exc:
            raise self._fail(exc) from None
        self._last = ms
        self._last_parts = parts
        state = ms.state
        if state.actor is None:
            self._owed = None
            value = _own_value(ms)
            if value is None:
                self.unscored_hands += 1
            else:
                self.hands += 1
                self.chips += value
            return _state_message(ms, False, value)
        mine = state.actor == ms.position
        self._owed = ms if mine else None
        return _state_message(ms, mine, None)

    def send_action(self, action: object) -> bytes:
        """The response line for the owed state; ``action`` is legalized first (:func:`legalize`).

        Raises :class:`LocalProtocolError` when no state is owed an answer.
        """
        self._check()
        ms = self._owed
        if ms is None:
            raise self._fail(LocalProtocolError("no state is waiting for an answer (not our turn, or already answered)"))
        self._owed = None
        if action is _CALL_ACTION:  # legal whenever an answer is owed
            return f"{ms.text}:c\r\n".encode("ascii")
        legal = legalize(ms.state, action)
        return f"{ms.text}:{legal.to_acpc(self.game.is_limit)}\r\n".encode("ascii")

    def _check(self) -> None:
        if self._error is not None:
            raise type(self._error)(f"connection unusable after an earlier error: {self._error}")

    def _fail(self, exc: ProtocolError) -> ProtocolError:
        self._error = exc
        return exc


# ---------------------------------------------------------------------------- dealer side


@dataclass(frozen=True, slots=True)
class TimeLimits:
    """The dealer's time limits in milliseconds (SPEC §7); the defaults are its compiled ones."""

    response_ms: int = 600_000
    hand_ms: int = 600_000
    per_hand_ms: int = 7_000


@dataclass(frozen=True, slots=True)
class Send:
    """Bytes (one CRLF-terminated line) to write to seat ``seat`` (0-based)."""

    seat: int
    data: bytes


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A line for the dealer's stderr (``WARNING: ...``, ``ERROR: ...``)."""

    text: str


@dataclass(frozen=True, slots=True)
class LogLine:
    """A line for the hand log (no line end); the log is flushed after each STATE line."""

    text: str


@dataclass(frozen=True, slots=True)
class MatchOver:
    """The match ended: ``score`` is the SCORE line, or ``None`` if it was aborted."""

    score: str | None


Output = Send | Diagnostic | LogLine | MatchOver

_set_send_seat = Send.__dict__["seat"].__set__
_set_send_data = Send.__dict__["data"].__set__


def _send(seat: int, data: bytes) -> Send:
    """``Send(seat, data)`` without the frozen dataclass's ``__init__`` (two per action)."""
    out = _new_object(Send)
    _set_send_seat(out, seat)
    _set_send_data(out, data)
    return out


@dataclass(slots=True)
class _Echo:
    """What the reference dealer's lenient state reader got out of a response."""

    viewer: int
    hand: int
    state: State
    own_hole: tuple[int, ...] | None
    boards: tuple[int, ...]
    end: int  # characters consumed


def _read_cards_c(text: str, i: int, count: int) -> tuple[list[int], int]:
    """``readCards``: up to ``count`` cards from offset ``i``; stops at the first non-card."""
    cards: list[int] = []
    while len(cards) < count:
        card = _CARD_OF.get(text[i : i + 2])
        if card is None:
            break
        cards.append(card)
        i += 2
    return cards, i


def _read_echo(text: str, game: Game) -> _Echo | None:
    """The reference dealer's ``readMatchState`` on a response line (SPEC §2.7, §6.1).

    Lenient as the C reader is: numbers as ``sscanf`` reads them, ``/`` skipped anywhere in
    the betting, unreadable hole groups read as "no cards", and nothing after the cards
    checked. Every betting action must still be legal. ``None`` = "bad state format".
    """
    if not text.startswith("MATCHSTATE:"):
        return None
    viewer, i = _scan_c_unsigned(text, 11, 8)
    if viewer is None or viewer >= game.num_players or text[i : i + 1] != ":":
        return None
    hand, i = _scan_c_unsigned(text, i + 1, 32)
    if hand is None or text[i : i + 1] != ":":
        return None
    i += 1
    state = State.new_hand(game)
    limit = game.is_limit
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == ":":
            i += 1
            break
        if ch == "/":
            i += 1
            continue
        kind = _ACTION_LETTERS.get(ch)
        if kind is None:
            return None
        i += 1
        amount = None
        if kind is _RAISE and not limit:
            m = _NUMBER_RE.match(text, i)
            if m is None:
                return None
            amount = _scan_c_int(text, i)
            i = m.end()
        try:
            state = state.apply(Action(kind, amount))
        except IllegalActionError:
            return None
    holes: list[tuple[int, ...] | None] = []
    for p in range(game.num_players):
        if p and text[i : i + 1] == "|":
            i += 1
        cards, j = _read_cards_c(text, i, game.num_hole_cards)
        if not cards:
            holes.append(None)
            continue
        if len(cards) != game.num_hole_cards:
            return None
        holes.append(tuple(cards))
        i = j
    board: list[int] = []
    for r in range(state.round + 1):
        if r and text[i : i + 1] == "/":
            i += 1
        cards, i = _read_cards_c(text, i, game.num_board_cards[r])
        if len(cards) != game.num_board_cards[r]:
            return None
        board += cards
    return _Echo(viewer, hand, state, holes[viewer], tuple(board), i)


class DealerMatch:
    """One match, dealt and refereed as the reference dealer does it, without I/O.

    The shell connects the seats, then calls :meth:`receive_version` once per seat (in seat
    order), :meth:`start`, and then, while :attr:`acting_seat` is not ``None``, reads a line
    from that seat and passes it to :meth:`receive_line` (or :meth:`read_timed_out` after
    :attr:`limits` ``.response_ms`` without one, or :meth:`connection_lost` at EOF). Each call
    returns the outputs to carry out in order: :class:`Send`, :class:`Diagnostic`,
    :class:`LogLine` and finally :class:`MatchOver`. Times are seconds on any monotonic clock.

    Seats are 0-based here and 1-based in messages. Without ``fixed_seats`` seat s plays
    hand h at position ``(s - h) mod N``. ``duplicate`` plays every deal again with the
    seats rotated by one (N passes in all), so that each player gets every position's
    cards; pass k's hands are numbered ``k * num_hands + h``.
    """

    def __init__(
        self,
        game: Game,
        *,
        num_hands: int,
        seed: int,
        names: Sequence[str],
        limits: TimeLimits = TimeLimits(),
        fixed_seats: bool = False,
        duplicate: bool = False,
        match_name: str = "match",
        game_file: str | None = None,
    ) -> None:
        n = game.num_players
        if len(names) != n:
            raise ValueError(f"{len(names)} player names for a {n}-player game")
        if any(not name or any(ch in name for ch in "|:\r\n") for name in names):
            raise ValueError(f"player names {list(names)} must be non-empty without '|', ':' or line ends")
        if num_hands < 1:
            raise ValueError(f"the number of hands must be positive, not {num_hands}")
        if not 0 <= seed <= _UINT32_MAX:
            raise ValueError(f"seed {seed} is not a uint32")
        self.game = game
        self.num_hands = num_hands
        self.seed = seed
        self.names = tuple(names)
        self.limits = limits
        self.fixed_seats = fixed_seats
        self.passes = n if duplicate else 1
        self.match_name = match_name
        self.game_file = game_file if game_file is not None else (game.name or "game")
        self.total_hands = num_hands * self.passes
        # (response, hand, whole match) limits in ms, as receive_line compares them
        self._limits_ms = (limits.response_ms, limits.hand_ms, limits.per_hand_ms * self.total_hands)
        self.totals = [0.0] * n  # chips won per seat
        self.hands_played = 0
        self.over = False
        self.aborted = False
        self._dead = [False] * n
        self._hand_used = [0.0] * n  # seconds charged this hand, per seat
        self._match_used = [0.0] * n
        self._pass = 0
        self._hand_in_pass = 0
        self._cards: CardDealer | None = None
        self._state: State | None = None  # the betting only: no deal (see _apply)
        self._deal: Deal | None = None
        self._next: dict[str, tuple[State, str]] = {}  # see _apply
        self._first_state = State.new_hand(game)
        self._seat_of: tuple[int, ...] = ()  # by position
        self._betting = ""
        self._acting: int | None = None
        self._expect = b""  # exact text sent to the acting seat (the echo fast path)
        self._sent_at = 0.0
        self._hole_text: list[str] = []
        self._board_text: list[str] = []
        self._views: list[tuple[str, str]] = []  # per seat: message head, ":" + its cards
        self._limit = game.is_limit

    # -- match life cycle

    def header(self) -> list[str]:
        """The four header lines of the log and stderr (SPEC §8.1)."""
        lim = self.limits
        return format_header(self.match_name, self.game_file, self.total_hands, self.seed,
                             lim.response_ms, lim.hand_ms, lim.per_hand_ms)

    @property
    def acting_seat(self) -> int | None:
        """The seat (0-based) whose response is awaited, ``None`` before start or when over."""
        return self._acting

    @property
    def hand_number(self) -> int:
        """The number of the hand being played (or the next one)."""
        return self._pass * self.num_hands + self._hand_in_pass

    @property
    def state(self) -> State | None:
        """The current hand's state (with the deal)."""
        return None if self._state is None else self._state.with_deal(self._deal)

    @property
    def owed_text(self) -> bytes:
        """The exact state text (no line end) last sent to the acting seat: what it must echo."""
        return self._expect

    @property
    def sent_at(self) -> float:
        """When the current state was sent (the ``now`` of the call that sent it)."""
        return self._sent_at

    def receive_version(self, seat: int, line: bytes) -> list[Output]:
        """A seat's first line. A wrong version is only reported; garbage aborts (SPEC §1.3)."""
        self._check_live()
        version = parse_version(line)
        if version is None:
            shown = _strip_eol(line).decode("latin-1")
            return self._abort([Diagnostic(f"ERROR: invalid version string {shown}")])
        major, minor, _ = version
        if major != 2 or minor > 0:
            return [Diagnostic("ERROR: this server is currently using version 2.0.0")]
        return []

    def start(self, now: float) -> list[Output]:
        """Deal the first hand; returns its first messages."""
        self._check_live()
        if self._state is not None:
            raise LocalProtocolError("the match was already started")
        out: list[Output] = []
        self._begin_hand(now, out)
        return out

    def receive_line(self, seat: int, line: bytes, now: float) -> list[Output]:
        """One line read from the acting seat (with its line end, if it had one)."""
        if self.over:
            self._check_live()
        if seat != self._acting:
            raise LocalProtocolError(f"read from seat {seat + 1}, but seat {self._acting} is to act")
        if line[:1] in (b"#", b";"):
            return []  # comments are neither answered nor charged
        out: list[Output] = []
        # Charge the whole time since the state was sent, for every line (SPEC §7).
        elapsed = now - self._sent_at
        if elapsed < 0.0:
            elapsed = 0.0
        hand_used = self._hand_used
        match_used = self._match_used
        hand_used[seat] += elapsed
        match_used[seat] += elapsed
        response_ms, hand_ms, match_ms = self._limits_ms
        if elapsed * 1000 > response_ms or hand_used[seat] * 1000 > hand_ms or match_used[seat] * 1000 > match_ms:
            return self._abort([Diagnostic(f"ERROR: seat {seat + 1} ran out of time")])
        expect = self._expect
        text_start = len(expect)
        if line.startswith(expect) and line[text_start : text_start + 1] == b":":
            # Fast path: the exact text we sent is the current state by definition.
            if line[text_start + 1 : text_start + 2] in _CALL_BYTES:
                # A call is always legal and never repaired (whatever follows its letter).
                self._apply(_CALL_ACTION, now, out)
                return out
            action_text = line[text_start + 1 :].decode("latin-1")
        else:
            text = line.decode("latin-1").split("\0", 1)[0]  # C strings end at NUL
            echo = _read_echo(text, self.game)
            if echo is None:
                out.append(Diagnostic("WARNING: bad state format in response"))
                return out
            if not self._is_current(echo):
                out.append(Diagnostic("WARNING: ignoring un-requested response"))
                return out
            if text[echo.end : echo.end + 1] != ":":
                out.append(Diagnostic("WARNING: bad action format in response, changed to call"))
                self._apply(Action.call(), now, out)
                return out
            action_text = text[echo.end + 1 :]
        action_text = action_text.split("\0", 1)[0]
        kind, amount, ok = _parse_action_text(action_text, self.game)
        if kind is not None and not ok:
            out.append(Diagnostic("WARNING: bad action format in response, changed to call"))
            action = Action.call()
        elif kind is None:
            out.append(Diagnostic("WARNING: invalid action, changed to call"))
            action = Action.call()
        else:
            state = self._state
            assert state is not None
            if (
                kind is _RAISE
                and state.num_raises_in_round < self.game.max_raises[state.round]
                and len(state.round_actions) + self.game.num_players > MAX_ACTIONS_PER_ROUND
            ):
                out.append(Diagnostic("WARNING: #actions in round is too close to MAX_NUM_ACTIONS, forcing call/fold"))
            action, warning = repair(state, Action(kind, amount))
            if warning is not None:
                out.append(Diagnostic(f"WARNING: {warning}"))
        self._apply(action, now, out)
        return out

    def read_timed_out(self, seat: int, now: float) -> list[Output]:
        """No complete line from the acting seat within the response limit: abort."""
        self._check_live()
        return self._could_not_get(seat, now)

    def connection_lost(self, seat: int, now: float) -> list[Output]:
        """A seat's connection ended (EOF, reset, failed write).

        If it is the acting seat the match is aborted at once; otherwise when that seat is
        next to act (the reference dealer notices a vanished client only when it reads
        from it). Messages to a lost seat are no longer produced.
        """
        if self.over:
            return []
        self._dead[seat] = True
        if seat == self._acting:
            return self._could_not_get(seat, now)
        return []

    # -- internals

    def _check_live(self) -> None:
        if self.over:
            raise LocalProtocolError("the match is over")

    def _could_not_get(self, seat: int, now: float) -> list[Output]:
        waited = max(0.0, now - self._sent_at)
        return self._abort([
            Diagnostic(f"ERROR: could not get action from seat {seat + 1}"),
            Diagnostic(f"{waited:.1f} seconds spent waiting; timeout {self.limits.response_ms / 1000:.1f}"),
        ])

    def _abort(self, out: list[Output]) -> list[Output]:
        self.over = True
        self.aborted = True
        self._acting = None
        out.append(MatchOver(None))
        return out

    def _is_current(self, echo: _Echo) -> bool:
        state = self._state
        assert state is not None and self._acting is not None
        position = self._seat_of.index(self._acting)
        if echo.viewer != position or echo.hand != self.hand_number:
            return False
        if echo.state.actions != state.actions:
            return False
        deal = self._deal
        assert deal is not None
        return echo.own_hole == deal.holes[position] and echo.boards == deal.board_through(state.round)

    def _begin_hand(self, now: float, out: list[Output]) -> None:
        game = self.game
        if self._cards is None:
            self._cards = CardDealer(game, self.seed)
        deal = self._cards.next_deal()
        n = game.num_players
        h = self._hand_in_pass
        shift = self._pass + (0 if self.fixed_seats else h)
        self._seat_of = seat_of = tuple((p + shift) % n for p in range(n))
        self._hand_used = [0.0] * n
        self._deal = deal
        self._state = self._first_state  # the same every hand: the deal is kept apart
        self._betting = ""
        self._hole_text = holes = [format_cards(hole) for hole in deal.holes]
        # board_text[r]: the board field through round r (round 0's cards follow the holes)
        texts, acc = [], ""
        for r, b in enumerate(deal.boards):
            acc += ("/" if r else "") + format_cards(b)
            texts.append(acc)
        self._board_text = texts
        # What each seat's messages look like this hand, around the betting: the head
        # "MATCHSTATE:<position>:<hand>:" and the cards it may see (its own hole only).
        # A message is then one concatenation per seat (see _broadcast).
        hand = self.hand_number
        views = []
        for seat in range(n):
            pos = seat_of.index(seat)
            views.append((f"MATCHSTATE:{pos}:{hand}:", ":" + "|" * pos + holes[pos] + "|" * (n - 1 - pos)))
        self._views = views
        self._broadcast(now, out)

    def _apply(self, action: Action, now: float, out: list[Output]) -> None:
        # The betting never depends on the cards, so the hand's state is kept without its
        # deal, and a state is a function of the betting text: the transitions seen are
        # remembered (the same few recur hand after hand), emptied when the map is full.
        # (keyed by the action's text: hashing an Action goes through Python-level hashes)
        text = "c" if action is _CALL_ACTION else action.to_acpc(self._limit)
        key = self._betting + text
        step = self._next.get(key)
        if step is None:
            state = self._state
            assert state is not None
            after = state.apply(action)
            step = (after, key + "/" * (after.round - state.round))
            if len(self._next) >= _TRANSITIONS_KEPT:
                self._next.clear()
            self._next[key] = step
        self._state, self._betting = step
        self._broadcast(now, out)

    def _broadcast(self, now: float, out: list[Output]) -> None:
        """Send the current state to every seat in seat order; then end the hand or wait."""
        state = self._state
        assert state is not None
        betting = self._betting
        board = self._board_text[state.round]
        actor = state.actor
        views = self._views
        if actor is None and state.is_showdown:
            # At a showdown everyone sees the cards of the players who did not fold (and
            # always their own); otherwise only their own.
            n = self.game.num_players
            holes = self._hole_text
            shown = [holes[p] if not state.folded[p] else "" for p in range(n)]
            views = []
            for seat, (head, _) in enumerate(self._views):
                pos = self._seat_of.index(seat)
                cards = "|".join(holes[p] if p == pos else shown[p] for p in range(n))
                views.append((head, ":" + cards))
        acting_seat = None if actor is None else self._seat_of[actor]
        dead = self._dead
        for seat, (head, cards) in enumerate(views):
            text = f"{head}{betting}{cards}{board}".encode("ascii")
            if seat == acting_seat:
                self._expect = text
            if not dead[seat]:
                out.append(_send(seat, text + b"\r\n"))
        self._sent_at = now
        if actor is not None:
            self._acting = acting_seat
            if acting_seat is not None and dead[acting_seat]:
                out.extend(self._could_not_get(acting_seat, now))
            return
        self._acting = None
        self._end_hand(now, out)

    def _end_hand(self, now: float, out: list[Output]) -> None:
        state = self._state
        assert state is not None
        names = [self.names[s] for s in self._seat_of]
        values = state.with_deal(self._deal).values()
        for p, v in enumerate(values):
            self.totals[self._seat_of[p]] += v
        # format_state_line's text, from the pieces the messages were built from
        cards = "|".join(self._hole_text) + self._board_text[state.round]
        value_text = "|".join([format_value(v) for v in values])
        out.append(LogLine(f"STATE:{self.hand_number}:{self._betting}:{cards}:{value_text}:{'|'.join(names)}"))
        self.hands_played += 1
        self._hand_in_pass += 1
        if self._hand_in_pass == self.num_hands:
            self._pass += 1
            self._hand_in_pass = 0
            self._cards = None  # the next pass deals the same cards again
            if self._pass == self.passes:
                score = format_score_line(self.totals, self.names)
                out.append(LogLine(score))
                self.over = True
                out.append(MatchOver(score))
                return
        self._begin_hand(now, out)
