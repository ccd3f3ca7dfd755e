"""The sampled solvers' options side by side: discounting (Linear CFR, Discounted CFR, with
and without a horizon; Brown & Sandholm 2019) and pruning (MCCFR-P, Pluribus), against
plain external sampling, and Targeted CFR's best setting.

1. ``leduc`` (``leduc.limit.2p`` and ``leduc.nolimit.2p --betting 0.5p,1p,a``): each
   method at equal iterations (``--leduc-iterations``, default 200,000), seeds 1 to 3,
   exact exploitability (mbb/g) and walk nodes per deal; ``ratio_to_es`` is the
   method's mean over plain external sampling's (below 1: better). Seconds.
2. ``short20`` (``holdem.nolimit.2p.short20``, lossless suit-class buckets, ``1p,cap1``,
   dealt from the deck, float32 tables): the exact exploitability of each method's
   average strategy after ``--points`` seconds of one thread's CPU time (default 15, 30,
   60, 120, 240 and 480), seeds ``--seeds`` (default 1 2 3). Two runs at a time, one per
   core, each a process of its own: every round pairs a method with plain external
   sampling on the same seed, so both share the machine's noise (``es`` figures are the
   mean over its rounds). Each point records the run's CPU seconds (training only: the
   evaluation is not counted), wall seconds and iterations. Per method and point:
   ``mbb_mean`` and ``mbb_spread`` (min and max over the seeds), ``ratio_to_es`` (the
   paired mean of method / es), ``iterations_per_cpu_s``, ``nodes_per_deal``.

3. ``unaveraged``: what a strategy should play where training never updated the average
   (Targeted CFR updates it on full iterations only). On 20-card hold'em (lossless,
   ``1p,cap1``, seed 1), Targeted CFR with the default ``mod40`` targeting and with
   ``game1``, and external sampling, each after ``--unaveraged-iterations`` (default 5M,
   20M and 80M): the share of unaveraged rows per street and the exact exploitability
   of the average strategy with such rows uniform and playing the current strategy
   (``current_over_uniform`` below 1: the current strategy is better).

Methods (``--methods``, default all): ``es``; ``es_linear`` (Linear CFR's discount after
every ``--every`` iterations, default 1,000,000); ``es_linear_q`` (Linear CFR's regret
discount, DCFR's quadratic average: alpha = beta = 1, gamma = 2, same batches);
``es_dcfr`` (DCFR 3/2, 0, 2, same batches); ``es_linear_h`` and ``es_dcfr_h`` (the same up to iteration ``--dcfr-until``,
default 30,000,000, about a minute of one thread here, then none: Pluribus's schedule); ``es_prune`` (MCCFR-P, threshold
``--prune-threshold`` chips, 95% of iterations after ``--prune-after``); ``tcfr``
(``--targeting game1``, the best Targeted CFR setting measured, README); ``tcfr_dcfr``
(the same with DCFR's discount).

Prints one JSON object as its last line (also written to ``--out``, with part 2's curves
beside it as a PNG where matplotlib is installed). A full run of part 2
takes about (methods - 1) x seeds x (the longest point + 40 s of evaluation); ``--quick``
runs 10 and 20 s points, seed 1, in about 3 minutes.

Usage: ``python bench/sampling_methods.py [--quick] [--parts leduc short20] [--methods
...] [--seeds 1 2 3] [--points 15 30 ...] [--out FILE]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._methods import METHODS, Schedule, check_method, method  # noqa: E402

GAME = "holdem.nolimit.2p.short20"
BETTING = "1p,cap1"
#: Iterations per ``iterate`` call of a worker (about 0.2 s: the points are met within that).
STEP = 100_000


def log(msg: str) -> None:
    print(f"[methods] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------- part 1: Leduc


def leduc(iterations: int, methods: list[str], every: int, threshold: float) -> dict[str, Any]:
    import numpy as np

    from solver.evaluation.best_response import exploitability
    from solver.problem import make_problem
    from solver.strategy import Strategy
    from solver.training.algorithms import make_training_solver
    from solver.training.sampled import SamplingOptions

    out: dict[str, Any] = {"iterations": iterations, "seeds": [1, 2, 3], "discount_every": every,
                           "prune_threshold": threshold, "games": {}}  # fmt: skip
    for game, betting in (("leduc.limit.2p", None), ("leduc.nolimit.2p", "0.5p,1p,a")):
        problem = make_problem(game, betting)
        rows: dict[str, Any] = {}
        t0 = time.perf_counter()
        for name in methods:
            algo, opts, sampling = method(name, "game1", Schedule(every, iterations // 2, threshold, 0))
            if algo == "tcfr":
                opts = {}  # Leduc's default targeting (game1 names the 20-card game's)
            mbb, nodes = [], []
            for seed in (1, 2, 3):
                s = make_training_solver(problem, algo, SamplingOptions(seed=seed, **sampling), **opts)
                s.iterate(iterations)
                res = exploitability(None, Strategy(problem, s.average_policy()))
                mbb.append(res.mbb_per_game)
                nodes.append(s.nodes / iterations)
            rows[name] = {"mbb": [round(x, 2) for x in mbb], "mbb_mean": round(float(np.mean(mbb)), 2),
                          "nodes_per_deal": round(float(np.mean(nodes)), 2)}  # fmt: skip
        base = rows.get("es", {}).get("mbb_mean")
        for row in rows.values():
            row["ratio_to_es"] = round(row["mbb_mean"] / base, 3) if base else None
        out["games"][game + (f" --betting {betting}" if betting else "")] = rows
        log(f"leduc {game}: {time.perf_counter() - t0:.1f} s")
    return out


# ---------------------------------------------------------------------------- part 2: short20


def worker(cfg: dict[str, Any]) -> dict[str, Any]:
    """One method on one seed, trained to each CPU-time point and evaluated there."""
    from solver.evaluation.best_response import exploitability
    from solver.problem import make_problem
    from solver.strategy import Strategy
    from solver.training.algorithms import make_training_solver
    from solver.training.dealt import make_dealt_problem
    from solver.training.sampled import SamplingOptions

    sched = Schedule(cfg["every"], cfg["until"] or 0, cfg["threshold"], cfg["after"])
    algo, opts, sampling = method(cfg["method"], "game1", sched)
    problem = make_dealt_problem(GAME, BETTING)
    solver = make_training_solver(problem, algo, SamplingOptions(seed=cfg["seed"], dtype="float32", **sampling), **opts)
    solver.iterate(1)  # loads the kernels from the cache
    listed = make_problem(GAME, BETTING)
    cpu = wall = 0.0
    points = []
    for target in cfg["points"]:
        while cpu < target:
            c0, w0 = time.process_time(), time.perf_counter()
            solver.iterate(STEP)
            cpu += time.process_time() - c0
            wall += time.perf_counter() - w0
        res = exploitability(None, Strategy(listed, solver.average_policy(), solver.iterations, algo))
        points.append({"cpu_s": round(cpu, 2), "wall_s": round(wall, 2), "iterations": int(solver.iterations),
                       "nodes_per_deal": round(solver.nodes / solver.iterations, 2),
                       "mbb": round(res.mbb_per_game, 1)})  # fmt: skip
        log(f"{cfg['method']} seed {cfg['seed']}: cpu {cpu:6.1f} s {solver.iterations:>12,} it {res.mbb_per_game:8.1f} mbb/g")
    return {"method": cfg["method"], "seed": cfg["seed"], "options": solver.options(), "points": points}


def _spawn(cfg: dict[str, Any]) -> subprocess.Popen[str]:
    env = dict(os.environ, NUMBA_NUM_THREADS="1")
    return subprocess.Popen([sys.executable, __file__, "--worker", json.dumps(cfg)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, text=True)  # fmt: skip


def _result(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, _ = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"a worker failed ({proc.returncode})")
    return json.loads(out.strip().splitlines()[-1])


def short20(methods: list[str], seeds: list[int], points: list[float], every: int, until: int,
            threshold: float, after: int) -> dict[str, Any]:  # fmt: skip
    import numpy as np

    # warm the kernels' cache once, outside every timed run
    for name in methods:
        warm = {"method": name, "seed": 0, "points": [0.01], "every": every, "until": until,
                "threshold": threshold, "after": after}  # fmt: skip
        _result(_spawn(warm))
    runs: dict[str, list[dict[str, Any]]] = {m: [] for m in methods}
    pairs: dict[str, list[dict[str, Any]]] = {m: [] for m in methods if m != "es"}
    t0 = time.perf_counter()
    for seed in seeds:
        for name in methods:
            if name == "es" and len(methods) > 1:
                continue
            base = {"seed": seed, "points": points, "every": every, "threshold": threshold, "after": after}
            mine = _spawn({**base, "method": name, "until": until if name.endswith("_h") else None})
            twin = _spawn({**base, "method": "es", "until": None}) if name != "es" else None
            res = _result(mine)
            runs[name].append(res)
            if twin is not None:
                es = _result(twin)
                runs["es"].append(es)
                pairs[name].append(es)
            log(f"round {name} seed {seed} done ({time.perf_counter() - t0:.0f} s)")
    table: dict[str, Any] = {}
    for name, rs in runs.items():
        if not rs:
            continue
        row = []
        for i, target in enumerate(points):
            mbb = [r["points"][i]["mbb"] for r in rs]
            entry = {
                "cpu_s": target,
                "mbb_mean": round(float(np.mean(mbb)), 1),
                "mbb_spread": [min(mbb), max(mbb)],
                "iterations_mean": round(float(np.mean([r["points"][i]["iterations"] for r in rs]))),
                "iterations_per_cpu_s": round(float(np.mean([r["points"][i]["iterations"] / r["points"][i]["cpu_s"] for r in rs]))),
                "nodes_per_deal": round(float(np.mean([r["points"][i]["nodes_per_deal"] for r in rs])), 2),
            }
            if name in pairs and pairs[name]:
                entry["ratio_to_es"] = round(float(np.mean([m["points"][i]["mbb"] / e["points"][i]["mbb"]
                                                            for m, e in zip(rs, pairs[name])])), 3)  # fmt: skip
            row.append(entry)
        table[name] = row
    return {"game": GAME, "betting": BETTING, "buckets": "lossless suit classes, dealt", "dtype": "float32",
            "seeds": seeds, "points_cpu_s": points, "discount_every": every, "dcfr_horizon_iterations": until,
            "prune_threshold": threshold, "prune_after": after, "methods": table, "runs": runs,
            "seconds": round(time.perf_counter() - t0, 1)}  # fmt: skip


def unaveraged(checkpoints: list[int]) -> dict[str, Any]:
    from solver.evaluation.best_response import exploitability
    from solver.problem import make_problem
    from solver.strategy import Strategy
    from solver.training.algorithms import make_training_solver
    from solver.training.dealt import make_dealt_problem
    from solver.training.sampled import SamplingOptions

    problem = make_dealt_problem(GAME, BETTING)
    listed = make_problem(GAME, BETTING)
    out: dict[str, Any] = {"game": GAME, "betting": BETTING, "seed": 1, "runs": {}}
    for name, algo, opts in (("tcfr_mod40", "tcfr", {"targeting": "mod40"}), ("tcfr_game1", "tcfr", {"targeting": "game1"}),
                             ("es", "es", {})):  # fmt: skip
        solver = make_training_solver(problem, algo, SamplingOptions(seed=1, dtype="float32"), **opts)
        rows = []
        for target in checkpoints:
            solver.iterate(target - solver.iterations)
            counts = solver.unaveraged_rows()
            entry: dict[str, Any] = {
                "iterations": target,
                "unaveraged_share": [round(u / r, 4) for u, r in zip(counts["unaveraged"], counts["rows"])],
                "untouched_share": [round(u / r, 4) for u, r in zip(counts["untouched"], counts["rows"])],
            }
            for fallback in ("uniform", "current"):
                res = exploitability(None, Strategy(listed, solver.average_policy(fallback)))
                entry[f"mbb_{fallback}"] = round(res.mbb_per_game, 1)
            entry["current_over_uniform"] = round(entry["mbb_current"] / entry["mbb_uniform"], 3)
            rows.append(entry)
            log(f"unaveraged {name} {target:,}: {entry}")
        out["runs"][name] = rows
    return out


def write_png(result: dict[str, Any], path: Path) -> str | None:
    """Part 2's curves (mean exploitability against CPU seconds, the seeds' spread as a
    band) at ``path``; None, with a line on stderr, without matplotlib or part 2."""
    part = result.get("short20")
    if not part:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib is not installed: no PNG (pip install matplotlib, or the plot extra)")
        return None
    fig, ax = plt.subplots(figsize=(7.5, 5))
    for name, rows in part["methods"].items():
        x = [r["cpu_s"] for r in rows]
        ax.plot(x, [r["mbb_mean"] for r in rows], "o-", label=name, lw=2.2 if name == "es" else 1.4)
        ax.fill_between(x, [r["mbb_spread"][0] for r in rows], [r["mbb_spread"][1] for r in rows], alpha=0.15)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("CPU seconds of training (one thread)")
    ax.set_ylabel("exploitability (mbb/g), mean of seeds")
    ax.set_title(f"{part['game']} {part['betting']}, lossless; seeds {part['seeds']}", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return str(path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--parts", nargs="+", choices=("leduc", "short20", "unaveraged"),
                    default=["leduc", "short20", "unaveraged"])  # fmt: skip
    ap.add_argument("--unaveraged-iterations", nargs="+", type=int, default=[5_000_000, 20_000_000, 80_000_000])
    ap.add_argument("--methods", nargs="+", type=check_method, default=list(METHODS),
                    help=f"of {', '.join(METHODS)}, or es_dcfr:A,B,G (alpha, beta, gamma)")  # fmt: skip
    ap.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    ap.add_argument("--points", nargs="+", type=float, default=[15, 30, 60, 120, 240, 480])
    ap.add_argument("--every", type=int, default=1_000_000, help="short20: iterations per discount batch")
    ap.add_argument("--dcfr-until", type=int, default=30_000_000,
                    help="es_linear_h, es_dcfr_h: last discounted iteration")  # fmt: skip
    ap.add_argument("--prune-threshold", type=float, default=-2_000_000.0, help="short20: MCCFR-P threshold, chips")
    ap.add_argument("--prune-after", type=int, default=5_000_000, help="short20: iterations before pruning")
    ap.add_argument("--leduc-iterations", type=int, default=200_000)
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "pokerbot-bench" / "sampling_methods.json")
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return 0
    if args.quick:
        args.seeds, args.points = [1], [10.0, 20.0]
    if "es" not in args.methods:
        args.methods = ["es", *args.methods]
    result: dict[str, Any] = {"quick": args.quick, "cpu_count": os.cpu_count()}
    if "leduc" in args.parts:
        result["leduc"] = leduc(args.leduc_iterations, args.methods, 10_000, -5000.0)
    if "short20" in args.parts:
        result["short20"] = short20(args.methods, args.seeds, args.points, args.every, args.dcfr_until,
                                    args.prune_threshold, args.prune_after)  # fmt: skip
    if "unaveraged" in args.parts:
        result["unaveraged"] = unaveraged([1_000_000, 4_000_000] if args.quick else args.unaveraged_iterations)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    result["png"] = write_png(result, args.out.with_suffix(".png"))
    tmp = args.out.with_name(args.out.name + ".tmp")
    tmp.write_text(json.dumps(result, indent=1))
    os.replace(tmp, args.out)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
