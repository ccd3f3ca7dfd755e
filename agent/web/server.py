"""``pokerbot web``'s server: one page, a WebSocket for the Play view and one for Watch.

Routes: ``/`` the page, ``/static/{app.js,style.css}``, ``/ws/play`` and ``/ws/watch``
(JSON text frames; the messages are listed in the README's "Play it in the browser"
section). The server holds one table (:class:`agent.web.table.PlayTable`): the tab that
opened last holds the seat, an older tab is told so and its actions are refused, and a
tab that comes back finds the match where it stood.

Defences: WebSockets are accepted only with an ``Origin`` of the page's own address; a
message over :data:`MAX_MESSAGE` bytes, malformed JSON, an unknown message, an action
out of turn or an illegal amount gets an ``error`` message and a line in the server's
log, and nothing else happens. Only the match directory is written.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import WSMsgType, web

from poker.game import Game, load_game

from ..players import PlayerSpec
from .table import PlayTable, TableConfig
from .watch import MatchTail, list_matches

log = logging.getLogger("pokerbot.web")

STATIC = Path(__file__).parent / "static"
#: Bytes of the longest message a page may send (its longest legal message is under 200).
MAX_MESSAGE = 2048
#: How often the Watch view looks at the files of the match it shows (seconds).
WATCH_POLL_S = 0.25
#: How often the Watch view lists the match directory again (seconds).
WATCH_LIST_S = 3.0
_STATIC_FILES = {"app.js": "text/javascript", "style.css": "text/css"}
_SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; connect-src 'self'; img-src 'self' data:; "
                               "style-src 'self'; script-src 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


@dataclass(frozen=True)
class Opponent:
    """A player the page offers: its spec, a label, and the game it is limited to (a
    strategy file's own game; None for a bot that plays any game)."""

    spec: PlayerSpec
    label: str
    game: str | None = None

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"spec": self.spec.text, "label": self.label}
        if self.game is not None:
            doc["game"] = self.game
        return doc


@dataclass
class WebConfig:
    """What ``pokerbot web`` serves."""

    games: list[tuple[Game, str]]
    opponents: list[Opponent]
    match_dir: Path
    hands: int = 1000
    timer_s: float = 60.0
    seed: int | None = None
    default_game: str | None = None
    default_opponent: str | None = None
    #: Listening on a loopback address: answer only requests that name one (no DNS rebinding).
    loopback_only: bool = True
    _seeds: int = field(default=0, repr=False)


class WebApp:
    """The server's state: the config, the table and the sockets (see the module docstring)."""

    def __init__(self, config: WebConfig) -> None:
        self.config = config
        self.table: PlayTable | None = None
        self.holder: web.WebSocketResponse | None = None  # the tab that holds the seat
        self.play_sockets: set[web.WebSocketResponse] = set()
        self._dirty = False
        self._flushing: asyncio.Task[None] | None = None
        self._starting = asyncio.Lock()

    def app(self) -> web.Application:
        """The aiohttp application."""
        app = web.Application(client_max_size=MAX_MESSAGE)
        app.router.add_get("/", self._index)
        app.router.add_get("/static/{name}", self._static)
        app.router.add_get("/ws/play", self._play_socket)
        app.router.add_get("/ws/watch", self._watch_socket)
        app.on_shutdown.append(self._shutdown)
        return app

    def _host_allowed(self, request: web.Request) -> bool:
        """On a loopback address, only a loopback name in the Host header: a page of
        another site that a rebound DNS name points here is not served a seat."""
        if not self.config.loopback_only:
            return True
        host = request.host.rsplit(":", 1)[0] if not request.host.endswith("]") else request.host
        return host.strip("[]") in ("127.0.0.1", "localhost", "::1")

    # -- pages ------------------------------------------------------------------------

    async def _index(self, request: web.Request) -> web.StreamResponse:
        if not self._host_allowed(request):
            raise web.HTTPForbidden(text="this server answers only to 127.0.0.1, localhost and [::1]\n")
        return web.FileResponse(STATIC / "index.html", headers={**_SECURITY_HEADERS, "Content-Type": "text/html"})

    async def _static(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        if name not in _STATIC_FILES:
            raise web.HTTPNotFound()
        return web.FileResponse(STATIC / name, headers={**_SECURITY_HEADERS, "Content-Type": _STATIC_FILES[name]})

    # -- sockets ----------------------------------------------------------------------

    async def _open_socket(self, request: web.Request) -> web.WebSocketResponse:
        """The WebSocket of a page from this server's own origin, or an HTTP 403."""
        origin = request.headers.get("Origin")
        own = {f"{request.scheme}://{request.host}"}
        if not self._host_allowed(request):
            log.warning("refused a WebSocket for host %r: this server answers on loopback names only", request.host)
            raise web.HTTPForbidden(text="this server answers only to 127.0.0.1, localhost and [::1]\n")
        if origin not in own:
            log.warning("refused a WebSocket from origin %r (this page's is %s)", origin, request.host)
            raise web.HTTPForbidden(text="WebSockets are accepted only from this server's own page\n")
        ws = web.WebSocketResponse(max_msg_size=64 * 1024, heartbeat=30.0)
        await ws.prepare(request)
        return ws

    async def _messages(self, ws: web.WebSocketResponse, where: str):  # type: ignore[no-untyped-def]
        """The page's messages as dicts; malformed or oversized ones are answered with an
        error and skipped."""
        async for msg in ws:
            if msg.type is not WSMsgType.TEXT:
                if msg.type is WSMsgType.BINARY:
                    await self._error(ws, where, "binary messages are not understood: send JSON text")
                continue
            data = msg.data
            if len(data.encode()) > MAX_MESSAGE:
                await self._error(ws, where, f"message of {len(data.encode())} bytes refused: the limit is {MAX_MESSAGE}")
                continue
            try:
                doc = json.loads(data)
            except ValueError:
                await self._error(ws, where, "malformed message: not JSON")
                continue
            if not isinstance(doc, dict) or not isinstance(doc.get("type"), str):
                await self._error(ws, where, "malformed message: expected a JSON object with a \"type\"")
                continue
            yield doc

    async def _error(self, ws: web.WebSocketResponse, where: str, text: str) -> None:
        log.warning("%s: %s", where, text)
        await _send(ws, {"type": "error", "message": text})

    async def _play_socket(self, request: web.Request) -> web.StreamResponse:
        ws = await self._open_socket(request)
        self.play_sockets.add(ws)
        await _send(ws, self._hello())
        if self.table is not None:
            await self._take_seat(ws)
        try:
            async for doc in self._messages(ws, "play"):
                kind = doc["type"]
                if kind == "start":
                    await self._start(ws, doc)
                elif kind == "action":
                    await self._act(ws, doc)
                elif kind == "leave":
                    if ws is self.holder and self.table is not None:
                        await self.table.close()
                        self._changed()
                else:
                    await self._error(ws, "play", f"unknown message type {kind!r}")
        finally:
            self.play_sockets.discard(ws)
            if ws is self.holder:
                self.holder = None
                if self.table is not None:
                    self.table.detach()
        return ws

    def _hello(self) -> dict[str, Any]:
        cfg = self.config
        games = [{"name": g.name, "label": label} for g, label in cfg.games]
        return {
            "type": "hello",
            "games": games,
            "opponents": [o.to_json() for o in cfg.opponents],
            "defaults": {"game": cfg.default_game or games[0]["name"],
                         "opponent": cfg.default_opponent or cfg.opponents[0].spec.text},
            "timer_s": cfg.timer_s,
        }

    async def _take_seat(self, ws: web.WebSocketResponse) -> None:
        """``ws`` becomes the tab that plays; the one before it is told."""
        old = self.holder
        if old is not None and old is not ws:
            log.info("another tab took the seat; the tab before it was told")
            await _send(old, {"type": "notice",
                              "message": "this table was opened in another tab: reload this page to play here"})
            if self.table is not None:
                self.table.detach()
        self.holder = ws
        assert self.table is not None  # a seat is taken at a table
        self.table.attach()
        await _send(ws, self.table.snapshot())

    async def _start(self, ws: web.WebSocketResponse, doc: dict[str, Any]) -> None:
        cfg = self.config
        game = next((g for g, _ in cfg.games if g.name == doc.get("game")), None)
        if game is None:
            await self._error(ws, "play", f"unknown game {doc.get('game')!r}")
            return
        opponent = next((o for o in cfg.opponents if o.spec.text == doc.get("opponent")), None)
        if opponent is None:
            await self._error(ws, "play", f"unknown opponent {doc.get('opponent')!r}")
            return
        if opponent.game is not None and opponent.game != game.name:
            await self._error(ws, "play", f"{opponent.label} plays {opponent.game}, not {game.name}")
            return
        async with self._starting:
            if self.table is not None:
                await self.table.close()
            cfg._seeds += 1
            seed = cfg.seed + cfg._seeds - 1 if cfg.seed is not None else _random_seed()
            label = next(lbl for g, lbl in cfg.games if g.name == game.name)
            table = PlayTable(
                TableConfig(game=game, opponent=opponent.spec, opponent_label=opponent.label, hands=cfg.hands,
                            seed=seed, match_dir=cfg.match_dir, timer_s=cfg.timer_s, game_label=label),
                self._changed, self._notice)
            self.table = table
            self.holder = None
            await self._take_seat(ws)
            await table.start()
            self._changed()

    async def _act(self, ws: web.WebSocketResponse, doc: dict[str, Any]) -> None:
        if self.table is None:
            await self._error(ws, "play", "no match is running: sit down first")
            return
        if ws is not self.holder:
            await self._error(ws, "play", "another tab holds the seat: reload this page to play here")
            return
        why = self.table.act(doc)
        if why is not None:
            await self._error(ws, "play", why)

    def _notice(self, text: str) -> None:
        holder = self.holder
        if holder is not None:
            asyncio.ensure_future(_send(holder, {"type": "notice", "message": text}))

    def _changed(self) -> None:
        """The table changed: send its snapshot to the seat's tab (at most one send at a
        time; what changed meanwhile goes in the next)."""
        self._dirty = True
        if self._flushing is None or self._flushing.done():
            self._flushing = asyncio.ensure_future(self._flush())

    async def _flush(self) -> None:
        while self._dirty:
            self._dirty = False
            ws, table = self.holder, self.table
            if ws is not None and table is not None:
                await _send(ws, table.snapshot())

    async def _watch_socket(self, request: web.Request) -> web.StreamResponse:
        ws = await self._open_socket(request)
        wanted: asyncio.Queue[str] = asyncio.Queue()
        pump = asyncio.ensure_future(self._watch_pump(ws, wanted))
        try:
            async for doc in self._messages(ws, "watch"):
                if doc["type"] == "watch" and isinstance(doc.get("match"), str):
                    wanted.put_nowait(doc["match"])
                else:
                    await self._error(ws, "watch", f"unknown message {doc['type']!r}: expected watch")
        finally:
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pump
        return ws

    async def _watch_pump(self, ws: web.WebSocketResponse, wanted: asyncio.Queue[str]) -> None:
        """Lists the matches, follows the one asked for (by default the newest running)."""
        match_dir = self.config.match_dir
        tail: MatchTail | None = None
        listed: list[dict[str, Any]] | None = None
        next_list = 0.0
        loop = asyncio.get_running_loop()
        while not ws.closed:
            choice = None
            while not wanted.empty():
                choice = wanted.get_nowait()
            now = loop.time()
            if now >= next_list or choice is not None:
                matches = list_matches(match_dir) if match_dir.is_dir() else []
                # while nothing is watched, look again at once: a match just started is shown from its start
                next_list = now + (WATCH_LIST_S if tail is not None or matches else WATCH_POLL_S)
                if tail is None and choice is None and matches:
                    choice = matches[0]["id"]
                if choice is not None:
                    try:
                        tail = MatchTail(match_dir, choice)
                    except ValueError as exc:
                        await self._error(ws, "watch", str(exc))
                if matches != listed or choice is not None:
                    listed = matches
                    await _send(ws, {"type": "matches", "matches": matches,
                                     "watching": tail.match_id if tail is not None else None})
            if tail is not None:
                for message in tail.look():
                    await _send(ws, message)
            await asyncio.sleep(WATCH_POLL_S)

    async def _shutdown(self, app: web.Application) -> None:
        if self.table is not None:
            await self.table.close()


async def _send(ws: web.WebSocketResponse, doc: dict[str, Any]) -> None:
    """Send ``doc``; a tab that went away meanwhile is no error."""
    if ws.closed:
        return
    with contextlib.suppress(ConnectionError, RuntimeError):
        await ws.send_str(json.dumps(doc, separators=(",", ":")))


def _random_seed() -> int:
    import secrets

    return secrets.randbelow(2**32)


def default_games() -> list[tuple[Game, str]]:
    """Every shipped heads-up game, with a label for the page."""
    labels = {
        "holdem.nolimit.2p.reverse_blinds": "Hold'em, no-limit (200 big blinds)",
        "holdem.limit.2p.reverse_blinds": "Hold'em, limit",
        "holdem.nolimit.2p.short20": "Hold'em, no-limit, 20-card deck",
        "holdem.nolimit.2p.short24": "Hold'em, no-limit, 24-card deck",
        "leduc.nolimit.2p": "Leduc hold'em, no-limit",
        "leduc.limit.2p": "Leduc hold'em, limit",
        "kuhn.limit.2p": "Kuhn poker",
    }
    return [(load_game(name), label) for name, label in labels.items()]
