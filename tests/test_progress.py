"""The progress bar's text: a slow job's rate keeps its digits instead of reading 0/s."""

from __future__ import annotations

import io

import pytest

from agent.progress import Progress


def _line(done: float, total: float, elapsed: float, unit: str) -> str:
    """The bar's line after ``elapsed`` seconds: one item counted at the start (whose
    time is never taken for a rate), ``done`` items counted by now."""
    out = io.StringIO()  # not a terminal: one line a draw
    bar = Progress(total, "job", unit=unit, stream=out)
    bar.update(1)
    bar._first = (bar._first[0] - elapsed, 1)
    bar.update(done, force=True)
    return out.getvalue().strip().splitlines()[-1]


def test_rates_fast_and_slow():
    assert " 1,000 deals/s " in _line(60_001, 100_000, 60.0, " deals")
    assert " 12 it/s " in _line(121, 200, 10.0, " it")
    # a walk a minute: 1/65 a second, shown as such, with the time left from it
    line = _line(2, 20, 65.0, " walks")
    assert " 2/20 0.015 walks/s " in line and "eta 19:30" in line, line
    # nothing counted since the first item: no rate, no time left
    line = _line(1, 20, 65.0, " walks")
    assert " -- walks/s " in line and "eta --:--" in line, line


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
    # with one item counted (after an 80-s compile, say) nothing is measured yet
    lone = Progress(100, "k-means", stream=io.StringIO())
    lone.start -= 80.0
    lone.update(1, force=True)
    assert lone.remaining() == float("inf")


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
