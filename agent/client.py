"""The ACPC client over TCP: a thin asyncio shell around :class:`agent.protocol.ClientConnection`.

It connects (TCP_NODELAY), sends ``VERSION:2.0.0``, and answers exactly the states in
which its position is to act, echoing each state as received. The bot's answer is made
legal before it is sent; a bot that raises, or an ``async`` bot that misses the
per-action deadline, is answered for with a call (always legal). EOF from the dealer is
the normal end of the match; a broken connection is a :class:`ClientError`.

A decision costs one event-loop wake-up and no task switch: a plain ``act`` is answered
inside ``data_received``. ``pokerbot play`` runs on uvloop (:mod:`agent.eventloop`).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import cast

from poker.game import Game
from poker.state import Action

from .eventloop import CAN_POLL, POLLED_READS, busy_read
from .protocol import NEED_DATA, ClientConnection, MatchEnded, MatchState, StateMessage, _NeedData

log = logging.getLogger("pokerbot.client")


class ClientError(Exception):
    """The connection to the dealer could not be made or broke during the match."""


@dataclass(frozen=True)
class MatchSummary:
    """A client's result: finished hands, chips won over them, and the game's big blind."""

    hands: int
    chips: float
    big_blind: int
    fallbacks: int = 0  # decisions answered with the fallback call

    @property
    def mbb_per_game(self) -> float:
        """Milli-big-blinds won per hand."""
        return 1000.0 * self.chips / self.big_blind / self.hands if self.hands and self.big_blind else 0.0

    def __str__(self) -> str:
        return f"hands {self.hands}, chips {self.chips:+g}, {self.mbb_per_game:+.1f} mbb/g"


class _ClientProtocol(asyncio.Protocol):
    """Feeds received bytes to the connection and answers owed states as they come.

    A plain ``act`` is answered inside ``data_received`` (no task switch per decision); an
    awaitable answer is awaited in a task under the deadline, and lines arriving meanwhile
    wait in the buffer. With a polling budget (``spin_s``), what arrives within it after a
    read is handled in the same callback (:func:`agent.eventloop.busy_read`).
    """

    def __init__(
        self,
        conn: ClientConnection,
        bot: object,
        timeout: float | None,
        done: asyncio.Future[None],
        on_hand: Callable[[MatchState, float], None] | None = None,
        spin_s: float = 0.0,
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

    def connection_made(self, base: asyncio.BaseTransport) -> None:
        transport = cast(asyncio.Transport, base)  # a stream transport (uvloop's too)
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.spin_s > 0 and CAN_POLL:
                self.fd = sock.fileno()
        transport.write(self.conn.initiate())

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
            if event is NEED_DATA:
                return
            if isinstance(event, MatchEnded):
                done.set_result(None)
                return
            current, event = cast(StateMessage, event), None
            if not current.my_turn:
                if current.value is not None and self.on_hand is not None:
                    self._report(current)
                continue
            ms = current.match_state
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


async def play_match(
    host: str,
    port: int,
    bot: object,
    game: Game,
    *,
    action_timeout: float | None = 5.0,
    connect_timeout: float = 10.0,
    on_hand: Callable[[MatchState, float], None] | None = None,
    spin_us: float = 0.0,
) -> MatchSummary:
    """Play one match against the dealer at ``host:port``; returns the summary at EOF.

    ``on_hand(match_state, chips)`` is called for every finished hand whose result is
    known (telemetry uses it); it runs inline and must not block. After each read the
    client polls its socket for up to ``spin_us`` microseconds before it sleeps (see
    :func:`agent.eventloop.busy_read`; ``pokerbot play`` polls by default, 0 never): it
    holds the event loop meanwhile, so it helps only against a dealer in another process.

    Raises :class:`ClientError` if the connection cannot be made or breaks, and
    :class:`agent.protocol.RemoteProtocolError` if the dealer sends a line that is not a
    valid state of ``game``.
    """
    import poker.evaluator  # noqa: F401  (warm up before the first showdown, not during it)

    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()
    conn = ClientConnection(game)
    try:
        async with asyncio.timeout(connect_timeout):
            transport, proto = await loop.create_connection(
                lambda: _ClientProtocol(conn, bot, action_timeout, done, on_hand, spin_us * 1e-6), host, port)
    except (OSError, TimeoutError) as exc:
        raise ClientError(f"cannot connect to the dealer at {host}:{port}: {exc or 'timed out'}") from None
    try:
        await done
    finally:
        if proto.deciding is not None:
            proto.deciding.cancel()
        transport.close()
    return MatchSummary(conn.hands, conn.chips, game.big_blind, proto.fallbacks)


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
