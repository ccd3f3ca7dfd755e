"""``--png FILE`` of the ``pokerbot eval`` actions: the running estimate with its 95%
interval over hands, deals or boards (:func:`agent.plot.running_estimate_png`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .options import UserError

__all__ = ["add_png_option", "write_png"]


def add_png_option(p: argparse.ArgumentParser, over: str) -> None:
    """Add ``--png FILE`` to ``p``; ``over`` names what the estimate is a mean over."""
    p.add_argument(
        "--png",
        type=Path,
        metavar="FILE",
        help=f"draw the running estimate and its 95%% interval over {over} to FILE "
        "(needs matplotlib: pip install 'pokerbot[plot]')",
    )


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
