"""``pokerbot play`` as a command: exit 0 only for a complete match (``--hands``), exact
chips in the summary, and ``--read-timeout`` against a silent dealer.

The dealers here (our dealer, or a scripted one on a plain socket) run in a thread on
127.0.0.1 while ``agent.cli.main`` plays in the test's thread, as the command does.
"""

from __future__ import annotations

import asyncio
import io
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from agent.bots import CallBot
from agent.cli import main
from agent.client import MatchSummary, format_chips, play_match
from agent.dealer import DealerConfig, run_dealer
from poker.game import load_game

ROOT = Path(__file__).resolve().parents[1]
LEDUC = "leduc.limit.2p"


def _play(argv: list[str], capsys) -> tuple[int, str, list[str]]:
    """Run ``pokerbot play ARGV`` in-process: (exit status, stdout, stderr lines)."""
    try:
        status = main(["play", "--spin-us", "0", *argv])
    except SystemExit as exc:  # argparse
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err.strip().splitlines()


# ---------------------------------------------------------------------------- dealers


class _Scripted:
    """A dealer on a plain socket: ``script(conn_file, release)`` runs for the one client
    that connects, then the connection is closed; ``release`` is set by :meth:`close`."""

    def __init__(self, script: Callable[[io.BufferedRWPair, threading.Event], None]) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.script = script
        self.release = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        self.server.settimeout(10)
        try:
            conn, _ = self.server.accept()
        except OSError as exc:
            self.error = exc
            return
        with conn, conn.makefile("rwb", buffering=0) as f:
            try:
                self.script(f, self.release)
            except BaseException as exc:  # noqa: BLE001 - reported by close()
                self.error = exc

    def close(self) -> None:
        self.release.set()
        self.thread.join(10)
        self.server.close()
        assert not self.thread.is_alive()


def _send(f, *lines: str) -> None:
    f.write("".join(line + "\r\n" for line in lines).encode())


def _expect(f, line: str) -> None:
    assert f.readline() == (line + "\r\n").encode()


def _one_hand_then_start_another(f, release) -> None:
    """Holdem no-limit, seat position 1: hand 0 to its end, hand 1 begun and answered, EOF."""
    assert f.readline() == b"VERSION:2.0.0\r\n"
    _send(f, "MATCHSTATE:1:0::|2hAc")
    _expect(f, "MATCHSTATE:1:0::|2hAc:c")
    _send(f, "MATCHSTATE:1:0:c:|2hAc", "MATCHSTATE:1:0:cr200:|2hAc")
    _expect(f, "MATCHSTATE:1:0:cr200:|2hAc:c")
    _send(f, "MATCHSTATE:1:0:cr200f:|2hAc")  # the dealer's word: we folded, -100
    _send(f, "MATCHSTATE:1:1::|3d4d")
    _expect(f, "MATCHSTATE:1:1::|3d4d:c")


@pytest.fixture
def scripted():
    dealers: list[_Scripted] = []

    def start(script) -> _Scripted:
        dealers.append(_Scripted(script))
        return dealers[-1]

    yield start
    for d in dealers:
        d.close()
        assert d.error is None, d.error


class _OurDealer:
    """Our dealer for ``hands`` hands of ``game``; seat 2 is a calling client in the
    dealer's own thread (``quit_after``: it closes its connection after that many lines,
    and the dealer aborts the match); seat 1's port is :attr:`port`."""

    def __init__(self, game: str, hands: int, quit_after: int | None = None) -> None:
        self.game = load_game(game)
        self.hands = hands
        self.quit_after = quit_after
        self.ports: queue.Queue[int] = queue.Queue()
        self.result = None
        self.stderr = io.StringIO()
        self.thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)
        self.thread.start()
        self.port = self.ports.get(timeout=10)

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        seats: asyncio.Future[list[int]] = loop.create_future()
        config = DealerConfig(game=self.game, num_hands=self.hands, seed=5, names=("us", "them"),
                              start_timeout=5)
        dealer = asyncio.ensure_future(
            run_dealer(config, stdout=io.StringIO(), stderr=self.stderr, on_ports=seats.set_result))
        ours, theirs = await seats
        self.ports.put(ours)
        if self.quit_after is None:
            other = asyncio.ensure_future(play_match("127.0.0.1", theirs, CallBot(), self.game))
        else:
            other = asyncio.ensure_future(self._quitter(theirs))
        self.result = await dealer
        await asyncio.gather(other, return_exceptions=True)

    async def _quitter(self, port: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"VERSION:2.0.0\r\n")
        for _ in range(self.quit_after or 0):
            await reader.readline()
        writer.close()

    def join(self) -> None:
        self.thread.join(30)
        assert not self.thread.is_alive()


# ---------------------------------------------------------------------------- complete or not


def test_a_complete_match_exits_0(capsys) -> None:
    dealer = _OurDealer(LEDUC, hands=20)
    status, out, err = _play(["--port", str(dealer.port), "--game", LEDUC, "--hands", "20"], capsys)
    dealer.join()
    assert dealer.result.exit_status == 0 and dealer.result.hands_played == 20
    assert (status, err) == (0, [])
    total = dealer.result.totals[0]
    mbb = 1000 * total / dealer.game.big_blind / 20
    assert out == f"hands 20, chips {format_chips(total)}, {mbb:+.1f} mbb/g\n"


def test_fewer_hands_than_hands_n_is_incomplete(capsys) -> None:
    dealer = _OurDealer(LEDUC, hands=12)
    status, out, err = _play(["--port", str(dealer.port), "--game", LEDUC, "--hands", "15"], capsys)
    dealer.join()
    assert dealer.result.exit_status == 0  # the dealer's match is complete: 12 hands
    assert status == 1
    assert err == ["pokerbot play: error: the dealer closed the connection after 12 of 15 hands"]
    assert out.startswith("hands 12, chips ")  # the summary all the same


def test_the_dealer_closing_mid_hand_exits_1(capsys, scripted) -> None:
    dealer = scripted(_one_hand_then_start_another)
    status, out, err = _play(["--port", str(dealer.port)], capsys)
    assert status == 1
    assert err == ["pokerbot play: error: the dealer closed the connection in hand 2 (1 hand completed)"]
    assert out == "hands 1, chips -100, -1000.0 mbb/g\n"


def test_a_dealer_that_aborts_the_match_mid_hand_exits_1(capsys) -> None:
    # The other seat leaves after two lines; the dealer aborts when it is that seat's turn.
    dealer = _OurDealer(LEDUC, hands=50, quit_after=2)
    status, out, err = _play(["--port", str(dealer.port), "--game", LEDUC], capsys)
    dealer.join()
    assert dealer.result.exit_status == 1 and "ERROR: could not get action from seat 2" in dealer.stderr.getvalue()
    assert status == 1 and len(err) == 1
    assert err[0].startswith("pokerbot play: error: the dealer closed the connection in hand ")
    assert out.startswith("hands ")


@pytest.mark.parametrize("given", [None, "holdem.limit.2p.reverse_blinds"])
def test_a_dealer_of_another_game_is_named_as_such(capsys, given) -> None:
    """A Leduc dealer and a client that assumed hold'em (the default, or a --game given
    wrongly): one line naming the game assumed and where it came from, and --game."""
    dealer = _OurDealer(LEDUC, hands=3)
    status, out, err = _play(["--port", str(dealer.port), *(["--game", given] if given else [])], capsys)
    dealer.join()
    assert status == 1 and len(err) == 1, err
    assumed = given or "holdem.nolimit.2p.reverse_blinds"
    source = "given with --game" if given else "the default: no --game given"
    assert err[0].startswith(f"pokerbot play: error: the dealer's states do not parse as {assumed} ({source}); ")
    assert "Pass --game with the dealer's game" in err[0] and "MATCHSTATE:" in err[0]


def test_the_exit_status_of_the_process(scripted) -> None:
    dealer = scripted(_one_hand_then_start_another)
    r = subprocess.run([sys.executable, "-m", "agent", "play", "--port", str(dealer.port), "--spin-us", "0"],
                       capture_output=True, text=True, cwd=ROOT, timeout=60, check=False)
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        "pokerbot play: error: the dealer closed the connection in hand 2 (1 hand completed)"]
    assert r.stdout == "hands 1, chips -100, -1000.0 mbb/g\n"


# ---------------------------------------------------------------------------- read timeout


def _silent_at_once(f, release) -> None:
    f.readline()
    release.wait(30)


def _silent_after_an_answer(f, release) -> None:
    f.readline()
    _send(f, "MATCHSTATE:1:0::|2hAc")
    _expect(f, "MATCHSTATE:1:0::|2hAc:c")
    release.wait(30)


@pytest.mark.parametrize("silence,where", [
    (_silent_at_once, "before the first state"),
    (_silent_after_an_answer, "in hand 1 (0 hands completed)"),
])
def test_read_timeout_against_a_silent_dealer(capsys, scripted, silence, where) -> None:
    dealer = scripted(silence)
    start = time.monotonic()
    status, out, err = _play(["--port", str(dealer.port), "--read-timeout", "0.3"], capsys)
    elapsed = time.monotonic() - start
    assert status == 1
    assert err == [f"pokerbot play: error: no line from the dealer for 0.3 s (read timeout) {where}"]
    assert 0.3 <= elapsed < 3
    assert out == "hands 0, chips +0, +0.0 mbb/g\n"  # the summary all the same


@pytest.mark.parametrize("argv", [["--hands", "0"], ["--hands", "x"], ["--read-timeout", "0"],
                                  ["--read-timeout", "-1"], ["--read-timeout", "nan"]])
def test_bad_values_are_usage_errors(capsys, argv) -> None:
    status, _, err = _play(["--port", "1", *argv], capsys)
    assert status == 2 and argv[0] in err[-1]


def test_help_tells_the_exit_statuses(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["play", "--help"])
    text = capsys.readouterr().out
    assert exc.value.code == 0
    assert "--hands N" in text and "--read-timeout SECONDS" in text and "exit status" in text


# ---------------------------------------------------------------------------- chips


@pytest.mark.parametrize("chips,text", [
    (48985900.0, "+48985900"),
    (-48985900.0, "-48985900"),
    (12.5, "+12.5"),
    (-0.5, "-0.5"),
    (123456789.5, "+123456789.5"),
    (1e20, "+100000000000000000000"),
    (0.0, "+0"),
    (-0.0, "+0"),
    (-100.0, "-100"),
])
def test_chips_are_printed_exactly(chips: float, text: str) -> None:
    summary = MatchSummary(hands=1000, chips=chips, big_blind=100)
    assert str(summary).startswith(f"hands 1000, chips {text}, ")
    assert "e" not in str(summary).split(",")[1]


def test_chips_of_a_three_way_split_read_back_exactly() -> None:
    for chips in (100 / 3, 2.5e-5 + 3, 7e15 + 0.5):
        text = format_chips(chips)
        assert "e" not in text.lower() and float(text) == chips


# ---------------------------------------------------------------------------- a strategy seat


def test_a_strategy_seat_opens_its_file_once_and_writes_its_summary(capsys, monkeypatch, tmp_path) -> None:
    """``--strategy FILE`` without ``--game``: the file is read once (its game is the
    match's), and ``--summary`` holds the client's count of legalized actions and the
    player's translation and repair counts."""
    import json
    from collections import Counter

    import solver.strategy_io as strategy_io

    reads: Counter = Counter()
    real = strategy_io._from_v3

    def counted(buf, source, *args, **kwargs):
        reads[source] += 1
        return real(buf, source, *args, **kwargs)

    monkeypatch.setattr(strategy_io, "_from_v3", counted)
    path = ROOT / "strategies" / "leduc.limit.2p.strategy"
    summary = tmp_path / "s.json"
    dealer = _OurDealer(LEDUC, hands=30)
    status, out, err = _play(["--port", str(dealer.port), "--strategy", str(path), "--hands", "30", "--seed", "2",
                              "--summary", str(summary)], capsys)
    dealer.join()
    assert (status, err) == (0, []) and dealer.result.hands_played == 30
    assert dict(reads) == {str(path): 1}
    doc = json.loads(summary.read_text())
    assert doc["bot"] == f"strategy:{path}" and doc["completed"] and doc["legalized"] == 0
    assert doc["polling"] == {**doc["polling"], "auto": False, "spin_us": 0.0}  # as _play asks
    t = doc["translation"]
    assert t["hands_acted"] == 30 and t["decisions"] > 0
    assert t["repaired"] == {"min_raise": 0, "all_in": 0, "fold_to_check": 0, "raise_to_call": 0}  # limit: none
