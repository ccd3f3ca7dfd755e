"""Each decision of a bot, told as it is made: for the Watch view and the MQTT ``decision`` topic.

:class:`WatchedBot` wraps a seat's bot. After every action it builds one ``decision``
event: the hand, the state (street, betting, board, the bot's own cards), the action in
chips and big blinds and, for a strategy player, the blueprint's distribution at that
decision (the action drawn marked), how the opponent's last bet was translated into the
tree, and whether the player fell back to check/call because the tree could not follow.
Each event goes to every sink: a JSON-lines file flushed per line
(``pokerbot play --events FILE``, which ``pokerbot match --watch`` passes to every seat)
and the telemetry's ``decision`` topic.

A sink's failure never costs the decision: the event is dropped and logged once.
"""

from __future__ import annotations

import inspect
import json
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO, Any

from poker.state import Action, LoggedAction

from .protocol.codec import MatchState, legalize
from .web.view import action_text, cards, street_name

__all__ = ["DecisionFile", "WatchedBot", "decision_event"]

log = logging.getLogger("pokerbot.decisions")

Sink = Callable[[dict[str, Any]], None]


def decision_event(ms: MatchState, action: Action, player: str,
                   explanation: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``decision`` event of ``player`` answering ``ms`` with ``action`` (legal)."""
    state = ms.state
    game = ms.game
    p = ms.position
    logged = LoggedAction(p, action)
    after = state.apply(action)
    chips = after.spent[p]
    event: dict[str, Any] = {
        "type": "decision",
        "player": player,
        "hand": ms.hand_number + 1,
        "position": p,
        "street": street_name(game, state.round),
        "betting": state.betting_string(),
        "board": cards(ms.board),
        "cards": cards(ms.hole),
        "action": action.kind.name.lower(),
        "action_text": action_text(state, logged),
        "chips": chips,
        "bb": round(chips / game.big_blind, 2),
        "distribution": None,
        "chosen": None,
        "mapping": None,
        "fallback": False,
    }
    if explanation:
        event.update(explanation)
    event["ts"] = round(time.time(), 3)
    return event


class DecisionFile:
    """A JSON-lines file of decision events (started afresh, as the match's log is), each
    line flushed as it is written."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh: IO[str] | None = open(path, "w", encoding="utf-8")  # noqa: SIM115
        self._failed = False

    def __call__(self, event: dict[str, Any]) -> None:
        if self._fh is None:
            return
        try:
            self._fh.write(json.dumps(event, separators=(",", ":")) + "\n")
            self._fh.flush()
        except OSError as exc:
            if not self._failed:
                log.warning("cannot write decisions to %s: %s", self.path, exc)
            self._failed = True

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


class WatchedBot:
    """``bot`` with every decision told to ``sinks`` (see the module docstring). A bot
    with an ``explain(match_state)`` method (the strategy player) adds its distribution,
    translation and fallback to each event."""

    def __init__(self, bot: object, player: str, sinks: list[Sink]) -> None:
        self.bot = bot
        self.player = player
        self.sinks = sinks
        self._explain = getattr(bot, "explain", None)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.bot, name)  # the wrapped bot's summary(), counts...

    def act(self, ms: MatchState) -> object:
        """The bot's answer, told once known."""
        answer = self.bot.act(ms)  # type: ignore[attr-defined]
        if type(answer) is not Action and inspect.isawaitable(answer):
            return self._later(ms, answer)
        self._tell(ms, answer)
        return answer

    async def _later(self, ms: MatchState, pending: Awaitable[object]) -> object:
        answer = await pending
        self._tell(ms, answer)
        return answer

    def _tell(self, ms: MatchState, answer: object) -> None:
        try:
            action = legalize(ms.state, answer)  # what the client will send
            explanation = self._explain(ms) if self._explain is not None else None
            event = decision_event(ms, action, self.player, explanation)
        except Exception:  # noqa: BLE001 - watching must never cost the match
            log.exception("cannot describe the decision in hand %d", ms.hand_number)
            return
        for sink in self.sinks:
            try:
                sink(event)
            except Exception:  # noqa: BLE001
                log.exception("a decision sink failed")
