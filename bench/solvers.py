"""Benchmark of the CFR family: speed and exploitability against solving time.

For each game (Leduc hold'em ``leduc.limit.2p``; 20-card no-limit hold'em
``holdem.nolimit.2p.short20`` with one pot-size bet a street, ``1p,cap1``, Slumbot's
``mb1b1`` and the paper's "game 1" betting, over lossless buckets) and each algorithm
(cfr, cfr+, es, os, tcfr), in one process:

* ``iterations_per_s`` and ``nodes_per_s`` over the whole timed run, and
  ``nodes_per_cpu_s`` per CPU second of this process (what other processes on a shared
  machine take away does not count). Sampled solvers count the tree nodes their walks
  touch: each visit of a node by a walk counts once, decision, chance and terminal
  nodes alike, the opponent's included (a node that two walks of one iteration visit
  counts twice); vector CFR counts (public node, board) visits, each of which handles
  every private hand (``vector_nodes``);
* ``exploitability_at``: the average strategy's exploitability (chips per game, exact
  best response) after 1, 10 and 60 s of solving (``--quick``: shorter; evaluation time
  is not counted), with the actual seconds and iterations in ``points``;
* ``leduc.cfr+.seconds_to_1e-4``: solving time until CFR+ is below 1e-4 chips;
* ``short20.{es,tcfr}.nodes_per_s_2t``: two Hogwild threads, against one thread on the
  same (already touched) tables (``speedup_2t``, wall clock; alternating rounds of the
  same number of iterations), with CPU seconds per wall second of each
  (``cpu_per_wall_2t`` is 2 only if both threads had a core of their own);
  ``machine.nogil_loop_speedup_2t``: the same ratio for a trivial GIL-free numba loop,
  what the machine allows at that moment;
* every table is written once before its timed run (``prefault_s``): fresh pages are
  mapped lazily and their first touch is slow on a VM;
* ``openspiel``: OpenSpiel's C++ CFR+, external and outcome sampling (eps 0.6) on
  Leduc, run here through pyspiel with the same keys, and ``ratios`` (ours / theirs for
  speeds, theirs / ours for exploitability), or null if pyspiel does not import.

``short20_lossless_curve`` (one thread throughout; ``--no-curve`` leaves it out,
``--curve-only`` runs nothing else): sampled training as ``pokerbot train`` runs it on
``holdem.nolimit.2p.short20 --betting 1p,cap1`` with lossless buckets, dealing from the
deck (:func:`solver.training.dealt.make_dealt_problem`; the buckets are the hand indexer's
suit-isomorphism classes), seed ``--seed``. Each configuration runs in a subprocess of
its own (``bench/_curve.py``, ``NUMBA_NUM_THREADS=1``), one after the other, numba's
cache warmed by this process first. The default configurations: Targeted CFR (Slumbot's
mod-40 targeting, uniform averaging) with float32 tables, the same with the regret
floor (``floor=True``), external sampling with the floor, and the float64 twin of
whichever float32 configuration is least exploitable at 100M iterations (at the last
point under ``--quick``); ``--curve-configs`` replaces them (see ``parse_curve_spec``).
Per configuration:

* ``setup_s``: imports, problem, solver and the first iteration (kernels loaded from
  the warm cache), with ``setup_parts_s``;
* ``points``: at 20M, 50M, 100M and 200M total iterations (``--quick``: 2M only;
  ``--curve-points`` in millions), the exact exploitability of the average strategy
  (``mbb``, real-game best response over the listed problem of the same layout; equal
  to the abstract one for lossless buckets) and the training seconds to get there
  (``train_s`` wall, ``train_cpu_s`` CPU; evaluation not counted), with ``mbb_at``;
  ``iterations_per_s`` overall;
* ``peak_rss_gib_training``: the subprocess's ``ru_maxrss`` just before its first
  evaluation (the interpreter, numba, the dealt problem and the solver's tables: what
  a training run holds); ``peak_rss_gib_total``: at its end, the listed problem and
  best-response walks of the evaluations added;
* the targets beside them (``target_mbb_at_100M`` 680, ``target_peak_gib`` 0.5 judged on
  the training peak, ``target_setup_s`` 5), ``meets``, and ``old_over_new_at_100M``: the
  figure before dealing from the deck (2,036 mbb/g after 100M iterations of Targeted
  CFR over raw listed buckets) over this one. ``float32_cost`` compares the float64
  twin at equal iterations, ``floor_effect`` each configuration with the floor against
  the same without it (mbb/g with over without, where both ran).

Every figure here is the solver's own: the timing loops drive the solvers directly
(:func:`solver.training.algorithms.make_training_solver`, timed batches of
:func:`solver.training.loop.train` or ``iterate``), without what a training run adds
around them (:func:`solver.training.run.run_training`: checkpoints, evaluations,
metrics, the strategy file).

Usage: ``python bench/solvers.py [--quick] [--seed S] [--games leduc short20]
[--no-openspiel] [--no-curve | --curve-only] [--curve-configs SPEC ...]
[--curve-points M ...]``. Progress goes to stderr; the
last line of stdout is one JSON object. The machine may be shared: ``machine`` records
the load average before and after.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numba
import numpy as np

from poker._sysinfo import GIB, available_memory_gib
from solver.training.algorithms import make_training_solver, warm_up
from solver.evaluation.best_response import exploitability
from solver.problem import Problem, make_problem
from solver.training.loop import train
from solver.training.sampled import SamplingOptions

GAMES = {
    "leduc": ("leduc.limit.2p", None),
    "short20": ("holdem.nolimit.2p.short20", "1p,cap1"),
}
ALGOS = ("cfr", "cfr+", "es", "os", "tcfr")
SAMPLED = ("es", "os", "tcfr")


def log(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


def vector_nodes(problem: Problem) -> int:
    """(public node, board state) visits of one vector CFR iteration (two walks)."""
    per_street = np.bincount(problem.chance.board_street, minlength=problem.tree.n_streets)
    return 2 * int(per_street[problem.tree.street.astype(np.int64)].sum())


def timeline(
    solver: Any,
    times: list[float],
    evaluate: Callable[[Any], float] | None,
    nodes_per_iteration: int | None = None,
    stop_below: float | None = None,
) -> dict[str, Any]:
    """Train ``solver`` up to each of ``times`` (solving seconds) and evaluate there."""
    acc = {"seconds": 0.0, "cpu": 0.0, "iterations": 0, "nodes": 0}

    def run(seconds: float) -> None:
        c0 = time.process_time()
        r = train(solver, seconds=seconds)
        acc["cpu"] += time.process_time() - c0
        acc["seconds"] += r.seconds
        acc["iterations"] += r.iterations
        acc["nodes"] += r.nodes

    points = []
    expl_at: dict[str, float | None] = {}
    first_below = None
    for t in times:
        if stop_below is not None and evaluate is not None:
            # Find the time to reach ``stop_below``: evaluate after every ~0.1 s batch.
            while acc["seconds"] < t and first_below is None:
                run(min(0.1, t - acc["seconds"]))
                if evaluate(solver) <= stop_below:
                    first_below = acc["seconds"]
        if acc["seconds"] < t:
            run(t - acc["seconds"])
        e = evaluate(solver) if evaluate is not None else None
        expl_at[f"{t:g}"] = e
        points.append(
            {
                "target_s": t,
                "seconds": round(acc["seconds"], 3),
                "iterations": solver.iterations,
                "exploitability": e,
            }
        )
        log(f"  t={acc['seconds']:7.2f}s it={solver.iterations:>12,} expl={e}")
    seconds = acc["seconds"]
    nodes = acc["nodes"] if nodes_per_iteration is None else acc["iterations"] * nodes_per_iteration
    out = {
        "iterations_per_s": acc["iterations"] / seconds if seconds else None,
        "nodes_per_s": nodes / seconds if seconds else None,
        # On a shared machine, speed per CPU second leaves out the time other processes
        # took from this one (evaluations are not counted in either).
        "nodes_per_cpu_s": nodes / acc["cpu"] if acc["cpu"] else None,
        "exploitability_at": expl_at,
        "points": points,
    }
    if stop_below is not None:
        out["seconds_to_1e-4"] = first_below
    return out


def run_ours(quick: bool, seed: int, games: list[str]) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for key in games:
        name, betting = GAMES[key]
        t0 = time.perf_counter()
        problem = make_problem(name, betting)
        log(
            f"{key}: {name} {betting or ''} table {problem.size:,} entries, built in "
            f"{time.perf_counter() - t0:.1f}s"
        )
        game_res: dict[str, Any] = {
            "game": name,
            "betting": betting or "",
            "table_entries": problem.size,
        }
        big = problem.size > 10_000_000
        dtype = "float32" if big else "float64"
        if key == "leduc":
            times = [0.5, 1.5] if quick else [1.0, 10.0, 60.0]
        else:
            times = [1.0] if quick else [1.0, 10.0, 60.0]

        def evaluate(s: Any) -> float:
            st = s.average_strategy()
            v = exploitability(None, st).exploitability
            del st
            return v

        for algo in ALGOS:
            log(f"{key} {algo}")
            if algo not in SAMPLED:
                need = 32 * problem.size  # regrets, average, current strategy, best-response policy
                if big and (quick or need > available_memory_gib() * GIB / 2):
                    why = "--quick" if quick else f"needs {need / 2**30:.1f} GiB"
                    game_res[algo] = {
                        "skipped": f"vector CFR over lossless short20 skipped ({why})",
                        "iterations_per_s": None,
                        "nodes_per_s": None,
                        "exploitability_at": {},
                    }
                    log(f"  skipped: {why}")
                    continue
                solver = make_training_solver(problem, algo)
                prefault = touch(solver)
                res = timeline(
                    solver,
                    times,
                    evaluate,
                    nodes_per_iteration=vector_nodes(problem),
                    stop_below=1e-4 if (algo == "cfr+" and key == "leduc") else None,
                )
                res["node_unit"] = "vector_nodes"
                res["prefault_s"] = prefault
            else:
                solver = make_training_solver(problem, algo, SamplingOptions(seed=seed, dtype=dtype))
                prefault = touch(solver)
                if big and quick and algo != "tcfr":
                    res = timeline(solver, times, None)  # one best response costs ~10 s here
                    res["exploitability_note"] = "evaluated for tcfr only in --quick"
                else:
                    res = timeline(solver, times, evaluate)
                res["node_unit"] = "tree_nodes"
                res["prefault_s"] = prefault
                # Hogwild threads on the 20-card game (Leduc's tables sit in one core's
                # cache, so two threads there would measure contention, not speed).
                if key == "short20" and algo in ("es", "tcfr"):
                    res.update(
                        two_threads(
                            problem,
                            algo,
                            solver,
                            seed,
                            dtype,
                            0.6 if quick else 6.0,
                            res["iterations_per_s"],
                        )
                    )
            game_res[algo] = res
            del solver
            gc.collect()
        results[key] = game_res
        del problem
        gc.collect()
    return results


def touch(solver: Any) -> float:
    """Write every page of the solver's tables before timing (seconds taken).

    Fresh tables are mapped lazily; on the development VM a first touch of a page costs
    up to milliseconds, which would otherwise be charged to the first seconds of solving.
    """
    t0 = time.perf_counter()
    for name in ("regrets", "avg_sums", "_strat"):
        table = getattr(solver, name, None)
        if table is not None:
            table.fill(0)
    return round(time.perf_counter() - t0, 3)


def two_threads(
    problem: Problem,
    algo: str,
    one: Any,
    seed: int,
    dtype: str,
    secs: float,
    iterations_per_s: float,
    rounds: int = 3,
) -> dict[str, Any]:
    """Nodes/s of one thread and of two Hogwild threads, both on touched tables.

    ``rounds`` alternating rounds of the same number of iterations (about ``secs`` /
    ``rounds`` seconds for one thread at ``iterations_per_s``), so that a change of load
    on a shared machine hits both alike; wall clock for the speed, CPU time to show
    whether both threads ran.
    """
    two = make_training_solver(
        problem, algo, SamplingOptions(seed=seed + 1, dtype=dtype, threads=2)
    )
    two.regrets[:] = one.regrets  # touches every page; starts from the same state
    two.avg_sums[:] = one.avg_sums
    two.iterations = one.iterations
    n = max(2, int(iterations_per_s * secs / rounds))
    acc = {1: [0, 0.0, 0.0], 2: [0, 0.0, 0.0]}  # nodes, wall, cpu seconds
    for _ in range(rounds):
        for k, solver in ((1, one), (2, two)):
            w0, c0 = time.perf_counter(), time.process_time()
            nodes = solver.iterate(n)
            acc[k][0] += nodes
            acc[k][1] += time.perf_counter() - w0
            acc[k][2] += time.process_time() - c0
    (n1, w1, c1), (n2, w2, c2) = acc[1], acc[2]
    log(
        f"  steady state: 1 thread {n1 / w1 / 1e6:.1f} M nodes/s, 2 threads "
        f"{n2 / w2 / 1e6:.1f} M nodes/s ({n2 / w2 / (n1 / w1):.2f}x, "
        f"{c2 / w2:.2f} CPU s per s)"
    )
    del two
    return {
        "nodes_per_s_1t_steady": n1 / w1,
        "nodes_per_s_2t": n2 / w2,
        "speedup_2t": (n2 / w2) / (n1 / w1),
        "nodes_per_cpu_s_1t_steady": n1 / c1,
        "nodes_per_cpu_s_2t": n2 / c2,
        # CPU seconds per wall second: 2 only if both threads got a core of their own.
        "cpu_per_wall_1t": c1 / w1,
        "cpu_per_wall_2t": c2 / w2,
    }


@numba.njit(cache=True, nogil=True)
def _spin(n: int) -> float:
    """A GIL-free loop with no memory traffic (xorshift steps)."""
    x = np.uint64(88172645463325252)
    acc = 0.0
    for _ in range(n):
        x ^= x << np.uint64(13)
        x ^= x >> np.uint64(7)
        x ^= x << np.uint64(17)
        acc += float(x >> np.uint64(11))
    return acc


def nogil_loop_speedup(n: int = 50_000_000) -> float:
    """Throughput of two threads running :func:`_spin` over one thread (2.0 when the
    machine gives this process two idle cores)."""
    from concurrent.futures import ThreadPoolExecutor

    _spin(10)
    t0 = time.perf_counter()
    _spin(n)
    one = time.perf_counter() - t0
    with ThreadPoolExecutor(2) as pool:
        t0 = time.perf_counter()
        list(pool.map(_spin, [n, n]))
        two = time.perf_counter() - t0
    return round(2 * one / two, 3)


def run_openspiel(quick: bool, seed: int) -> dict[str, Any] | None:
    try:
        import pyspiel  # type: ignore[import-not-found]
    except ImportError:
        log("openspiel: pyspiel does not import (pip install open-spiel); null")
        return None
    game = pyspiel.load_game("leduc_poker")
    times = [0.5, 1.5] if quick else [1.0, 10.0, 60.0]
    makers = {
        "cfr+": lambda: (pyspiel.CFRPlusSolver(game), "evaluate_and_update_policy"),
        "es": lambda: (
            pyspiel.ExternalSamplingMCCFRSolver(
                game, seed=seed, avg_type=pyspiel.MCCFRAverageType.SIMPLE
            ),
            "run_iteration",
        ),
        "os": lambda: (
            pyspiel.OutcomeSamplingMCCFRSolver(game, epsilon=0.6, seed=seed + 1),
            "run_iteration",
        ),
    }
    out: dict[str, Any] = {
        "version": getattr(pyspiel, "__version__", None) or _pkg_version("open_spiel")
    }
    for algo, make in makers.items():
        log(f"openspiel {algo}")
        solver, method = make()
        step = getattr(solver, method)
        seconds, iters = 0.0, 0
        expl_at: dict[str, float] = {}
        points = []
        first_below = None
        for t in times:
            while seconds < t:
                t0 = time.perf_counter()
                n = 0
                while n < 64 and time.perf_counter() - t0 < 0.05:
                    step()
                    n += 1
                seconds += time.perf_counter() - t0
                iters += n
                if (
                    algo == "cfr+"
                    and first_below is None
                    and pyspiel.exploitability(game, solver.average_policy()) <= 1e-4
                ):
                    first_below = seconds
            e = float(pyspiel.exploitability(game, solver.average_policy()))
            expl_at[f"{t:g}"] = e
            points.append(
                {
                    "target_s": t,
                    "seconds": round(seconds, 3),
                    "iterations": iters,
                    "exploitability": e,
                }
            )
            log(f"  t={seconds:7.2f}s it={iters:>10,} expl={e}")
        out[algo] = {
            "iterations_per_s": iters / seconds,
            "nodes_per_s": None,
            "exploitability_at": expl_at,
            "points": points,
        }
        if algo == "cfr+":
            out[algo]["seconds_to_1e-4"] = first_below
    return out


def _pkg_version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def ratios(ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for algo in ("cfr+", "es", "os"):
        a, b = ours[algo], theirs[algo]
        out[algo] = {
            "iterations_per_s": a["iterations_per_s"] / b["iterations_per_s"],
            "exploitability_at": {
                t: (b["exploitability_at"][t] / a["exploitability_at"][t])
                if a["exploitability_at"].get(t)
                else None
                for t in b["exploitability_at"]
            },
        }
    return out


CURVE_GAME = ("holdem.nolimit.2p.short20", "1p,cap1")
#: The default configurations of ``short20_lossless_curve`` (the float64 twin of the
#: best float32 one is added after them).
CURVE_CONFIGS = ("tcfr,f32", "tcfr,f32,floor", "es,f32,floor")
CURVE_POINTS_M = (20, 50, 100, 200)
CURVE_POINTS_M_QUICK = (2,)
#: The issue's targets and the figures before dealing from the deck (raw listed buckets).
CURVE_TARGETS = {"target_mbb_at_100M": 680, "target_peak_gib": 0.5, "target_setup_s": 5}
CURVE_OLD = {
    "old_tcfr_mbb_at_100M": 2036,
    "old_tcfr_mbb_at_20M": 2629,
    "old_es_mbb_at_20M": 2055,
    "old_setup_s": 45,
}


def parse_curve_spec(spec: str) -> dict[str, Any]:
    """A configuration from ``ALGO[,f32|f64][,floor][,linear][,targeting=NAME]``, e.g.
    ``tcfr,f32,floor`` or ``tcfr,f32,targeting=game1`` (float32 unless told)."""
    algo, *tokens = spec.split(",")
    if algo not in SAMPLED:
        raise ValueError(f"curve config {spec!r}: {algo!r} is not one of {', '.join(SAMPLED)}")
    cfg: dict[str, Any] = {"name": spec, "algo": algo, "dtype": "float32", "floor": False}
    for tok in tokens:
        if tok in ("f32", "f64"):
            cfg["dtype"] = "float32" if tok == "f32" else "float64"
        elif tok == "floor":
            cfg["floor"] = True
        elif tok == "linear":
            cfg["averaging"] = "linear"
        elif tok.startswith("targeting=") and algo == "tcfr":
            cfg["targeting"] = tok.split("=", 1)[1]
        else:
            raise ValueError(f"curve config {spec!r}: unknown item {tok!r}")
    return cfg


def _curve_subprocess(cfg: dict[str, Any]) -> dict[str, Any]:
    """Run one configuration in ``bench/_curve.py`` (one thread); its JSON."""
    env = dict(os.environ)
    for var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    worker = Path(__file__).resolve().parent / "_curve.py"
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(worker), json.dumps(cfg)],
        stdout=subprocess.PIPE,
        env=env,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        log(f"curve {cfg['name']}: worker exited {proc.returncode}")
        return {"error": f"worker exited {proc.returncode}"}
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["process_wall_s"] = round(time.perf_counter() - t0, 1)
    return out


def _at_or_before(points: list[dict[str, Any]], iterations: int) -> dict[str, Any] | None:
    """The last point at or before ``iterations`` (the first if none is)."""
    before = [p for p in points if p["iterations"] <= iterations]
    return before[-1] if before else (points[0] if points else None)


def _millions(iterations: int) -> str:
    return f"{iterations / 1e6:g}M"


def _curve_summary(cfg: dict[str, Any], res: dict[str, Any]) -> dict[str, Any]:
    """``res`` with the config, per-point maps, GiB, targets met and the ratio to old."""
    if "error" in res:
        return {"config": cfg, **res}
    points = res["points"]
    gib = 2**30
    mbb_at = {_millions(p["iterations"]): p["mbb"] for p in points}
    at100 = next((p["mbb"] for p in points if p["iterations"] == 100_000_000), None)
    peak_train = res["peak_rss_bytes_training"] / gib
    out = {
        "config": {k: v for k, v in cfg.items() if k not in ("points", "name")},
        **res,
        "mbb_at": mbb_at,
        "train_s_at": {_millions(p["iterations"]): p["train_s"] for p in points},
        "peak_rss_gib_training": round(peak_train, 3),
        "peak_rss_gib_total": round(res["peak_rss_bytes_total"] / gib, 3),
        "old_over_new_at_100M": round(CURVE_OLD["old_tcfr_mbb_at_100M"] / at100, 2)
        if at100
        else None,
        "meets": {
            "target_mbb_at_100M": at100 <= CURVE_TARGETS["target_mbb_at_100M"]
            if at100 is not None
            else None,
            "target_peak_gib": peak_train <= CURVE_TARGETS["target_peak_gib"],
            "target_peak_gib_with_evaluation": res["peak_rss_bytes_total"] / gib
            <= CURVE_TARGETS["target_peak_gib"],
            "target_setup_s": res["setup_s"] <= CURVE_TARGETS["target_setup_s"],
        },
    }
    return out


def _speed_ratio(a: dict[str, Any], b: dict[str, Any], key: str) -> float | None:
    return round(a[key] / b[key], 3) if a.get(key) and b.get(key) else None


def _twin_name(spec: str) -> str:
    """The name of the float64 twin of float32 configuration ``spec``."""
    return spec.replace("f32", "f64") if "f32" in spec.split(",") else spec + ",f64"


def _ratio_at(a: dict[str, Any], b: dict[str, Any]) -> dict[str, float | None]:
    """a's mbb over b's at each iteration count both have."""
    ma, mb = a.get("mbb_at", {}), b.get("mbb_at", {})
    return {k: round(ma[k] / mb[k], 3) if mb.get(k) else None for k in ma if k in mb}


def run_curve(
    quick: bool, seed: int, specs: list[str] | None, points_m: list[float] | None
) -> dict[str, Any]:
    """``short20_lossless_curve``: each configuration in its own one-thread subprocess."""
    start = time.perf_counter()
    points = [
        int(m * 1_000_000)
        for m in (points_m or (CURVE_POINTS_M_QUICK if quick else CURVE_POINTS_M))
    ]
    configs = [parse_curve_spec(s) for s in (specs or CURVE_CONFIGS)]
    auto_twin = specs is None
    t0 = time.perf_counter()
    for cfg in configs:  # compile into (or check) numba's cache: the workers load it
        warm_up(cfg["algo"], SamplingOptions(dtype=cfg["dtype"]))
        if auto_twin:
            warm_up(cfg["algo"], SamplingOptions(dtype="float64"))
    log(f"curve: kernels cached ({time.perf_counter() - t0:.1f}s); points {points}")
    results: dict[str, Any] = {}

    def one(cfg: dict[str, Any]) -> None:
        cfg = {**cfg, "seed": seed, "points": points}
        log(f"curve {cfg['name']}")
        results[cfg["name"]] = _curve_summary(cfg, _curve_subprocess(cfg))

    for cfg in configs:
        one(cfg)
    twin_of = None
    if auto_twin:
        ref = 100_000_000 if not quick else points[-1]
        scored = []
        for cfg in configs:
            r = results[cfg["name"]]
            p = _at_or_before(r.get("points", []), ref)
            if cfg["dtype"] == "float32" and p is not None:
                scored.append((p["mbb"], cfg))
        if scored:
            best = min(scored, key=lambda x: x[0])[1]
            twin_of = best["name"]
            twin = {**best, "dtype": "float64", "name": _twin_name(twin_of)}
            one(twin)
    out: dict[str, Any] = {
        "game": CURVE_GAME[0],
        "betting": CURVE_GAME[1],
        "buckets": "lossless: the hand indexer's suit-isomorphism classes, dealt from the deck",
        "seed": seed,
        "threads": 1,
        "points_iterations": points,
        **CURVE_TARGETS,
        **CURVE_OLD,
        "rss_note": "peak_rss_gib_training: ru_maxrss of the configuration's own process "
        "before its first evaluation (training only); peak_rss_gib_total: at its end "
        "(the listed problem built for exact evaluation added)",
        "configs": results,
        "float64_twin_of": twin_of,
    }
    if twin_of is not None:
        f64 = results[_twin_name(twin_of)]
        out["float32_cost"] = {
            "config": twin_of,
            "mbb_f32_over_f64_at": _ratio_at(results[twin_of], f64),
            # wall clock, and per CPU second (the former also moves with the load of
            # a shared machine)
            "iterations_per_s_f32_over_f64": _speed_ratio(results[twin_of], f64, "iterations_per_s"),
            "iterations_per_cpu_s_f32_over_f64": _speed_ratio(
                results[twin_of], f64, "iterations_per_cpu_s"
            ),
            "table_bytes_f32_over_f64": _speed_ratio(results[twin_of], f64, "table_bytes"),
        }
    pairs = [
        (a, b)
        for a in results
        for b in results
        if parse_curve_spec(b) == {**parse_curve_spec(a), "name": b, "floor": True}
        and not parse_curve_spec(a)["floor"]
    ]
    out["floor_effect"] = {
        f"{b} over {a}": {"mbb_at": _ratio_at(results[b], results[a])} for a, b in pairs
    }
    ranked = [
        (r["mbb_at"]["100M"], name)
        for name, r in results.items()
        if r.get("mbb_at", {}).get("100M") is not None
    ]
    out["best_at_100M"] = min(ranked)[1] if ranked else None
    out["wall_s"] = round(time.perf_counter() - start, 1)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--quick", action="store_true", help="short runs; finishes within a few minutes"
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--games", nargs="+", choices=list(GAMES), default=list(GAMES), help="games to run"
    )
    ap.add_argument("--no-openspiel", action="store_true", help="do not run OpenSpiel")
    curve = ap.add_mutually_exclusive_group()
    curve.add_argument(
        "--no-curve", action="store_true", help="leave out short20_lossless_curve"
    )
    curve.add_argument(
        "--curve-only",
        action="store_true",
        help="run short20_lossless_curve only (one thread throughout)",
    )
    ap.add_argument(
        "--curve-configs",
        nargs="+",
        metavar="SPEC",
        help="curve configurations instead of the default ones, e.g. tcfr,f32,linear "
        "tcfr,f32,targeting=game1 (ALGO[,f32|f64][,floor][,linear][,targeting=NAME])",
    )
    ap.add_argument(
        "--curve-points",
        nargs="+",
        type=float,
        metavar="M",
        help="curve evaluation points in millions of iterations (default 20 50 100 200)",
    )
    args = ap.parse_args(argv)
    for spec in args.curve_configs or ():
        parse_curve_spec(spec)  # fail before anything runs
    start = time.perf_counter()
    load0 = os.getloadavg()
    ours: dict[str, Any] = {}
    theirs = None
    spin0 = None
    compile_s = 0.0
    if not args.curve_only:
        spin0 = nogil_loop_speedup()
        t0 = time.perf_counter()
        for algo in ALGOS:
            warm_up(algo)
        for algo in SAMPLED:
            warm_up(algo, SamplingOptions(dtype="float32"))
        compile_s = time.perf_counter() - t0
        log(f"kernels ready in {compile_s:.1f}s")
        ours = run_ours(args.quick, args.seed, args.games)
        theirs = None if args.no_openspiel else run_openspiel(args.quick, args.seed)
    curve_res = (
        None
        if args.no_curve
        else run_curve(args.quick, args.seed, args.curve_configs, args.curve_points)
    )
    doc: dict[str, Any] = {
        "quick": args.quick,
        "seed": args.seed,
        **ours,
        "openspiel": theirs,
        "ratios_vs_openspiel": ratios(ours["leduc"], theirs)
        if theirs and "leduc" in ours
        else None,
        "short20_lossless_curve": curve_res,
        "machine": {
            "cpu": _cpu(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "numba": numba.__version__,
            "numpy": np.__version__,
            "loadavg_before": load0,
            "loadavg_after": os.getloadavg(),
            # before, after (not measured with --curve-only: it runs two threads)
            "nogil_loop_speedup_2t": None
            if args.curve_only
            else [spin0, nogil_loop_speedup()],
            "warm_up_s": round(compile_s, 2),
            "total_s": round(time.perf_counter() - start, 1),
        },
    }
    if "leduc" in doc:
        doc["leduc"]["cfr+"].setdefault("seconds_to_1e-4", None)
    if "short20" in doc and not args.curve_only:
        for algo in ("es", "tcfr"):
            doc["short20"][algo].setdefault("nodes_per_s_2t", None)
    print(json.dumps(doc))
    return 0


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


if __name__ == "__main__":
    sys.exit(main())
