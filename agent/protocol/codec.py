"""The ACPC wire format without I/O: framing, the MATCHSTATE codec, actions and legality.

* Framing: :class:`LineBuffer` splits a byte stream into lines as either end reads them;
  the errors say whose fault a broken rule was (:class:`LocalProtocolError`: this side,
  :class:`RemoteProtocolError`: the peer; both :class:`ProtocolError`).
* MATCHSTATE: :class:`MatchState` is one message; :func:`parse_match_state` reads one
  (incrementally against the previous line of the same connection: see
  :func:`_read_match_state`) and :func:`format_match_state` writes one; the betting is
  read by the project's one betting reader, :func:`poker.betting.read_betting`, in its
  ``DEALER`` mode.
* Responses: :func:`format_response`, :func:`parse_response`, :func:`parse_action` (the
  reference dealer's ``readAction``), :func:`parse_version`.
* Legality and results: :func:`legalize` turns a bot's answer into a legal action;
  :func:`hand_values` values a finished hand from what a seat saw.

The connection state machines built on it are :mod:`agent.protocol.client_state` and
:mod:`agent.protocol.dealer_state`; names with a leading underscore that they import
from here are shared within :mod:`agent.protocol` only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from poker.betting import (
    DEALER_LETTERS,
    BettingSyntax,
    BettingSyntaxError,
    read_betting,
    scan_c_int,
    scan_c_unsigned,
)
from poker.cards import RANKS, SUITS, deck_cards, format_cards
from poker.game import Game
from poker.state import Action, ActionKind, Deal, IllegalActionError, State

__all__ = [
    "CLIENT_MAX_LINE",
    "DEALER_MAX_LINE",
    "STATE_CACHE_SIZE",
    "VERSION_LINE",
    "LineBuffer",
    "LocalProtocolError",
    "MatchState",
    "ProtocolError",
    "RemoteProtocolError",
    "format_match_state",
    "format_response",
    "hand_values",
    "legalize",
    "parse_action",
    "parse_match_state",
    "parse_response",
    "parse_version",
]

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


class StateParseError(RemoteProtocolError):
    """A MATCHSTATE line that does not parse as a state of the receiver's game: a broken
    dealer, or (most often) a dealer running another game than the one assumed here."""


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
# Cards in either case for rank and suit, as the dealer reads them (SPEC §2.2).
_RANK_OF: Final = {**{c: i for i, c in enumerate(RANKS)}, **{c.lower(): i for i, c in enumerate(RANKS)}}
_SUIT_OF: Final = {**{c: i for i, c in enumerate(SUITS)}, **{c.upper(): i for i, c in enumerate(SUITS)}}
_CARD_OF: Final = {r + s: rv * 4 + sv for r, rv in _RANK_OF.items() for s, sv in _SUIT_OF.items()}
_DIGITS: Final = frozenset("0123456789")
_new_object = object.__new__  # with slot setters: frozen dataclasses built without __init__
_CALL_ACTION: Final = Action.call()
_CALL_BYTES: Final = frozenset((b"c", b"C", b"k", b"K"))  # a response's call letters
_DEALER_SYNTAX: Final = BettingSyntax.DEALER
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


def _read_betting(state: State, betting: str, start: int, line: str) -> State:
    """The dealer's betting ``betting[start:]`` applied to ``state`` (where ``betting[:start]``
    left the hand), read as a dealer writes it (:attr:`BettingSyntax.DEALER`: every action
    legal as written, nothing repaired, every ``/`` exactly where a round ends)."""
    try:
        return read_betting(state, betting, start, syntax=_DEALER_SYNTAX)
    except (BettingSyntaxError, IllegalActionError) as exc:
        raise RemoteProtocolError(f"{exc}: {line!r}") from None


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
    reader = _deck_reader(game)
    if round_ == prev_round + 1:  # the usual case: one more round's board
        board = _read_deck_cards(cards[n + 1 :], reader)  # ('/' is no card: two rounds fail)
        if board is None or len(board) != game.num_board_cards[round_]:
            return None
        used = set().union(*previous.holes, *previous.boards)
        used.update(board)
        if len(used) != sum(map(len, previous.holes)) + sum(map(len, previous.boards)) + len(board):
            return None
        return previous.holes, previous.boards + (board,)
    added = cards[n + 1 :].split("/")
    if len(added) != round_ - prev_round:
        return None
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
                state = _read_betting(previous.state, betting, n, text)
        if state is None:
            state = _read_betting(State.new_hand(game), betting, 0, text)
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


def _parse_action_text(text: str, game: Game) -> tuple[ActionKind | None, int | None, bool]:
    """The dealer's ``readAction`` on ``text``: (kind or None if invalid, amount, format ok).

    No-limit amounts are read like C ``sscanf("%d")``: leading blanks and a sign are
    allowed, the value is wrapped to a 32-bit int, and anything after it is ignored.
    """
    kind = DEALER_LETTERS.get(text[:1])
    if kind is not _RAISE or game.is_limit:
        return kind, None, True
    amount = scan_c_int(text, 1)
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
        value, i = scan_c_unsigned(text, i, 32)
        if value is None:
            return None
        numbers.append(value)
    return numbers[0], numbers[1], numbers[2]


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
