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

Usage: ``python bench/solvers.py [--quick] [--seed S] [--games leduc short20]
[--no-openspiel]``. Progress goes to stderr; the
last line of stdout is one JSON object. The machine may be shared: ``machine`` records
the load average before and after.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numba
import numpy as np

from solver.algorithms import make_training_solver, warm_up
from solver.best_response import exploitability
from solver.problem import Problem, make_problem
from solver.training import train

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


def mem_available() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


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
                if big and (quick or need > mem_available() // 2):
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
                solver = make_training_solver(problem, algo, seed=seed, dtype=dtype)
                prefault = touch(solver)
                if big and quick and algo != "tcfr":
                    res = timeline(solver, times, None)  # one best response costs ~10 s here
                    res["exploitability_note"] = "evaluated for tcfr only in --quick"
                else:
                    res = timeline(solver, times, evaluate)
                res["node_unit"] = "tree_nodes"
                res["prefault_s"] = prefault
                if big and algo in ("es", "tcfr"):
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
    two = make_training_solver(problem, algo, seed=seed + 1, dtype=dtype, threads=2)
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--quick", action="store_true", help="short runs; finishes within about a minute"
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--games", nargs="+", choices=list(GAMES), default=list(GAMES), help="games to run"
    )
    ap.add_argument("--no-openspiel", action="store_true", help="do not run OpenSpiel")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    load0 = os.getloadavg()
    spin0 = nogil_loop_speedup()
    t0 = time.perf_counter()
    for algo in ALGOS:
        warm_up(algo)
    for algo in SAMPLED:
        warm_up(algo, "float32")
    compile_s = time.perf_counter() - t0
    log(f"kernels ready in {compile_s:.1f}s")
    ours = run_ours(args.quick, args.seed, args.games)
    theirs = None if args.no_openspiel else run_openspiel(args.quick, args.seed)
    doc: dict[str, Any] = {
        "quick": args.quick,
        "seed": args.seed,
        **ours,
        "openspiel": theirs,
        "ratios_vs_openspiel": ratios(ours["leduc"], theirs)
        if theirs and "leduc" in ours
        else None,
        "machine": {
            "cpu": _cpu(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "numba": numba.__version__,
            "numpy": np.__version__,
            "loadavg_before": load0,
            "loadavg_after": os.getloadavg(),
            "nogil_loop_speedup_2t": [spin0, nogil_loop_speedup()],  # before, after
            "warm_up_s": round(compile_s, 2),
            "total_s": round(time.perf_counter() - start, 1),
        },
    }
    if "leduc" in doc:
        doc["leduc"]["cfr+"].setdefault("seconds_to_1e-4", None)
    if "short20" in doc:
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
