"""A person's seat at a live table: our dealer, one bot and the person, as in any match.

:class:`PlayTable` runs one match in the web server's event loop:

* our ACPC dealer (:class:`agent.dealer.Dealer`) on two loopback ports, writing its log
  in the match directory like every match, with no per-hand average limit and a long
  response limit (a person thinks for seconds, not the reference's 7 s a hand);
* the bot in a ``pokerbot play`` process on the second port (a strategy player's CPU
  never stalls the server);
* the person's seat: an ACPC client of that dealer in this process
  (:class:`agent.protocol.client_state.ClientConnection`), whose answers come from the
  page. The rules engine checks each one before it is sent (:meth:`poker.state.State.verify`),
  and the dealer decides what happened: the page is only told.

The person has ``timer_s`` seconds a decision. When the time runs out, or when the last
tab leaves in the middle of a hand, the seat folds for the person (checks where checking
is free) until the hand ends, so the bot is never left waiting; between hands the match
waits for the person to come back (the dealer's response limit bounds that wait).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from poker.game import Game
from poker.state import Action, IllegalActionError

from ..dealer import Dealer, DealerConfig, stderr_tail
from ..players import PlayerSpec
from ..protocol.client_state import NEED_DATA, ClientConnection, MatchEnded, StateMessage
from ..protocol.codec import MatchState, ProtocolError
from ..protocol.dealer_state import TimeLimits
from ..results import mean_ci95
from . import view

log = logging.getLogger("pokerbot.web")

#: The dealer's limits for a table with a person: a day for one response or one hand, and
#: no average per hand (the match budget is a day a hand).
PERSON_LIMITS = TimeLimits(response_ms=86_400_000, hand_ms=86_400_000, per_hand_ms=86_400_000)
#: Finished hands kept for the page's history.
HISTORY = 200
#: Seconds the bot process may take to connect (a strategy file opens first).
BOT_START_S = 120.0


@dataclass(frozen=True)
class TableConfig:
    """One match of a person against ``opponent`` in ``game``."""

    game: Game
    opponent: PlayerSpec
    opponent_label: str
    hands: int
    seed: int
    match_dir: Path
    timer_s: float = 60.0
    game_label: str | None = None


class PlayTable:
    """The person's match (see the module docstring). ``on_change`` is called, with no
    argument, whenever the page's picture of the table changed; ``on_notice`` with a line
    the page should show (the seat acted for the person)."""

    def __init__(self, config: TableConfig, on_change: Callable[[], None],
                 on_notice: Callable[[str], None] | None = None) -> None:
        self.config = config
        self.on_change = on_change
        self.on_notice = on_notice
        game = config.game
        if game.num_players != 2:
            raise ValueError(f"{game.name} has {game.num_players} seats: the web table is heads-up")
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.name = f"{game.name}.web.{stamp}.{config.seed}"
        self.log_path = config.match_dir / f"{self.name}.log"
        self.status = "starting"
        self.status_text = "starting the dealer and the bot"
        self.ms: MatchState | None = None
        self.values: list[float] = []
        self.history: list[dict[str, Any]] = []
        self.last_hand: dict[str, Any] | None = None
        self.score_line: str | None = None
        self.tabs = 0
        self._away_hand: int | None = None  # the hand the person left in: folded to its end
        self._pending: asyncio.Future[Action] | None = None
        self._deadline: float | None = None  # loop time the person's decision runs out
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: list[asyncio.Task[Any]] = []
        self._bot: asyncio.subprocess.Process | None = None
        self._files: list[IO[Any]] = []

    # -- lifecycle --------------------------------------------------------------------

    async def start(self) -> None:
        """Start the dealer, the bot and the person's seat; returns once all are started."""
        cfg = self.config
        cfg.match_dir.mkdir(parents=True, exist_ok=True)
        loop = asyncio.get_running_loop()
        ports: asyncio.Future[list[int]] = loop.create_future()
        dealer_err = open(self.log_path.with_suffix(".dealer.err"), "w", encoding="utf-8")  # noqa: SIM115
        self._files.append(dealer_err)
        dealer = Dealer(
            DealerConfig(
                game=cfg.game,
                num_hands=cfg.hands,
                seed=cfg.seed,
                names=("you", (cfg.opponent.log_name or "bot")),
                limits=PERSON_LIMITS,
                log_path=self.log_path,
                match_name=self.name,
                game_file=cfg.game.name,
                start_timeout=BOT_START_S,
            ),
            stdout=io.StringIO(),
            stderr=dealer_err,
            on_ports=lambda bound: ports.set_result(bound) if not ports.done() else None,
        )
        self._dealer_task = asyncio.ensure_future(dealer.run())
        self._tasks.append(self._dealer_task)
        done, _ = await asyncio.wait({ports, self._dealer_task}, return_when=asyncio.FIRST_COMPLETED)
        if not ports.done():
            self._end("aborted", f"the dealer did not start: {stderr_tail(self.log_path.with_suffix('.dealer.err'))}")
            return
        you, bot = ports.result()
        bot_err = open(self.log_path.with_suffix(".player2.err"), "wb")  # noqa: SIM115
        self._files.append(bot_err)
        self._bot = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "agent", "play", "--host", "127.0.0.1", "--port", str(bot),
            *cfg.opponent.cached().play_args(), "--game", cfg.game.name,
            "--seed", str((cfg.seed * 7919 + 2) % 2**32),
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=bot_err)
        self.status_text = "waiting for the bot to connect"
        self.on_change()
        self._tasks.append(asyncio.ensure_future(self._seat(you)))
        self._tasks.append(asyncio.ensure_future(self._watch_dealer()))

    async def close(self) -> None:
        """End the match now (the person stood up, or the server stops)."""
        if self._pending is not None and not self._pending.done():
            self._pending.cancel()
        self._cancel_timer()
        if self._bot is not None and self._bot.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._bot.terminate()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._bot.wait(), 5)
            if self._bot.returncode is None:
                self._bot.kill()
                await self._bot.wait()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for fh in self._files:
            fh.close()
        if self.status in ("starting", "playing"):
            self._end("finished", "you left the table")

    @property
    def over(self) -> bool:
        """The match has ended (finished or aborted)."""
        return self.status in ("finished", "aborted")

    # -- the tabs ---------------------------------------------------------------------

    def attach(self) -> None:
        """A tab took the seat: the person's decisions wait for it (with the timer)."""
        self.tabs += 1
        self._away_hand = None
        if self._pending is not None and not self._pending.done() and self._deadline is None:
            self._start_timer()

    def detach(self) -> None:
        """The seat's tab left: finish the hand in progress by folding (checking where free)."""
        self.tabs = max(0, self.tabs - 1)
        if self.tabs:
            return
        ms = self.ms
        if ms is not None and ms.state.actor is not None:
            self._away_hand = ms.hand_number
            if self._pending is not None and not self._pending.done():
                self._answer(_fold_or_check(ms), "you left the table: folded for you")

    # -- the person's decisions -------------------------------------------------------

    def act(self, message: dict[str, Any]) -> str | None:
        """The person's action from the page; the reason it was refused, or None."""
        kind = message.get("action")
        if self._pending is None or self._pending.done() or self.ms is None:
            return "it is not your turn"
        state = self.ms.state
        if kind == "fold":
            action = Action.fold()
        elif kind == "call":
            action = Action.call()
        elif kind == "raise":
            to = message.get("to")
            if state.game.is_limit and to is None:
                action = Action.raise_to()
            elif isinstance(to, bool) or not isinstance(to, int):
                return f"a raise needs a whole number of chips to raise to, not {to!r}"
            else:
                action = Action.raise_to(to)
        else:
            return f"unknown action {kind!r}: expected fold, call or raise"
        try:
            action = state.verify(action)
        except IllegalActionError as exc:
            return _person_words(str(exc))
        self._answer(action, None)
        return None

    def _answer(self, action: Action, notice: str | None) -> None:
        self._cancel_timer()
        assert self._pending is not None
        if not self._pending.done():
            self._pending.set_result(action)
        if notice:
            log.info("%s (hand %d)", notice, self.ms.hand_number + 1 if self.ms else 0)
            if self.on_notice is not None:
                self.on_notice(notice)

    def _start_timer(self) -> None:
        loop = asyncio.get_running_loop()
        self._deadline = loop.time() + self.config.timer_s
        self._timer = loop.call_at(self._deadline, self._time_out)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None
        self._deadline = None

    def _time_out(self) -> None:
        self._timer = None
        if self._pending is not None and not self._pending.done() and self.ms is not None:
            self._answer(_fold_or_check(self.ms), f"time ran out: {_fold_or_check_word(self.ms)} for you")
            self.on_change()

    # -- the seat's connection --------------------------------------------------------

    async def _seat(self, port: int) -> None:
        """The person's ACPC client: every state updates the page; owed states wait for
        the person."""
        conn = ClientConnection(self.config.game)
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError as exc:
            self._end("aborted", f"cannot connect to the dealer: {exc}")
            return
        writer.write(conn.initiate())
        try:
            while True:
                data = await reader.read(65536)
                conn.receive_data(data)
                while True:
                    event = conn.next_event()
                    if event is NEED_DATA:
                        break
                    if isinstance(event, MatchEnded):
                        return
                    assert isinstance(event, StateMessage)
                    self._on_state(event)
                    if event.my_turn:
                        action = await self._decision(event.match_state)
                        writer.write(conn.send_action(action))
                        await writer.drain()
                        self.on_change()
                if not data:
                    return
        except ProtocolError as exc:
            self._end("aborted", f"the dealer sent a bad state: {exc}")
        except (ConnectionError, OSError) as exc:
            self._end("aborted", f"the connection to the dealer broke: {exc}")
        finally:
            writer.close()

    async def _decision(self, ms: MatchState) -> Action:
        loop = asyncio.get_running_loop()
        self._pending = loop.create_future()
        if self.tabs == 0 and self._away_hand == ms.hand_number:
            self._answer(_fold_or_check(ms), None)
        elif self.tabs > 0:
            self._start_timer()
        self.on_change()
        try:
            return await self._pending
        finally:
            self._pending = None
            self._cancel_timer()

    def _on_state(self, event: StateMessage) -> None:
        ms = event.match_state
        if self.status == "starting":
            self.status, self.status_text = "playing", "playing"
        self.ms = ms
        if ms.state.actor is None:
            value = event.value
            self.values.append(value if value is not None else 0.0)
            who = _who(ms)
            result = view.hand_result(ms, value, who)
            self.last_hand = result
            me = ms.position
            self.history.insert(0, {
                "hand": ms.hand_number + 1,
                "button": me == view.button_position(ms.game),
                "cards": view.cards(ms.hole),
                "bot_cards": view.cards(ms.holes[1 - me]),
                "board": view.cards(ms.board),
                "betting": ms.state.betting_string(),
                "chips": result["chips"],
                "text": result["text"],
            })
            del self.history[HISTORY:]
        if not event.my_turn:  # an owed state is drawn once the decision waits (with its actions)
            self.on_change()

    async def _watch_dealer(self) -> None:
        """When the dealer ends, the match has ended: say how."""
        try:
            result = await self._dealer_task
        except Exception as exc:  # noqa: BLE001 - the page says it; the server goes on
            self._end("aborted", f"the dealer failed: {exc}")
            return
        if result.score is not None:
            self.score_line = result.score
            self._end("finished", f"match over after {result.hands_played} hands: {result.score}")
        else:
            self._end("aborted", f"the match was aborted: {stderr_tail(self.log_path.with_suffix('.dealer.err'))}")

    def _end(self, status: str, text: str) -> None:
        if self.over:
            return
        self.status, self.status_text = status, text
        log.info("table %s: %s", self.name, text)
        self.on_change()

    # -- what the page draws ----------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The table as the page draws it (the ``table`` message of the protocol)."""
        cfg = self.config
        game = cfg.game
        ms = self.ms
        mean, lo, hi = mean_ci95(self.values)
        to_mbb = 1000.0 / game.big_blind
        doc: dict[str, Any] = {
            "type": "table",
            "status": self.status,
            "status_text": self.status_text,
            "game": view.game_view(game, cfg.game_label),
            "opponent": {"spec": cfg.opponent.text, "label": cfg.opponent_label},
            "hand": 0 if ms is None else ms.hand_number + 1,
            "hands_total": cfg.hands,
            "log": str(self.log_path),
            "seats": [],
            "board": [],
            "street": None,
            "pot": 0,
            "to_act": None,
            "to_call": 0,
            "legal": None,
            "deadline_s": None,
            "streets": [],
            "last_hand": self.last_hand,
            "score": {
                "hands": len(self.values),
                "chips": math.fsum(self.values),
                "mbb_per_game": mean * to_mbb,
                "ci95": [lo * to_mbb, hi * to_mbb] if len(self.values) > 1 else None,
            },
            "history": self.history,
        }
        if ms is None:
            return doc
        who = _who(ms)
        names = ["you" if w == "you" else (cfg.opponent.log_name or "bot") for w in who]
        seat_of = [0 if w == "you" else 1 for w in who]
        state = ms.state
        waiting = self._pending is not None and not self._pending.done()
        doc.update(
            seats=view.seat_views(ms, who, names, seat_of),
            board=view.cards(ms.board),
            street="showdown" if state.actor is None else view.street_name(game, state.round),
            pot=state.pot,
            to_act=None if state.actor is None else who[state.actor],
            to_call=state.to_call if state.actor == ms.position else 0,
            streets=view.streets_view(ms, who),
        )
        if waiting:
            doc["legal"] = view.legal_view(state)
            if self._deadline is not None:
                doc["deadline_s"] = max(0.0, self._deadline - asyncio.get_running_loop().time())
        return doc


def _who(ms: MatchState) -> list[str]:
    """``"you"`` or ``"bot"`` per position, from the receiver's (the person's) side."""
    return ["you" if p == ms.position else "bot" for p in range(ms.game.num_players)]


def _fold_or_check(ms: MatchState) -> Action:
    return Action.fold() if ms.state.can_fold() else Action.call()


def _fold_or_check_word(ms: MatchState) -> str:
    return "folded" if ms.state.can_fold() else "checked"


def _person_words(rule: str) -> str:
    """The rules engine's message for the person: it speaks of positions, the person is 'you'."""
    return rule.replace("position 0's", "your").replace("position 1's", "your")
