"""One configuration of ``bench/solvers.py``'s ``short20_lossless_curve``, in a process of
its own (so that its peak resident memory is that configuration's alone).

``python bench/_curve.py '<json>'`` with the keys ``algo``, ``dtype``, ``floor``,
``seed``, ``points`` (total iterations at which to evaluate, ascending) and optionally
``targeting`` and ``averaging``. One thread (the caller sets ``NUMBA_NUM_THREADS=1``).

* ``setup_s``: everything before the first iteration, timed in this process: importing
  the solver (numpy, numba and the project's modules), building the dealt problem
  (:func:`solver.training.dealt.make_dealt_problem`: lossless suit-isomorphic buckets, no chance
  layer), constructing the solver (its tables written once), and the first iteration,
  which loads the kernels from numba's cache (the caller warms the cache first; the
  interpreter's own start-up is not included);
* at each point: total iterations, ``train_s`` (wall seconds inside ``iterate``,
  cumulative; evaluation excluded), ``train_cpu_s`` (CPU seconds of this process over
  the same calls: on a shared machine wall > CPU shows time taken by other processes),
  ``mbb``: the average strategy's exact exploitability in milli-big-blinds per game
  (real-game best response on the listed problem, built here when first needed; for
  lossless buckets the abstract and real figures are equal);
* ``peak_rss_bytes_training``: ``ru_maxrss`` just before the first evaluation (imports,
  problem, solver and training: what a training run holds), and
  ``peak_rss_bytes_total`` at the end (the listed problem and the best-response walks
  added).

It drives the solver directly, not :func:`solver.training.run.run_training`: the set-up
is timed part by part, and the evaluations are this worker's own, at exact iteration
counts. Progress goes to stderr; the last line of stdout is one JSON object.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

T_START = time.perf_counter()
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from poker._sysinfo import GIB, peak_memory_gib  # noqa: E402

GAME = "holdem.nolimit.2p.short20"
BETTING = "1p,cap1"
#: Iterations per ``iterate`` call between progress lines.
BATCH = 5_000_000


def _rss() -> int:
    """Peak resident bytes of this process so far."""
    return round(peak_memory_gib() * GIB)


def _log(msg: str) -> None:
    print(f"[curve] {msg}", file=sys.stderr, flush=True)


def run(cfg: dict) -> dict:
    t0 = time.perf_counter()
    from solver.training.algorithms import make_training_solver
    from solver.training.dealt import make_dealt_problem
    from solver.training.sampled import SamplingOptions

    t_import = time.perf_counter() - t0
    t0 = time.perf_counter()
    problem = make_dealt_problem(GAME, BETTING)
    t_problem = time.perf_counter() - t0
    sampling = SamplingOptions(
        seed=cfg["seed"],
        threads=1,
        dtype=cfg["dtype"],
        averaging=cfg.get("averaging") or "uniform",
        floor=cfg["floor"],
    )
    options = {"targeting": cfg["targeting"]} if cfg.get("targeting") is not None else {}
    t0 = time.perf_counter()
    solver = make_training_solver(problem, cfg["algo"], sampling, **options)
    t_solver = time.perf_counter() - t0
    t0 = time.perf_counter()
    solver.iterate(1)
    t_first = time.perf_counter() - t0
    setup = t_import + t_problem + t_solver + t_first
    _log(
        f"{cfg['name']}: set-up {setup:.2f}s (imports {t_import:.2f}, problem {t_problem:.2f}, "
        f"solver {t_solver:.2f}, first iteration {t_first:.2f}); {problem.size:,} entries"
    )
    out: dict = {
        "setup_s": round(setup, 3),
        "setup_parts_s": {
            "imports": round(t_import, 3),
            "problem": round(t_problem, 3),
            "solver": round(t_solver, 3),
            "first_iteration": round(t_first, 3),
        },
        "table_entries": int(problem.size),
        "table_bytes": int(solver.regrets.nbytes + solver.avg_sums.nbytes),
        "options": solver.options(),
    }
    train_s = cpu_s = 0.0
    points = []
    listed = None
    for target in cfg["points"]:
        while solver.iterations < target:
            n = min(BATCH, target - solver.iterations)
            w0, c0 = time.perf_counter(), time.process_time()
            solver.iterate(n)
            train_s += time.perf_counter() - w0
            cpu_s += time.process_time() - c0
        if listed is None:
            out["peak_rss_bytes_training"] = _rss()
            from solver.evaluation.best_response import exploitability
            from solver.problem import make_problem
            from solver.strategy import Strategy

            t0 = time.perf_counter()
            listed = make_problem(GAME, BETTING)
            out["listed_problem_s"] = round(time.perf_counter() - t0, 3)
            assert listed.size == problem.size
        t0 = time.perf_counter()
        policy = solver.average_policy()
        res = exploitability(None, Strategy(listed, policy, solver.iterations, cfg["algo"]))
        del policy
        eval_s = time.perf_counter() - t0
        points.append(
            {
                "iterations": solver.iterations,
                "train_s": round(train_s, 2),
                "train_cpu_s": round(cpu_s, 2),
                "mbb": round(res.mbb_per_game, 1),
                "eval_s": round(eval_s, 2),
            }
        )
        _log(
            f"{cfg['name']}: {solver.iterations / 1e6:6.0f}M it  {train_s:7.1f}s "
            f"(cpu {cpu_s:7.1f}s)  {res.mbb_per_game:8.1f} mbb/g  (eval {eval_s:.1f}s)"
        )
    out["points"] = points
    out["iterations_per_s"] = round((solver.iterations - 1) / train_s) if train_s else None
    out["iterations_per_cpu_s"] = round((solver.iterations - 1) / cpu_s) if cpu_s else None
    out["peak_rss_bytes_total"] = _rss()
    return out


if __name__ == "__main__":
    print(json.dumps(run(json.loads(sys.argv[1]))))
