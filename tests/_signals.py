"""A command stopped by a signal in the middle of its work, for the tests of every long
command: run ``pokerbot ARGV``, read its progress lines on stderr until one says the work
is under way, send the signal, and time the exit."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: How long a command may take to get its work under way: a cold numba cache compiles
#: first, on a loaded machine.
UNDER_WAY = 900.0
#: The least work a signal test interrupts: the rest of it, at the rate the command
#: measured before the signal, would take longer than this.
LONG = 20.0
#: A progress bar's line (agent.progress.Progress): done/total, then the rate ("--"
#: until measured) in units a second.
BAR = re.compile(r" \[[#.]+\] ([\d,.]+)/([\d,]+) (--|[\d,.]+(?:e[+-]?\d+)?) ?[^/\d]*/s ")


def number(text: str) -> float:
    """A figure as the bar prints it (thousands separated by commas)."""
    return float(text.replace(",", ""))


@dataclass
class Bar:
    """The progress line the signal came after: work done, in all, and units a second."""

    done: float
    total: float
    rate: float

    def seconds_left(self) -> float:
        """The rest of the work at the rate measured."""
        assert self.rate > 0, "no rate measured"
        return (self.total - self.done) / self.rate


def bar(line: str, label: str = "") -> Bar | None:
    """The bar in ``line`` (of the bar named ``label``, when given), if it has counted work
    and measured a rate; else None."""
    if not line.startswith(label):
        return None
    m = BAR.search(line)
    if m is None or m.group(3) == "--" or number(m.group(1)) <= 0:
        return None
    return Bar(number(m.group(1)), number(m.group(2)), number(m.group(3)))


@dataclass
class Stopped:
    """What :func:`signal_when` saw: the exit status, the seconds from the signal to the
    exit, the line the signal came after (its match), stderr's and stdout's text, and the
    command's child processes just before the signal."""

    status: int
    waited: float
    match: re.Match[str] | Bar
    lines: list[str]
    stdout: str
    children: list[int] = field(default_factory=list)

    def check(self, command: str, signum: int) -> None:
        """Ended on ``signum`` within 2 s with one line saying so last, no traceback, and
        no child process left behind."""
        name = signal.Signals(signum).name
        assert self.status == 128 + signum, self.lines[-5:]
        assert self.waited < 2.0, f"{self.waited:.2f} s from the signal to the exit: {self.lines[-5:]}"
        assert self.lines[-1] == f"pokerbot {command}: interrupted ({name})", self.lines[-5:]
        assert not any("Traceback" in line for line in self.lines), "\n".join(self.lines)
        for pid in self.children:
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def signal_when(
    argv: list[str],
    signum: int,
    *,
    label: str = "",
    wanted: re.Pattern[str] | None = None,
    group: bool = False,
    env: Mapping[str, str] | None = None,
) -> Stopped:
    """Run ``pokerbot ARGV`` in a session of its own and send ``signum`` once a line of its
    stderr shows the work under way: a progress bar (named ``label``) that has counted work
    and measured a rate, or, given ``wanted``, a line it matches (its first group, if any,
    a count above zero). ``group``: to the whole process group, as a terminal's Ctrl-C."""
    proc = subprocess.Popen([sys.executable, "-m", "agent", *argv], cwd=ROOT, text=True, start_new_session=True,
                            env=None if env is None else {**os.environ, **env},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    lines: queue.Queue[str | None] = queue.Queue()
    out: list[str] = []

    def read_err() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    def read_out() -> None:
        assert proc.stdout is not None
        out.append(proc.stdout.read())

    readers = [threading.Thread(target=read_err, daemon=True), threading.Thread(target=read_out, daemon=True)]
    for r in readers:
        r.start()
    err: list[str] = []
    deadline = time.monotonic() + UNDER_WAY
    try:
        while True:
            try:
                line = lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                pytest.fail(f"pokerbot {argv[0]}: no work under way within {UNDER_WAY:.0f} s:\n" + "\n".join(err))
            if line is None:
                pytest.fail(f"pokerbot {argv[0]} ended before its work was under way:\n" + "\n".join(err))
            err.append(line)
            if wanted is None:
                got: re.Match[str] | Bar | None = bar(line, label)
            else:
                got = wanted.search(line)
                if got is not None and got.lastindex and number(got.group(1)) <= 0:
                    got = None
            if got is not None:
                break
        children = _children(proc.pid)
        sent = time.monotonic()
        if group:
            os.killpg(proc.pid, signum)
        else:
            proc.send_signal(signum)
        try:
            status = proc.wait(timeout=60.0)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"still running 60 s after the signal: {err[-5:]}") from None
        waited = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    for r in readers:
        r.join(10)
    while not lines.empty():
        line = lines.get_nowait()
        if line is not None:
            err.append(line)
    return Stopped(status, waited, got, err, "".join(out), children)
