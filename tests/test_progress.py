"""The progress bar's text: a slow job's rate keeps its digits instead of reading 0/s."""

from __future__ import annotations

import io

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
