"""Running-estimate plots (agent/plot.py)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from agent.plot import PlotUnavailableError, running_estimate, running_estimate_png

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_running_estimate_is_the_mean_and_interval_of_each_prefix():
    v = np.random.default_rng(3).normal(1e6, 50.0, 300)  # a large mean: centred sums keep precision
    mean, half = running_estimate(v)
    assert np.isnan(half[0]) and mean[0] == pytest.approx(v[0])
    for n in (2, 17, 300):
        assert mean[n - 1] == pytest.approx(v[:n].mean(), rel=1e-12)
        assert half[n - 1] == pytest.approx(1.959963984540054 * v[:n].std(ddof=1) / np.sqrt(n), rel=1e-6)


@pytest.mark.parametrize("n", [1, 2, 40])
def test_png_is_written(tmp_path, n):
    pytest.importorskip("matplotlib")
    rng = np.random.default_rng(n)
    out = tmp_path / "running.png"
    got = running_estimate_png(rng.normal(0, 1000, n), out, title="plain vs AIVAT", xlabel="deals",
                               label="plain", second=rng.normal(0, 300, n), second_label="AIVAT")
    assert got == out
    data = out.read_bytes()
    assert data[:8] == PNG_SIGNATURE and len(data) > 1000
    assert [p.name for p in tmp_path.iterdir()] == ["running.png"]  # no temporary file left
    one = running_estimate_png([1.0, 3.0, 2.0], tmp_path / "one.png", title="one series", unit="chips")
    assert one.read_bytes()[:8] == PNG_SIGNATURE


def test_bad_series_are_refused(tmp_path):
    with pytest.raises(ValueError, match="no values"):
        running_estimate_png([], tmp_path / "a.png", title="t")
    with pytest.raises(ValueError, match="2 items, the first 3"):
        running_estimate_png([1, 2, 3], tmp_path / "a.png", title="t", second=[1, 2])
    with pytest.raises(ValueError, match="not finite"):
        running_estimate_png([1, float("nan")], tmp_path / "a.png", title="t")
    assert not (tmp_path / "a.png").exists()


def test_unwritable_path_leaves_nothing(tmp_path):
    pytest.importorskip("matplotlib")
    with pytest.raises(OSError):
        running_estimate_png([1.0, 2.0], tmp_path / "missing" / "a.png", title="t")
    assert list(tmp_path.iterdir()) == []


def test_without_matplotlib_the_error_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(PlotUnavailableError, match=r"pip install 'pokerbot\[plot\]'"):
        running_estimate_png([1.0, 2.0], tmp_path / "a.png", title="t")
    assert not (tmp_path / "a.png").exists()
