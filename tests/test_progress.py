"""The progress bar's text: a slow job's rate keeps its digits instead of reading 0/s."""

from __future__ import annotations

import io

import pytest

from agent.progress import Progress


def _line(done: float, total: float, elapsed: float, unit: str) -> str:
    out = io.StringIO()  # not a terminal: one line a draw
    bar = Progress(total, "job", unit=unit, stream=out)
    bar.start -= elapsed
    bar.update(done, force=True)
    return out.getvalue().strip()


def test_rates_fast_and_slow():
    assert " 1,000 deals/s " in _line(60_000, 100_000, 60.0, " deals")
    assert " 12 it/s " in _line(120, 200, 10.0, " it")
    # a walk a minute: 1/65 a second, shown as such, with the time left from it
    line = _line(1, 20, 65.0, " walks")
    assert " 1/20 0.015 walks/s " in line and "eta 20:" in line, line
    assert " 0 walks/s " in _line(0, 20, 65.0, " walks")


def test_the_eta_comes_from_the_measured_rate_not_the_first_item():
    # the first item took 80 s (a compile); the next ten took 1 s each: 90 left take 90 s
    out = io.StringIO()
    bar = Progress(100, "k-means", unit=" it", stream=out)
    bar.start -= 90.0
    bar.update(1, force=True)
    first_at, _ = bar._first
    bar._first = (first_at - 10.0, 1)  # the first item was counted 10 s ago
    bar.update(11, force=True)
    assert bar.remaining() == pytest.approx(89.0, rel=0.01)
    line = out.getvalue().splitlines()[-1]
    assert "eta 01:29" in line and " 1 it/s " in line, line
    # with one item counted, the time since the start is all there is to go on
    lone = Progress(100, "k-means", stream=io.StringIO())
    lone.start -= 80.0
    lone.update(1, force=True)
    assert lone.remaining() == pytest.approx(99 * 80.0, rel=0.01)


def test_a_phase_is_shown_until_work_is_counted():
    out = io.StringIO()
    bar = Progress(20, "best response", unit=" nodes", stream=out)
    bar.phase("compiling (first run only)")
    line = out.getvalue().splitlines()[-1]
    assert "0/20 compiling (first run only) elapsed 00:00" in line and "eta" not in line, line
    bar.update(0, force=True)
    assert "compiling (first run only)" in out.getvalue().splitlines()[-1]
    bar.update(3, force=True)
    line = out.getvalue().splitlines()[-1]
    assert "compiling" not in line and " nodes/s " in line, line
