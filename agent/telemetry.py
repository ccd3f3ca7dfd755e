"""Live match telemetry over MQTT that never delays or breaks play.

Topics, all JSON, under ``<prefix>/<bot>/`` (``prefix`` defaults to ``pokerbot``; the bot
name is reduced to letters, digits, ``-``, ``_`` and ``.``):

``status`` (retained)
    ``{"state": "online"|"finished"|"offline", "bot": ..., "ts": <unix seconds>}``. The
    broker publishes ``offline`` itself as the last will if the bot vanishes.
``hand``
    One message per finished hand: whatever the caller passes (hand number, position,
    betting, cards, chips won) plus ``ts``.
``score`` (retained)
    The running score after each hand: ``{"hands", "chips", "mbb_per_game", "ts"}``.
``decision``
    One message per decision of the bot (:func:`agent.decisions.decision_event`): the
    state, the action and, for a strategy player, its distribution, the translation of the
    opponent's last bet and whether it fell back to check/call. ``pokerbot web`` shows
    the same events from ``pokerbot match --watch`` files when there is no broker.

Design (after aiomqtt's own structure): :meth:`Telemetry.publish` only puts a message into
a bounded queue and returns at once; one background task drains the queue into the broker.
When the queue is full the oldest message is dropped (and counted), so a dead broker costs
memory bounded by ``queue_size`` and never a hand. A failed connection is retried with
jittered, capped exponential back-off, with one warning per outage.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import re
import ssl
import time
from collections import deque
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any

import aiomqtt

log = logging.getLogger("pokerbot.telemetry")

_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]")
#: Longest wait for a broker's acknowledgement. A broker that dies with a message in flight
#: is only noticed when this runs out (aiomqtt does not fail a pending publish on a lost
#: connection), so it is kept within close()'s default drain time: a player whose match
#: ends right after the broker died still reports the outage (and retries) before exiting.
PUBLISH_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class MqttConfig:
    """Where and how to publish. Build it from the command line with :meth:`parse`."""

    host: str
    port: int = 1883
    username: str | None = None
    password: str | None = None
    tls: bool = False
    ca_file: str | None = None
    tls_insecure: bool = False
    prefix: str = "pokerbot"
    queue_size: int = 10_000
    max_backoff_s: float = 5.0

    @classmethod
    def parse(cls, spec: str, **kwargs: Any) -> MqttConfig:
        """``HOST[:PORT]`` (IPv6 as ``[::1]:1883``) plus keyword options."""
        host, port = spec, 8883 if kwargs.get("tls") else 1883
        m = re.fullmatch(r"\[(.+)\](?::(\d+))?|([^:]+)(?::(\d+))?", spec.strip())
        if not m:
            raise ValueError(f"--mqtt {spec!r}: expected HOST[:PORT]")
        host = m.group(1) or m.group(3)
        p = m.group(2) or m.group(4)
        if p is not None:
            port = int(p)
            if not 0 < port < 65536:
                raise ValueError(f"--mqtt {spec!r}: port {port} is not in 1..65535")
        return cls(host=host, port=port, **kwargs)


def topic_for(config: MqttConfig, bot: str, leaf: str) -> str:
    """The topic ``<prefix>/<bot>/<leaf>`` with the bot name made safe for MQTT."""
    return f"{config.prefix}/{_UNSAFE.sub('_', bot) or 'bot'}/{leaf}"


class Telemetry:
    """Publishes a bot's status, hands and score; use as ``async with Telemetry(...)``.

    ``publish_*`` never await and never raise because of the broker.
    """

    def __init__(self, config: MqttConfig, bot: str) -> None:
        self.config = config
        self.bot = bot
        self.dropped = 0
        self.sent = 0
        self._queue: deque[tuple[str, bytes, bool]] = deque()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._connected = asyncio.Event()
        self._closing = False
        self._hands = 0
        self._chips = 0.0

    # -- what play calls -------------------------------------------------------------
    def publish(self, leaf: str, payload: dict[str, Any], retain: bool = False) -> None:
        """Queue one JSON message on ``<prefix>/<bot>/<leaf>``; drop the oldest if full."""
        body = dict(payload)
        body.setdefault("ts", round(time.time(), 6))
        if len(self._queue) >= self.config.queue_size:
            self._queue.popleft()
            self.dropped += 1
        self._queue.append((topic_for(self.config, self.bot, leaf), json.dumps(body).encode(), retain))
        self._wake.set()

    def publish_hand(self, hand: dict[str, Any], chips: float, big_blind: int) -> None:
        """Queue the finished hand and the running score after it."""
        self._hands += 1
        self._chips += chips
        self.publish("hand", {**hand, "chips": chips})
        mbb = 1000.0 * self._chips / (big_blind * self._hands)
        self.publish(
            "score",
            {"hands": self._hands, "chips": self._chips, "mbb_per_game": round(mbb, 3)},
            retain=True,
        )

    def set_status(self, state: str) -> None:
        """Queue a retained status message (``online``, ``finished``...)."""
        self.publish("status", {"state": state, "bot": self.bot}, retain=True)

    # -- lifecycle ---------------------------------------------------------------------
    async def __aenter__(self) -> Telemetry:
        self.set_status("online")
        # for the rest of the loop: a lost connection's leftovers may surface after close
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(_quiet_lost_broker(loop.get_exception_handler()))
        self._task = asyncio.create_task(self._run(), name=f"telemetry-{self.bot}")
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self, timeout: float = 2.0) -> None:
        """Publish ``finished``, give the queue ``timeout`` seconds to drain, then stop."""
        if self._task is None:
            return
        self.set_status("finished")
        self._closing = True
        self._wake.set()
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(self._task), timeout)
        if not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._queue:
            log.warning("telemetry: %d message(s) not delivered to %s:%d",
                        len(self._queue), self.config.host, self.config.port)
        self._task = None

    @property
    def connected(self) -> bool:
        """True while a broker connection is up."""
        return self._connected.is_set()

    # -- the drain task ------------------------------------------------------------------
    def _client(self) -> aiomqtt.Client:
        c = self.config
        tls_context = None
        if c.tls:
            tls_context = ssl.create_default_context(cafile=c.ca_file)
            if c.tls_insecure:
                tls_context.check_hostname = False
                tls_context.verify_mode = ssl.CERT_NONE
        offline = json.dumps({"state": "offline", "bot": self.bot}).encode()
        return aiomqtt.Client(
            c.host,
            c.port,
            username=c.username,
            password=c.password,
            tls_context=tls_context,
            will=aiomqtt.Will(topic_for(c, self.bot, "status"), offline, qos=1, retain=True),
            timeout=5.0,
            keepalive=10,
        )

    async def _run(self) -> None:
        backoff = 0.1
        warned = False
        while True:
            client = self._client()
            try:
                async with client:
                    self._connected.set()
                    if warned:
                        log.warning("telemetry: reconnected to %s:%d", self.config.host, self.config.port)
                    warned, backoff = False, 0.1
                    await self._drain(client)
                    return  # closing and the queue is empty
            except aiomqtt.MqttError as exc:
                self._connected.clear()
                if self._closing and not self._queue:
                    return
                if not warned:
                    log.warning("telemetry: MQTT broker %s:%d unavailable (%s); retrying",
                                self.config.host, self.config.port, exc)
                    warned = True
                # Jittered, capped back-off; wake early only to exit when closing.
                await asyncio.sleep(backoff * (0.5 + random.random()))
                backoff = min(backoff * 2, self.config.max_backoff_s)
                if self._closing:
                    return
            finally:
                _forget_disconnection(client)

    async def _drain(self, client: aiomqtt.Client) -> None:
        while True:
            while self._queue:
                topic, body, retain = self._queue[0]
                await client.publish(topic, body, qos=1, retain=retain, timeout=PUBLISH_TIMEOUT_S)
                self._queue.popleft()  # only after the broker took it
                self.sent += 1
            if self._closing:
                return
            self._wake.clear()
            await self._wake.wait()


Handler = Callable[[asyncio.AbstractEventLoop, dict[str, Any]], object]


def _quiet_lost_broker(previous: Handler | None) -> Handler:
    """An event-loop exception handler for a process that publishes telemetry: what the
    MQTT client leaves behind when the broker vanishes (a callback registering its
    already-closed socket: ``OSError``; a disconnection nobody reads: ``MqttError``) is
    already handled by the drain task (one warning, reconnection), so it is not printed
    again; anything else goes to ``previous`` (or the loop's default handler)."""

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        where = repr(context.get("handle", "")) + repr(context.get("future", ""))
        if isinstance(exc, aiomqtt.MqttError):
            return
        if isinstance(exc, OSError) and ("add_writer" in where or "add_reader" in where):
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    return handler


def _forget_disconnection(client: aiomqtt.Client) -> None:
    """aiomqtt keeps an unexpected disconnection as the exception of a private future and
    does not always read it; asyncio would then print "Future exception was never
    retrieved" at exit. The loss is already handled here (a warning, reconnection)."""
    future = getattr(client, "_disconnected", None)
    if isinstance(future, asyncio.Future) and future.done() and not future.cancelled():
        future.exception()
