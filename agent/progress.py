"""A plain text progress bar for long commands, written to stderr.

Lower layers never draw anything: they take a callback, and the command line passes
:meth:`Progress.update`. On a terminal the bar redraws in place; otherwise it prints a line
at most every ``interval`` seconds, so CI logs stay short.
"""

from __future__ import annotations

import sys
import time
from typing import IO


def _fmt_seconds(s: float) -> str:
    s = max(0, int(s))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m:02d}:{sec:02d}"


class Progress:
    """``Progress(total, label)``; call ``update(done, **extra)``, then ``close()``."""

    def __init__(
        self,
        total: float | None,
        label: str,
        *,
        unit: str = "",
        stream: IO[str] | None = None,
        interval: float | None = None,
        enabled: bool = True,
    ) -> None:
        self.total = total
        self.label = label
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = interval if interval is not None else (0.1 if self.tty else 5.0)
        self.enabled = enabled
        self.start = time.monotonic()
        self._last = 0.0
        self._done = 0.0
        self._extra = ""

    def update(self, done: float, force: bool = False, **extra: object) -> None:
        """Record progress; redraw if the interval has passed (or ``force``)."""
        self._done = done
        if extra:
            self._extra = "  " + "  ".join(f"{k}={v}" for k, v in extra.items())
        now = time.monotonic()
        if self.enabled and (force or now - self._last >= self.interval):
            self._last = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        elapsed = now - self.start
        rate = self._done / elapsed if elapsed > 0 else 0.0
        if self.total:
            frac = min(self._done / self.total, 1.0)
            filled = int(24 * frac)
            eta = (self.total - self._done) / rate if rate > 0 else float("inf")
            eta_s = _fmt_seconds(eta) if eta != float("inf") else "--:--"
            text = (
                f"{self.label} [{'#' * filled}{'.' * (24 - filled)}] {self._done:,.0f}/{self.total:,.0f}"
                f" {rate:,.0f}{self.unit}/s elapsed {_fmt_seconds(elapsed)} eta {eta_s}{self._extra}"
            )
        else:
            text = f"{self.label} {self._done:,.0f} {rate:,.0f}{self.unit}/s elapsed {_fmt_seconds(elapsed)}{self._extra}"
        if self.tty:
            self.stream.write("\r\x1b[K" + text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        """Draw the final state and end the line."""
        if self.enabled:
            self._draw(time.monotonic())
            if self.tty:
                self.stream.write("\n")
                self.stream.flush()
