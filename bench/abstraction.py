"""Benchmark of the card abstraction build (abstraction.build) and its buckets.

Measured, per build: wall time and peak resident memory of each stage (river E[HS] by
board sweeps; histogram features per street by lookups; k-means per street; history
pair maps), the whole build's time and the process's peak memory (``ru_maxrss``); then
the latency of one on-the-fly bucket (features from the cards + nearest centroid, no
table) per street, and of one table lookup.

* ``--quick`` (well under a minute): the 24-card short deck, buckets 36/200/200/200.
* default (full): the quick figures, then the 52-card game at 169/200/200/200 and
  169/1000/1000/1000 built into the same directory (the second build reuses the river
  table and the features: its feature stages are reported from the first), then
  full-deck bucket latencies.

A stage's peak memory is the largest resident set seen at its progress reports (the
kernels report between chunks and k-means iterations). The last line printed is one
JSON object. The machine may be shared: figures are from one run, not a best of several.

Usage: ``python bench/abstraction.py [--quick] [--out DIR]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numba
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from abstraction.build import build_abstraction  # noqa: E402
from abstraction.card_abstraction import CardAbstraction  # noqa: E402
from abstraction.plan import AbstractionParams  # noqa: E402
from poker._sysinfo import peak_memory_gib, rss_gib  # noqa: E402

SHORT = "holdem.nolimit.2p.short24"
FULL = "holdem.nolimit.2p.reverse_blinds"


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


class StageMeter:
    """Progress callback that records each stage's wall time and largest RSS seen."""

    def __init__(self, echo: bool) -> None:
        self.echo = echo
        self.stages: dict[str, dict[str, float]] = {}
        self.current = ""
        self.t0 = 0.0
        self.last_echo = 0.0

    def __call__(self, stage: str, done: float, total: float) -> None:
        now = time.perf_counter()
        if stage != self.current:
            self.current = stage
            self.t0 = now
            self.stages[stage] = {"seconds": 0.0, "peak_gib": rss_gib()}
        rec = self.stages[stage]
        rec["seconds"] = round(now - self.t0, 3)
        rec["peak_gib"] = round(max(rec["peak_gib"], rss_gib()), 3)
        if self.echo and now - self.last_echo > 10:
            self.last_echo = now
            print(f"  {stage}: {done:,.0f}/{total:,.0f}  {now - self.t0:.0f} s", file=sys.stderr, flush=True)


def build(game: str, buckets: tuple[int, ...], out: Path, echo: bool) -> dict[str, Any]:
    """Build one abstraction; per-stage seconds (from the build's report) and peak memory."""
    meter = StageMeter(echo)
    t0 = time.perf_counter()
    report = build_abstraction(game, AbstractionParams(buckets), out, progress=meter)
    total = time.perf_counter() - t0
    stages = {}
    for st in report.stages:
        name = st["stage"]
        peak = meter.stages.get(name, {}).get("peak_gib")
        stages[name] = {"seconds": st["seconds"], "reused": st["reused"], "peak_gib": peak}
    return {
        "game": game,
        "buckets": list(buckets),
        "stages": stages,
        "total_s": round(total, 3),
        "peak_gib": round(peak_memory_gib(), 3),
    }


def random_hands(ab: CardAbstraction, street: int, n: int, seed: int) -> np.ndarray:
    sp = ab.space
    k = sp.hole + sp.board_through[street]
    order = np.argsort(np.random.default_rng(seed).random((n, sp.deck_size)), axis=1)[:, :k]
    return sp.deck[order]


def latencies(ab: CardAbstraction, seed: int) -> tuple[dict[str, float], dict[str, float]]:
    """Median ms of one on-the-fly bucket, and median us of one table lookup, per street."""
    names = ("preflop", "flop", "turn", "river")[: ab.num_streets]
    bucket_ms, lookup_us = {}, {}
    for s, name in enumerate(names):
        hands = random_hands(ab, s, 41, seed + s)
        ab.bucket(hands[0, : ab.space.hole], hands[0, ab.space.hole:])  # warm-up
        times = []
        for h in hands[1: 21 if s == 1 else 41]:
            t0 = time.perf_counter()
            ab.bucket(h[: ab.space.hole], h[ab.space.hole:])
            times.append(time.perf_counter() - t0)
        bucket_ms[name] = round(float(np.median(times)) * 1e3, 4)
        times = []
        for h in hands:
            t0 = time.perf_counter()
            ab.lookup(h[: ab.space.hole], h[ab.space.hole:])
            times.append(time.perf_counter() - t0)
        lookup_us[name] = round(float(np.median(times)) * 1e6, 2)
    return bucket_ms, lookup_us


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="short deck only, well under a minute")
    ap.add_argument("--out", help="directory for the builds (default: a temporary one, removed)")
    ap.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = ap.parse_args()
    root = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="bench-abstraction-"))
    result: dict[str, Any] = {
        "cpu": cpu_name(),
        "cores": os.cpu_count(),
        "numba_threads": numba.get_num_threads(),
        "python": platform.python_version(),
        "numba": numba.__version__,
    }
    try:
        quick = build(SHORT, (36, 200, 200, 200), root / "short24", echo=not args.quiet)
        ab = CardAbstraction.load(root / "short24")
        bucket_ms, lookup_us = latencies(ab, seed=1)
        result.update(
            mode="quick" if args.quick else "full",
            short=quick,
            river_ehs_s=quick["stages"]["river E[HS]"]["seconds"],
            total_s=quick["total_s"],
            peak_gib=quick["peak_gib"],
            bucket_ms=bucket_ms,
            lookup_us=lookup_us,
        )
        if not args.quick:
            out = root / "full"
            small = build(FULL, (169, 200, 200, 200), out, echo=not args.quiet)
            large = build(FULL, (169, 1000, 1000, 1000), out, echo=not args.quiet)
            # the second build reused the first one's river table and features
            for name, st in large["stages"].items():
                if st["reused"] and name in small["stages"]:
                    large["stages"][name] = dict(small["stages"][name], reused=True)
            large["total_with_features_s"] = round(sum(st["seconds"] for st in large["stages"].values()), 3)
            ab = CardAbstraction.load(out)
            full_ms, full_us = latencies(ab, seed=2)
            result.update(
                full_169_200=small,
                full_169_1000=large,
                full_river_ehs_s=small["stages"]["river E[HS]"]["seconds"],
                full_bucket_ms=full_ms,
                full_lookup_us=full_us,
                peak_gib=round(peak_memory_gib(), 3),
            )
    finally:
        if not args.out:
            shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
