"""pokerbot web without a browser: what the page is told (legal ranges, hand names, the
score), and the server driven over real WebSockets against our dealer and a real bot
process: bad input, turns, tabs, the timer, the log's SCORE, and the Watch view."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

aiohttp = pytest.importorskip("aiohttp")
from aiohttp.test_utils import TestServer  # noqa: E402

from agent.players import PlayerSpec  # noqa: E402
from agent.protocol.codec import MatchState  # noqa: E402
from agent.web import view  # noqa: E402
from agent.web.server import Opponent, WebApp, WebConfig, default_games  # noqa: E402
from poker.cards import parse_cards  # noqa: E402
from poker.game import load_game  # noqa: E402
from poker.log import parse_log  # noqa: E402
from poker.state import State  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
HOLDEM = load_game("holdem.nolimit.2p.reverse_blinds")
LEDUC = "leduc.nolimit.2p"


# ---------------------------------------------------------------- what the page is told


def test_legal_view_offers_the_rules_range_and_shortcuts_inside_it() -> None:
    s = State.new_hand(HOLDEM)  # the small blind (position 1) acts: 50 to call
    legal = view.legal_view(s)
    assert legal is not None
    assert (legal["fold"], legal["call_text"], legal["raise_text"]) == (True, "call 50", "raise")
    assert (legal["min_to"], legal["max_to"]) == (s.min_raise_to, s.max_raise_to) == (200, 20000)
    tos = [c["to"] for c in legal["shortcuts"]]
    assert all(200 <= t <= 20000 for t in tos) and tos[-1] == 20000 and len(set(tos)) == len(tos)
    pot = next(c for c in legal["shortcuts"] if c["label"] == "pot")
    assert pot["to"] == s.pot_raise_to == 300
    s = s.call()  # the big blind may check: no fold
    legal = view.legal_view(s)
    assert legal is not None and legal["fold"] is False and legal["call_text"] == "check"
    s = s.call()  # the flop: nobody bet, so it is a bet
    legal = view.legal_view(s)
    assert legal is not None and legal["raise_text"] == "bet" and legal["min_to"] == 200
    assert view.legal_view(State.from_betting(HOLDEM, "r20000c///")) is None


def test_limit_games_offer_one_raise_and_no_shortcuts() -> None:
    s = State.new_hand(load_game("holdem.limit.2p.reverse_blinds"))
    legal = view.legal_view(s)
    assert legal is not None and legal["limit"] and legal["shortcuts"] == []
    assert legal["min_to"] == legal["max_to"] == s.min_raise_to


def test_action_texts() -> None:
    from poker.state import Action

    s = State.new_hand(HOLDEM)
    said = []
    for a in (Action.call(), Action.raise_to(300), Action.raise_to(900), Action.call()):
        nxt = s.apply(a)
        said.append(view.action_text(s, nxt.history[-1]))
        s = nxt
    assert said == ["calls 50", "raises to 300", "raises to 900", "calls 600"]
    s2 = State.from_betting(HOLDEM, "cc/")
    assert view.action_text(s2, State.from_betting(HOLDEM, "cc/r400").history[-1]) == "bets 400"
    assert view.action_text(s2, State.from_betting(HOLDEM, "cc/r20000").history[-1]) == "goes all-in for 20000"


def test_hand_result_names_both_hands_at_a_showdown() -> None:
    from agent.protocol.client_state import ClientConnection, StateMessage

    conn = ClientConnection(HOLDEM)
    conn.initiate()
    conn.receive_data(b"MATCHSTATE:0:4:cc/cc/cc/cc:KsKd|Kh5s/Kc5h2d/9s/3c\r\n")
    event = conn.next_event()
    assert isinstance(event, StateMessage) and event.value is not None
    ms: MatchState = event.match_state
    result = view.hand_result(ms, event.value, ["you", "bot"])
    assert result["hand"] == 5 and result["winner"] == "you" and result["chips"] == 100.0
    assert result["showdown"] == [
        {"who": "you", "cards": ["Ks", "Kd"], "hand_name": "three of a kind, kings"},
        {"who": "bot", "cards": ["Kh", "5s"], "hand_name": "two pair, kings and fives"},
    ]
    assert result["text"] == "you win 200 with three of a kind, kings"
    conn.receive_data(b"MATCHSTATE:1:5:cc/cc/cc/cc:Td4d|8dJd/As9d6s/3d/6c\r\n")  # one name each side
    event = conn.next_event()
    assert isinstance(event, StateMessage)
    result = view.hand_result(event.match_state, event.value, ["bot", "you"])
    assert result["text"] == "you win 200 with pair of sixes, jack kicker" and result["chips"] == 100.0
    assert parse_cards("KsKd")  # the cards the test wrote are cards


def test_a_watcher_is_told_the_blueprints_distribution_translation_and_fallback() -> None:
    """The strategy player's decision events: its abstract distribution (the action drawn
    marked), how an off-tree raise was translated, and a fallback past the tree's cap."""
    from agent.decisions import decision_event
    from agent.protocol.client_state import ClientConnection, StateMessage
    from agent.strategy_player import StrategyPlayer
    from solver.strategy_io import open_strategy

    game = load_game(LEDUC)
    player = StrategyPlayer(open_strategy(ROOT / "strategies" / f"{LEDUC}.strategy", game=game), seed=1)

    def told(line: bytes) -> dict[str, Any]:
        conn = ClientConnection(game)
        conn.initiate()
        conn.receive_data(line)
        event = conn.next_event()
        assert isinstance(event, StateMessage)
        ms = event.match_state
        return decision_event(ms, player.act(ms), "leduc", player.explain(ms))

    root = told(b"MATCHSTATE:0:0::Ks|\r\n")
    labels = [d["label"] for d in root["distribution"]]
    assert labels[0] == "check" and "raise all-in" in labels and root["mapping"] is None
    assert root["distribution"][root["chosen"]]["p"] > 0
    assert root["action_text"].startswith(("checks", "bets", "goes all-in"))
    mapped = told(b"MATCHSTATE:1:1:r4:|Qs\r\n")  # a raise of 1.5 pots: between the tree's 1 and 2 pots
    assert mapped["mapping"]["real"] == "raises to 4"
    assert {t["label"] for t in mapped["mapping"]["to"]} == {"raise 1p", "raise 2p"}
    assert sum(t["p"] for t in mapped["mapping"]["to"]) == pytest.approx(1.0)
    past = told(b"MATCHSTATE:0:2:r2r3r4r5:Ks|\r\n")  # past the tree's cap: the player calls
    assert past["fallback"] is True and past["distribution"] is None and past["action"] == "call"


# ---------------------------------------------------------------- the server, for real


def _config(tmp_path: Path, **kw: Any) -> WebConfig:
    games = [(g, label) for g, label in default_games() if g.name in (LEDUC, "holdem.nolimit.2p.reverse_blinds")]
    opponents = [Opponent(PlayerSpec.parse("call"), "call"),
                 Opponent(PlayerSpec.parse(f"strategy:{ROOT / 'strategies' / 'leduc.nolimit.2p.strategy'}"),
                          "leduc strategy", LEDUC)]
    return WebConfig(games=games, opponents=opponents, match_dir=tmp_path / "matches", seed=11, **kw)


Client = Callable[..., Awaitable[Any]]


def _serve(tmp_path: Path, body: Callable[[Any, str], Awaitable[None]], **kw: Any) -> WebApp:
    """Run ``body(session, base_url)`` against a live server; returns the app."""
    app = WebApp(_config(tmp_path, **kw))

    async def main() -> None:
        server = TestServer(app.app(), host="127.0.0.1")
        await server.start_server()
        base = f"http://127.0.0.1:{server.port}"
        try:
            async with aiohttp.ClientSession() as session:
                await asyncio.wait_for(body(session, base), 90)
        finally:
            await server.close()
            if app.table is not None:
                await app.table.close()

    asyncio.run(main())
    return app


async def _next(ws: Any, kind: str | None = None, when: Callable[[dict[str, Any]], bool] | None = None) -> dict[str, Any]:
    """The next message (of ``kind``, meeting ``when``)."""
    while True:
        msg = await asyncio.wait_for(ws.receive(), 30)
        assert msg.type == aiohttp.WSMsgType.TEXT, msg
        doc = json.loads(msg.data)
        if (kind is None or doc["type"] == kind) and (when is None or when(doc)):
            return doc


def _my_turn(doc: dict[str, Any]) -> bool:
    return doc["type"] == "table" and doc.get("legal") is not None


def _over(doc: dict[str, Any]) -> bool:
    return doc["type"] == "table" and doc.get("status") in ("finished", "aborted")


async def _play_out(ws: Any, choose: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    """Answer every decision with ``choose(table)`` until the match ends; the last table."""
    while True:
        doc = await _next(ws, "table", lambda d: _my_turn(d) or _over(d))
        if _over(doc):
            return doc
        await ws.send_str(json.dumps(choose(doc)))


def test_a_match_at_the_table_ends_with_the_dealers_score(tmp_path: Path) -> None:
    """Bad messages are refused with a reason and the match goes on; the score the page
    shows at the end is the SCORE line of the dealer's log."""
    seen: dict[str, Any] = {}

    async def body(session: Any, base: str) -> None:
        async with session.ws_connect(f"{base}/ws/play", origin=base) as ws:
            hello = await _next(ws, "hello")
            assert {g["name"] for g in hello["games"]} == {LEDUC, "holdem.nolimit.2p.reverse_blinds"}
            await ws.send_str(json.dumps({"type": "action", "action": "call"}))
            assert "no match" in (await _next(ws, "error"))["message"]
            await ws.send_str(json.dumps({"type": "start", "game": "kuhn.limit.2p", "opponent": "call"}))
            assert "unknown game" in (await _next(ws, "error"))["message"]
            await ws.send_str(json.dumps({"type": "start", "game": "holdem.nolimit.2p.reverse_blinds",
                                          "opponent": f"strategy:{ROOT / 'strategies' / 'leduc.nolimit.2p.strategy'}"}))
            assert "plays leduc.nolimit.2p" in (await _next(ws, "error"))["message"]
            await ws.send_str(json.dumps({"type": "start", "game": LEDUC, "opponent": "call"}))
            table = await _next(ws, "table", _my_turn)
            legal = table["legal"]
            for bad, says in (("{", "not JSON"), ("[1]", "JSON object"), ("x" * 3000, "limit"),
                              (json.dumps({"type": "dance"}), "unknown message type"),
                              (json.dumps({"type": "action", "action": "raise", "to": legal["min_to"] - 1}),
                               f"below the minimum {legal['min_to']}"),
                              (json.dumps({"type": "action", "action": "raise", "to": legal["max_to"] + 1}),
                               f"above the maximum {legal['max_to']}"),
                              (json.dumps({"type": "action", "action": "raise", "to": "lots"}), "whole number"),
                              (json.dumps({"type": "action", "action": "fold"}) if not legal["fold"] else
                               json.dumps({"type": "action", "action": "jump"}), "not allowed" if not legal["fold"]
                               else "unknown action")):
                await ws.send_str(bad)
                assert says in (await _next(ws, "error"))["message"]
            turn = [0]

            def choose(doc: dict[str, Any]) -> dict[str, Any]:
                turn[0] += 1
                lg = doc["legal"]
                if turn[0] % 3 == 0 and lg["raise"]:
                    return {"type": "action", "action": "raise", "to": lg["shortcuts"][0]["to"]}
                if turn[0] % 5 == 0 and lg["fold"]:
                    return {"type": "action", "action": "fold"}
                return {"type": "action", "action": "call"}

            await ws.send_str(json.dumps(choose(table)))
            seen["end"] = await _play_out(ws, choose)

    app = _serve(tmp_path, body, hands=12)
    end = seen["end"]
    assert end["status"] == "finished", end["status_text"]
    log = parse_log(Path(end["log"]).read_text())
    assert log.score is not None and len(log.hands) == 12
    you = log.score.names.index("you")
    assert end["score"]["hands"] == 12
    assert end["score"]["chips"] == pytest.approx(log.score.values[you])
    assert end["history"][0]["hand"] == 12 and len(end["history"]) == 12
    assert sum(h["chips"] for h in end["history"]) == pytest.approx(log.score.values[you])
    # the log and the table's files are in the match directory, nothing else was written
    assert {p.parent for p in (tmp_path / "matches").iterdir()} == {tmp_path / "matches"}
    assert app.table is not None and app.table.over


def test_foreign_origins_are_refused(tmp_path: Path) -> None:
    async def body(session: Any, base: str) -> None:
        for path in ("/ws/play", "/ws/watch"):
            with pytest.raises(aiohttp.WSServerHandshakeError) as err:
                await session.ws_connect(f"{base}{path}", origin="http://example.com")
            assert err.value.status == 403
        async with session.get(f"{base}/static/../../table.py") as r:
            assert r.status == 404
        # a page of another site reaching this loopback server through a rebound DNS name
        rebound = f"http://rebound.example:{base.rsplit(':', 1)[1]}"
        with pytest.raises(aiohttp.WSServerHandshakeError) as err:
            await session.ws_connect(f"{base}/ws/play", origin=rebound, headers={"Host": rebound[7:]})
        assert err.value.status == 403
        async with session.get(f"{base}/", headers={"Host": rebound[7:]}) as r:
            assert r.status == 403
        async with session.get(f"{base}/", headers={"Host": "localhost"}) as r:
            assert r.status == 200 and "/static/app.js" in await r.text()

    _serve(tmp_path, body)


def test_a_second_tab_takes_the_seat_and_the_first_is_refused(tmp_path: Path) -> None:
    async def body(session: Any, base: str) -> None:
        async with session.ws_connect(f"{base}/ws/play", origin=base) as first:
            await _next(first, "hello")
            await first.send_str(json.dumps({"type": "start", "game": LEDUC, "opponent": "call"}))
            await _next(first, "table", _my_turn)
            async with session.ws_connect(f"{base}/ws/play", origin=base) as second:
                await _next(second, "hello")
                table = await _next(second, "table")
                assert table["status"] == "playing"
                assert "another tab" in (await _next(first, "notice"))["message"]
                await first.send_str(json.dumps({"type": "action", "action": "call"}))
                assert "another tab holds the seat" in (await _next(first, "error"))["message"]
                before = table["hand"], len(table["streets"][-1]["actions"]) if table["streets"] else 0
                await second.send_str(json.dumps({"type": "action", "action": "call"}))
                after = await _next(second, "table", lambda d: (d["hand"], sum(len(s["actions"]) for s in d["streets"]))
                                    != (table["hand"], sum(len(s["actions"]) for s in table["streets"])))
                assert after["hand"] >= before[0]

    _serve(tmp_path, body, hands=50)


def test_the_timer_folds_and_a_closed_tab_finishes_the_hand(tmp_path: Path) -> None:
    async def body(session: Any, base: str) -> None:
        async with session.ws_connect(f"{base}/ws/play", origin=base) as ws:
            await _next(ws, "hello")
            await ws.send_str(json.dumps({"type": "start", "game": LEDUC, "opponent": "call"}))
            table = await _next(ws, "table", _my_turn)
            assert 0 < table["deadline_s"] <= 0.5
            notice = await _next(ws, "notice")
            assert "time ran out" in notice["message"]
            assert ("checked" if not table["legal"]["fold"] else "folded") in notice["message"]
            later = await _next(ws, "table", lambda d: (d["hand"], d["legal"] is not None) != (table["hand"], True))
            assert later["hand"] >= table["hand"]
            await _next(ws, "table", _my_turn)
        # the tab closed in the middle of a hand: the seat finishes it alone
        await asyncio.sleep(1.0)
        async with session.ws_connect(f"{base}/ws/play", origin=base) as ws:
            await _next(ws, "hello")
            back = await _next(ws, "table")
            assert back["status"] == "playing" and back["hand"] > table["hand"]

    _serve(tmp_path, body, hands=50, timer_s=0.5)


def test_the_watch_view_follows_a_match_as_it_is_played(tmp_path: Path) -> None:
    """A ``pokerbot match --watch`` started in the match directory while the page
    watches: every hand, and the strategy player's decisions (distribution and
    translation included), reach the watch socket as they are played."""
    match_dir = tmp_path / "matches"
    match_dir.mkdir()
    got: dict[str, list[dict[str, Any]]] = {"decision": [], "hand": [], "end": [], "reset": []}
    ended: dict[str, Any] = {}

    async def body(session: Any, base: str) -> None:
        async with session.ws_connect(f"{base}/ws/watch", origin=base) as ws:
            first = await _next(ws, "matches")
            assert first["matches"] == [] and first["watching"] is None
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "agent", "match", LEDUC, "--players",
                f"strategy:{ROOT / 'strategies' / 'leduc.nolimit.2p.strategy'}", "random", "--hands", "1000",
                "--seed", "5", "--watch", "--log", str(match_dir / "watched.log"), "--quiet", "--no-aivat",
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
            while not got["end"]:
                doc = await _next(ws)
                got.setdefault(doc["type"], []).append(doc)
            _, err = await proc.communicate()
            ended["status"], ended["err"] = proc.returncode, err.decode()

    _serve(tmp_path, body)
    assert ended["status"] == 0, ended["err"]
    log = parse_log((match_dir / "watched.log").read_text())
    assert log.score is not None
    assert got["reset"][0]["match"]["id"] == "watched"
    assert [h["hand"] for h in got["hand"]] == list(range(1, 1001))
    last = got["hand"][-1]
    assert last["betting"] == log.hands[-1].betting
    assert {b["player"]: b["chips"] for b in last["bankroll"]} == pytest.approx(
        dict(zip(log.score.names, log.score.values)))
    decisions = [d for d in got["decision"] if d["distribution"] is not None]
    assert len(decisions) > 500, "the strategy player's decisions reached the view"
    for d in decisions:
        assert sum(x["p"] for x in d["distribution"]) == pytest.approx(1.0, abs=1e-3)
        assert d["distribution"][d["chosen"]]["p"] > 0
    mapped = [d for d in decisions if d["mapping"] is not None]
    assert mapped, "random's off-tree raises were translated"
    assert all(m["mapping"]["chosen"] in {t["label"] for t in m["mapping"]["to"]} for m in mapped)
    assert got["end"][0]["score"] == log.score.line


def test_the_opponents_offered(tmp_path: Path) -> None:
    """The reference bots, each strategy file of the folder (with its game), and any spec
    given, re-solving included; a spec that cannot play is refused in one line."""
    from agent.commands.options import UserError
    from agent.commands.web import opponents

    folder = tmp_path / "strategies"
    folder.mkdir()
    (folder / "leduc.nolimit.2p.strategy").write_bytes((ROOT / "strategies" / "leduc.nolimit.2p.strategy").read_bytes())
    (folder / "broken.strategy").write_bytes(b"not a strategy")
    games = {g.name for g, _ in default_games()}
    offered = opponents(folder, [f"resolve:{folder / 'leduc.nolimit.2p.strategy'}"], games)
    texts = [o.spec.text for o in offered]
    assert texts[:5] == ["call", "raise", "random", "allin", "equity"]
    assert f"strategy:{folder / 'leduc.nolimit.2p.strategy'}" in texts
    resolving = next(o for o in offered if o.spec.resolve is not None)
    assert resolving.game == LEDUC and "re-solving" in resolving.label
    assert not any("broken" in t for t in texts)  # a file that is not a strategy is not offered
    with pytest.raises(UserError, match="not a strategy|strategy file"):
        opponents(folder, [f"strategy:{folder / 'broken.strategy'}"], games)
    with pytest.raises(UserError, match="unknown bot"):
        opponents(folder, ["nobody"], games)


def test_the_command_serves_until_sigterm(tmp_path: Path) -> None:
    """``pokerbot web --port 0`` says where it serves; SIGTERM stops it cleanly (exit 0)."""
    import re
    import signal
    import time

    err = tmp_path / "web.err"
    with open(err, "wb") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "agent", "web", "--port", "0", "--matches",
                                 str(tmp_path / "m")], stdout=subprocess.DEVNULL, stderr=fh, cwd=ROOT)
        try:
            deadline = time.monotonic() + 30
            while not re.search(r"serving http://127\.0\.0\.1:(\d+)/", err.read_text()):
                assert proc.poll() is None and time.monotonic() < deadline, err.read_text()
                time.sleep(0.05)
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(15) == 0, err.read_text()
        finally:
            if proc.poll() is None:
                proc.kill()
    assert "stopped" in err.read_text() and "Traceback" not in err.read_text()
