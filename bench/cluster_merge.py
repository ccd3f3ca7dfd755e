"""How a cluster round merges its workers' deltas: their sum against their mean.

Two workers of :mod:`solver.training.cluster` (its ``_Worker``, run here in one process:
the same shares, keyed streams, listed-deal places and float32 deltas as on Ray, without
Ray) train external sampling from the driver's tables each round; the driver adds either
the sum of their deltas (``scale`` 1) or their mean (``scale`` 1/2, what
``pokerbot train --cluster`` does). Beside them, one machine (one thread) at the same
iterations. Exact exploitability in mbb/g.

* ``leduc``: ``leduc.limit.2p``, 400,000 iterations, rounds of 100, 1,000 and 10,000
  iterations a worker, seed 1; one machine, seeds 1 to 3 (about a minute).
* ``short20``: ``holdem.nolimit.2p.short20``, lossless, ``1p,cap1``, float32, 10 M
  iterations, rounds of 250,000 a worker, seed 1; one machine, seeds 1 and 2 (about 4
  minutes on the 2-vCPU VM).
* ``encode``: the speed of a worker's delta encoding
  (:func:`solver.training.cluster_deltas.encode_delta`, one branchless pass) against the
  two passes it replaced (count, then gather; kept here as the reference), on a float32
  table of the shipped blueprint's 33,008,731 entries with one entry in seven changed:
  the best of five runs each, their ratio, and that both give the same delta (seconds).
* ``leduc_seeds``: what staleness costs at equal iterations, past one seed's noise:
  Leduc, 60,000 iterations, the mean only, rounds of 5, 10, 25 and 150 iterations a
  worker, seeds 1 to 12 each and one machine's seeds 1 to 12: per setting the seeds'
  mean, its standard error, their least and greatest (about 2 minutes).

Prints one JSON object as its last line. Usage: ``python bench/cluster_merge.py [--parts
leduc short20 leduc_seeds encode]``
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from solver.evaluation.best_response import exploitability  # noqa: E402
from solver.problem import make_problem  # noqa: E402
from solver.strategy import Strategy  # noqa: E402
from solver.training import cluster as C  # noqa: E402
from solver.training import cluster_deltas as D  # noqa: E402
from solver.training.algorithms import make_training_solver, warm_up  # noqa: E402
from solver.training.dealt import make_training_problem  # noqa: E402
from solver.training.sampled import SamplingOptions  # noqa: E402

WORKERS = 2
PARTS = {
    "leduc": {"game": "leduc.limit.2p", "betting": None, "dtype": "float64", "total": 400_000,
              "rounds": [100, 1_000, 10_000], "seeds": [1, 2, 3]},
    "short20": {"game": "holdem.nolimit.2p.short20", "betting": "1p,cap1", "dtype": "float32",
                "total": 10_000_000, "rounds": [250_000], "seeds": [1, 2]},
    "encode": {"entries": 33_008_731, "changed_one_in": 7},
    "leduc_seeds": {"game": "leduc.limit.2p", "betting": None, "dtype": "float64", "total": 60_000,
                    "rounds": [5, 10, 25, 150], "seeds": list(range(1, 13))},
}


def _spread(values: list[float]) -> dict[str, Any]:
    """The seeds' figures, their mean, its standard error, least and greatest."""
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    return {"mbb": [round(v, 2) for v in values], "mean": round(mean, 2),
            "stderr": round((var / n) ** 0.5, 2), "min": round(min(values), 2), "max": round(max(values), 2)}  # fmt: skip


def _expl(part: dict[str, Any], solver: Any) -> float:
    """Real-game exploitability (mbb/g) of the solver's average strategy, on the listed game."""
    listed = make_problem(part["game"], part["betting"])
    s = solver.average_strategy("current")
    return exploitability(None, Strategy(listed, s.policy, s.iterations, s.algorithm)).mbb_per_game


def merged(part: dict[str, Any], per: int, scale: float, seed: int = 1) -> float:
    """Two workers, rounds of ``per`` iterations each, deltas times ``scale``."""
    problem = make_training_problem(part["game"], part["betting"], "es")
    sampling = SamplingOptions(seed=seed, dtype=part["dtype"])
    driver = make_training_solver(problem, "es", sampling)
    spec = C.worker_spec(problem, "es", {}, sampling, 1)
    workers = [C._Worker(spec, k) for k in range(WORKERS)]
    for w in workers:
        assert w.setup()["ok"]
    for start in range(0, part["total"], WORKERS * per):
        regrets, avg = driver.regrets.copy(), driver.avg_sums.copy()
        for w, (first, count) in zip(workers, C.split_shares(start, WORKERS * per, WORKERS)):
            dr, da = w.run(regrets, avg, first, count, scale)["deltas"]
            D.decode_delta(driver.regrets, dr)
            D.decode_delta(driver.avg_sums, da)
        driver.iterations += WORKERS * per
    return _expl(part, driver)


def one_machine(part: dict[str, Any], seed: int) -> float:
    problem = make_training_problem(part["game"], part["betting"], "es")
    solver = make_training_solver(problem, "es", SamplingOptions(seed=seed, dtype=part["dtype"]))
    solver.iterate(part["total"])
    return _expl(part, solver)


@njit(cache=True)
def _count_changed(new: np.ndarray, old: np.ndarray, scale: Any) -> int:
    k = 0
    for i in range(new.size):
        if np.float32((new[i] - old[i]) * scale) != 0:
            k += 1
    return k


@njit(cache=True)
def _gather_changed(new: np.ndarray, old: np.ndarray, scale: Any, index: np.ndarray, value: np.ndarray) -> None:
    k = 0
    for i in range(new.size):
        v = np.float32((new[i] - old[i]) * scale)
        if v != 0:
            index[k] = i
            value[k] = v
            k += 1


def two_pass_sparse(new: np.ndarray, old: np.ndarray, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """The encoder ``encode_delta`` replaced, for a sparse delta: count, then gather."""
    s = new.dtype.type(scale)
    n = _count_changed(new, old, s)
    index, value = np.empty(n, np.int32), np.empty(n, np.float32)
    _gather_changed(new, old, s, index, value)
    return index, value


def encode_speed(part: dict[str, Any]) -> dict[str, Any]:
    """Both encoders on the same tables in this process (see the docstring)."""
    rng = np.random.default_rng(0)
    old = rng.normal(size=part["entries"]).astype(np.float32)
    new = old.copy()
    new[rng.choice(old.size, old.size // part["changed_one_in"], replace=False)] += 1.0
    two_pass_sparse(new[:100], old[:100], 0.5)
    D.encode_delta(new[:100], old[:100], 0.5)
    times: dict[str, list[float]] = {"two_pass": [], "one_pass": []}
    for _ in range(5):
        t = time.perf_counter()
        ref = two_pass_sparse(new, old, 0.5)
        times["two_pass"].append(time.perf_counter() - t)
        t = time.perf_counter()
        kind, index, value = D.encode_delta(new, old, 0.5)
        times["one_pass"].append(time.perf_counter() - t)
    same = kind == "sparse" and np.array_equal(index, ref[0]) and np.array_equal(value, ref[1])
    best = {k: min(v) for k, v in times.items()}
    return {"entries": part["entries"], "changed": int(index.size),
            "two_pass_s": round(best["two_pass"], 4), "one_pass_s": round(best["one_pass"], 4),
            "ratio_two_over_one": round(best["two_pass"] / best["one_pass"], 2), "same_delta": bool(same)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parts", nargs="+", choices=sorted(PARTS), default=["leduc", "short20"])
    args = ap.parse_args(argv)
    warm_up("es", SamplingOptions(dtype="float32"))
    warm_up("es", SamplingOptions(dtype="float64"))
    doc: dict[str, Any] = {"workers": WORKERS, "algorithm": "es"}
    for name in args.parts:
        part = PARTS[name]
        t0 = time.perf_counter()
        rows = []
        if name == "encode":
            doc[name] = encode_speed(part)
            print(json.dumps({name: doc[name]}), file=sys.stderr, flush=True)
            continue
        if name == "leduc_seeds":
            for per in part["rounds"]:
                values = [merged(part, per, 1.0 / WORKERS, seed=s) for s in part["seeds"]]
                rows.append({"per_worker_round": per, "mean_merge": _spread(values)})
            single = _spread([one_machine(part, s) for s in part["seeds"]])
            doc[name] = {"game": part["game"], "iterations": part["total"], "rounds": rows,
                         "one_machine": single, "seconds": round(time.perf_counter() - t0, 1)}  # fmt: skip
            print(json.dumps({name: doc[name]}), file=sys.stderr, flush=True)
            continue
        for per in part["rounds"]:
            rows.append({
                "per_worker_round": per,
                "sum": round(merged(part, per, 1.0), 2),
                "mean": round(merged(part, per, 1.0 / WORKERS), 2),
            })
        single = [round(one_machine(part, s), 2) for s in part["seeds"]]
        doc[name] = {
            "game": part["game"], "betting": part["betting"], "iterations": part["total"],
            "rounds": rows, "one_machine": {"seeds": part["seeds"], "mbb": single},
            "seconds": round(time.perf_counter() - t0, 1),
        }
        print(json.dumps({name: doc[name]}), file=sys.stderr, flush=True)
    print(json.dumps(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
