"""The dealer's side of an ACPC match as a state machine without I/O (the h11 pattern).

:class:`DealerMatch` deals and referees one match as the reference dealer does (protocol
2.0.0): the shell feeds it each seat's version line, then every line read from the seat
to act, timeouts and lost connections, with the time; it returns what to do, in order:
:class:`Send` a line to a seat, :class:`Diagnostic` (a stderr line), :class:`LogLine`
(a hand-log line) and finally :class:`MatchOver`. Its :class:`TimeLimits` are the
reference dealer's. :mod:`agent.dealer` is the asyncio shell around it.

The rules it keeps, from SPEC §1-2 and §6-7 (the reference dealer's behaviour):

* Every message is ``MATCHSTATE:<position>:<hand>:<betting>:<cards>`` with CRLF, sent to
  every seat after every action (a seat sees its own hole cards, and at a showdown those
  of every player who did not fold); the log gets a STATE line per hand and a SCORE line.
* The dealer reads at most 4095 bytes per line (:data:`~agent.protocol.codec.DEALER_MAX_LINE`);
  lines starting with ``#`` or ``;`` are skipped and not charged time.
* A response is judged in this order: comment? -> charge the time since the state was
  sent and check the limits -> read the echoed state leniently, as the reference dealer's
  C reader does (:func:`_read_echo`: the betting through :func:`poker.betting.read_betting`
  in its ``LENIENT`` mode) -> compare it with the current state by meaning -> read ``:``
  and the action -> repair the action (:func:`poker.state.repair`). Unparseable and stale
  lines are ignored with a warning; a bad or illegal action becomes a call (or a clamped
  raise) with a warning; it never ends the match. Timeouts and disconnects do.

Speed: every action costs the dealer one response and a message per seat, so an echoed
call of the exact text sent is answered without parsing or repairing anything, each
seat's message is built from per-hand pieces (head, visible cards, board) and the betting
it keeps, states are remembered by their betting text, and the :class:`Send` made for
every message skips the frozen dataclass ``__init__``. The shell may go further: the
answer to a call is made while the seat thinks (:meth:`DealerMatch.prepare_call`) and
applied when the call comes (:meth:`DealerMatch.take_prepared`), with the same messages
and the same time charged as reading it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from poker.betting import BettingSyntax, BettingSyntaxError, read_betting, scan_c_unsigned
from poker.cards import format_cards
from poker.game import Game
from poker.log import format_header, format_score_line, format_value
from poker.rng import Dealer as CardDealer
from poker.state import MAX_ACTIONS_PER_ROUND, Action, ActionKind, Deal, IllegalActionError, State, repair

from .codec import (
    _CALL_ACTION,
    _CALL_BYTES,
    _CARD_OF,
    _UINT32_MAX,
    LocalProtocolError,
    _new_object,
    _parse_action_text,
    _strip_eol,
    parse_version,
)

__all__ = ["DealerMatch", "Diagnostic", "LogLine", "MatchOver", "Output", "PreparedCall", "Send", "TimeLimits"]

_RAISE = ActionKind.RAISE
_LENIENT: Final = BettingSyntax.LENIENT
_TRANSITIONS_KEPT: Final = 4096  # the dealer's remembered transitions (DealerMatch._apply)


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


@dataclass(frozen=True, slots=True)
class PreparedCall:
    """The answer to the acting seat's call, made before the call came
    (:meth:`DealerMatch.prepare_call`): ``lines``, the responses it answers (the text
    sent, echoed exactly, then ``:c`` and CRLF or LF); ``seat``, the seat to act next,
    and ``data``, its message; ``others``, every other seat's message, in seat order."""

    lines: tuple[bytes, bytes]
    seat: int
    data: bytes
    others: tuple[tuple[int, bytes], ...]
    _sent: bytes  # the text it answers (a new object each time one is sent)
    _state: State  # the state, betting and text sent to ``seat`` after the call
    _betting: str
    _expect: bytes


_set_send_seat = Send.__dict__["seat"].__set__
_set_send_data = Send.__dict__["data"].__set__


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
    viewer, i = scan_c_unsigned(text, 11, 8)
    if viewer is None or viewer >= game.num_players or text[i : i + 1] != ":":
        return None
    hand, i = scan_c_unsigned(text, i + 1, 32)
    if hand is None or text[i : i + 1] != ":":
        return None
    i += 1
    end = text.find(":", i)  # the betting ends at the next ':' (or with the line)
    if end < 0:
        end = len(text)
    try:
        state = read_betting(State.new_hand(game), text[i:end], syntax=_LENIENT)
    except (BettingSyntaxError, IllegalActionError):
        return None
    i = min(end + 1, len(text))
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


def _card_texts(deal: Deal) -> tuple[list[str], list[str]]:
    """A deal's hole cards as text, by position, and its board field through each round
    (round 0's cards follow the holes)."""
    holes = [format_cards(hole) for hole in deal.holes]
    texts, acc = [], ""
    for r, b in enumerate(deal.boards):
        acc += ("/" if r else "") + format_cards(b)
        texts.append(acc)
    return holes, texts


class DealerMatch:
    """One match, dealt and refereed as the reference dealer does it, without I/O.

    The shell connects the seats, then calls :meth:`receive_version` once per seat (in seat
    order), :meth:`start`, and then, while :attr:`acting_seat` is not ``None``, reads a line
    from that seat and passes it to :meth:`receive_line` (or, when it is exactly the call
    :meth:`prepare_call` made ready, to :meth:`take_prepared`; or :meth:`read_timed_out` after
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
        # Made ahead while a seat thinks (prepare_ahead): the ranks of this deal's hands on
        # the whole board, and the next hand's deal with its card texts and its dealer.
        self._ranks: list[int] | None = None
        self._upcoming: tuple[CardDealer, Deal, list[str], list[str]] | None = None
        self._last_round = game.num_rounds - 1
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
        hand_used, match_used, in_time = self._charged(seat, now)
        self._hand_used[seat] = hand_used
        self._match_used[seat] = match_used
        if not in_time:
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

    def prepare_call(self) -> PreparedCall | None:
        """What a call from the acting seat would send, made now, without changing the
        match; ``None`` where there is nothing to prepare: no seat to act, a seat lost,
        or the call would end the hand (its values, log line and the next deal are left
        to :meth:`receive_line`: made ahead, they cost more than the wait they fill). The
        shell makes it while it waits for the response, and :meth:`take_prepared`
        applies it if the response is exactly that call, so that the next state goes out
        without being built on the response's path."""
        seat = self._acting
        state = self._state
        if self.over or seat is None or state is None or True in self._dead:
            return None
        after, betting = self._step(state, self._betting + "c", _CALL_ACTION)
        actor = after.actor
        if actor is None:
            return None
        board = self._board_text[after.round]
        texts = [f"{head}{betting}{cards}{board}".encode("ascii") for head, cards in self._views]
        nxt = self._seat_of[actor]
        sent = self._expect
        return PreparedCall(
            (sent + b":c\r\n", sent + b":c\n"), nxt, texts[nxt] + b"\r\n",
            tuple((s, t + b"\r\n") for s, t in enumerate(texts) if s != nxt),
            sent, after, betting, texts[nxt],
        )

    def take_prepared(self, prepared: PreparedCall, now: float) -> bool:
        """Apply ``prepared`` (from :meth:`prepare_call` in the current state) for one of
        the responses ``prepared.lines`` at ``now``: what :meth:`receive_line` does with
        that line, whose outputs are then exactly ``prepared``'s messages. ``False``, with
        the match unchanged, where it does not apply (the state moved on, a seat was lost,
        or the response broke a time limit): the response then goes to :meth:`receive_line`."""
        seat = self._acting
        if self.over or seat is None or prepared._sent is not self._expect or True in self._dead:
            return False  # (a seat lost since: reading the call leaves it out, or aborts)
        hand_used, match_used, in_time = self._charged(seat, now)
        if not in_time:
            return False
        self._hand_used[seat] = hand_used
        self._match_used[seat] = match_used
        self._state = prepared._state
        self._betting = prepared._betting
        self._expect = prepared._expect
        self._sent_at = now
        self._acting = prepared.seat
        return True

    def _charged(self, seat: int, now: float) -> tuple[float, float, bool]:
        """The acting ``seat``'s time this hand and this match once a response read at
        ``now`` is charged (all the time since the state was sent), and whether that
        keeps within every limit."""
        elapsed = now - self._sent_at
        if elapsed < 0.0:
            elapsed = 0.0
        hand_used = self._hand_used[seat] + elapsed
        match_used = self._match_used[seat] + elapsed
        response_ms, hand_ms, match_ms = self._limits_ms
        in_time = not (elapsed * 1000 > response_ms or hand_used * 1000 > hand_ms or match_used * 1000 > match_ms)
        return hand_used, match_used, in_time

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

    def prepare_ahead(self) -> bool:
        """Do one piece of what the end of the hand will need, while a seat thinks: rank
        the players' hands on the whole board (a showdown then evaluates nothing), or deal
        the next hand (from this pass's dealer, or the next pass's from the seed). Returns
        whether there was a piece left to do. Calling it or not changes nothing the match
        does or sends (tested); it moves work off the path from a hand's last response to
        the next hand's first message."""
        deal = self._deal
        if self.over or deal is None:
            return False
        if self._ranks is None:
            from poker.evaluator import evaluate_trusted as evaluate  # (the dealer warms it up)

            board = deal.board_through(self._last_round)
            self._ranks = [evaluate(hole + board) for hole in deal.holes]
            return True
        if self._upcoming is None:
            if self._hand_in_pass + 1 < self.num_hands:
                cards = self._cards
                assert cards is not None
            elif self._pass + 1 < self.passes:
                cards = CardDealer(self.game, self.seed)  # the next pass deals the same cards again
            else:
                return False  # the match's last hand
            upcoming = cards.next_deal()
            self._upcoming = (cards, upcoming, *_card_texts(upcoming))
            return True
        return False

    def _begin_hand(self, now: float, out: list[Output]) -> None:
        game = self.game
        upcoming = self._upcoming
        if upcoming is not None:
            self._cards, deal, holes, texts = upcoming
            self._upcoming = None
        else:
            if self._cards is None:
                self._cards = CardDealer(game, self.seed)
            deal = self._cards.next_deal()
            holes, texts = _card_texts(deal)
        self._ranks = None
        n = game.num_players
        h = self._hand_in_pass
        shift = self._pass + (0 if self.fixed_seats else h)
        self._seat_of = seat_of = tuple((p + shift) % n for p in range(n))
        self._hand_used = [0.0] * n
        self._deal = deal
        self._state = self._first_state  # the same every hand: the deal is kept apart
        self._betting = ""
        self._hole_text = holes
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
        state = self._state
        assert state is not None
        self._state, self._betting = self._step(state, self._betting + text, action)
        self._broadcast(now, out)

    def _step(self, state: State, key: str, action: Action) -> tuple[State, str]:
        """``state`` after ``action``, and the betting text after it (``key``, the
        betting text with the action's, and a ``/`` for each round it ends)."""
        step = self._next.get(key)
        if step is None:
            after = state.apply(action)
            step = (after, key + "/" * (after.round - state.round))
            if len(self._next) >= _TRANSITIONS_KEPT:
                self._next.clear()
            self._next[key] = step
        return step

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
        append = out.append
        for seat, (head, cards) in enumerate(views):
            text = f"{head}{betting}{cards}{board}".encode("ascii")
            if seat == acting_seat:
                self._expect = text
            if not dead[seat]:
                send = _new_object(Send)  # Send(seat, data) without its __init__ (two per action)
                _set_send_seat(send, seat)
                _set_send_data(send, text + b"\r\n")
                append(send)
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
        ranks = self._ranks
        if ranks is not None and state.round == self._last_round:
            values = state.values(ranks)  # ranked ahead (prepare_ahead)
        else:
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
