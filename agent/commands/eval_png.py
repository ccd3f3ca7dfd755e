"""``--png FILE`` of the ``pokerbot eval`` actions: the running estimate with its 95%
interval over hands, deals or boards (:func:`agent.plot.running_estimate_png`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .options import UserError

__all__ = ["add_png_option", "check_png", "write_png"]


def add_png_option(p: argparse.ArgumentParser, over: str) -> None:
    """Add ``--png FILE`` to ``p``; ``over`` names what the estimate is a mean over."""
    p.add_argument(
        "--png",
        type=Path,
        metavar="FILE",
        help=f"draw the running estimate and its 95%% interval over {over} to FILE "
        "(needs matplotlib: pip install 'pokerbot[plot]')",
    )


def check_png(path: Path | None) -> None:
    """Before a long evaluation: refuse, in one line, a ``--png`` that could not be drawn
    (matplotlib missing, or no directory to write it in), instead of failing after it."""
    if path is None:
        return
    import importlib.util

    from ..plot import PLOT_HINT

    if importlib.util.find_spec("matplotlib") is None:
        raise UserError(PLOT_HINT)
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UserError(f"--png {path}: there is no directory {parent}")


def write_png(path: Path | None, values: Sequence[float] | np.ndarray, **kwargs: Any) -> None:
    """Draw ``values`` to ``path`` (nothing when ``path`` is None); a missing matplotlib,
    an unwritable file or an unusable series is one line."""
    if path is None:
        return
    from ..plot import PlotUnavailableError, running_estimate_png

    try:
        running_estimate_png(values, path, **kwargs)
    except PlotUnavailableError as exc:
        raise UserError(str(exc)) from None
    except (OSError, ValueError) as exc:
        raise UserError(f"--png {path}: {exc}") from None
