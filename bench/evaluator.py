"""Benchmark of the hand evaluator (poker.evaluator) against treys, eval7 and phevaluator.

All evaluators rank the SAME seeded random 7-card hands. Measured, after a warm-up
(numba compile or cache load):

* ``batch_1t_per_s``: ``evaluate_batch(hands)`` on one thread (the serial kernel, and
  numba held to one thread for good measure);
* ``batch_all_per_s``: ``evaluate_batch(hands, parallel=True)`` on all numba threads;
* ``single_call_per_s``: ``evaluate(cards)`` called once per hand from Python;
* ``treys_per_s``, ``eval7_per_s``, ``phevaluator_per_s``: each library's Python API,
  one call per hand, card objects built beforehand (null when not installed);
* ``exhaustive_s``: all C(52, 7) hands through ``exhaustive_category_counts``.

Work is timed in chunks (1M hands for the batch API, 20k hands for Python calls), each
chunk several times; a rate is hands per second of the fastest chunk, and ``*_median``
keys give the median chunk, since the machine may be shared. The last line printed is
one JSON object.

Usage: ``python bench/evaluator.py [--quick]`` (``--quick`` finishes in well under a
minute).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

try:
    import poker.evaluator as ev
except ImportError:  # run from a checkout: put the repository root on the path
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import poker.evaluator as ev

import numba

RANKS, SUITS = "23456789TJQKA", "cdhs"


def card_text(card: int) -> str:
    return RANKS[card >> 2] + SUITS[card & 3]


def best_time(fn: Callable[[], object], repeats: int) -> float:
    """Smallest wall time of ``repeats`` calls of ``fn``."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def chunk_rates(fn: Callable[[int, int], object], n: int, chunk: int, passes: int) -> tuple[float, float]:
    """(best, median) items per second of ``fn(lo, hi)`` over chunks of ``n`` items."""
    rates = []
    for _ in range(passes):
        for lo in range(0, n, chunk):
            hi = min(n, lo + chunk)
            start = time.perf_counter()
            fn(lo, hi)
            rates.append((hi - lo) / (time.perf_counter() - start))
    return max(rates), float(np.median(rates))


def random_hands(seed: int, n: int) -> np.ndarray:
    """n random 7-card hands (distinct cards per row) as uint8, made in chunks."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, 7), np.uint8)
    for lo in range(0, n, 1_000_000):
        m = min(n, lo + 1_000_000) - lo
        out[lo : lo + m] = np.argpartition(rng.random((m, 52)), 7, axis=1)[:, :7]
    return out


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


PY_CHUNK = 20_000
Rates = tuple[float | None, float | None, list[int] | None]


def bench_python_api(rows: list, call: Callable[[Any], int], passes: int) -> tuple[float, float, list[int]]:
    """Rates of one Python call per hand, and the results (for the order check)."""
    out: list[int] = [0] * len(rows)

    def run(lo: int, hi: int) -> None:
        out[lo:hi] = [call(r) for r in rows[lo:hi]]

    best, median = chunk_rates(run, len(rows), PY_CHUNK, passes)
    return best, median, out


def bench_treys(hands: list[list[int]], passes: int) -> Rates:
    try:
        import treys
    except ImportError:
        return None, None, None
    cards = [treys.Card.new(card_text(c)) for c in range(52)]
    rows = [[cards[c] for c in h] for h in hands]
    evaluate = treys.Evaluator().evaluate
    best, median, out = bench_python_api(rows, lambda r: evaluate(r[:2], r[2:]), passes)
    return best, median, [-x for x in out]  # lower is better in treys


def bench_eval7(hands: list[list[int]], passes: int) -> Rates:
    try:
        import eval7
    except ImportError:
        return None, None, None
    cards = [eval7.Card(card_text(c)) for c in range(52)]
    rows = [[cards[c] for c in h] for h in hands]
    return bench_python_api(rows, eval7.evaluate, passes)


def bench_phevaluator(hands: list[list[int]], passes: int) -> Rates:
    try:
        from phevaluator import evaluate_cards
    except ImportError:
        return None, None, None
    # phevaluator's integer cards use the same rank * 4 + suit (c, d, h, s) encoding.
    best, median, out = bench_python_api(hands, lambda h: evaluate_cards(*h), passes)
    return best, median, [-x for x in out]  # lower is better


def same_order(a: np.ndarray, b: list[int] | None) -> bool | None:
    """Do two rankings of the same hands order consecutive pairs the same way?"""
    if b is None:
        return None
    a = a.astype(np.int64)
    bb = np.asarray(b, np.int64)
    return bool(np.array_equal(np.sign(a[1:] - a[:-1]), np.sign(bb[1:] - bb[:-1])))


def rounded(x: float | None) -> int | None:
    return None if x is None else round(x)


def ratio(a: float, b: float | None) -> float | None:
    return None if b is None else round(a / b, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer passes (< 1 min)")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()
    n_batch, n_py, passes = (2_000_000, 20_000, 3) if args.quick else (10_000_000, 200_000, 5)
    py_passes = 2 if args.quick else 3
    batch_chunk = 1_000_000

    hands = random_hands(args.seed, n_batch)
    py_hands = hands[:n_py].tolist()

    # Warm-up: compile (or load from numba's cache) both kernels.
    start = time.perf_counter()
    ev.evaluate_batch(hands[:1000])
    ev.evaluate_batch(hands[:1000], parallel=True)
    ev.evaluate(py_hands[0])
    warmup_s = time.perf_counter() - start

    def batch(parallel: bool) -> Callable[[int, int], object]:
        def run(lo: int, hi: int) -> None:
            ev.evaluate_batch(hands[lo:hi], parallel=parallel)

        return run

    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        b1, b1_med = chunk_rates(batch(False), n_batch, batch_chunk, passes)
    finally:
        numba.set_num_threads(threads)
    ball, ball_med = chunk_rates(batch(True), n_batch, batch_chunk, passes)
    ours = ev.evaluate_batch(hands[:n_py])

    single, single_med, single_out = bench_python_api(py_hands, ev.evaluate, py_passes)
    treys_rate, treys_med, treys_ranks = bench_treys(py_hands, py_passes)
    eval7_rate, eval7_med, eval7_ranks = bench_eval7(py_hands, py_passes)
    ph_rate, ph_med, ph_ranks = bench_phevaluator(py_hands, py_passes)

    start = time.perf_counter()
    counts = ev.exhaustive_category_counts()  # the first call may load or compile its kernel
    exhaustive_first_s = time.perf_counter() - start
    exhaustive_s = best_time(ev.exhaustive_category_counts, 2 if args.quick else 3)

    result = {
        "batch_1t_per_s": round(b1),
        "batch_all_per_s": round(ball),
        "single_call_per_s": round(single),
        "treys_per_s": rounded(treys_rate),
        "eval7_per_s": rounded(eval7_rate),
        "phevaluator_per_s": rounded(ph_rate),
        "exhaustive_s": round(exhaustive_s, 4),
        "ratio_vs_treys": ratio(b1, treys_rate),
        "ratio_vs_eval7": ratio(b1, eval7_rate),
        "ratio_vs_phevaluator": ratio(b1, ph_rate),
        "batch_1t_median_per_s": round(b1_med),
        "batch_all_median_per_s": round(ball_med),
        "single_call_median_per_s": round(single_med),
        "treys_median_per_s": rounded(treys_med),
        "eval7_median_per_s": rounded(eval7_med),
        "phevaluator_median_per_s": rounded(ph_med),
        "exhaustive_first_call_s": round(exhaustive_first_s, 4),
        "exhaustive_counts_ok": counts.category_counts.tolist()
        == [23294460, 58627800, 31433400, 6461620, 6180020, 4047644, 3473184, 224848, 41584]
        and counts.distinct_ranks == 4824,
        "order_agrees": {
            "single_call": bool(np.array_equal(ours, single_out)),
            "treys": same_order(ours, treys_ranks),
            "eval7": same_order(ours, eval7_ranks),
            "phevaluator": same_order(ours, ph_ranks),
        },
        "batch_hands": n_batch,
        "python_api_hands": n_py,
        "passes": passes,
        "timing": "wall clock per chunk; rate of the fastest chunk (median in *_median_per_s)",
        "warmup_s": round(warmup_s, 3),
        "numba_threads": threads,
        "cpu": cpu_name(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "quick": args.quick,
    }
    print(
        f"batch 1 thread {b1 / 1e6:.1f} M/s (median {b1_med / 1e6:.1f}), all threads "
        f"{ball / 1e6:.1f} M/s, evaluate() {single / 1e6:.2f} M/s, exhaustive {exhaustive_s:.3f} s",
        file=sys.stderr,
    )
    sys.stderr.flush()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
