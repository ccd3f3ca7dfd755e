"""The ACPC client over TCP: a thin asyncio shell around :class:`agent.protocol.client_state.ClientConnection`.

It connects (TCP_NODELAY), sends ``VERSION:2.0.0``, and answers exactly the states in
which its position is to act, echoing each state as received. The bot's answer is made
legal before it is sent; a bot that raises, or an ``async`` bot that misses the
per-action deadline, is answered for with a call (always legal). EOF from the dealer ends
the match; a broken connection, or a dealer silent for longer than the read timeout, is a
:class:`ClientError`. Whether the match ended complete is the summary's to say
(:meth:`MatchSummary.incomplete`): EOF in the middle of a hand is an aborted match.

A decision costs one event-loop wake-up and no task switch: a plain ``act`` is answered
inside ``data_received``. ``pokerbot play`` runs on uvloop (:mod:`agent.eventloop`).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import math
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import cast

from poker.game import Game
from poker.state import Action

from .eventloop import CAN_POLL, POLLED_READS, PollingChoice, SpinSetting, busy_read, resolve_spin
from .protocol.client_state import NEED_DATA, ClientConnection, MatchEnded, StateMessage, _NeedData
from .protocol.codec import MatchState

log = logging.getLogger("pokerbot.client")


class ClientError(Exception):
    """The connection to the dealer could not be made, broke during the match, or the
    dealer fell silent. ``summary``: the hands played until then (``None`` if none could be)."""

    def __init__(self, message: str, summary: MatchSummary | None = None) -> None:
        super().__init__(message)
        self.summary = summary


def format_chips(chips: float) -> str:
    """Chips with their sign, exactly and never in exponent notation: an integral amount
    as an integer (``+48985900``), any other as the shortest decimal that reads back as the
    same float (``-12.5``; split pots give halves, thirds in 3-way pots)."""
    if chips == 0:
        return "+0"  # and no "-0"
    if not math.isfinite(chips):
        return f"{chips:+}"
    if chips.is_integer():
        return f"{int(chips):+d}"
    text = format(Decimal(repr(chips)), "f")  # repr: the shortest round trip; "f": no exponent
    return text if text.startswith("-") else "+" + text


def _hands(n: int) -> str:
    return f"{n} hand" if n == 1 else f"{n} hands"


@dataclass(frozen=True)
class MatchSummary:
    """A client's result: finished hands, chips won over them, and the game's big blind.

    ``hands`` counts the finished hands whose result is known; ``unscored_hands`` those
    whose result is not (a showdown whose cards were not shown). ``unfinished_hand`` is the
    ACPC number (from 0) of the hand the connection ended in, when it ended in the middle
    of one (a state of that hand seen, its end not), else ``None``. ``legalized`` counts
    the bot's answers that had to be changed to be legal
    (:attr:`agent.protocol.client_state.ClientConnection.legalized`); ``polling`` is how
    the client polled its socket (:func:`agent.eventloop.resolve_spin`; not compared).
    """

    hands: int
    chips: float
    big_blind: int
    fallbacks: int = 0  # decisions answered with the fallback call
    unscored_hands: int = 0
    unfinished_hand: int | None = None
    legalized: int = 0
    polling: PollingChoice | None = field(default=None, compare=False)

    @property
    def mbb_per_game(self) -> float:
        """Milli-big-blinds won per hand."""
        return 1000.0 * self.chips / self.big_blind / self.hands if self.hands and self.big_blind else 0.0

    @property
    def completed_hands(self) -> int:
        """Every hand that reached its end, scored or not."""
        return self.hands + self.unscored_hands

    def incomplete(self, expected_hands: int | None = None) -> str | None:
        """Why the match that ended with this summary did not complete, or ``None`` if it did.

        Incomplete: the connection ended in the middle of a hand, no hand was played at
        all, or fewer than ``expected_hands`` hands (when known) were completed. Hands in
        the text are counted from 1, as in "hand 17 (16 hands completed)".
        """
        done = self.completed_hands
        of = f" of {expected_hands}" if expected_hands is not None else ""
        if self.unfinished_hand is not None:
            return (f"the dealer closed the connection in hand {self.unfinished_hand + 1}{of} "
                    f"({_hands(done)} completed)")
        if expected_hands is not None and done < expected_hands:
            return f"the dealer closed the connection after {done} of {_hands(expected_hands)}"
        if done == 0:
            return "the dealer closed the connection before the first hand"
        return None

    def __str__(self) -> str:
        text = f"hands {self.hands}, chips {format_chips(self.chips)}, {self.mbb_per_game:+.1f} mbb/g"
        if self.legalized:
            text += f", {self.legalized} {'answer' if self.legalized == 1 else 'answers'} legalized"
        return text


class _ClientProtocol(asyncio.Protocol):
    """Feeds received bytes to the connection and answers owed states as they come.

    A plain ``act`` is answered inside ``data_received`` (no task switch per decision); an
    awaitable answer is awaited in a task under the deadline, and lines arriving meanwhile
    wait in the buffer. With a polling budget (``spin_s``), what arrives within it after a
    read is handled in the same callback (:func:`agent.eventloop.busy_read`).

    With a ``read_timeout``, a watchdog ends the match with a :class:`ClientError` when
    nothing has come from the dealer for that long since the last read or answer (not
    while an ``async`` answer is being awaited: the dealer then waits for us).
    """

    def __init__(
        self,
        conn: ClientConnection,
        bot: object,
        timeout: float | None,
        done: asyncio.Future[None],
        on_hand: Callable[[MatchState, float], None] | None = None,
        spin_s: float = 0.0,
        read_timeout: float | None = None,
    ) -> None:
        self.conn = conn
        self.spin_s = spin_s
        self.fd = -1  # the socket's descriptor, when polling
        self.on_hand = on_hand
        self.bot = bot
        self.timeout = timeout
        self.done = done
        self.transport: asyncio.Transport | None = None
        self.fallbacks = 0
        self.deciding: asyncio.Task[None] | None = None
        #: The last state handled: where the match stood when the connection ended.
        self.last: MatchState | None = None
        self.read_timeout = read_timeout
        self.last_io = 0.0  # time.monotonic() of the last read or answer (with a read timeout)
        self.watchdog: asyncio.TimerHandle | None = None

    def connection_made(self, base: asyncio.BaseTransport) -> None:
        transport = cast(asyncio.Transport, base)  # a stream transport (uvloop's too)
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):  # (a Unix socket has no such option)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.spin_s > 0 and CAN_POLL:
                self.fd = sock.fileno()
        transport.write(self.conn.initiate())
        if self.read_timeout is not None:
            self.last_io = time.monotonic()
            self.watchdog = asyncio.get_running_loop().call_later(self.read_timeout, self._watch)

    def data_received(self, data: bytes) -> None:
        self._received(data)
        fd = self.fd
        if fd < 0:
            return
        # Lines that come within the budget are handled here, without a trip through the
        # event loop (a bounded number, so that the loop still runs now and then). End of
        # file and errors are left to the loop, which finds them on its next read.
        for _ in range(POLLED_READS):
            transport = self.transport
            if self.deciding is not None or self.done.done() or transport is None or transport.is_closing():
                return
            more = busy_read(fd, self.spin_s)
            if not more:
                return
            self._received(more)

    def _received(self, data: bytes) -> None:
        if self.read_timeout is not None:
            self.last_io = time.monotonic()
        try:
            if self.deciding is None:
                self._process(self.conn.receive_data_event(data))
            else:
                self.conn.receive_data(data)  # read after the decision
        except Exception as exc:  # protocol errors end the match; let play_match raise them
            self._fail(exc)

    def eof_received(self) -> bool:
        self.data_received(b"")
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if self.done.done():
            return
        if exc is not None:
            self._fail(ClientError(f"connection to the dealer broke after {self.conn.hands} hands: {exc}"))
            return
        try:
            self.conn.receive_data(b"")
            self._process()
        except Exception as err:
            self._fail(err)
            return
        if not self.done.done():  # closed by us after an error, or EOF inside a line
            self.done.set_result(None)

    def _watch(self) -> None:
        """The read timeout's watchdog: fail the match, or look again when it could expire."""
        self.watchdog = None
        timeout = self.read_timeout
        if self.done.done() or timeout is None:
            return
        left = self.last_io + timeout - time.monotonic()
        if self.deciding is not None:
            left = timeout  # our turn: the dealer is waiting for us, not we for it
        elif left <= 0:
            last = self.last
            if last is None:
                where = "before the first state"
            else:
                ended = last.state.actor is None
                done = self.conn.hands + self.conn.unscored_hands
                where = f"after hand {last.hand_number + 1}" if ended else f"in hand {last.hand_number + 1}"
                where += f" ({_hands(done)} completed)"
            self._fail(ClientError(f"no line from the dealer for {timeout:g} s (read timeout) {where}"))
            return
        self.watchdog = asyncio.get_running_loop().call_later(left, self._watch)

    def _fail(self, exc: BaseException) -> None:
        if not self.done.done():
            self.done.set_exception(exc)
        if self.transport is not None:
            self.transport.abort()

    def _process(self, first: StateMessage | MatchEnded | _NeedData | None = None) -> None:
        """Handle ``first`` (an event already taken from the connection), then every
        further event received, until more data is needed or a decision is pending."""
        conn = self.conn
        done = self.done
        event = first
        while self.deciding is None and not done.done():
            if event is None:
                if conn.idle:
                    return
                event = conn.next_event()
            if event.__class__ is not StateMessage:  # (one class test per line: a hot loop)
                if isinstance(event, MatchEnded):
                    done.set_result(None)
                return  # NEED_DATA
            current: StateMessage = event  # type: ignore[assignment]
            event = None
            ms = current.match_state
            self.last = ms
            if not current.my_turn:
                if current.value is not None and self.on_hand is not None:
                    self._report(current)
                continue
            try:
                action = self.bot.act(ms)  # type: ignore[attr-defined]
            except Exception:  # noqa: BLE001 - a bot's bug must not lose the match: call instead
                log.exception("bot failed in hand %d; calling", ms.hand_number)
                action = Action.call()
                self.fallbacks += 1
            # (an Action is never awaitable, and isawaitable is an ABC check: slow)
            if type(action) is not Action and inspect.isawaitable(action):
                self.deciding = asyncio.ensure_future(self._decide(ms, action))
            else:
                self._send(action)

    def _report(self, event: StateMessage) -> None:
        """Hand the finished hand to the observer; its failure must not cost the match."""
        assert self.on_hand is not None and event.value is not None
        try:
            self.on_hand(event.match_state, event.value)
        except Exception:  # noqa: BLE001
            log.exception("hand observer failed in hand %d", event.match_state.hand_number)

    async def _decide(self, ms: MatchState, pending: Awaitable[object]) -> None:
        action: object
        try:
            async with asyncio.timeout(self.timeout):
                action = await pending
        except TimeoutError:
            log.warning("bot missed the %.3g s deadline in hand %d; calling", self.timeout, ms.hand_number)
            action, self.fallbacks = Action.call(), self.fallbacks + 1
        except Exception:  # noqa: BLE001 - a bot's bug must not lose the match: call instead
            log.exception("bot failed in hand %d; calling", ms.hand_number)
            action, self.fallbacks = Action.call(), self.fallbacks + 1
        self.deciding = None
        if self.done.done():
            return
        try:
            self._send(action)
            self._process()
        except Exception as exc:  # protocol errors end the match; let play_match raise them
            self._fail(exc)

    def _send(self, action: object) -> None:
        assert self.transport is not None
        if not self.transport.is_closing():
            self.transport.write(self.conn.send_action(action))
            if self.read_timeout is not None:
                self.last_io = time.monotonic()  # the dealer's next line is due from now


async def play_match(
    host: str,
    port: int,
    bot: object,
    game: Game,
    *,
    action_timeout: float | None = 5.0,
    connect_timeout: float = 10.0,
    on_hand: Callable[[MatchState, float], None] | None = None,
    spin_us: SpinSetting = 0.0,
    read_timeout: float | None = None,
    unix_path: str | None = None,
) -> MatchSummary:
    """Play one match against the dealer at ``host:port`` (or at the Unix socket
    ``unix_path``, where ``host`` and ``port`` are ignored); returns the summary at EOF.

    EOF is not proof of a complete match: see :meth:`MatchSummary.incomplete` (the
    summary records a hand the connection ended in).

    ``on_hand(match_state, chips)`` is called for every finished hand whose result is
    known (telemetry uses it); it runs inline and must not block. After each read the
    client polls its socket for up to ``spin_us`` microseconds before it sleeps (see
    :func:`agent.eventloop.busy_read`; 0 never, ``"auto"`` where this machine's probe says
    it pays: :func:`agent.eventloop.resolve_spin`, the summary's ``polling``): it holds
    the event loop meanwhile, so it helps only against a dealer in another process.
    With ``read_timeout`` (seconds), a dealer that sends nothing for that long after the
    connection, a line or an answer ends the match with a :class:`ClientError`.

    Raises :class:`ClientError` if the connection cannot be made, breaks or times out
    (with the summary of the hands played until then, once connected), and
    :class:`agent.protocol.codec.RemoteProtocolError` if the dealer sends a line that is not a
    valid state of ``game``.
    """
    import poker.evaluator  # noqa: F401  (warm up before the first showdown, not during it)

    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()
    conn = ClientConnection(game)
    if read_timeout is not None and not read_timeout > 0:
        raise ValueError(f"the read timeout must be positive, not {read_timeout}")
    polling = resolve_spin(spin_us, unix=unix_path is not None)
    def factory() -> _ClientProtocol:
        return _ClientProtocol(conn, bot, action_timeout, done, on_hand, polling.spin_us * 1e-6, read_timeout)

    where = f"{host}:{port}" if unix_path is None else unix_path
    try:
        async with asyncio.timeout(connect_timeout):
            if unix_path is None:
                transport, proto = await loop.create_connection(factory, host, port)
            else:
                transport, proto = await loop.create_unix_connection(factory, unix_path)
    except (OSError, TimeoutError) as exc:
        raise ClientError(f"cannot connect to the dealer at {where}: {exc or 'timed out'}") from None

    def summary() -> MatchSummary:
        last = proto.last
        unfinished = None if last is None or last.state.actor is None else last.hand_number
        return MatchSummary(conn.hands, conn.chips, game.big_blind, proto.fallbacks,
                            conn.unscored_hands, unfinished, conn.legalized, polling)

    try:
        await done
    except ClientError as exc:
        if exc.summary is None:
            exc.summary = summary()
        raise
    finally:
        if proto.deciding is not None:
            proto.deciding.cancel()
        if proto.watchdog is not None:
            proto.watchdog.cancel()
            proto.watchdog = None
        transport.close()
    return summary()


def measure_decision_overhead(game: Game, lines: list[bytes], bot: object) -> list[float]:
    """Per-decision CPU seconds spent in the client's own code (reading every line since the
    previous decision, legalizing, formatting) for a recorded stream of dealer lines; the
    bot's time is excluded. For benchmarks and tests."""
    conn = ClientConnection(game)
    conn.initiate()
    costs: list[float] = []
    # CPU time of this thread: what the client's code costs, whatever else the machine runs.
    clock = time.thread_time
    start = clock()
    for line in lines:
        conn.receive_data(line)
        while True:
            event = conn.next_event()
            if event is NEED_DATA or isinstance(event, MatchEnded):
                break
            assert isinstance(event, StateMessage)
            if event.my_turn:
                t = clock()
                action = bot.act(event.match_state)  # type: ignore[attr-defined]
                bot_time = clock() - t
                conn.send_action(action)
                now = clock()
                costs.append(now - start - bot_time)
                start = now
                break
    return costs
