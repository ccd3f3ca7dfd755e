"""The Targeted CFR paper's claim at our scale: Targeted CFR against external sampling
at equal wall time and equal threads.

Jackson 2017 ("Targeted CFR", AAAI Workshop on Computer Poker and Imperfect Information
Games) proposes Targeted CFR (:mod:`solver.training.tcfr`) as a faster way than external sampling
(:mod:`solver.training.mccfr`) to solve large games, on two games: game 1, a 24-card deck without
card abstraction, and game 2, the full deck with imperfect-recall buckets. Both are
measured here at our scale (game 1 on our 20-card deck), with the paper's targeting
distributions tau, one pot-size bet a street (``--betting 1p,cap1``), float32 tables
and no regret floor on either side; game 1 by exact exploitability, game 2 (too big for
an exact best response) by exact head-to-head:

* ``game1``: ``holdem.nolimit.2p.short20`` with lossless buckets (the hand indexer's
  suit-isomorphism classes), dealing from the deck (:func:`solver.training.dealt.make_dealt_problem`).
  Targeted CFR with the paper's game-1 tau (``game1``: every street 0.2, streets 2 and 3
  0.8) against external sampling; the exact exploitability (mbb/g, real-game best
  response over the listed problem; for lossless buckets equal to the abstract one) of
  each side's average strategy after 15, 30, 60, 120 and 240 s of training
  (``--quick``: the last of 5 and 10 s only); ``baseline_over_challenger_at``: es's
  figure over tcfr's (above 1: Targeted CFR is less exploitable at that time).
* ``game2``: ``holdem.nolimit.2p.reverse_blinds`` (52 cards) over the 169/1000/1000/1000
  imperfect-recall abstraction (``--abstraction DIR``, e.g. a finished ``pokerbot
  abstract holdem.nolimit.2p.reverse_blinds --buckets 169,1000,1000,1000 --seed 0``
  build; by default ``bench/_fulldeck.py``'s cached build of the same bucket counts).
  Targeted CFR with the paper's game-2 tau (``game2``: every street 0.025; 2,3 0.75;
  1,3 0.175; 0,3 0.05) against external sampling, each side's average strategy saved
  (float32 strategy file) after 60, 150, 300 and 600 s (``--quick``: 5 and 10 s). A
  reference strategy, Targeted CFR with the same tau trained longer (900 s on two
  Hogwild threads; ``--quick``: 10 s), is kept in ``--cache`` keyed by the abstraction's
  content hash and the run's settings, so reruns skip it. Every snapshot plays the
  reference, and the two final snapshots play each other, in the exact head-to-head of
  :func:`solver.evaluation.head_to_head.head_to_head` (both seatings; each board's value exact over
  every pair of hands, every action and translation draw), over one seeded sample of
  final boards (the same boards for every pairing; the final pairing gets twice as
  many), with 95% intervals over the boards. The number of boards is chosen from a
  pilot so that all head-to-heads take about ``--h2h-seconds`` (default 360), or set
  with ``--boards``. ``diff_vs_reference``: tcfr's value against the reference minus
  es's at each time (``challenger_vs_baseline_final``: the two final snapshots), with its 95% interval over the boards (paired: both sides played
  the reference on the same boards, so the interval is over the per-board differences).

Other methods: ``--sides CHALLENGER BASELINE`` races any two of :mod:`bench._methods`
(external sampling with Linear or Discounted CFR's discount, with pruning, Targeted CFR
discounted, ...) in place of tcfr and es, under the same rules; the JSON names them
(``challenger``, ``baseline``) and the output defaults to ``<challenger>_vs_<baseline>.json``.

Equal conditions: the two sides of a game train at the same time, each on a Python
thread of its own running the GIL-free kernel with one solver thread (``threads_per_side``
1), for the same wall-clock budget, started together; a change of the machine's load
hits both alike. Each point records the side's training seconds (wall, evaluation and
snapshots excluded), its thread's CPU seconds (``cpu_s``: on a shared machine a side
that got less than a core shows ``cpu_s`` < ``seconds``) and its iterations (one
iteration deals one hand and walks it once per player). Both sides use the same seed,
so iteration t deals the same cards on both. ``verdict`` says in words what the figures
show; ``machine`` records the load average before and after.

Output: the JSON (also written to ``--out``, default ``tcfr_vs_es.json`` under
``$TMPDIR/pokerbot-bench``), a PNG beside it (``.png``: exploitability against time for
game 1, value against the reference for game 2; needs matplotlib, the ``plot`` extra:
without it the JSON says so and the run goes on), and game 2's snapshot strategy files
in ``<out stem>.strategies/``. Progress goes to stderr; the last line of stdout is the
JSON.

A full run takes about 37 minutes on a 2-core machine (the reference's 15 of them only
the first time); ``--quick`` about one and a half.

Usage: ``python bench/tcfr_vs_es.py [--quick] [--abstraction DIR] [--out FILE]
[--cache DIR] [--seed S] [--h2h-seconds T | --boards N] [--games 1 2] [--sides CHALLENGER BASELINE]``
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from bench._methods import METHODS, check_method, method  # noqa: E402
from bench._fulldeck import CACHE, FULL_DECK_GAME, FULL_DECK_PARAMS, cached_abstraction, log  # noqa: E402
from poker._atomic import atomic_write_bytes  # noqa: E402
from solver.training.algorithms import make_training_solver  # noqa: E402
from solver.training.loop import train  # noqa: E402
from solver.training.sampled import SamplingOptions  # noqa: E402

GAME1 = "holdem.nolimit.2p.short20"
GAME2 = FULL_DECK_GAME
BETTING = "1p,cap1"
DTYPE = "float32"
#: Targeted CFR's targeting in each game: the paper's.
TARGETING = {"game1": "game1", "game2": "game2"}
#: The sides by default: Targeted CFR (challenger) against external sampling (baseline).
SIDES = ("tcfr", "es")
FULL = {
    "game1_points": [15.0, 30.0, 60.0, 120.0, 240.0],
    "game2_points": [60.0, 150.0, 300.0, 600.0],
    "reference_s": 900.0,
    "h2h_seconds": 360.0,
}
QUICK = {
    "game1_points": [5.0, 10.0],
    "game2_points": [5.0, 10.0],
    "reference_s": 10.0,
    "boards": 2,
}
REFERENCE_THREADS = 2
#: The reference run's seed is the comparison's plus this (its deals are its own).
REFERENCE_SEED_OFFSET = 1000
#: Training batches aim at this many seconds (so points are met within about that).
BATCH_S = 0.25


def _clean(x: Any) -> Any:
    """``x`` with infinities and NaNs as None (JSON has neither)."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def race(
    solvers: dict[str, Any], points: list[float], snapshot: Callable[[str, int, Any], dict[str, Any]]
) -> dict[str, list[dict[str, Any]]]:
    """Train every solver at once, each on a thread of its own, to each of ``points``
    (training seconds, cumulative) and call ``snapshot(name, i, solver)`` there (its time
    is not counted); one list of points per solver."""
    barrier = threading.Barrier(len(solvers))
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in solvers}
    errors: list[BaseException] = []

    def run(name: str, solver: Any) -> None:
        try:
            barrier.wait()
            cpu = 0.0
            seconds = 0.0
            for i, point in enumerate(points):
                c0 = time.thread_time()
                r = train(solver, seconds=max(point - seconds, 0.0), batch_seconds=BATCH_S)
                cpu += time.thread_time() - c0
                seconds += r.seconds
                row = {
                    "target_s": point,
                    "seconds": round(seconds, 2),
                    "cpu_s": round(cpu, 2),
                    "iterations": int(solver.iterations),
                }
                row.update(snapshot(name, i, solver))
                out[name].append(row)
                log(f"  {name}: {seconds:7.1f} s (cpu {cpu:7.1f} s) {solver.iterations:>13,} iterations")
        except BaseException as exc:  # reported by the caller
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=run, args=(n, s), name=f"race-{n}") for n, s in solvers.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return out


def _sides(problem: Any, game: str, seed: int, sides: tuple[str, str]) -> dict[str, Any]:
    """A solver per side (:mod:`bench._methods`), one thread each, the same seed."""
    out = {}
    for name in sides:
        algo, opts, extra = method(name, TARGETING[game])
        out[name] = make_training_solver(problem, algo, SamplingOptions(seed=seed, threads=1, dtype=DTYPE, **extra), **opts)
    return out


def _warm(problem: Any, game: str, seed: int, sides: tuple[str, str]) -> None:
    """Load each side's kernels (as this problem's types need them) and touch the
    problem's bucket tables, outside every timed run."""
    for solver in _sides(problem, game, seed, sides).values():
        train(solver, seconds=1.0, batch_seconds=BATCH_S)


def _average_policy(solver: Any, sums: np.ndarray) -> np.ndarray:
    """The normalised average strategy of ``solver`` had its average sums been ``sums``."""
    kept = solver.avg_sums
    solver.avg_sums = sums
    try:
        return solver.average_policy()
    finally:
        solver.avg_sums = kept


def _ratios(a: dict[str, float | None], b: dict[str, float | None]) -> dict[str, float | None]:
    return {k: round(a[k] / b[k], 3) if a.get(k) and b.get(k) else None for k in a if k in b}


# ---------------------------------------------------------------- game 1


def run_game1(points: list[float], evaluate_all: bool, seed: int, sides: tuple[str, str] = SIDES) -> dict[str, Any]:
    from solver.evaluation.best_response import exploitability
    from solver.training.dealt import make_dealt_problem
    from solver.problem import make_problem
    from solver.strategy import Strategy

    log(f"game 1: {GAME1} --betting {BETTING}, lossless buckets, points {points} s")
    problem = make_dealt_problem(GAME1, BETTING)
    _warm(problem, "game1", seed, sides)
    solvers = _sides(problem, "game1", seed, sides)
    challenger, baseline = sides
    sums: dict[tuple[str, int], np.ndarray] = {}
    keep = set(range(len(points))) if evaluate_all else {len(points) - 1}

    def snapshot(name: str, i: int, solver: Any) -> dict[str, Any]:
        if i in keep:
            sums[(name, i)] = solver.avg_sums.copy()
        return {}

    t0 = time.perf_counter()
    curves = race(solvers, points, snapshot)
    race_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    listed = make_problem(GAME1, BETTING)
    listed_s = time.perf_counter() - t0
    assert listed.size == problem.size
    for name, rows in curves.items():
        for i, row in enumerate(rows):
            if (name, i) not in sums:
                row["mbb"] = None
                continue
            t0 = time.perf_counter()
            policy = _average_policy(solvers[name], sums.pop((name, i)))
            res = exploitability(None, Strategy(listed, policy, row["iterations"], name))
            row["mbb"] = round(res.mbb_per_game, 1)
            row["eval_s"] = round(time.perf_counter() - t0, 1)
            log(f"  {name} at {row['target_s']:g} s: {row['mbb']:.1f} mbb/g ({row['eval_s']} s)")
    mbb_at = {name: {f"{r['target_s']:g}": r["mbb"] for r in rows} for name, rows in curves.items()}
    ratio = _ratios(mbb_at[baseline], mbb_at[challenger])
    out: dict[str, Any] = {
        "game": GAME1,
        "betting": BETTING,
        "buckets": "lossless: suit-isomorphism classes, dealt from the deck",
        "table_entries": int(problem.size),
        "challenger": challenger,
        "baseline": baseline,
        "sides": {name: solvers[name].options() | {"algorithm": solvers[name].algorithm} for name in solvers},
        "threads_per_side": 1,
        "concurrent": True,
        "seed": seed,
        "points": curves,
        "mbb_at": mbb_at,
        "baseline_over_challenger_at": ratio,
        "iterations_per_s": {
            name: round(rows[-1]["iterations"] / rows[-1]["seconds"]) for name, rows in curves.items()
        },
        "cpu_per_wall": {name: round(rows[-1]["cpu_s"] / rows[-1]["seconds"], 3) for name, rows in curves.items()},
        "race_s": round(race_s, 1),
        "listed_problem_s": round(listed_s, 1),
    }
    out["verdict"] = _verdict1(ratio, mbb_at, challenger, baseline)
    return out


def _verdict1(
    ratio: dict[str, float | None], mbb_at: dict[str, dict[str, float | None]], challenger: str, baseline: str
) -> str:
    known = {k: v for k, v in ratio.items() if v is not None}
    if not known:
        return "no point evaluated"
    ahead = [k for k, v in known.items() if v > 1]
    last = list(known)[-1]
    who = challenger if known[last] > 1 else baseline
    return (
        f"{challenger} is less exploitable than {baseline} at {len(ahead)} of "
        f"{len(known)} equal-time points; at {last} s {challenger} {mbb_at[challenger][last]:.0f} and "
        f"{baseline} {mbb_at[baseline][last]:.0f} mbb/g ({baseline} / {challenger} = {known[last]:.2f}): {who} ahead"
    )


# ---------------------------------------------------------------- game 2


def _save(path: Path, game: Any, ab: Any, policy: np.ndarray, training: dict[str, Any]) -> None:
    from solver.strategy_io import save_policy

    save_policy(path, game, BETTING, policy, abstraction=ab, precision="f32", training=training)


def reference_strategy(
    game: Any, ab: Any, seconds: float, seed: int, cache: Path
) -> tuple[Path, dict[str, Any]]:
    """The reference (Targeted CFR, game-2 tau, ``seconds`` on two Hogwild threads): from
    ``cache`` when a run with the same settings over the same abstraction is there, else
    trained and written there as ``pokerbot train`` does it
    (:func:`solver.training.run.run_training`, no evaluation: the full deck has no exact
    best response), the settings recorded in the file's training record as its config."""
    from solver.strategy_io import open_strategy
    from solver.training.config import AlgorithmConfig, Budget, EvaluationConfig, TrainingConfig
    from solver.training.run import TrainingProgress, run_training

    settings = {
        "abstraction": ab.content_hash,
        "game": GAME2,
        "betting": BETTING,
        "algorithm": "tcfr",
        "targeting": "game2",
        "dtype": DTYPE,
        "seconds": seconds,
        "threads": REFERENCE_THREADS,
        "seed": seed,
    }
    key = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]
    path = cache / f"reference-{key}.strategy"
    if path.exists():
        training = dict(open_strategy(path, game=game).training)
        log(f"game 2: reference from the cache ({training.get('iterations', 0):,} iterations)")
        return path, {**_reference_info(training), "path": str(path), "cached": True}
    log(f"game 2: training the reference ({seconds:g} s on {REFERENCE_THREADS} threads)")
    cache.mkdir(parents=True, exist_ok=True)
    cpu = {"start": 0.0, "train": 0.0}

    def clock(report: TrainingProgress) -> None:  # CPU seconds of the timed loop only
        if report.stage == "start":
            cpu["start"] = time.process_time()
        elif report.stage == "batch":
            cpu["train"] = time.process_time() - cpu["start"]

    config = TrainingConfig(
        GAME2,
        AlgorithmConfig("tcfr", targeting="game2"),
        Budget(seconds=seconds),
        out=path,
        betting=BETTING,
        abstraction=Path(ab.directory),
        threads=REFERENCE_THREADS,
        seed=seed,
        dtype=DTYPE,
        precision="f32",
        evaluation=EvaluationConfig(enabled=False),
        config_record=settings,
    )
    run = run_training(config, progress=clock)
    info = {**settings, "iterations": run.iterations, "train_s": round(run.seconds, 1),
            "cpu_s": round(cpu["train"], 1)}  # fmt: skip
    log(f"  {run.iterations:,} iterations in {run.seconds:.0f} s; saved {path}")
    return path, {**info, "path": str(path), "cached": False}


def _reference_info(training: dict[str, Any]) -> dict[str, Any]:
    """The reference's settings and figures from its file's training record: as
    :func:`solver.training.run.run_training` writes it (the settings under ``config``;
    ``cpu_s`` None: the file is written before the run's CPU time is known), or as
    earlier versions of this benchmark wrote it (all at the top level)."""
    if "config" not in training:
        return training
    return {**training["config"], "iterations": training["iterations"],
            "train_s": round(training["seconds"], 1), "cpu_s": None}  # fmt: skip


def run_game2(
    points: list[float],
    ab: Any,
    ab_info: dict[str, Any],
    reference_s: float,
    cache: Path,
    snapshots_dir: Path,
    seed: int,
    boards: int | None,
    h2h_seconds: float,
    all_snapshots: bool,
    sides: tuple[str, str] = SIDES,
) -> dict[str, Any]:
    from poker.game import load_game
    from solver.training.dealt import make_dealt_problem

    game = load_game(GAME2)
    problem = make_dealt_problem(game, BETTING, abstraction=ab)
    log(f"game 2: {GAME2} --betting {BETTING}, buckets {list(ab.bucket_counts)}, {problem.size:,} entries")
    _warm(problem, "game2", seed, sides)
    challenger, baseline = sides
    ref_path, ref_info = reference_strategy(
        game, ab, reference_s, seed + REFERENCE_SEED_OFFSET, cache
    )
    snapshots_dir.mkdir(parents=True, exist_ok=True)
    solvers = _sides(problem, "game2", seed, sides)
    paths: dict[tuple[str, int], Path] = {}

    def snapshot(name: str, i: int, solver: Any) -> dict[str, Any]:
        path = snapshots_dir / f"{name}-{points[i]:g}s.strategy"
        training = {"algorithm": solver.algorithm, "iterations": int(solver.iterations), **solver.options()}
        _save(path, game, ab, solver.average_policy(), training)
        paths[(name, i)] = path
        return {"strategy": path.name}

    log(f"game 2: racing {challenger} and {baseline}, points {points} s")
    t0 = time.perf_counter()
    curves = race(solvers, points, snapshot)
    race_s = time.perf_counter() - t0

    last = len(points) - 1
    vs_ref = [(name, i) for i in range(len(points)) for name in solvers if all_snapshots or i == last]
    h2h = _H2H(game, ab.directory)
    pilot = None
    if boards is None:
        boards, pilot = h2h.size(ref_path, paths[(baseline, last)], h2h_seconds, len(vs_ref) + 2, seed)
    for name, i in vs_ref:
        row = curves[name][i]
        row["vs_reference"] = h2h.play(paths[(name, i)], ref_path, boards, seed)
        log(f"  {name} at {points[i]:g} s vs reference: {_fmt(row['vs_reference'])}")
    final = h2h.play(paths[(challenger, last)], paths[(baseline, last)], 2 * boards, seed)
    log(f"  {challenger} vs {baseline} at {points[-1]:g} s: {_fmt(final)}")
    value_at = {
        name: {f"{r['target_s']:g}": r["vs_reference"]["mbb_per_game"] for r in rows if "vs_reference" in r}
        for name, rows in curves.items()
    }
    diff = {}
    for i in range(len(points)):
        if (challenger, i) not in vs_ref:
            continue
        d = h2h.values[(paths[(challenger, i)], ref_path)] - h2h.values[(paths[(baseline, i)], ref_path)]
        d *= 1000.0 / game.big_blind  # chips -> mbb/g
        half = 1.96 * float(d.std(ddof=1)) / math.sqrt(d.size)
        mean = float(d.mean())
        diff[f"{points[i]:g}"] = {"mbb": round(mean, 1), "ci95": [round(mean - half, 1), round(mean + half, 1)]}
    out: dict[str, Any] = {
        "game": GAME2,
        "betting": BETTING,
        "abstraction": ab_info,
        "buckets": list(ab.bucket_counts),
        "table_entries": int(problem.size),
        "challenger": challenger,
        "baseline": baseline,
        "sides": {name: solvers[name].options() | {"algorithm": solvers[name].algorithm} for name in solvers},
        "threads_per_side": 1,
        "concurrent": True,
        "seed": seed,
        "reference": ref_info,
        "points": curves,
        "iterations_per_s": {
            name: round(rows[-1]["iterations"] / rows[-1]["seconds"]) for name, rows in curves.items()
        },
        "cpu_per_wall": {name: round(rows[-1]["cpu_s"] / rows[-1]["seconds"], 3) for name, rows in curves.items()},
        "h2h": {
            "boards_vs_reference": boards,
            "boards_final": 2 * boards,
            "board_seed": seed,
            "pilot": pilot,
            "seconds": round(h2h.seconds, 1),
        },
        "value_vs_reference_at": value_at,
        "diff_vs_reference": diff,
        "challenger_vs_baseline_final": final,
        "race_s": round(race_s, 1),
        "snapshots_dir": str(snapshots_dir),
    }
    out["verdict"] = _verdict2(final, diff, points[-1], challenger, baseline)
    return out


def _fmt(r: dict[str, Any]) -> str:
    lo, hi = r["ci95"] if r["ci95"] else (None, None)
    span = f"[{lo:+.1f}, {hi:+.1f}]" if lo is not None else "[unbounded]"
    return f"{r['mbb_per_game']:+.1f} mbb/g {span} over {r['boards']} boards ({r['seconds']:.0f} s)"


def _verdict2(final: dict[str, Any], diff: dict[str, Any], t: float, challenger: str, baseline: str) -> str:
    lo, hi = final["ci95"] or (None, None)
    v = final["mbb_per_game"]
    if lo is not None and lo > 0:
        head = f"{challenger} beats {baseline} after {t:g} s each: {v:+.1f} mbb/g [{lo:+.1f}, {hi:+.1f}]"
    elif hi is not None and hi < 0:
        head = f"{baseline} beats {challenger} after {t:g} s each: {challenger} {v:+.1f} mbb/g [{lo:+.1f}, {hi:+.1f}]"
    else:
        span = f"[{lo:+.1f}, {hi:+.1f}]" if lo is not None else "unbounded"
        head = (
            f"no difference detected between {challenger} and {baseline} after {t:g} s each "
            f"({final['boards']} boards): {challenger} {v:+.1f} mbb/g, interval {span} holds 0"
        )
    ahead = [k for k, d in diff.items() if d["ci95"][0] > 0]
    behind = [k for k, d in diff.items() if d["ci95"][1] < 0]
    return (
        f"{head}; against the reference {challenger} is clearly ahead of {baseline} at {len(ahead)} and clearly "
        f"behind at {len(behind)} of {len(diff)} times (paired 95% intervals)"
    )


class _H2H:
    """Exact head-to-heads between strategy files (:func:`solver.evaluation.head_to_head.head_to_head`),
    timed."""

    def __init__(self, game: Any, tables: Path | None) -> None:
        self.game = game
        self.tables = tables
        self.seconds = 0.0
        self._open: dict[Path, Any] = {}
        #: (A, B) -> A's chips per game on each board of the last such head-to-head
        self.values: dict[tuple[Path, Path], np.ndarray] = {}

    def _policy(self, path: Path) -> Any:
        from solver.play.player import open_playable, translated

        if path not in self._open:
            self._open[path] = translated(open_playable(path, game=self.game, tables=self.tables))
        return self._open[path]

    def play(self, a: Path, b: Path, boards: int, seed: int) -> dict[str, Any]:
        """A's value against B over ``boards`` boards sampled with ``seed``."""
        from solver.evaluation.head_to_head import head_to_head

        t0 = time.perf_counter()
        r = head_to_head(self._policy(a), self._policy(b), self.game, boards=boards, seed=seed)
        self.seconds += time.perf_counter() - t0
        self.values[(a, b)] = np.asarray(r.board_values, dtype=np.float64)
        d = r.to_dict()
        lo, hi = d["ci95"]
        half = (hi - lo) / 2 if math.isfinite(lo) and math.isfinite(hi) else None
        return _clean(
            {
                "a": a.name,
                "b": b.name,
                "mbb_per_game": round(d["mbb_per_game"], 2),
                "ci95": [round(lo, 2), round(hi, 2)],
                "ci_halfwidth": round(half, 2) if half is not None else None,
                "seat_values_chips": [round(x, 3) for x in d["seat_values"]],
                "boards": d["boards"],
                "boards_total": d["boards_total"],
                "seconds": round(d["seconds"], 1),
            }
        )

    def size(self, a: Path, b: Path, budget: float, units: int, seed: int) -> tuple[int, dict[str, Any]]:
        """Boards per head-to-head so that ``units`` of them take about ``budget`` seconds
        in all (this pilot included), from a one-board warm-up and a two-board pilot."""
        t0 = time.perf_counter()
        self.play(a, b, 1, seed + 7919)  # first use: kernels, bucket tables
        t1 = time.perf_counter()
        self.play(a, b, 2, seed + 7920)
        per_board = max((time.perf_counter() - t1) / 2, 1e-4)  # (the report's seconds are rounded)
        left = budget - (time.perf_counter() - t0)
        boards = max(2, int(left / (units * per_board)))
        log(f"  h2h pilot: {per_board:.2f} s a board -> {boards} boards a pairing ({units} units)")
        return boards, {"seconds_per_board": round(per_board, 3), "budget_s": budget, "units": units}


# ---------------------------------------------------------------- output


def write_png(doc: dict[str, Any], path: Path) -> str | None:
    """The figure of ``doc`` at ``path``; None, with a line on stderr, without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib is not installed: no PNG (pip install matplotlib, or the plot extra)")
        return None
    panels = [g for g in ("game1", "game2") if doc.get(g)]
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.8), squeeze=False)
    palette = ("tab:blue", "tab:orange")
    for ax, g in zip(axes[0], panels):
        res = doc[g]
        if g == "game1":
            for name, rows in res["points"].items():
                pts = [(r["seconds"], r["mbb"]) for r in rows if r.get("mbb") is not None]
                if pts:
                    x, y = zip(*pts)
                    label = f"{name} ({res['sides'][name].get('targeting', 'every street')})"
                    ax.plot(x, y, "o-", color=palette[list(res["points"]).index(name) % 2], label=label)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_ylabel("exploitability (mbb/g)")
            ax.set_title(f"game 1: {res['game']} {res['betting']}, lossless, 1 thread each", fontsize=10)
        else:
            for k, (name, rows) in enumerate(res["points"].items()):
                pts = [(r["seconds"], r["vs_reference"]) for r in rows if r.get("vs_reference")]
                if not pts:
                    continue
                x = np.array([p[0] for p in pts]) * (1.0 + 0.02 * (2 * k - 1))  # side by side
                y = np.array([p[1]["mbb_per_game"] for p in pts])
                lo = np.array([p[1]["ci95"][0] if p[1]["ci95"][0] is not None else np.nan for p in pts])
                hi = np.array([p[1]["ci95"][1] if p[1]["ci95"][1] is not None else np.nan for p in pts])
                label = f"{name} ({res['sides'][name].get('targeting', 'every street')})"
                ax.errorbar(x, y, yerr=[y - lo, hi - y], fmt="o-", capsize=3, color=palette[k % 2], label=label)
            ax.axhline(0.0, color="grey", lw=0.8)
            ax.set_xscale("log")
            ax.set_ylabel("value against the reference (mbb/g, 95% interval)")
            fin = res["challenger_vs_baseline_final"]
            ci = fin["ci95"]
            span = f"[{ci[0]:+.0f}, {ci[1]:+.0f}]" if ci and ci[0] is not None else ""
            ax.set_title(
                f"game 2: full deck {'/'.join(map(str, res['buckets']))}, {res['betting']}, 1 thread each\n"
                f"final {res['challenger']} vs {res['baseline']}: {fin['mbb_per_game']:+.0f} mbb/g {span} ({fin['boards']} boards)",
                fontsize=10,
            )
        ax.set_xlabel("training wall seconds")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return str(path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="5 and 10 s points, a 10 s reference, 2 boards")
    ap.add_argument("--abstraction", metavar="DIR", help="the full-deck 169/1000/1000/1000 abstraction "
                    "(default: bench/_fulldeck.py's cached build)")
    ap.add_argument("--out", metavar="FILE", help="where the JSON goes (the PNG beside it; default "
                    "tcfr_vs_es.json under $TMPDIR/pokerbot-bench)")
    ap.add_argument("--cache", metavar="DIR", help="where game 2's reference strategy is kept between runs "
                    "(default: tcfr_vs_es under $TMPDIR/pokerbot-bench)")
    ap.add_argument("--seed", type=int, default=1)
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--h2h-seconds", type=float, help="wall time for game 2's head-to-heads (default 360)")
    size.add_argument("--boards", type=int, help="boards per head-to-head against the reference (the final "
                      "pairing gets twice as many); default: chosen from a pilot")
    ap.add_argument("--games", nargs="+", choices=["1", "2"], default=["1", "2"])
    ap.add_argument("--sides", nargs=2, type=check_method, default=list(SIDES), metavar=("CHALLENGER", "BASELINE"),
                    help=f"the two methods raced (bench/_methods.py: {', '.join(METHODS)}, or es_dcfr:A,B,G "
                         "for alpha, beta, gamma; default tcfr es)")
    args = ap.parse_args(argv)
    sides = (args.sides[0], args.sides[1])
    if sides[0] == sides[1]:
        ap.error("--sides needs two different methods")
    if args.boards is not None and args.boards < 2:
        ap.error("--boards must be at least 2 (an interval needs two)")
    cfg = QUICK if args.quick else FULL
    stem = "tcfr_vs_es" if sides == SIDES else f"{sides[0]}_vs_{sides[1]}"
    out = Path(args.out) if args.out else CACHE / (f"{stem}.quick.json" if args.quick else f"{stem}.json")
    cache = Path(args.cache) if args.cache else CACHE / "tcfr_vs_es"
    start = time.perf_counter()
    load0 = [round(x, 2) for x in os.getloadavg()]
    doc: dict[str, Any] = {
        "quick": args.quick,
        "seed": args.seed,
        "threads_per_side": 1,
        "equal_conditions": "both sides of a game train at once, each on a thread of its own with one "
        "solver thread, for the same wall time; cpu_s shows what each thread got",
        "dtype": DTYPE,
        "regret_floor": False,
    }
    if "1" in args.games:
        doc["game1"] = run_game1(cfg["game1_points"], not args.quick, args.seed, sides)
    if "2" in args.games:
        from solver.training.dealt import load_training_abstraction
        from poker.game import load_game

        if args.abstraction:
            ab = load_training_abstraction(args.abstraction)
            if ab.game.name != GAME2:
                raise SystemExit(f"{args.abstraction}: an abstraction of {ab.game.name}, not {GAME2}")
            ab_info: dict[str, Any] = {"directory": str(args.abstraction), "built_s": None,
                                       "params": ab.params.to_json()}
        else:
            ab, ab_info = cached_abstraction(load_game(GAME2), FULL_DECK_PARAMS, training=True)
        doc["game2"] = run_game2(
            cfg["game2_points"],
            ab,
            ab_info,
            cfg["reference_s"],
            cache,
            out.parent / f"{out.stem}.strategies",
            args.seed,
            args.boards or cfg.get("boards"),
            args.h2h_seconds or cfg.get("h2h_seconds", 0.0),
            not args.quick,
            sides,
        )
    doc["machine"] = {
        "cpus": os.cpu_count(),
        "loadavg_before": load0,
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        "total_s": round(time.perf_counter() - start, 1),
    }
    png = out.with_suffix(".png")
    doc["png"] = write_png(doc, png)
    if doc["png"] is None:
        doc["png_note"] = "matplotlib is not installed (pip install matplotlib, or the plot extra)"
    doc = _clean(doc)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(out, (json.dumps(doc, indent=1) + "\n").encode())
    log(f"wrote {out}" + (f" and {png}" if doc["png"] else ""))
    print(json.dumps(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
