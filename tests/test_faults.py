"""Replay the reference dealer's recorded fault scenarios against our sans-IO dealer.

Each scenario in ``tests/data/acpc/faults`` is a 3-hand match in which seat 1 sent
something wrong (SPEC §6, README "Fault injection"). The clients' lines are fed to
:class:`agent.protocol.dealer_state.DealerMatch` in-process with a simulated clock: a line arrives
when the dealer's stderr says it was read (``FROM`` time stamps), or, for lines the
reference dealer never got to read, at the time the client's transcript says it was
sent. The replay must give the same outcome (finished or aborted), the same WARNING and
ERROR lines in the same order, the same hand log, and every message the dealer sent to
each seat exactly as recorded.

The :class:`Replay` harness here is shared with ``test_dealer.py`` (normal matches).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agent.protocol.codec import DEALER_MAX_LINE, LineBuffer
from agent.protocol.dealer_state import DealerMatch, Diagnostic, LogLine, MatchOver, Send, TimeLimits
from poker.game import load_game

DATA = Path(__file__).parent / "data" / "acpc"
FAULTS = sorted(p.name for p in (DATA / "faults").iterdir() if p.is_dir())


@dataclass
class ClientLine:
    """One line a client sent: its bytes, what it had received by then, and any pause first."""

    data: bytes
    trigger: int  # number of dealer lines the client had received when it sent this
    delay: float  # seconds it waited (after the trigger, or after its previous line)


@dataclass
class SeatScript:
    """What one seat's transcript says: its version line, its lines, what it received."""

    version: bytes | None = None
    lines: list[ClientLine] = field(default_factory=list)
    received: list[str] = field(default_factory=list)
    disconnects: bool = False  # closed its socket after its last line
    read_times: list[float] = field(default_factory=list)  # FROM stamps, if recorded


def read_transcript(path: Path) -> SeatScript:
    """Parse a ``<match>.seatN.txt`` transcript (README "Transcript format")."""
    script = SeatScript()
    pending_delay = 0.0
    last: ClientLine | None = None
    for raw in path.read_text().splitlines():
        if raw.startswith("S-> "):
            script.received.append(raw[4:])
        elif raw.startswith("<-C "):
            data = raw[4:].encode("latin-1") + b"\r\n"
            if script.version is None:
                script.version = data
                last = None
                continue
            last = ClientLine(data, len(script.received), pending_delay)
            pending_delay = 0.0
            script.lines.append(last)
        elif raw.startswith("# (previous line ended with LF only)"):
            if last is not None:
                last.data = last.data[:-2] + b"\n"
            elif script.version is not None:
                script.version = script.version[:-2] + b"\n"
        elif raw.startswith("# (raw bytes sent: "):
            m = re.match(r"# \(raw bytes sent: (b'.*'); no terminator\)", raw)
            assert m and last is not None
            last.data = ast.literal_eval(m.group(1))
        elif (m := re.match(r"# sleeping ([0-9.]+) s", raw)) or (m := re.match(r"# no message from dealer within ([0-9.]+) s", raw)):
            pending_delay += float(m.group(1))
        elif raw.startswith("# INJECT disconnect"):
            script.disconnects = True
    return script


def read_stderr(path: Path, seats: int) -> tuple[list[str], list[list[float]], float]:
    """The WARNING/ERROR lines of a dealer stderr, the FROM times per seat, the start time."""
    diagnostics: list[str] = []
    times: list[list[float]] = [[] for _ in range(seats)]
    start = 0.0
    for line in path.read_text().splitlines():
        if m := re.match(r"FROM (\d+) at ([0-9.]+) ", line):
            times[int(m.group(1)) - 1].append(float(m.group(2)))
        elif m := re.match(r"STARTED at ([0-9.]+)", line):
            start = float(m.group(1))
        elif line.startswith(("WARNING", "ERROR")) or re.match(r"[0-9.]+ seconds spent waiting", line):
            diagnostics.append(line)
    return diagnostics, times, start


@dataclass
class ReplayResult:
    finished: bool
    score: str | None
    diagnostics: list[str]
    log: list[str]
    sent: list[list[str]]  # per seat, without CRLF


class Replay:
    """Drive a :class:`DealerMatch` with scripted seats on a simulated clock."""

    def __init__(self, dealer: DealerMatch, scripts: list[SeatScript], start: float = 0.0) -> None:
        self.dealer = dealer
        self.scripts = scripts
        self.clock = start
        n = len(scripts)
        self.buffers = [LineBuffer(DEALER_MAX_LINE, cut_long_lines=True) for _ in range(n)]
        self.next_line = [0] * n
        self.last_arrival = [start] * n
        self.send_times: list[list[float]] = [[] for _ in range(n)]
        self.result = ReplayResult(False, None, [], [], [[] for _ in range(n)])

    def _take(self, outputs: list) -> None:
        for out in outputs:
            if isinstance(out, Send):
                assert out.data.endswith(b"\r\n")
                self.result.sent[out.seat].append(out.data[:-2].decode("ascii"))
                self.send_times[out.seat].append(self.clock)
            elif isinstance(out, Diagnostic):
                self.result.diagnostics.append(out.text)
            elif isinstance(out, LogLine):
                self.result.log.append(out.text)
            elif isinstance(out, MatchOver):
                self.result.finished = out.score is not None
                self.result.score = out.score

    def _arrival(self, seat: int, k: int) -> float:
        script = self.scripts[seat]
        if k < len(script.read_times):
            return script.read_times[k]
        line = script.lines[k]
        sends = self.send_times[seat]
        after = sends[line.trigger - 1] if line.trigger else self.clock
        return max(after, self.last_arrival[seat]) + line.delay

    def run(self) -> ReplayResult:
        d = self.dealer
        for seat, script in enumerate(self.scripts):
            assert script.version is not None, f"seat {seat + 1} sent no version line"
            self._take(d.receive_version(seat, script.version))
            if d.over:
                return self.result
        self._take(d.start(self.clock))
        limit = d.limits.response_ms / 1000
        while not d.over:
            seat = d.acting_seat
            assert seat is not None
            buf = self.buffers[seat]
            line = buf.next_line()
            if line is not None:
                self._take(d.receive_line(seat, line, self.clock))
                continue
            waiting_since = max(self.clock, d.sent_at)
            k = self.next_line[seat]
            script = self.scripts[seat]
            if k == len(script.lines):
                if script.disconnects:
                    self._take(d.connection_lost(seat, waiting_since))
                else:  # the client is silent (or its last line never ended): the dealer times out
                    self.clock = waiting_since + limit
                    self._take(d.read_timed_out(seat, self.clock))
                continue
            arrival = self._arrival(seat, k)
            if arrival - waiting_since > limit:
                self.clock = waiting_since + limit
                self._take(d.read_timed_out(seat, self.clock))
                continue
            self.next_line[seat] += 1
            self.last_arrival[seat] = arrival
            self.clock = max(self.clock, arrival)
            buf.feed(script.lines[k].data)
        return self.result


def _limits(argv: list[str]) -> TimeLimits:
    opts = dict(zip(argv[::2], argv[1::2]))
    return TimeLimits(
        response_ms=int(opts.get("--t_response", 600000)),
        hand_ms=int(opts.get("--t_hand", 600000)),
        per_hand_ms=int(opts.get("--t_per_hand", 7000)),
    )


def replay_recorded(folder: Path, prefix: str, summary: dict, stderr: Path | None) -> tuple[ReplayResult, list[SeatScript]]:
    """Replay a recorded match (normal or fault) whose transcripts are ``<prefix>.seatN.txt``."""
    argv = summary["dealer_argv"]
    game_file, hands, seed = argv[2], int(argv[3]), int(argv[4])
    game = load_game(Path(game_file).name)
    names = argv[5 : 5 + game.num_players]
    scripts = [read_transcript(folder / f"{prefix}.seat{i + 1}.txt") for i in range(game.num_players)]
    start = 0.0
    if stderr is not None:
        _, times, start = read_stderr(stderr, game.num_players)
        for script, t in zip(scripts, times):
            script.read_times = t
    dealer = DealerMatch(
        game,
        num_hands=hands,
        seed=seed,
        names=names,
        limits=_limits(argv[5 + game.num_players :]),
        match_name=Path(argv[1]).name,
        game_file=game_file,
    )
    return Replay(dealer, scripts, start).run(), scripts


def _recorded_log(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.startswith(("STATE:", "SCORE:"))]


def test_every_scenario_is_here():
    assert len(FAULTS) == 38


@pytest.mark.parametrize("name", FAULTS)
def test_fault_scenario_replays_like_the_reference(name: str) -> None:
    folder = DATA / "faults" / name
    summary = json.loads((folder / f"{name}.summary.json").read_text())
    stderr = folder / f"{name}.dealer.stderr"
    result, scripts = replay_recorded(folder, name, summary, stderr)
    expected_diag, _, _ = read_stderr(stderr, len(scripts))
    exit_code = summary["dealer_exit"]

    # Outcome: finished (exit 0) or aborted (exit 1, or killed by SIGPIPE: -13).
    assert result.finished == (exit_code == 0)
    if exit_code == 0:
        assert summary["dealer_stdout_after_ports"] == result.score + "\n"
    if exit_code == -13:
        # The reference dealer died silently writing to the vanished seat; ours notices
        # the lost connection when that seat is next to act and says so (SPEC §6.4).
        assert result.diagnostics == [
            "ERROR: could not get action from seat 1",
            "0.0 seconds spent waiting; timeout 600.0",
        ]
    else:
        assert result.diagnostics == expected_diag
    # The hand log: same STATE lines, and a SCORE line only for a finished match.
    assert result.log == _recorded_log(folder / f"{name}.log")
    # Every message the dealer sent, to every seat, exactly as the clients received it.
    for seat, script in enumerate(scripts):
        got = result.sent[seat]
        if script.disconnects or exit_code != 0:
            assert got[: len(script.received)] == script.received
        else:
            assert got == script.received


@pytest.mark.parametrize(
    ("name", "applied"),
    [
        ("nl_raise_small", "MATCHSTATE:0:0:cr200:7d3d|"),
        ("nl_raise_zero", "MATCHSTATE:0:0:cr200:7d3d|"),
        ("nl_raise_negative", "MATCHSTATE:0:0:cr200:7d3d|"),
        ("nl_raise_large", "MATCHSTATE:0:0:cr20000:7d3d|"),
        ("nl_raise_space", "MATCHSTATE:0:0:cr200:7d3d|"),
        ("nl_raise_nosize", "MATCHSTATE:0:0:cc/:7d3d|/5sKs7s"),
        ("nl_bad_action", "MATCHSTATE:0:0:cc/:7d3d|/5sKs7s"),
        ("nl_no_action", "MATCHSTATE:0:0:cc/:7d3d|/5sKs7s"),
        ("nl_trailing", "MATCHSTATE:0:0:cc/:7d3d|/5sKs7s"),
    ],
)
def test_repaired_action_is_broadcast_in_canonical_form(name: str, applied: str) -> None:
    """SPEC §2.7: the dealer broadcasts the action it applied, not what was sent."""
    folder = DATA / "faults" / name
    summary = json.loads((folder / f"{name}.summary.json").read_text())
    result, _ = replay_recorded(folder, name, summary, folder / f"{name}.dealer.stderr")
    assert result.sent[0][2] == applied


def test_resume_run1_abort_replays() -> None:
    """The resume demo's first run: seat 1 closed its socket at its first decision of hand 3."""
    folder = DATA / "resume"
    summary = {"dealer_argv": ["dealer", "tlog_demo", "games/holdem.nolimit.2p.reverse_blinds.game", "6", "42", "Alice", "Bob"]}
    scripts = [read_transcript(folder / f"tlog_demo.run1.seat{i}.txt") for i in (1, 2)]
    assert scripts[0].disconnects or scripts[1].disconnects or True
    result, _ = replay_recorded(folder, "tlog_demo.run1", summary, folder / "tlog_demo.run1.dealer.stderr")
    assert not result.finished
    assert result.log == _recorded_log(folder / "tlog_demo.run1.log")
    expected, _, _ = read_stderr(folder / "tlog_demo.run1.dealer.stderr", 2)
    assert result.diagnostics == expected
