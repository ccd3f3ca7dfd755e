"""The client end of an ACPC connection as a state machine without I/O (the h11 pattern).

:class:`ClientConnection` takes the dealer's bytes (:meth:`~ClientConnection.receive_data`)
and gives events (:meth:`~ClientConnection.next_event`): a :class:`StateMessage` per
MATCHSTATE line (``my_turn`` when it must be answered, ``value`` at the end of a hand),
:class:`MatchEnded` at end of file, or :data:`NEED_DATA`; the answer's bytes come from
:meth:`~ClientConnection.send_action`, which legalizes whatever the bot returned
(:func:`agent.protocol.codec.legalize`) and counts the answers it had to change
(:attr:`~ClientConnection.legalized`). :mod:`agent.client` is the asyncio shell around it.

The rules (SPEC §2): the client sends ``VERSION:2.0.0`` first; nothing says "your turn",
so the client works it out from the betting, answers exactly those states with
``<state as received>:<action>`` and never answers a finished hand; end of file is the
normal end of a match.

Speed: a match is a ping-pong of short lines and the client reads every state of every
hand, so a line is read incrementally against the previous one (fields that did not
change are taken over, only new actions and cards are read and checked), states are
remembered by their betting text, and a finished hand's value is computed from the cards
already checked (:func:`_own_value`). ``tests/test_fast_paths.py`` compares each of these
paths with the general code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from poker.game import Game
from poker.state import Action, State, _evaluator, _showdown_value

from .codec import (
    _CALL_ACTION,
    CLIENT_MAX_LINE,
    VERSION_LINE,
    LineBuffer,
    LocalProtocolError,
    MatchState,
    ProtocolError,
    RemoteProtocolError,
    StateParseError,
    _new_object,
    _read_match_state,
    legalize,
)

__all__ = ["NEED_DATA", "ClientConnection", "MatchEnded", "StateMessage"]


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


# StateMessage(...) without the frozen dataclass's __init__ (one per line): its slot setters
_set_event_state, _set_event_my_turn, _set_event_value = (
    StateMessage.__dict__[name].__set__ for name in ("match_state", "my_turn", "value")
)


_COMMENT_STARTS: Final = (b"#", b";")


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
        self._max_line = max_line
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
        #: Answers :meth:`send_action` had to change to make them legal (see there).
        self.legalized = 0

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
        # The usual read in a match: one or two whole lines with nothing waiting. The first
        # line needs no buffer (the rest waits there for next_event); the event is the one
        # receive_data then next_event would give.
        if type(data) is bytes and self._error is None and self._started and not self._ended and lines.empty:
            end = data.find(b"\n")
            if 0 <= end < self._max_line:
                first = data
                if end + 1 < len(data):
                    first = data[: end + 1]
                    lines.feed(data[end + 1 :])  # (raises nothing: the buffer was empty)
                event = self._read_line(first)
                return self.next_event() if event is None else event
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
        if line[:1] in _COMMENT_STARTS:
            return None
        try:
            text = line.decode("ascii")
        except UnicodeDecodeError:
            raise self._fail(RemoteProtocolError(f"line {line[:80]!r} is not ASCII")) from None
        parts = text.split(":")
        try:
            ms = _read_match_state(text, parts, self.game, self._last, self._last_parts, self._states)
        except ProtocolError as exc:
            raise self._fail(StateParseError(str(exc))) from None
        self._last = ms
        self._last_parts = parts
        event = _new_object(StateMessage)
        _set_event_state(event, ms)
        state = ms.state
        if state.actor is None:
            self._owed = None
            value = _own_value(ms)
            if value is None:
                self.unscored_hands += 1
            else:
                self.hands += 1
                self.chips += value
            _set_event_my_turn(event, False)
            _set_event_value(event, value)
            return event
        mine = state.actor == ms.position
        self._owed = ms if mine else None
        _set_event_my_turn(event, mine)
        _set_event_value(event, None)
        return event

    def send_action(self, action: object) -> bytes:
        """The response line for the owed state; ``action`` is legalized first (:func:`legalize`).

        An answer whose legal form is sent as something else (another kind of action, another
        no-limit raise-to, or anything that is not an :class:`~poker.state.Action`) is
        counted in :attr:`legalized`; a limit raise is sent as ``r`` whatever amount it
        carries, so its amount is no change.
        Raises :class:`LocalProtocolError` when no state is owed an answer.
        """
        self._check()
        ms = self._owed
        if ms is None:
            raise self._fail(LocalProtocolError("no state is waiting for an answer (not our turn, or already answered)"))
        self._owed = None
        if action is _CALL_ACTION:  # legal whenever an answer is owed
            return f"{ms.text}:c\r\n".encode("ascii")
        limit = self.game.is_limit
        legal = legalize(ms.state, action)
        text = legal.to_acpc(limit)
        # legalize returns the very action it was given when that was legal
        if legal is not action and (not isinstance(action, Action) or action.to_acpc(limit) != text):
            self.legalized += 1
        return f"{ms.text}:{text}\r\n".encode("ascii")

    def _check(self) -> None:
        if self._error is not None:
            raise type(self._error)(f"connection unusable after an earlier error: {self._error}")

    def _fail(self, exc: ProtocolError) -> ProtocolError:
        self._error = exc
        return exc


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
