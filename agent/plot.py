"""PNG plots of evaluations: the running estimate of a mean over hands (or boards).

:func:`running_estimate_png` draws, after each item ``n``, the mean of the first ``n``
per-item values and its normal-approximation 95% interval ``mean ± 1.96 · s / sqrt(n)``
(``s`` the sample standard deviation of those ``n``), optionally beside a second series
over the same items (AIVAT beside the plain estimate). The items must be independent
samples for the band to be an interval: deal pairs for LBR and duplicate matches, hands
otherwise.

matplotlib is optional (the ``plot`` extra) and imported only when a plot is drawn,
with the ``Agg`` backend (no display needed).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from poker._atomic import atomic_write

__all__ = ["PLOT_HINT", "PlotUnavailableError", "running_estimate", "running_estimate_png"]

#: What to install for plots.
PLOT_HINT = "plots need matplotlib: pip install 'pokerbot[plot]' (or pip install -e '.[plot]' in a checkout)"

_Z95 = 1.959963984540054


class PlotUnavailableError(ImportError):
    """matplotlib is not installed; the message says how to install it."""


def running_estimate(values: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The running mean of ``values`` after each item and the half-width of its 95%
    interval (``nan`` after the first item, where there is no spread yet)."""
    v = np.asarray(values, dtype=np.float64).ravel()
    n = np.arange(1, v.size + 1, dtype=np.float64)
    if v.size == 0:
        return np.zeros(0), np.zeros(0)
    c = v - v.mean()  # sums of centred values keep their precision over a long series
    s1 = np.cumsum(c)
    m2 = np.maximum(np.cumsum(c * c) - s1 * s1 / n, 0.0)  # squared deviations from the running mean
    mean = v.mean() + s1 / n
    half = np.full(v.size, math.nan)
    if v.size > 1:
        half[1:] = _Z95 * np.sqrt(m2[1:] / (n[1:] - 1.0) / n[1:])
    return mean, half


def running_estimate_png(
    values: Sequence[float] | np.ndarray,
    path: str | Path,
    *,
    title: str,
    unit: str = "mbb/g",
    xlabel: str = "hands",
    label: str = "estimate",
    second: Sequence[float] | np.ndarray | None = None,
    second_label: str = "second estimate",
) -> Path:
    """Draw the running mean of the per-item ``values`` with its 95% interval band
    (:func:`running_estimate`), and of ``second`` (the same number of items) if given,
    to a PNG at ``path``, written atomically; returns the path.

    ``unit`` labels the y axis and ``xlabel`` the items (``"hands"``, ``"deals"``,
    ``"boards"``); ``label`` and ``second_label`` name the series in the legend, which
    also gives each one's final estimate and interval. Raises :class:`ValueError` for an
    empty or non-finite series or series of different lengths,
    :class:`PlotUnavailableError` without matplotlib, and :class:`OSError` if the file
    cannot be written."""
    first = np.asarray(values, dtype=np.float64).ravel()
    series = [(first, label)]
    if second is not None:
        other = np.asarray(second, dtype=np.float64).ravel()
        if other.size != first.size:
            raise ValueError(f"the second series has {other.size} items, the first {first.size}")
        series.append((other, second_label))
    for v, name in series:
        if v.size == 0:
            raise ValueError(f"{name}: no values to plot")
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{name}: a value is not finite")
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib.figure import Figure
    except ImportError:
        raise PlotUnavailableError(PLOT_HINT) from None

    x = np.arange(1, first.size + 1)
    fig = Figure(figsize=(8, 4.5))
    ax = fig.add_subplot(1, 1, 1)
    ax.axhline(0.0, color="0.6", linewidth=0.8)
    skip = min(first.size - 1, max(1, first.size // 20))  # the first items' band is wide: off the scale
    ys: list[float] = []
    for (v, name), color in zip(series, ("tab:blue", "tab:orange")):
        mean, half = running_estimate(v)
        band = np.concatenate([mean[skip:] - half[skip:], mean[skip:] + half[skip:], mean[skip:]])
        ys += [float(np.nanmin(band)), float(np.nanmax(band))]
        lo, hi = mean[-1] - half[-1], mean[-1] + half[-1]
        final = f"{mean[-1]:.1f}" if v.size < 2 else f"{mean[-1]:.1f} [{lo:.1f}, {hi:.1f}]"
        ax.plot(x, mean, color=color, linewidth=1.2, marker="o" if v.size == 1 else None,
                label=f"{name}: {final}")
        ax.fill_between(x, mean - half, mean + half, color=color, alpha=0.2, linewidth=0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(unit)
    ax.set_title(title, fontsize=10)
    ax.set_xlim(1, max(2, first.size))
    pad = 0.1 * (max(ys) - min(ys)) or 1.0
    ax.set_ylim(min(ys) - pad, max(ys) + pad)
    ax.legend(loc="best", fontsize=8)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    out = Path(path)
    atomic_write(out, lambda fh: fig.savefig(fh, format="png", dpi=100))
    return out
