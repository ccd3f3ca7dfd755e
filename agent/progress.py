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
    """``Progress(total, label)``; call ``update(done, **extra)``, then ``close()``.

    ``total``: the count at which the work ends (None: unknown). ``seconds``: a time
    budget that may end it first; then pass ``spent=`` (the seconds counted against it,
    e.g. solving time without pauses) to :meth:`update`, else wall time since the start
    counts. The bar fills with whichever budget is nearer its end, and the remaining
    time shown is the sooner of the two ends: the count's at the rate so far, the
    budget's what is left of it.

    The rate (and the remaining time from it) is measured from the first update that
    counted work, once a later one counted more; until then both show as unknown.
    Start-up (a kernel's first compile, a table loaded) then does not stretch the
    estimate, as it would if the first item's time stood for every item's. :meth:`phase` names a wait before any work is counted
    ("compiling (first run only)"), shown until the first update that counts some.
    """

    def __init__(
        self,
        total: float | None,
        label: str,
        *,
        unit: str = "",
        stream: IO[str] | None = None,
        interval: float | None = None,
        enabled: bool = True,
        seconds: float | None = None,
    ) -> None:
        self.total = total
        self.label = label
        self.unit = unit
        self.seconds = seconds
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = interval if interval is not None else (0.1 if self.tty else 5.0)
        self.enabled = enabled
        self.start = time.monotonic()
        self._last = 0.0
        self._done = 0.0
        self._spent: float | None = None
        self._extra = ""
        self._phase: str | None = None
        # the first update that counted work: (time, count), where the measured rate starts
        self._first: tuple[float, float] | None = None

    def update(
        self, done: float, force: bool = False, *, spent: float | None = None, **extra: object
    ) -> None:
        """Record progress; redraw if the interval has passed (or ``force``)."""
        now = time.monotonic()
        self._done = done
        if done > 0:
            self._phase = None
            if self._first is None:
                self._first = (now, done)
        if spent is not None:
            self._spent = spent
        if extra:
            self._extra = "  " + "  ".join(f"{k}={v}" for k, v in extra.items())
        if self.enabled and (force or now - self._last >= self.interval):
            self._last = now
            self._draw(now)

    def phase(self, text: str | None) -> None:
        """Show ``text`` (what the job waits on before its first unit of work, e.g.
        "compiling (first run only)") in place of the rate, until an update counts work;
        None clears it. Redraws at once."""
        self._phase = text
        if self.enabled:
            self._last = time.monotonic()
            self._draw(self._last)

    def rate(self, now: float | None = None) -> float:
        """Units a second: per second of ``spent`` where updates give it (a training run's
        deals per second of solving, as its ``--json`` and metrics report them: time spent
        evaluating or checkpointing is not counted); otherwise measured between the first
        update that counted work and the last, and 0 (unknown) until a later update
        counts more than the first."""
        if self._spent is not None:  # units per second of the time counted against the budget
            return self._done / self._spent if self._spent > 0 else 0.0
        now = time.monotonic() if now is None else now
        if self._first is not None:
            t0, d0 = self._first
            if self._done > d0 and now > t0:
                return (self._done - d0) / (now - t0)
        return 0.0

    def remaining(self, now: float | None = None) -> float | None:
        """Seconds until the sooner budget ends (None without a budget; inf while the
        rate is unknown)."""
        now = time.monotonic() if now is None else now
        elapsed = now - self.start
        ends: list[float] = []
        if self.total:
            rate = self.rate(now)
            left = max(self.total - self._done, 0.0)
            ends.append(left / rate if rate > 0 else (0.0 if left == 0 else float("inf")))
        if self.seconds is not None:
            spent = self._spent if self._spent is not None else elapsed
            ends.append(max(self.seconds - spent, 0.0))
        return min(ends) if ends else None

    def _draw(self, now: float) -> None:
        elapsed = now - self.start
        rate = self.rate(now)
        fracs = []
        if self.total:
            fracs.append(self._done / self.total)
        if self.seconds:
            spent = self._spent if self._spent is not None else elapsed
            fracs.append(spent / self.seconds)
        text = self.label
        if fracs:
            filled = int(24 * min(max(fracs), 1.0))
            text += f" [{'#' * filled}{'.' * (24 - filled)}]"
        text += f" {self._done:,.0f}" + (f"/{self.total:,.0f}" if self.total else "")
        # slow units (a walk a minute) keep two significant digits instead of showing 0/s
        shown = "--" if rate == 0 else f"{rate:,.0f}" if rate >= 10 else f"{rate:.2g}"
        if self._phase is not None:
            text += f" {self._phase} elapsed {_fmt_seconds(elapsed)}"
            eta = None
        else:
            text += f" {shown}{self.unit}/s elapsed {_fmt_seconds(elapsed)}"
            eta = self.remaining(now)
        if eta is not None:
            text += f" eta {_fmt_seconds(eta) if eta != float('inf') else '--:--'}"
        text += self._extra
        if self.tty:
            self.stream.write("\r\x1b[K" + text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def note(self, line: str) -> None:
        """Print ``line`` (flushed) above the bar, which is then drawn again."""
        if self.tty:
            self.stream.write("\r\x1b[K" + line + "\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
        if self.enabled and self.tty:
            self._draw(time.monotonic())

    def close(self) -> None:
        """Draw the final state and end the line."""
        if self.enabled:
            self._draw(time.monotonic())
            if self.tty:
                self.stream.write("\n")
                self.stream.flush()


class StageBars:
    """One progress bar per stage of a staged job that reports ``(stage, done, total)``
    (a card abstraction or bucket-table build)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.bar: Progress | None = None
        self.stage = ""

    def __call__(self, stage: str, done: float, total: float) -> None:
        if stage != self.stage:
            self.close()
            self.stage = stage
            self.bar = Progress(total, f"{stage:<18}", enabled=self.enabled)
        assert self.bar is not None
        self.bar.total = total
        self.bar.update(done, force=done >= total)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
