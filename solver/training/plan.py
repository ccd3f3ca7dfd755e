"""What a training run will take, said before its loop starts: :class:`TrainingPlan`.

A plan puts together

* the **memory**: the estimate of :mod:`solver.training.memory` (what the run allocates,
  part by part) plus the temporaries of writing a checkpoint or the strategy file
  (:func:`write_memory`: the file's policy; a checkpoint goes out piece by piece), plus the interpreter's own
  (:data:`RUNTIME_BYTES`);
* the **time before the loop**, measured (loading and checking, allocating, restoring a
  checkpoint, compiling the kernels, the pilot below);
* the **solving time**: a seconds budget is known in advance (what is left of it after the
  checkpoint resumed: budgets are totals); an iterations budget is divided by the rate of a
  short pilot (:func:`pilot_rate`: about :data:`PILOT_SECONDS` of iterations, and at most
  :data:`PILOT_SHARE` of those left, on a solver built the same way as the run's and thrown
  away, so the run's tables never see it); with both budgets the sooner end counts;
* the **writing**: checkpoints (in the loop and at the end), the metrics' table passes and
  the strategy file, each scaled from the table's size (:data:`CHECKPOINT_S_PER_BYTE`,
  :data:`STRATEGY_S_PER_ENTRY`, :data:`STATS_S_PER_BYTE`);
* the **compiling** still to come where numba's cache is cold (the first run on a
  machine, or after an edit of a kernel's file): the training kernels' in a dry run that
  has not compiled them (:data:`COMPILE_SECONDS`), and the exact evaluation's walk kernel
  (:data:`EVALUATION_COMPILE_SECONDS`), both measured; the caller says which are cold
  (:func:`poker._compile.cold`).

What it cannot predict honestly it names instead of guessing: the exact evaluations of a
small game (during the loop and at the end: an exact best response, whose cost depends on
the game's tree and cards) and, without a pilot, the solving time of an iterations budget.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from abstraction.plan import BuildPlan
from poker._sysinfo import GIB

from .loop import train
from .memory import MemoryEstimate, format_bytes

__all__ = [
    "CHECKPOINT_S_PER_BYTE",
    "CHECKPOINT_TEMP_BYTES",
    "COMPILE_SECONDS",
    "DEFAULT_COMPILE_SECONDS",
    "EVALUATION_COMPILE_SECONDS",
    "PILOT_SECONDS",
    "PILOT_SHARE",
    "QUANTIZED_TEMP_PER_ENTRY",
    "RUNTIME_BYTES",
    "STATS_S_PER_BYTE",
    "STRATEGY_S_PER_ENTRY",
    "STRATEGY_TEMP_PER_ENTRY",
    "Pilot",
    "TrainingPlan",
    "format_duration",
    "pilot_rate",
    "predict",
    "write_memory",
]

#: Seconds of iterations the pilot runs (after the kernels are compiled) ...
PILOT_SECONDS = 2.0
#: ... and at most this share of the iterations left: a short run's pilot adds a tenth.
PILOT_SHARE = 0.1
# Measured on 20-card hold'em (9.6M entries, es, float32, one thread, the 2-core
# development VM) and on a full-deck run: what writing costs per byte of the two tables or
# per table entry.
#: A checkpoint: the tables converted to vector CFR's layout piece by piece, hashed and
#: written, then fsync (5.5 ns per byte of regrets and average sums measured: 0.42 s for
#: 77 MB).
CHECKPOINT_S_PER_BYTE = 6.0e-9
#: ... holding one piece of each table at a time (solver.arrayfile: 3.5 bytes per entry
#: of the 20-card tables measured, 34 MB; pieces of 4M entries, float64 at most).
CHECKPOINT_TEMP_BYTES = 2 * (1 << 22) * 8
#: The strategy file: the average strategy, the unaveraged rows' counts, one byte per
#: probability, the file (0.10 to 0.12 us per entry measured).
STRATEGY_S_PER_ENTRY = 1.3e-7
#: ... holding the float64 policy and the quantized table: 9.03 bytes per entry measured
#: from the last batch to the end of a run (written array by array, no copy of the file).
STRATEGY_TEMP_PER_ENTRY = 9
#: ... or, where a sampled run evaluates nothing and stores one byte per probability, the
#: quantized table made node by node alone (1.79 bytes per entry measured, the kernel's
#: first call included).
QUANTIZED_TEMP_PER_ENTRY = 2
#: A metrics line's two passes over the regret table (solver.training.loop.table_stats:
#: 0.14 s a line measured on a full-deck run's 33M float32 entries).
STATS_S_PER_BYTE = 1.1e-9
#: The process before the run's data: Python, numpy, numba and the kernels compiled
#: (0.17 GiB resident measured on Linux; a full-deck run's resident memory was this
#: above its estimate, and its peak this plus the estimate and a checkpoint's copies).
RUNTIME_BYTES = 175 << 20
#: Seconds numba takes to compile an algorithm's training kernels with its cache cold,
#: by algorithm: ``solver.training.algorithms.warm_up(algorithm)`` (one thread; float32
#: tables for the sampled ones) timed in a fresh process with NUMBA_CACHE_DIR pointing at
#: an empty folder, on the 2-vCPU development VM while other jobs ran (load 6 to 8,
#: 2026-12-07: cfr, cfr+ and lcfr compile the same kernel, 12 to 22 s). Algorithms not
#: listed take :data:`DEFAULT_COMPILE_SECONDS`.
COMPILE_SECONDS: dict[str, float] = {
    "cfr": 22.0,
    "cfr+": 17.0,
    "lcfr": 12.0,
    "cs": 6.0,
    "pcs": 17.0,
    "es": 24.0,
    "os": 133.0,
    "as": 133.0,
    "tcfr": 191.0,
}
DEFAULT_COMPILE_SECONDS = 20.0
#: ... and the exact evaluation's walk kernel (solver._kernels.root_value): the first
#: exploitability of a Kuhn strategy in such a process took 10.9 and 12.7 s more than the
#: second (the same VM, loaded).
EVALUATION_COMPILE_SECONDS = 12.0


def format_duration(seconds: float) -> str:
    """``seconds`` as a clock: ``'<1 s'``, ``'45 s'`` under a minute, else ``'3:05'`` or
    ``'1:45:20'``."""
    if seconds < 1:
        return "<1 s"
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


def write_memory(estimate: MemoryEstimate, checkpoints: bool, quantized: bool = False) -> tuple[int, str]:
    """Bytes the run holds beside its estimate while writing, and what writes them: a
    checkpoint's pieces of the tables (when it writes any) or the strategy file's policy
    (``quantized``: only its bytes, made node by node), whichever is more."""
    strategy = (QUANTIZED_TEMP_PER_ENTRY if quantized else STRATEGY_TEMP_PER_ENTRY) * estimate.entries
    checkpoint = CHECKPOINT_TEMP_BYTES
    if checkpoints and checkpoint > strategy:
        return checkpoint, "a checkpoint"
    return strategy, "the strategy file"


@dataclass(frozen=True)
class Pilot:
    """What :func:`pilot_rate` measured: ``iterations`` in ``seconds`` of solving."""

    iterations: int
    seconds: float

    @property
    def rate(self) -> float | None:
        """Iterations per second of solving (None if nothing was timed)."""
        return self.iterations / self.seconds if self.seconds > 0 and self.iterations else None


def pilot_rate(solver: Any, iterations: int, seconds: float = PILOT_SECONDS) -> Pilot:
    """Time ``solver`` (built as the run's, restored from its checkpoint, and thrown away
    afterwards: its tables change) for about ``seconds`` of iterations, at most
    :data:`PILOT_SHARE` of ``iterations`` (those the run has left; at least one), in the
    training loop's batches."""
    n = max(1, math.ceil(iterations * PILOT_SHARE))
    res = train(solver, iterations=n, seconds=seconds)
    return Pilot(res.iterations, res.seconds)


@dataclass(frozen=True)
class TrainingPlan:
    """A run's predicted time and memory (see the module docstring).

    ``setup_seconds`` is measured: the time the run took before its loop; with
    ``dry_run``, that of the dry run (the checks and loading, and the compiling and the
    pilot where an iterations budget ran one), without allocating the run's tables.
    ``solving_seconds`` is predicted (None: unknown; then ``solving_at_most`` bounds it
    where a seconds budget does); ``ends_by`` names the budget predicted to end the run
    ('seconds' or 'iterations'). ``checkpoints`` counts the checkpoints to write (in the
    loop and at the end), ``checkpoint_seconds`` their time in all; ``stats_seconds`` the
    metrics' table passes; ``strategy_seconds`` writing the strategy file.
    ``eval_every`` (seconds of solving between exact evaluations in the loop, None: none)
    and ``final_evaluation`` name what is not predicted. ``unknown``: why the solving
    time is unknown. ``build``: the card abstraction a dry run would build before
    anything else (:func:`abstraction.plan.plan_build`; None: none), counted in the total
    time and the peak. ``compile_seconds``: numba's compiling still to come (cold cache:
    first run only), counted in the total time.
    """

    algorithm: str
    memory: MemoryEstimate
    write_bytes: int
    writes: str  # what write_bytes are for: 'a checkpoint' or 'the strategy file'
    setup_seconds: float
    dry_run: bool
    iterations_left: int | None
    seconds_left: float | None
    pilot: Pilot | None
    solving_seconds: float | None
    solving_at_most: float | None
    ends_by: str | None
    checkpoints: int
    checkpoint_seconds: float
    stats_seconds: float
    strategy_seconds: float
    eval_every: float | None
    final_evaluation: bool
    unknown: str | None = None
    build: BuildPlan | None = None
    compile_seconds: float = 0.0

    @property
    def training_peak_bytes(self) -> int:
        """The training's predicted peak: the interpreter, the memory estimate and the
        temporaries of writing."""
        return RUNTIME_BYTES + self.memory.total + self.write_bytes

    @property
    def build_peak_bytes(self) -> int:
        """The card abstraction build's predicted peak (0 without one); its arrays are
        gone before the training's tables are allocated."""
        return 0 if self.build is None else int(self.build.peak_gib * GIB)

    @property
    def peak_bytes(self) -> int:
        """The predicted peak of the whole run: the training's or the build's."""
        return max(self.training_peak_bytes, self.build_peak_bytes)

    @property
    def writing_seconds(self) -> float:
        """Checkpoints, metrics passes and the strategy file."""
        return self.checkpoint_seconds + self.stats_seconds + self.strategy_seconds

    @property
    def total_seconds(self) -> float | None:
        """The whole run, setup included (None while the solving time is unknown); the
        exact evaluations named by ``eval_every`` and ``final_evaluation`` excluded."""
        if self.solving_seconds is None:
            return None
        build = 0.0 if self.build is None else self.build.seconds
        return build + self.setup_seconds + self.compile_seconds + self.solving_seconds + self.writing_seconds

    @property
    def rate(self) -> float | None:
        """The pilot's iterations per second of solving (None without a pilot)."""
        return self.pilot.rate if self.pilot is not None else None

    def to_dict(self) -> dict[str, Any]:
        """Plain data (for ``--json``): seconds and bytes, None where unknown."""
        label, biggest = self.memory.biggest()
        return {
            "seconds": _round(self.total_seconds),
            "setup_seconds": round(self.setup_seconds, 3),
            "dry_run": self.dry_run,
            "solving_seconds": _round(self.solving_seconds),
            "solving_at_most": _round(self.solving_at_most),
            "ends_by": self.ends_by,
            "iterations_left": self.iterations_left,
            "seconds_left": _round(self.seconds_left),
            "pilot_iterations": self.pilot.iterations if self.pilot is not None else None,
            "pilot_seconds": _round(self.pilot.seconds) if self.pilot is not None else None,
            "iterations_per_s": _round(self.rate),
            "checkpoints": self.checkpoints,
            "checkpoint_seconds": round(self.checkpoint_seconds, 3),
            "stats_seconds": round(self.stats_seconds, 3),
            "strategy_seconds": round(self.strategy_seconds, 3),
            "eval_every": self.eval_every,
            "final_evaluation": self.final_evaluation,
            "unknown": self.unknown,
            "memory_bytes": self.memory.total,
            "biggest_part": label,
            "biggest_part_bytes": biggest,
            "write_bytes": self.write_bytes,
            "runtime_bytes": RUNTIME_BYTES,
            "peak_bytes": self.peak_bytes,
            "build_seconds": _round(self.build.seconds) if self.build is not None else None,
            "build_peak_bytes": self.build_peak_bytes if self.build is not None else None,
            "compile_seconds": round(self.compile_seconds, 3),
        }

    def _solving_text(self) -> str:
        if self.solving_seconds is None:
            bound = self.solving_at_most
            if bound is not None:
                return f"at most {bound:,.0f} s of solving ({self.unknown})"
            return f"solving time unknown ({self.unknown})"
        s = self.solving_seconds
        text = f"{s:,.0f} s of solving" if s >= 10 else f"{s:.2g} s of solving"
        if self.ends_by == "iterations" and self.rate is not None:
            text += f" at {self.rate:,.0f} iterations/s, the rate of a {format_duration(self.pilot.seconds)} pilot"
        return text

    def lines(self) -> list[str]:
        """Two lines: the time (what the total leaves out named), the memory."""
        total = self.total_seconds
        setup = format_duration(self.setup_seconds)
        parts = [] if self.build is None else [f"{_about(self.build.seconds)} to build the card abstraction first"]
        parts += [
            self._solving_text(),
            f"{setup} to check and load in this dry run, the run's tables not allocated"
            if self.dry_run
            else f"{setup} set up",
        ]
        what = []
        if self.checkpoints:
            n = self.checkpoints
            what.append(f"{n} checkpoint{'s' if n != 1 else ''}")
        if self.stats_seconds >= 0.5:
            what.append("the metrics")
        what.append("the strategy file")
        listed = ", ".join(what[:-1]) + " and " + what[-1] if len(what) > 1 else what[0]
        parts.append(f"{_about(self.writing_seconds)} to write {listed}")
        if self.compile_seconds > 0:
            parts.append(f"includes {_about(self.compile_seconds)} compiling, first run only")
        left_out = []
        if self.eval_every is not None:
            left_out.append(f"an exact evaluation every {self.eval_every:g} s of solving")
        if self.final_evaluation:
            left_out.append("the final exact evaluation")
        head = f"{_about(total)} in all" if total is not None else "time unknown"
        time_line = f"plan: {head} ({'; '.join(parts)})"
        if left_out:
            time_line += f", not counting {' and '.join(left_out)} (not predicted)"
        label, biggest = self.memory.biggest()
        whose = "training's peak memory" if self.build is not None else "peak memory"
        memory_line = (
            f"plan: {whose} about {format_bytes(self.training_peak_bytes)} predicted "
            f"({format_bytes(self.memory.total)} training, the biggest part the {label} "
            f"{format_bytes(biggest)}; {format_bytes(self.write_bytes)} more while writing "
            f"{self.writes}; {format_bytes(RUNTIME_BYTES)} the interpreter)"
        )
        if self.build is not None:
            memory_line += (
                f"; building the card abstraction before it about {format_bytes(self.build_peak_bytes)}"
            )
        return [time_line, memory_line]

    def text(self) -> str:
        """:meth:`lines` as one text."""
        return "\n".join(self.lines())


def _about(seconds: float) -> str:
    return "under 1 s" if seconds < 1 else f"about {format_duration(seconds)}"


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def predict(
    *,
    algorithm: str,
    memory: MemoryEstimate,
    setup_seconds: float,
    dry_run: bool,
    iterations_left: int | None,
    seconds_left: float | None,
    pilot: Pilot | None,
    unknown: str | None,
    checkpoint_every: float | None,
    checkpoint_at_end: bool,
    metrics: bool,
    metrics_gap: float,
    stats_gap: float,
    eval_every: float | None,
    final_evaluation: bool,
    build: BuildPlan | None = None,
    quantized: bool = False,
    compile_seconds: float = 0.0,
) -> TrainingPlan:
    """The :class:`TrainingPlan` of a run whose budgets leave ``iterations_left`` and
    ``seconds_left`` (None: no such budget): the solving time from the seconds budget or
    the ``pilot``'s rate, the sooner end counting; the writing scaled from ``memory``'s
    table. ``checkpoint_every``: seconds of solving between checkpoints in the loop (None:
    none); ``checkpoint_at_end``: one is written at the end; ``metrics``: a metrics file
    gets a line every ``metrics_gap`` seconds, the table's passes at most every
    ``stats_gap``. ``unknown``: why there is no pilot where one was needed. ``build``:
    the card abstraction to build first (its own prediction). ``quantized``: the strategy
    file's bytes are made node by node (:func:`write_memory`). ``compile_seconds``: the
    compiling still to come (see the module docstring)."""
    ends: list[tuple[float, str]] = []
    if seconds_left is not None:
        ends.append((seconds_left, "seconds"))
    rate = pilot.rate if pilot is not None else None
    if iterations_left is not None:
        if iterations_left == 0:
            ends.append((0.0, "iterations"))
        elif rate is not None:
            ends.append((iterations_left / rate, "iterations"))
    known = iterations_left is None or iterations_left == 0 or rate is not None
    solving: float | None = None
    at_most: float | None = None
    ends_by: str | None = None
    if known or (seconds_left is not None and seconds_left == 0):
        solving, ends_by = min(ends)
        unknown = None
    else:
        at_most = seconds_left
    span = solving if solving is not None else at_most
    checkpoints = 0
    if span is not None and checkpoint_every:
        checkpoints = int(span // checkpoint_every)
    checkpoints += int(checkpoint_at_end)
    table_bytes = memory.regrets + memory.average
    stats = 0.0
    if metrics and span is not None:
        # every line's passes up to a gap between them, and the last line's
        lines = span / max(stats_gap, metrics_gap, 1e-9)
        stats = (math.floor(lines) + 1) * memory.regrets * STATS_S_PER_BYTE
    if eval_every is not None and span is not None and span < eval_every:
        eval_every = None  # the loop ends before its first evaluation
    write_bytes, writes = write_memory(memory, checkpoints > 0, quantized)
    return TrainingPlan(
        algorithm=algorithm,
        memory=memory,
        write_bytes=write_bytes,
        writes=writes,
        setup_seconds=setup_seconds,
        dry_run=dry_run,
        iterations_left=iterations_left,
        seconds_left=seconds_left,
        pilot=pilot,
        solving_seconds=solving,
        solving_at_most=at_most,
        ends_by=ends_by,
        checkpoints=checkpoints,
        checkpoint_seconds=checkpoints * table_bytes * CHECKPOINT_S_PER_BYTE,
        stats_seconds=stats,
        strategy_seconds=memory.entries * STRATEGY_S_PER_ENTRY,
        eval_every=eval_every,
        final_evaluation=final_evaluation,
        unknown=unknown,
        build=build,
        compile_seconds=compile_seconds,
    )

