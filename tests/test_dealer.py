"""The dealer: recorded matches replayed exactly, and the asyncio server against real sockets.

* Each normal match in ``tests/data/acpc/transcripts`` is replayed from its clients' lines
  (same seed and names) through :class:`agent.protocol.dealer_state.DealerMatch`: every STATE and the
  SCORE line of the recorded ``.log`` and every message sent to every seat come out the same.
* ``--duplicate`` deals the second pass exactly as the recorded seat-swapped match.
* Over loopback, hostile clients (garbage, a 1 MB line, silence, slowness, disconnects at
  random points, a client that never sends its version, a second client for a taken seat)
  never take the dealer down: it aborts cleanly (exit 1, no SCORE) or plays on.
* The ``pokerbot dealer`` and ``pokerbot play`` commands, as separate processes.

Timeouts are generous and ports ephemeral, so the tests hold on a loaded 2-core machine.
"""

from __future__ import annotations

import asyncio
import os
import io
import json
import random
import socket
import struct
import threading
import subprocess
import sys
from pathlib import Path

import pytest

from agent.bots import CallBot, RandomBot
from agent.client import play_match
from agent.dealer import DealerConfig, parse_names, run_dealer
from agent.protocol.client_state import NEED_DATA, ClientConnection, StateMessage
from agent.protocol.dealer_state import DealerMatch, MatchOver, Send, TimeLimits
from poker.game import load_game
from poker.log import parse_log
from poker.state import Action

from .test_faults import DATA, replay_recorded

NL2 = load_game("holdem.nolimit.2p.reverse_blinds")
NORMAL = sorted(
    p.name.removesuffix(".summary.json")
    for p in (DATA / "logs").glob("*.summary.json")
    if (DATA / "transcripts" / (p.name.removesuffix(".summary.json") + ".seat1.txt")).exists()
)
MATCH_TIMEOUT = 60.0


# ---------------------------------------------------------------------------- replays


def test_normal_matches_are_here():
    assert len(NORMAL) == 8


@pytest.mark.parametrize("match", NORMAL)
def test_recorded_match_replays_exactly(match: str) -> None:
    summary = json.loads((DATA / "logs" / f"{match}.summary.json").read_text())
    result, scripts = replay_recorded(DATA / "transcripts", match, summary, None)
    recorded = [line for line in (DATA / "logs" / f"{match}.log").read_text().splitlines()
                if line.startswith(("STATE:", "SCORE:"))]
    assert result.finished and result.diagnostics == []
    assert result.log == recorded
    assert summary["dealer_stdout_after_ports"] == result.score + "\n"
    for seat, script in enumerate(scripts):
        assert result.sent[seat] == script.received


def test_header_matches_the_recorded_log():
    d = DealerMatch(NL2, num_hands=200, seed=42, names=["ExampleA", "ExampleB"],
                    match_name="holdem.nolimit.2p.reverse_blinds.example_vs_example",
                    game_file="games/holdem.nolimit.2p.reverse_blinds.game")
    recorded = (DATA / "logs" / "holdem.nolimit.2p.reverse_blinds.example_vs_example.log").read_text().splitlines()
    assert d.header() == recorded[:4]


def _call_everything(dealer: DealerMatch) -> list[str]:
    """Play a whole match in-process with every seat calling; returns the log lines."""
    log = []
    outputs = dealer.start(0.0)
    while True:
        log += [o.text for o in outputs if hasattr(o, "text") and o.text.startswith(("STATE", "SCORE"))]
        if dealer.over:
            return log
        outputs = dealer.receive_line(dealer.acting_seat, dealer.owed_text + b":c\r\n", 0.0)


def test_duplicate_second_pass_deals_like_the_swapped_match():
    """SPEC §10: the same seed with the seats reversed gives each player the other's cards."""
    d = DealerMatch(NL2, num_hands=200, seed=42, names=["ExampleA", "ExampleB"], duplicate=True)
    ours = parse_log("\n".join(_call_everything(d)))
    swapped = parse_log((DATA / "logs" / "holdem.nolimit.2p.reverse_blinds.example_vs_example.swapped.log").read_text())
    assert len(ours.hands) == 400
    for mine, theirs in zip(ours.hands[200:], swapped.hands):
        assert mine.hand_no == theirs.hand_no + 200
        assert mine.holes == theirs.holes and mine.names == theirs.names
    # each deal's cards are the same in both passes, held by the other player
    for a, b in zip(ours.hands[:200], ours.hands[200:]):
        assert a.holes == b.holes and a.names == b.names[::-1]
    assert ours.score.values == (0.0, 0.0)  # calling down both ways: duplicate cancels luck


def test_duplicate_rotates_three_seats():
    game = load_game("kuhn.limit.3p")
    d = DealerMatch(game, num_hands=4, seed=42, names=["a", "b", "c"], duplicate=True)
    hands = parse_log("\n".join(_call_everything(d))).hands
    assert len(hands) == 12
    for h in range(4):
        passes = [hands[h + 4 * k] for k in range(3)]
        assert len({p.holes for p in passes}) == 1  # the same deal three times
        # every player holds every position's cards once over the three passes
        for name in "abc":
            assert sorted(p.names.index(name) for p in passes) == [0, 1, 2]


def test_fixed_seats_never_rotate():
    d = DealerMatch(NL2, num_hands=4, seed=42, names=["a", "b"], fixed_seats=True)
    assert all(h.names == ("a", "b") for h in parse_log("\n".join(_call_everything(d))).hands)


def test_dealer_match_rejects_bad_arguments():
    with pytest.raises(ValueError):
        DealerMatch(NL2, num_hands=0, seed=1, names=["a", "b"])
    with pytest.raises(ValueError):
        DealerMatch(NL2, num_hands=1, seed=2**32, names=["a", "b"])
    with pytest.raises(ValueError):
        DealerMatch(NL2, num_hands=1, seed=1, names=["a"])
    with pytest.raises(ValueError):
        DealerMatch(NL2, num_hands=1, seed=1, names=["a|b", "c"])
    assert parse_names(["x,y", "z"], 2) == ("x", "y")
    with pytest.raises(ValueError):
        parse_names(["x"], 2)


def test_too_many_actions_in_a_round_forces_a_call():
    """SPEC §4.2: a raise when (actions this round) + N > 64 is refused with the dealer's warning."""
    d = DealerMatch(NL2, num_hands=1, seed=1, names=["a", "b"])
    d.start(0.0)
    # min-raise back and forth from 200 in steps of 100: 63 raises are allowed, the 64th not
    to = 200
    for _ in range(63):
        out = d.receive_line(d.acting_seat, d.owed_text + f":r{to}\r\n".encode(), 0.0)
        assert not [o for o in out if hasattr(o, "text") and o.text.startswith("WARNING")]
        to += 100
    out = d.receive_line(d.acting_seat, d.owed_text + f":r{to}\r\n".encode(), 0.0)
    warnings = [o.text for o in out if hasattr(o, "text") and o.text.startswith("WARNING")]
    assert warnings == [
        "WARNING: #actions in round is too close to MAX_NUM_ACTIONS, forcing call/fold",
        "WARNING: invalid action, changed to call",
    ]


# ---------------------------------------------------------------------------- loopback


async def _run(config: DealerConfig, clients) -> tuple:
    """Run the dealer and one coroutine factory per seat; returns (result, stdout, stderr, client results)."""
    loop = asyncio.get_running_loop()
    ports: asyncio.Future[list[int]] = loop.create_future()
    out, err = io.StringIO(), io.StringIO()
    dealer = asyncio.ensure_future(run_dealer(config, stdout=out, stderr=err, on_ports=ports.set_result))
    seats = await asyncio.wait_for(asyncio.shield(ports), MATCH_TIMEOUT)
    tasks = [asyncio.ensure_future(make(port)) for make, port in zip(clients, seats)]
    result = await asyncio.wait_for(dealer, MATCH_TIMEOUT)
    done = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), MATCH_TIMEOUT)
    return result, out.getvalue(), err.getvalue(), done


def _config(hands: int = 20, game=NL2, **kw) -> DealerConfig:
    names = kw.pop("names", tuple(f"p{i + 1}" for i in range(game.num_players)))
    return DealerConfig(game=game, num_hands=hands, seed=kw.pop("seed", 5), names=names, **kw)


def _caller(game=NL2):
    return lambda port: play_match("127.0.0.1", port, CallBot(), game, action_timeout=10)


class Scripted:
    """A raw client: tracks the game with ClientConnection, misbehaves on purpose."""

    def __init__(self, port: int, game=NL2) -> None:
        self.port = port
        self.conn = ClientConnection(game)
        self.lines_seen = 0

    async def open(self, version: bytes | None = b"VERSION:2.0.0\r\n"):
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.conn.initiate()
        if version is not None:
            self.writer.write(version)

    async def next_turn(self):
        """The next state this seat must answer, or None at EOF."""
        while True:
            ev = self.conn.next_event()
            if ev is NEED_DATA:
                data = await self.reader.read(65536)
                self.conn.receive_data(data)
                continue
            if not hasattr(ev, "my_turn"):
                return None
            self.lines_seen += 1
            if ev.my_turn:
                return ev.match_state

    def answer(self, action: Action | None = None) -> None:
        self.writer.write(self.conn.send_action(action or Action.call()))

    def reset(self) -> None:
        """Close with a TCP reset (SO_LINGER 0), the rudest way to vanish."""
        sock = self.writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.writer.transport.abort()


def test_loopback_match_logs_like_the_in_process_dealer(tmp_path: Path) -> None:
    log = tmp_path / "m.log"
    cfg = _config(hands=40, log_path=log, match_name="m", names=("alice", "bob"))
    result, out, err, clients = asyncio.run(_run(cfg, [_caller(), _caller()]))
    assert result.exit_status == 0 and result.hands_played == 40
    ports_line, score_line = out.splitlines()
    assert len(ports_line.split()) == 2 and score_line == result.score
    assert "WARNING" not in err and "ERROR" not in err and err.splitlines()[-1] == result.score
    expected = _call_everything(DealerMatch(NL2, num_hands=40, seed=5, names=["alice", "bob"]))
    text = log.read_text().splitlines()
    assert text[0] == "# name/game/hands/seed m holdem.nolimit.2p.reverse_blinds 40 5"
    assert text[4:] == expected
    # each client's own tally agrees with the dealer's SCORE
    assert [c.chips for c in clients] == pytest.approx(list(result.totals))
    assert all(c.hands == 40 for c in clients)


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix sockets on this system")
def test_a_match_over_unix_sockets_logs_as_over_tcp(tmp_path: Path) -> None:
    sockets = tmp_path / "s"
    sockets.mkdir()
    logs = {}
    for name, unix_dir in (("tcp", None), ("unix", sockets)):
        logs[name] = tmp_path / f"{name}.log"
        cfg = _config(hands=40, log_path=logs[name], match_name="m", names=("alice", "bob"), unix_dir=unix_dir,
                      spin_us=100.0 if unix_dir else 0.0)  # (polling on one side: its read path too)
        if unix_dir is None:
            clients = [_caller(), _caller()]
        else:
            clients = [lambda path: play_match("", 0, CallBot(), NL2, action_timeout=10, unix_path=path,
                                               spin_us=100.0)] * 2
        result, out, err, done = asyncio.run(_run(cfg, clients))
        assert result.exit_status == 0 and result.hands_played == 40, err
        assert [c.hands for c in done] == [40, 40]
        if unix_dir is not None:
            assert out.splitlines()[0].split() == [str(sockets / "seat1"), str(sockets / "seat2")]
            assert list(sockets.iterdir()) == []  # each seat's socket file goes once it is taken
    assert logs["unix"].read_text() == logs["tcp"].read_text()


def test_three_players_with_random_bots() -> None:
    game = load_game("holdem.nolimit.3p")
    bots = [lambda port, i=i: play_match("127.0.0.1", port, RandomBot(random.Random(i)), game) for i in range(3)]
    result, _, err, clients = asyncio.run(_run(_config(hands=30, game=game), bots))
    assert result.exit_status == 0 and "WARNING" not in err
    assert [c.chips for c in clients] == pytest.approx(list(result.totals))


def test_garbage_and_a_megabyte_line_are_survived() -> None:
    async def hostile(port: int):
        c = Scripted(port)
        await c.open()
        rng = random.Random(9)
        turns = 0
        while await c.next_turn() is not None:
            turns += 1
            if turns == 1:
                c.writer.write(b"A" * (1 << 20) + b"\n")  # 257 pieces of 4095 bytes, all junk
            elif turns <= 4:
                junk = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))).replace(b"\n", b"")
                c.writer.write(junk + b"\r\n" + b"\x00\r\n" + b"MATCHSTATE:9:9:zz:Zz\r\n")
            c.answer(Action.raise_to(rng.randint(-5, 30000)))
        return turns

    result, _, err, (turns, _) = asyncio.run(_run(_config(hands=10), [hostile, _caller()]))
    assert result.exit_status == 0 and result.hands_played == 10
    bad = err.count("WARNING: bad state format in response")
    assert bad >= 257 + 3 * 3 - 3  # every piece of the long line and the junk lines
    assert turns > 4


def _hostile_thread(port: int, seed: int, out: list) -> None:
    """A blocking client in its own thread (so that its bytes can arrive while the dealer
    polls): a megabyte line, then junk before each of its next answers."""
    conn = ClientConnection(NL2)
    rng = random.Random(seed)
    turns = 0
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(conn.initiate())
        while data := s.recv(65536):
            conn.receive_data(data)
            while (event := conn.next_event()) is not NEED_DATA:
                if not isinstance(event, StateMessage) or not event.my_turn:
                    continue
                turns += 1
                junk = b""
                if turns == 1:
                    junk = b"A" * (1 << 20) + b"\n"
                elif turns <= 6:
                    junk = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))).replace(b"\n", b"")
                    junk += b"\r\n" + b"MATCHSTATE:9:9:zz:Zz\r\n"
                s.sendall(junk + conn.send_action(Action.raise_to(rng.randint(-5, 30000))))
    out.append(turns)


def test_polling_dealer_reads_hostile_bytes_like_the_event_loop(tmp_path: Path, monkeypatch) -> None:
    """The dealer's polled reads (agent.eventloop.busy_read) go through the same framing
    and rules as the event loop's: the same warnings and the same log, with or without."""
    import threading

    import agent.dealer

    polled: list[int] = []

    def counting_read(fd: int, budget: float) -> bytes | None:
        data = agent.dealer.busy_read.__wrapped__(fd, budget)  # type: ignore[attr-defined]
        polled.append(len(data or b""))
        return data

    counting_read.__wrapped__ = agent.dealer.busy_read  # type: ignore[attr-defined]
    monkeypatch.setattr(agent.dealer, "busy_read", counting_read)

    async def run(spin_us: float) -> tuple:
        loop = asyncio.get_running_loop()
        ports: asyncio.Future[list[int]] = loop.create_future()
        err = io.StringIO()
        log = tmp_path / f"h{spin_us:g}.log"
        cfg = _config(hands=12, spin_us=spin_us, log_path=log)
        dealer = asyncio.ensure_future(run_dealer(cfg, stdout=io.StringIO(), stderr=err, on_ports=ports.set_result))
        seats = await asyncio.wait_for(asyncio.shield(ports), MATCH_TIMEOUT)
        turns: list[int] = []
        thread = threading.Thread(target=_hostile_thread, args=(seats[0], 4, turns), daemon=True)
        thread.start()
        other = asyncio.ensure_future(_caller()(seats[1]))
        result = await asyncio.wait_for(dealer, MATCH_TIMEOUT)
        await asyncio.wait_for(other, MATCH_TIMEOUT)
        await asyncio.to_thread(thread.join, MATCH_TIMEOUT)
        warnings = [ln for ln in err.getvalue().splitlines() if ln.startswith(("WARNING", "ERROR"))]
        return result, warnings, log.read_text().splitlines()[4:], turns

    runs = []
    for spin_us in (0.0, 3000.0):
        result, warnings, log, turns = asyncio.run(run(spin_us))
        assert result.exit_status == 0 and result.hands_played == 12 and turns[0] > 6
        assert warnings.count("WARNING: bad state format in response") >= 257 + 5 * 2
        runs.append((warnings, log))
    assert runs[0] == runs[1]
    assert any(polled)  # the second run did read by polling


def _public(ms) -> tuple[int, str]:
    """What both seats' copies of one state share: the hand and its betting."""
    return ms.hand_number, ms.text.split(":")[3]


class _Seen:
    """The public states seat 1 has read, for the thread playing seat 2 to wait on."""

    def __init__(self) -> None:
        self.states: set[tuple[int, str]] = set()
        self.cond = threading.Condition()

    def add(self, key: tuple[int, str]) -> None:
        with self.cond:
            self.states.add(key)
            self.cond.notify_all()

    def wait(self, key: tuple[int, str], timeout: float) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: key in self.states, timeout)


def _reading_thread(port: int, out: dict, seen: _Seen) -> None:
    """A blocking client that answers every owed state with a call and records, for each
    read, whether it left a state to answer (the other seat's copies are held back for it)."""
    conn = ClientConnection(NL2)
    reads: list[bool] = []
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(conn.initiate())
        while data := s.recv(65536):
            conn.receive_data(data)
            answer = b""
            while (event := conn.next_event()) is not NEED_DATA:
                if isinstance(event, StateMessage):
                    seen.add(_public(event.match_state))
                    if event.my_turn:
                        answer = conn.send_action(Action.call())
            reads.append(bool(answer))
            if answer:
                s.sendall(answer)
    out.update(reads=reads, hands=conn.hands, chips=conn.chips)


def _waiting_caller(port: int, out: dict, seen: _Seen, wait: bool) -> None:
    """Seat 2, blocking: calls every owed state; with ``wait``, only once seat 1 has read
    its copy of that state (or after a few seconds), noting which turns' copies came first."""
    conn = ClientConnection(NL2)
    first: list[bool] = []
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(conn.initiate())
        while data := s.recv(65536):
            conn.receive_data(data)
            while (event := conn.next_event()) is not NEED_DATA:
                if isinstance(event, StateMessage) and event.my_turn:
                    if wait:
                        first.append(seen.wait(_public(event.match_state), 5.0))
                    s.sendall(conn.send_action(Action.call()))
    out.update(first=first, hands=conn.hands, chips=conn.chips)


@pytest.mark.parametrize("hold_back", [True, False])
def test_a_seat_is_written_to_only_when_it_is_to_act(tmp_path: Path, hold_back: bool) -> None:
    """Holding back, the dealer writes a seat's messages only when that seat must answer
    (and all at the end): each read but the last brings a state to answer. Not holding
    back, a seat's copy of each state the other seat must answer reaches it while that
    seat is still to act (the other seat waits for it, so this holds however the threads
    are scheduled). Either way every message arrives in order and the log is the
    in-process dealer's."""

    async def run() -> tuple:
        loop = asyncio.get_running_loop()
        ports: asyncio.Future[list[int]] = loop.create_future()
        cfg = _config(hands=30, log_path=tmp_path / "held.log", hold_back=hold_back)
        dealer = asyncio.ensure_future(run_dealer(cfg, stdout=io.StringIO(), stderr=io.StringIO(),
                                                  on_ports=ports.set_result))
        seats = await asyncio.wait_for(asyncio.shield(ports), MATCH_TIMEOUT)
        seen, other = _Seen(), {}
        first: dict = {}
        threads = [
            threading.Thread(target=_reading_thread, args=(seats[0], first, seen), daemon=True),
            threading.Thread(target=_waiting_caller, args=(seats[1], other, seen, not hold_back), daemon=True),
        ]
        for t in threads:
            t.start()
        result = await asyncio.wait_for(dealer, MATCH_TIMEOUT)
        for t in threads:
            await asyncio.to_thread(t.join, MATCH_TIMEOUT)
        return result, first, other

    result, first, other = asyncio.run(run())
    assert result.exit_status == 0 and result.hands_played == 30
    reads = first["reads"]
    if hold_back:
        assert all(reads[:-1]) and not reads[-1]  # (the last read: the final states, then EOF)
    else:
        # every one of seat 2's turns: seat 1 had read its copy before seat 2 answered
        assert len(other["first"]) >= 30 and all(other["first"])
    assert first["hands"] == other["hands"] == 30
    assert [first["chips"], other["chips"]] == pytest.approx(list(result.totals))
    expected = _call_everything(DealerMatch(NL2, num_hands=30, seed=5, names=["p1", "p2"]))
    assert (tmp_path / "held.log").read_text().splitlines()[4:] == expected


def test_the_seat_to_act_is_written_to_first() -> None:
    """Writing every copy at once, the dealer writes first to the seat that must answer
    (the match waits for its wake-up), then to the others in seat order; each seat still
    gets its own messages in order, and holding back writes to the seat to act alone."""
    from agent.dealer import Dealer

    for hold_back in (False, True):
        dealer = Dealer(_config(hands=4, hold_back=hold_back))
        written: list[tuple[int, bytes]] = []

        class Seat:
            lost = False

            def __init__(self, seat: int) -> None:
                self.seat = seat

            def write(self, data: bytes) -> bool:
                written.append((self.seat, data))
                return True

        dealer._seats = [Seat(0), Seat(1)]  # type: ignore[list-item]
        match = dealer.match
        for seat in (0, 1):
            match.receive_version(seat, b"VERSION:2.0.0\n")
        dealer._carry_out(match.start(0.0))
        actors = []
        for step in range(12):  # three hands of call against call, in part
            acting = match.acting_seat
            assert acting is not None
            actors.append(acting)
            first = written[0][0]
            assert first == acting, (hold_back, step, written)
            if hold_back:
                assert {seat for seat, _ in written} == {acting}
            else:
                assert [seat for seat, _ in written] == [acting, 1 - acting]
            owed = match.owed_text
            assert written[0][1].endswith(owed + b"\r\n")
            written.clear()
            dealer._carry_out(match.receive_line(acting, owed + b":c\r\n", 0.0))
        assert set(actors) == {0, 1}  # both seats were to act first at some point


def test_prepared_calls_go_out_as_read_ones() -> None:
    """The dealer answers a call it prepared while the seat thought with the very writes
    reading the call makes (the seat to act first; holding back, to it alone), the hand's
    last call read as before; a raise is read."""
    from agent.dealer import Dealer

    class Seat:
        lost = False

        def __init__(self, seat: int, written: list[tuple[int, bytes]]) -> None:
            self.seat, self.written = seat, written

        def write(self, data: bytes) -> bool:
            self.written.append((self.seat, data))
            return True

    class Timer:
        def cancel(self) -> None:
            pass

    for hold_back in (False, True):
        runs = []
        for prepare in (False, True):
            dealer = Dealer(_config(hands=4, hold_back=hold_back))
            written: list[tuple[int, bytes]] = []
            dealer._seats = [Seat(0, written), Seat(1, written)]  # type: ignore[list-item]
            dealer._timer = Timer()  # type: ignore[assignment]  (no event loop: no response timer)
            match = dealer.match
            if not prepare:
                dealer._prepare_call = lambda: None  # type: ignore[method-assign]
            taken = []
            take = match.take_prepared
            match.take_prepared = lambda p, now: taken.append(take(p, now)) or taken[-1]  # type: ignore[method-assign]
            for seat in (0, 1):
                match.receive_version(seat, b"VERSION:2.0.0\n")
            dealer._carry_out(match.start(0.0))
            dealer._awaited = match.acting_seat
            dealer._prepare_call()
            steps = 0
            while (acting := match.acting_seat) is not None:
                action = b"r400" if steps == 9 else b"c"
                dealer._take_line(acting, match.owed_text + b":" + action + b"\r\n", 0.001 * steps)
                steps += 1
            runs.append((written, match.hands_played, steps, taken))
        (slow, hands, steps, none), (fast, hands_fast, steps_fast, taken) = runs
        assert fast == slow and hands == hands_fast == 4 and steps == steps_fast and none == []
        # every call but each hand's last was answered from its preparation; the raise was read
        assert taken.count(True) == steps - hands - 1 and taken.count(False) == 0, taken


def test_holding_back_is_the_default_on_one_cpu() -> None:
    """hold_back_by_default follows this process's CPU affinity (a child process, pinned)."""
    import subprocess
    import sys

    code = ("import os, sys; os.sched_setaffinity(0, {int(sys.argv[1])} if sys.argv[2] == '1' else "
            "os.sched_getaffinity(0)); from agent.dealer import hold_back_by_default; "
            "print(hold_back_by_default(), len(os.sched_getaffinity(0)))")
    cpu = min(os.sched_getaffinity(0))
    for pin in ("1", "0"):
        out = subprocess.run([sys.executable, "-c", code, str(cpu), pin], capture_output=True, text=True,
                             cwd=Path(__file__).resolve().parents[1], check=True).stdout.split()
        assert out[0] == str(int(out[1]) == 1)


def test_silent_client_times_out_cleanly() -> None:
    async def silent(port: int):
        c = Scripted(port)
        await c.open()
        await c.next_turn()  # its turn comes, and it says nothing
        await c.reader.read()  # until the dealer hangs up

    # seat 2 is the small blind of hand 0 and acts first: only the silent client is timed
    cfg = _config(hands=5, limits=TimeLimits(response_ms=300))
    result, out, err, _ = asyncio.run(_run(cfg, [_caller(), silent]))
    assert result.exit_status == 1 and result.score is None
    assert len(out.splitlines()) == 1  # the port line only: no SCORE
    assert "ERROR: could not get action from seat 2" in err
    assert "seconds spent waiting; timeout 0.3" in err


def test_slow_client_runs_out_of_hand_time() -> None:
    async def slow(port: int):
        c = Scripted(port)
        await c.open()
        await c.next_turn()
        await asyncio.sleep(0.3)
        c.answer()
        await c.reader.read()

    cfg = _config(hands=5, limits=TimeLimits(hand_ms=200))
    result, _, err, _ = asyncio.run(_run(cfg, [_caller(), slow]))  # seat 2 acts first
    assert result.exit_status == 1 and "ERROR: seat 2 ran out of time" in err


@pytest.mark.parametrize("seed", range(8))
def test_disconnect_at_a_random_point(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    quit_after = rng.randrange(0, 60)
    how = rng.choice(["close", "reset", "half-line"])

    async def quitter(port: int):
        c = Scripted(port)
        await c.open()
        while True:
            ev = c.conn.next_event()
            if ev is NEED_DATA:
                c.conn.receive_data(await c.reader.read(65536))
                continue
            if not hasattr(ev, "my_turn"):
                return
            c.lines_seen += 1
            if c.lines_seen >= quit_after:
                break
            if ev.my_turn:
                c.answer()
        if how == "reset":
            c.reset()
        else:
            if how == "half-line" and c.conn.owed is not None:
                c.writer.write(c.conn.owed.text.encode()[:10])
            c.writer.close()

    seat = rng.randrange(2)
    clients = [_caller(), _caller()]
    clients[seat] = quitter
    cfg = _config(hands=50, log_path=tmp_path / "x.log")
    result, _, err, done = asyncio.run(_run(cfg, clients))
    log = parse_log((tmp_path / "x.log").read_text())
    if result.exit_status == 1:
        assert f"ERROR: could not get action from seat {seat + 1}" in err
        assert log.score is None and len(log.hands) == result.hands_played < 50
    else:  # it left after its last decision: the match could still finish
        assert log.score is not None
    other = done[1 - seat]
    assert not isinstance(other, BaseException)  # the other client just saw EOF


def test_client_that_never_sends_a_version() -> None:
    async def mute(port: int):
        c = Scripted(port)
        await c.open(version=None)
        await c.reader.read()

    cfg = _config(hands=5, start_timeout=1.0)
    result, _, err, _ = asyncio.run(_run(cfg, [_caller(), mute]))
    assert result.exit_status == 1 and "ERROR: could not get version from seat 2" in err


def test_version_garbage_aborts_and_wrong_version_is_only_reported() -> None:
    async def garbage(port: int):
        c = Scripted(port)
        await c.open(version=b"HELLO\r\n")
        await c.reader.read()

    result, _, err, _ = asyncio.run(_run(_config(hands=2), [garbage, _caller()]))
    assert result.exit_status == 1 and "ERROR: invalid version string HELLO" in err

    async def old(port: int):
        return await play_match_with_version(port, b"VERSION:1.0.0\n")

    result, _, err, _ = asyncio.run(_run(_config(hands=2), [old, _caller()]))
    assert result.exit_status == 0 and "ERROR: this server is currently using version 2.0.0" in err


async def play_match_with_version(port: int, version: bytes) -> int:
    c = Scripted(port)
    await c.open(version=version)
    while await c.next_turn() is not None:
        c.answer()
    return c.lines_seen


def test_second_client_for_a_taken_seat_is_turned_away() -> None:
    async def first_then_intruder(port: int):
        task = asyncio.ensure_future(play_match("127.0.0.1", port, CallBot(), NL2))
        await asyncio.sleep(0.2)
        try:
            r, w = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            intruder = "refused"
        else:
            w.write(b"VERSION:2.0.0\r\n")
            intruder = "closed" if await r.read() == b"" else "served"
        return await task, intruder

    result, _, _, (res, _) = asyncio.run(_run(_config(hands=30), [first_then_intruder, _caller()]))
    summary, intruder = res
    assert result.exit_status == 0 and summary.hands == 30 and intruder in ("refused", "closed")


# ---------------------------------------------------------------------------- commands


def test_dealer_and_play_commands_as_processes(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "agent"]
    root = Path(__file__).resolve().parents[1]
    dealer = subprocess.Popen(
        cmd + ["dealer", "leduc.limit.2p", "--hands", "50", "--seed", "3", "--players", "alice", "bob",
               "--log", str(tmp_path / "leduc.log")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=root)
    try:
        ports = dealer.stdout.readline().split()
        assert len(ports) == 2
        players = [
            subprocess.Popen(cmd + ["play", "--port", port, "--bot", bot, "--game", "leduc.limit.2p", "--seed", "1"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=root)
            for port, bot in zip(ports, ["random", "equity"])
        ]
        outs = [p.communicate(timeout=MATCH_TIMEOUT) for p in players]
        rest, err = dealer.communicate(timeout=MATCH_TIMEOUT)
    finally:
        for p in [dealer]:
            if p.poll() is None:
                p.kill()
    assert dealer.returncode == 0, err
    assert [p.returncode for p in players] == [0, 0], outs
    score = rest.strip()
    assert score.startswith("SCORE:") and score.endswith(":alice|bob")
    log = parse_log((tmp_path / "leduc.log").read_text())
    assert len(log.hands) == 50 and log.score.line == score
    for (out, _), total in zip(outs, log.score.values):
        assert out.startswith("hands 50, chips ") and "mbb/g" in out
        assert float(out.split("chips ")[1].split(",")[0]) == pytest.approx(total)


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix sockets on this system")
def test_dealer_and_play_commands_over_unix_sockets(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "agent"]
    root = Path(__file__).resolve().parents[1]
    dealer = subprocess.Popen(
        cmd + ["dealer", "kuhn.limit.2p", "--hands", "30", "--seed", "3", "--unix", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=root)
    try:
        paths = dealer.stdout.readline().split()
        assert paths == [str(tmp_path / "seat1"), str(tmp_path / "seat2")]
        players = [subprocess.Popen(cmd + ["play", "--unix", path, "--game", "kuhn.limit.2p"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=root)
                   for path in paths]
        outs = [p.communicate(timeout=MATCH_TIMEOUT) for p in players]
        dealer.communicate(timeout=MATCH_TIMEOUT)
    finally:
        if dealer.poll() is None:
            dealer.kill()
    assert dealer.returncode == 0 and [p.returncode for p in players] == [0, 0], outs
    assert all(out.startswith("hands 30, chips ") for out, _ in outs)


@pytest.mark.parametrize(("args", "message"), [
    (["play"], "give the dealer's --port, or its --unix socket path"),
    (["play", "--port", "9", "--unix", "x"], "give the dealer's --port, or its --unix socket path"),
    (["dealer", "kuhn.limit.2p", "--hands", "1", "--seed", "1", "--unix", "no/such/dir"], "not a directory"),
    (["dealer", "kuhn.limit.2p", "--hands", "1", "--seed", "1", "--unix", "{long}"], "too long"),
    (["dealer", "kuhn.limit.2p", "--hands", "1", "--seed", "1", "--unix", "{tmp}", "--port", "9"], "no --port"),
])
def test_unix_socket_options_are_checked(tmp_path: Path, args: list[str], message: str) -> None:
    long = tmp_path / ("d" * 120)
    long.mkdir()
    args = [a.format(long=long, tmp=tmp_path) for a in args]
    root = Path(__file__).resolve().parents[1]
    r = subprocess.run([sys.executable, "-m", "agent", *args], capture_output=True, text=True, cwd=root,
                       timeout=MATCH_TIMEOUT, check=False)
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_play_command_reports_a_refused_connection() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nobody listens here once closed
    root = Path(__file__).resolve().parents[1]
    r = subprocess.run([sys.executable, "-m", "agent", "play", "--port", str(port)],
                       capture_output=True, text=True, cwd=root, timeout=MATCH_TIMEOUT, check=False)
    assert r.returncode == 1 and "cannot connect" in r.stderr and len(r.stderr.splitlines()) == 1


def test_outputs_are_well_formed():
    d = DealerMatch(NL2, num_hands=1, seed=1, names=["a", "b"])
    out = d.start(0.0)
    assert [o.seat for o in out if isinstance(o, Send)] == [0, 1]
    assert all(o.data.endswith(b"\r\n") for o in out if isinstance(o, Send))
    assert not any(isinstance(o, MatchOver) for o in out)
