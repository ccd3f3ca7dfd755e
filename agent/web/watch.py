"""The Watch view's source: a match read as it is played, from the files it writes.

A ``pokerbot match --watch`` writes, beside its hand log ``NAME.log``, one
``NAME.playerN.events.jsonl`` per seat: a JSON line per decision of that player (the
``decision`` events of :mod:`agent.web.events`, the same payloads the MQTT ``decision``
topic carries), flushed as it is made. The dealer's log gives each finished hand (the
dealer flushes it after every hand). :class:`MatchTail` reads only what was appended
since its last look and turns it into the page's messages; a partial last line waits
for the next look.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from poker.game import Game, load_game
from poker.log import LogFormatError, parse_log, seat_of_position

from ..results import mean_ci95
from .view import cards, game_view

__all__ = ["MatchTail", "list_matches"]

#: A log appended to within this many seconds, without a SCORE line, is a running match.
RUNNING_S = 30.0
#: Hands sent when the view starts watching a match already under way.
BACKLOG_HANDS = 500
#: Bytes read from one file per look (a match far ahead is caught up over several looks).
READ_CHUNK = 1 << 20


def list_matches(match_dir: Path) -> list[dict[str, Any]]:
    """Every match log in ``match_dir``, newest first: id (the log's name), label, running."""
    out = []
    now = time.time()
    for path in match_dir.glob("*.log"):
        try:
            stat = path.stat()
            with open(path, "rb") as fh:
                head = fh.readline().decode("ascii", "replace")
                fh.seek(max(0, stat.st_size - 200))
                tail = fh.read().decode("ascii", "replace")
        except OSError:
            continue
        if not head.startswith("# name/game/hands/seed "):
            continue
        parts = head.split()
        running = "SCORE:" not in tail and now - stat.st_mtime < RUNNING_S
        out.append({"id": path.name.removesuffix(".log"), "mtime": stat.st_mtime, "running": running,
                    "label": f"{parts[3]}, {parts[4]} hands, seed {parts[5]}" if len(parts) >= 6 else path.name})
    out.sort(key=lambda m: (not m["running"], -m["mtime"]))
    return [{k: v for k, v in m.items() if k != "mtime"} for m in out]


@dataclass
class _FileTail:
    """New whole lines of a file, from where the last look stopped."""

    path: Path
    offset: int = 0
    rest: bytes = b""

    def lines(self) -> list[str]:
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self.offset)
                data = fh.read(READ_CHUNK)
        except OSError:
            return []
        self.offset += len(data)
        data = self.rest + data
        cut = data.rfind(b"\n") + 1
        self.rest = data[cut:]
        return data[:cut].decode("utf-8", "replace").splitlines()


@dataclass
class MatchTail:
    """One match followed from its files (see the module docstring)."""

    match_dir: Path
    match_id: str
    game: Game | None = None
    players: list[str] = field(default_factory=list)
    _log: _FileTail | None = None
    _events: list[_FileTail] = field(default_factory=list)
    _values: dict[str, list[float]] = field(default_factory=dict)
    _started: bool = False
    ended: bool = False

    def __post_init__(self) -> None:
        log_path = self.match_dir / f"{self.match_id}.log"
        if log_path.parent != self.match_dir or not log_path.is_file():
            raise ValueError(f"no match {self.match_id!r} in {self.match_dir}")
        self._log = _FileTail(log_path)

    def look(self) -> list[dict[str, Any]]:
        """The page's messages for everything appended since the last look."""
        assert self._log is not None
        out: list[dict[str, Any]] = []
        hands: list[dict[str, Any]] = []
        for line in self._log.lines():
            if line.startswith("# name/game/hands/seed ") and self.game is None:
                try:
                    self.game = load_game(line.split()[3])
                except (ValueError, OSError):
                    self.game = None
            elif line.startswith("STATE:"):
                hand = self._hand(line)
                if hand is not None:
                    hands.append(hand)
            elif line.startswith("SCORE:"):
                self.ended = True
                out_end = {"type": "end", "match": self.match_id, "score": line, "text": "match finished"}
                hands.append(out_end)
        if not self._started and self.game is not None and self.players:  # once the first hand named the seats
            self._started = True
            out.append({"type": "reset", "match": {"id": self.match_id, "game": game_view(self.game),
                                                   "players": self.players}})
            hands = [h for h in hands if h["type"] == "end"] + [h for h in hands if h["type"] == "hand"][-BACKLOG_HANDS:]
            hands.sort(key=lambda h: h["type"] == "end")
            # Decisions of hands already over are not replayed: start at the file's end.
            for tail in self._event_tails():
                tail.lines()
        else:
            for tail in self._event_tails():
                for line in tail.lines():
                    event = _decision(line)
                    if event is not None:
                        out.append(event)
        return out + hands

    def _event_tails(self) -> list[_FileTail]:
        known = {t.path for t in self._events}
        for path in sorted(self.match_dir.glob(f"{self.match_id}.player*.events.jsonl")):
            if path not in known:
                self._events.append(_FileTail(path))
        return self._events

    def _hand(self, line: str) -> dict[str, Any] | None:
        try:
            (hand,) = parse_log(line).hands
        except (LogFormatError, ValueError):
            return None
        if not self.players:
            # seat order: the names by position turned back by the hand's rotation
            n = len(hand.names)
            seats = [""] * n
            for pos, name in enumerate(hand.names):
                seats[seat_of_position(pos, hand.hand_no, n)] = name
            self.players = seats
        big = self.game.big_blind if self.game is not None else 1
        bankroll = []
        for name, value in zip(hand.names, hand.values):
            self._values.setdefault(name, []).append(value)
        for name in self.players:
            vals = self._values.get(name, [])
            mean, lo, hi = mean_ci95(vals)
            bankroll.append({"player": name, "hands": len(vals), "chips": sum(vals),
                             "mbb_per_game": 1000 * mean / big,
                             "ci95": [1000 * lo / big, 1000 * hi / big] if len(vals) > 1 else None})
        return {"type": "hand", "hand": hand.hand_no + 1, "betting": hand.betting,
                "board": cards([c for b in hand.boards for c in b]),
                "cards": [cards(h) for h in hand.holes], "players": list(hand.names),
                "chips": list(hand.values), "bankroll": bankroll, "ts": time.time()}


def _decision(line: str) -> dict[str, Any] | None:
    try:
        doc = json.loads(line)
    except ValueError:
        return None
    if not isinstance(doc, dict) or doc.get("type") != "decision":
        return None
    return doc
