"""Deep CFR against tabular external sampling and Linear CFR, by nodes touched (Brown,
Lerer, Gross & Sandholm 2019, Figure 3's axes), and Deep CFR's exploitability as its
networks and memories grow (the paper's Figure 4 ablations).

Exploitability is exact: the strategy network is evaluated on every information set of
Leduc (lossless) and best-responded to by ``solver.evaluation.best_response``. Nodes
touched: for Deep CFR and external sampling the nodes their traversals visit; for Linear
CFR, a vector walk, node x hand visits (each walk visits each node once per board state
that reaches it, with every private hand). Deep CFR's SGD work is not in its node count;
its wall time is printed beside it.

Usage: ``python bench/deep_cfr.py [--quick] [--games leduc nl_leduc] [--iterations N]
[--seeds 1 2 3] [--parts curve sweep] [--png DIR] [--out FILE]``. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from solver.evaluation.best_response import exploitability  # noqa: E402
from solver.problem import make_problem  # noqa: E402
from solver.strategy import Strategy  # noqa: E402
from solver.training.algorithms import make_solver, make_training_solver, warm_up  # noqa: E402
from solver.training.deep_cfr import DeepCFROptions, DeepCFRSolver  # noqa: E402
from solver.training.sampled import SamplingOptions  # noqa: E402

GAMES = {"leduc": ("leduc.limit.2p", None), "nl_leduc": ("leduc.nolimit.2p", "0.5p,1p,2p,a")}
#: Deep CFR's settings for the curve (the sweep varies width and memory from these).
BASE = dict(traversals=1000, memory=1_000_000, hidden=64, layers=3, sgd_steps=400, batch=512, policy_steps=2000)


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _mbb(strategy: Strategy) -> float:
    return exploitability(None, strategy).mbb_per_game


def _vector_nodes(problem) -> int:
    """Node x hand visits of one vector CFR iteration (both players' walks)."""
    t, ch = problem.tree, problem.chance
    states = np.bincount(ch.board_street, minlength=t.n_streets)
    per_street = np.bincount(t.street, minlength=t.n_streets)
    return int(2 * (per_street * states).sum() * ch.n_hands)


def deep_curve(problem, iterations: int, seed: int, opts: dict[str, Any], every: int) -> dict[str, Any]:
    """Deep CFR: exploitability of the strategy network every ``every`` iterations."""
    s = DeepCFRSolver(problem, DeepCFROptions(**opts, seed=seed))
    points, solved = [], 0.0
    while s.iterations < iterations:
        t0 = time.perf_counter()
        s.iterate(min(every, iterations - s.iterations))
        solved += time.perf_counter() - t0
        mbb = _mbb(s.average_strategy())
        points.append([s.iterations, int(s.nodes), round(solved, 2), mbb])
        _log(f"deep seed {seed}: {points[-1]}")
    return {"points": points, "record": s.record()}


def tabular_curve(problem, algo: str, nodes: int, seed: int) -> list[list[float]]:
    """External sampling or Linear CFR to ``nodes`` nodes touched, evaluated at each doubling."""
    warm_up(algo)
    if algo == "es":
        solver = make_training_solver(problem, "es", SamplingOptions(seed=seed, dtype="float64"))
        per = None
    else:
        solver = make_solver(problem, algo)
        per = _vector_nodes(problem)
    touched, batch, mark, points, solved = 0, 1, 1e4, [], 0.0
    while touched < nodes:
        t0 = time.perf_counter()
        got = solver.iterate(batch)
        solved += time.perf_counter() - t0
        touched += per * batch if per is not None else int(got)
        if touched >= mark or touched >= nodes:
            points.append([int(solver.iterations), touched, round(solved, 2), _mbb(solver.average_strategy())])
            mark *= 2
        batch = max(1, batch * 2 if touched < mark / 2 else batch)
    return points


def _at_nodes(points: list, nodes: float, col: int = 1) -> float | None:
    """Exploitability at the last evaluation no later than ``nodes`` touched."""
    best = None
    for p in points:
        if p[col] <= nodes:
            best = p[3]
    return best


def curves(game: str, iterations: int, seeds: list[int], every: int) -> dict[str, Any]:
    name, betting = GAMES[game]
    problem = make_problem(name, betting)
    deep = {str(s): deep_curve(problem, iterations, s, BASE, every) for s in seeds}
    nodes = max(r["points"][-1][1] for r in deep.values())
    es = {str(s): tabular_curve(problem, "es", nodes, s) for s in seeds}
    lcfr = tabular_curve(problem, "lcfr", nodes, 0)
    _log(f"{game}: es {es[str(seeds[0])][-1]}, lcfr {lcfr[-1]}")
    final = {
        "deep": [r["points"][-1][3] for r in deep.values()],
        "es_at_deep_nodes": [_at_nodes(p, nodes) for p in es.values()],
        "lcfr_at_deep_nodes": _at_nodes(lcfr, nodes),
    }
    return {"game": name, "betting": betting, "nodes": nodes, "deep": deep, "es": es, "lcfr": lcfr, "final": final}


def sweep(game: str, iterations: int, seed: int) -> dict[str, Any]:
    """Final exploitability as the networks' width and the memories' capacity vary."""
    name, betting = GAMES[game]
    problem = make_problem(name, betting)
    out: dict[str, Any] = {"width": {}, "memory": {}}
    for width in (16, 32, 64, 128):
        r = deep_curve(problem, iterations, seed, {**BASE, "hidden": width}, iterations)
        out["width"][str(width)] = {"mbb": r["points"][-1][3], "weights": r["record"]["network_weights"],
                                    "seconds": r["points"][-1][2]}
    for memory in (1_000, 10_000, 100_000, 1_000_000):
        r = deep_curve(problem, iterations, seed, {**BASE, "memory": memory}, iterations)
        out["memory"][str(memory)] = {"mbb": r["points"][-1][3], "samples": r["record"]["advantage_samples"],
                                      "seconds": r["points"][-1][2]}
    return out


def _plot(result: dict[str, Any], folder: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    wrote = []
    for game, r in result["curves"].items():
        fig, ax = plt.subplots(figsize=(6, 4))
        for i, (seed, d) in enumerate(r["deep"].items()):
            p = np.array(d["points"])
            ax.plot(p[:, 1], p[:, 3], color="C0", label="Deep CFR" if i == 0 else None)
        for i, (seed, pts) in enumerate(r["es"].items()):
            p = np.array(pts)
            ax.plot(p[:, 1], p[:, 3], color="C1", label="external sampling" if i == 0 else None)
        p = np.array(r["lcfr"])
        ax.plot(p[:, 1], p[:, 3], color="C2", label="Linear CFR (node x hand)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("nodes touched")
        ax.set_ylabel("exploitability (mbb/g)")
        ax.set_title(f"{r['game']}: Deep CFR against tabular CFR")
        ax.legend()
        path = folder / f"deep_cfr_{game}.png"
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)
        wrote.append(str(path))
    return wrote


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="Leduc, 10 iterations, seed 1, no sweep")
    ap.add_argument("--games", nargs="+", choices=tuple(GAMES), default=["leduc"])
    ap.add_argument("--parts", nargs="+", choices=("curve", "sweep"), default=["curve", "sweep"])
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--sweep-iterations", type=int, default=40)
    ap.add_argument("--every", type=int, default=10)
    ap.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--png", type=Path, metavar="DIR")
    args = ap.parse_args()
    if args.quick:
        args.games, args.parts, args.iterations, args.every, args.seeds = ["leduc"], ["curve"], 10, 5, [1]
    t0 = time.perf_counter()
    result: dict[str, Any] = {"settings": {**BASE, "iterations": args.iterations, "seeds": args.seeds}}
    if "curve" in args.parts:
        result["curves"] = {g: curves(g, args.iterations, args.seeds, args.every) for g in args.games}
    if "sweep" in args.parts:
        result["sweep"] = {g: sweep(g, args.sweep_iterations, args.seeds[0]) for g in args.games}
    if args.png is not None and "curves" in result:
        result["png"] = _plot(result, args.png)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    text = json.dumps(result, indent=1)
    if args.out is not None:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
