"""What the papers the project rests on claim, measured here.

1. ``cfr_plus`` (Tammelin 2014): CFR+ needs an order of magnitude fewer iterations than
   CFR for the same exploitability. Vector CFR and CFR+ (and Linear CFR, Brown &
   Sandholm 2019, beside them) on Kuhn, Leduc and one-card poker with 13 and 52 cards
   (Kuhn's rules with a bigger deck; 52 cards are 13 ranks in 4 suits, equal ranks split); the iterations and seconds each needs to reach 1
   and 0.1 mbb/g (``null``: not within ``--cfr-seconds`` of solving), and the ratio CFR /
   CFR+ of the iterations (the claim is judged at 0.1 mbb/g; where CFR does not get there,
   the iterations it ran bound the ratio from below).
2. ``sampling``: the sampling papers' claims, on ``leduc.limit.2p``, ``leduc.nolimit.2p``
   with five bet sizes (``0.25p,0.5p,1p,2p,a``) and, with ``--games ... limit20``, a
   20-card limit hold'em (``short20``'s deck and stacks, limit betting, two raises a
   street; a table of 77 M entries): chance sampling (``cs``), public chance sampling (``pcs``), external
   (``es``), average strategy (``as``, the paper's parameters) and outcome sampling
   (``os``), and outcome sampling with probing (``os_probe``). Each runs ``--seconds``
   of one thread's solving per seed (``--seeds``), its average strategy's exact
   exploitability taken at doubling times (evaluation not counted); per method the mean
   and spread over seeds at each time, iterations per second, nodes per iteration
   (every node a walk visits, probes included; for ``pcs`` node x hand visits, every
   node of the public tree once per walk with a vector over every hand), and the
   iterations to reach the worst run's final exploitability in the game (every run gets
   there, so the family's order can be read; log-log interpolation between evaluations,
   which come at ``--first-eval`` seconds of solving, 0.02 by default, and then at every
   doubling). ``limit20``'s exact evaluation takes about 90 s on the 2-vCPU VM: it is not
   in the default games, and wants a later first evaluation.

The claims, each with ``reproduced`` true/false and the figures behind it:

* Gibson et al. 2012 (AAAI): outcome sampling with probing beats outcome sampling in
  time (``os_probe`` below ``os`` at the last time point, every game);
* Johanson et al. 2012: public chance sampling beats chance sampling in wall time on
  limit games (``pcs`` below ``cs`` at the last time point, limit games);
* Gibson et al. 2012 (NIPS): average strategy sampling beats external sampling on
  no-limit games with many bet sizes (``as`` below ``es``, no-limit Leduc);
* across the family (Lanctot et al. 2009; Gibson et al. 2012): iterations needed rise
  from chance to external to average strategy to outcome sampling while time per
  iteration falls (orders of ``iterations_to_target`` and of ``seconds_per_iteration``).

Prints one JSON object as its last line (also to ``--out``); with matplotlib,
exploitability against seconds per game in ``--png DIR``. ``--quick``: Kuhn and Leduc
only for part 1 (5 s a run), the two Leduc games for part 2 with 4 s a run and seed 1
(about 2 minutes).

Runs made apart (one seed each, side by side) are put together by ``--merge A.json
B.json ...``, which runs nothing.

Usage: ``python bench/seed_claims.py [--quick] [--parts cfr_plus sampling] [--games
leduc nl_leduc limit20] [--seeds 1 2 3] [--seconds S] [--cfr-seconds S] [--out FILE]
[--png DIR]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from poker.game import load_game, parse_game  # noqa: E402
from solver.evaluation.best_response import exploitability  # noqa: E402
from solver.problem import make_problem  # noqa: E402
from solver.strategy import Strategy  # noqa: E402
from solver.training.algorithms import make_solver, make_training_solver, warm_up  # noqa: E402
from solver.training.sampled import SamplingOptions  # noqa: E402

ONE_CARD = (
    "GAMEDEF\nlimit\nnumPlayers = 2\nnumRounds = 1\nblind = 1 1\nraiseSize = 1\n"
    "firstPlayer = 1\nmaxRaises = 1\nnumSuits = {suits}\nnumRanks = {ranks}\nnumHoleCards = 1\n"
    "numBoardCards = 0\nstack = 2 2\nEND GAMEDEF\n"
)
LIMIT20 = (
    "GAMEDEF\nlimit\nnumPlayers = 2\nnumRounds = 4\nblind = 2 1\nraiseSize = 2 2 4 4\n"
    "firstPlayer = 2 1 1 1\nmaxRaises = 2 2 2 2\nnumSuits = 4\nnumRanks = 5\n"
    "numHoleCards = 2\nnumBoardCards = 0 1 1 1\nstack = 162 162\nEND GAMEDEF\n"
)
#: Part 2's games: (game, betting, limit?).
GAMES = {
    "leduc": ("leduc.limit.2p", None, True),
    "nl_leduc": ("leduc.nolimit.2p", "0.25p,0.5p,1p,2p,a", False),
    "limit20": ("limit20", None, True),
}
#: Part 2's methods: (algorithm, its options).
METHODS: dict[str, tuple[str, dict[str, Any]]] = {
    "cs": ("cs", {}),
    "pcs": ("pcs", {}),
    "es": ("es", {}),
    "as": ("as", {}),
    "os": ("os", {}),
    "os_probe": ("os", {"probe": True}),
}
VECTOR = ("cs", "pcs")


def _game(name: str):
    if name.startswith("onecard"):  # 13 ranks at most: 52 cards are 4 suits (ties split)
        cards = int(name[len("onecard"):])
        suits = 1 if cards <= 13 else cards // 13
        return parse_game(ONE_CARD.format(suits=suits, ranks=cards // suits), name=name)
    if name == "limit20":
        return parse_game(LIMIT20, name="limit20")
    return load_game(name)


def _mbb(problem, policy: np.ndarray, iterations: int, algo: str) -> float:
    return exploitability(None, Strategy(problem, policy, iterations, algo)).mbb_per_game


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def cfr_plus(games: list[str], seconds: float) -> dict[str, Any]:
    """Part 1: iterations and seconds to 1 and 0.1 mbb/g for cfr, cfr+ and lcfr."""
    out: dict[str, Any] = {}
    for name in games:
        problem = make_problem(_game(name))
        row: dict[str, Any] = {}
        for algo in ("cfr", "cfr+", "lcfr"):
            warm_up(algo)
            solver = make_solver(problem, algo)
            solved = 0.0
            batch = 1
            reached: dict[str, Any] = {"1": None, "0.1": None}
            curve = []
            while solved < seconds and reached["0.1"] is None:
                t = time.perf_counter()
                solver.iterate(batch)
                solved += time.perf_counter() - t
                mbb = _mbb(problem, solver.average_policy(), solver.iterations, algo)
                curve.append([solver.iterations, round(solved, 4), mbb])
                for key, level in (("1", 1.0), ("0.1", 0.1)):
                    if reached[key] is None and mbb <= level:
                        reached[key] = {"iterations": solver.iterations, "seconds": round(solved, 4)}
                batch = max(1, int(solver.iterations * 0.25))  # about 25% more a step
            row[algo] = {"to_1_mbb": reached["1"], "to_0.1_mbb": reached["0.1"], "last": curve[-1]}
            _log(f"{name} {algo}: {row[algo]['to_1_mbb']} {row[algo]['to_0.1_mbb']} last {curve[-1]}")
        ratios = {}
        for key in ("to_1_mbb", "to_0.1_mbb"):
            a, b = row["cfr"][key], row["cfr+"][key]
            ratios[key] = None if a is None or b is None else round(a["iterations"] / b["iterations"], 1)
        row["cfr_over_cfr_plus_iterations"] = ratios
        out[name] = row
    return out


def _run(problem, method: str, seed: int, seconds: float, first_eval: float = 0.02) -> dict[str, Any]:
    """One method, one seed: exploitability at ``first_eval`` seconds of solving, then at
    every doubling, and at the end."""
    algo, options = METHODS[method]
    if method in VECTOR:
        solver = make_solver(problem, algo, seed=seed)
    else:
        solver = make_training_solver(problem, algo, SamplingOptions(seed=seed, dtype="float64"), **options)
    solved, batch, mark = 0.0, 16, first_eval
    points = []
    while solved < seconds:
        t = time.perf_counter()
        solver.iterate(batch)
        dt = time.perf_counter() - t
        solved += dt
        if dt < 0.05:
            batch *= 2
        if solved >= mark or solved >= seconds:
            mbb = _mbb(problem, solver.average_policy(), solver.iterations, algo)
            points.append([round(solved, 3), int(solver.iterations), mbb])
            mark *= 2
    if method == "pcs":  # each walk visits every node of the public tree once, with every hand
        nodes = 2 * len(problem.tree.kind) * problem.chance.n_hands
    else:
        nodes = solver.nodes / max(1, solver.iterations)
    return {"points": points, "iterations_per_s": solver.iterations / solved, "nodes_per_iteration": nodes}


def _at(points: list, seconds: float) -> float:
    """Exploitability at the last evaluation no later than ``seconds``."""
    best = points[0][2]
    for s, _, mbb in points:
        if s <= seconds + 1e-9:
            best = mbb
    return best


def _iterations_to(points: list, target: float) -> float | None:
    """Iterations at which the run's exploitability first reaches ``target``, by
    log-log interpolation between evaluations (None: never; the first evaluation's
    count if that one is already there)."""
    prev = None
    for _, it, mbb in points:
        if mbb <= target:
            if prev is None or prev[1] <= mbb:
                return float(it)
            (i0, m0), (i1, m1) = prev, (it, mbb)
            f = (np.log(m0) - np.log(target)) / (np.log(m0) - np.log(m1))
            return float(np.exp(np.log(i0) + f * (np.log(i1) - np.log(i0))))
        prev = (it, mbb)
    return None


def sampling(
    games: list[str], methods: list[str], seeds: list[int], seconds: float, first_eval: float = 0.02
) -> dict[str, Any]:
    """Part 2: every method on every game, seconds of solving per seed."""
    out: dict[str, Any] = {}
    for key in games:
        name, betting, limit = GAMES[key]
        problem = make_problem(_game(name), betting)
        for method in methods:  # compile outside the timed runs
            algo, options = METHODS[method]
            if method in VECTOR:
                warm_up(algo)
            else:
                make_training_solver(make_problem("kuhn.limit.2p"), algo, SamplingOptions(dtype="float64"), **options).iterate(2)
        game_out: dict[str, Any] = {"game": name, "betting": betting, "limit": limit, "methods": {}}
        for method in methods:
            runs = [_run(problem, method, seed, seconds, first_eval) for seed in seeds]
            game_out["methods"][method] = _summary(runs)
            _log(f"{key} {method}: {game_out['methods'][method]['final_mbb_mean']:.2f} mbb/g, "
                 f"{game_out['methods'][method]['iterations_per_s']:.0f} it/s")
        _targets(game_out)
        out[key] = game_out
    return out


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One method's runs (one per seed) and their mean figures."""
    times = [p[0] for p in runs[0]["points"]]
    final = [r["points"][-1][2] for r in runs]
    return {
        "runs": runs,
        "final_mbb_mean": float(np.mean(final)),
        "final_mbb_spread": [float(min(final)), float(max(final))],
        "iterations_per_s": float(np.mean([r["iterations_per_s"] for r in runs])),
        "seconds_per_iteration": float(1.0 / np.mean([r["iterations_per_s"] for r in runs])),
        "nodes_per_iteration": runs[0]["nodes_per_iteration"],
        "curve_mean": [[t, float(np.mean([_at(r["points"], t) for r in runs]))] for t in times],
    }


def _targets(game_out: dict[str, Any]) -> None:
    """Each method's mean iterations to the worst run's last figure, which every run of
    every method reaches."""
    target = max(r["points"][-1][2] for m in game_out["methods"].values() for r in m["runs"])
    game_out["target_mbb"] = target
    for m in game_out["methods"].values():
        its = [_iterations_to(r["points"], target) for r in m["runs"]]
        m["iterations_to_target"] = None if None in its else float(np.mean(its))


def merge(paths: list[Path]) -> dict[str, Any]:
    """Part 2 of several runs of this benchmark (say one seed each, run side by side) as
    one: each game's and method's runs put together and summarised again."""
    out: dict[str, Any] = {}
    for path in paths:
        for key, game in (json.loads(path.read_text()).get("sampling") or {}).items():
            into = out.setdefault(key, {k: v for k, v in game.items() if k not in ("methods", "target_mbb")})
            methods = into.setdefault("methods", {})
            for method, m in game["methods"].items():
                methods.setdefault(method, []).extend(m["runs"])
    for game_out in out.values():
        game_out["methods"] = {k: _summary(runs) for k, runs in game_out["methods"].items()}
        _targets(game_out)
    return out


def claims(part1: dict[str, Any] | None, part2: dict[str, Any] | None) -> dict[str, Any]:
    """Each claim: reproduced or not, with its figures (None where not measured)."""
    out: dict[str, Any] = {}
    if part1:
        ratios = {g: r["cfr_over_cfr_plus_iterations"] for g, r in part1.items()}
        # at 0.1 mbb/g; where CFR never got there, its iterations so far bound the ratio
        tight = {}
        for g, r in part1.items():
            plus = r["cfr+"]["to_0.1_mbb"]
            if plus is None:
                tight[g] = None
            elif r["cfr"]["to_0.1_mbb"] is not None:
                tight[g] = {"ratio": ratios[g]["to_0.1_mbb"], "bound": False}
            else:
                tight[g] = {"ratio": round(r["cfr"]["last"][0] / plus["iterations"], 1), "bound": True}
        out["cfr_plus_order_of_magnitude"] = {
            "claim": "CFR+ needs an order of magnitude fewer iterations than CFR (Tammelin 2014)",
            "reproduced": all(v is not None and v["ratio"] >= 10 for v in tight.values()),
            "at_0.1_mbb": tight,
            "cfr_over_cfr_plus_iterations": ratios,
        }
    if part2:
        def final(game: str, method: str) -> float | None:
            m = part2.get(game, {}).get("methods", {}).get(method)
            return None if m is None else m["final_mbb_mean"]

        probe = {g: (final(g, "os_probe"), final(g, "os")) for g in part2}
        pairs = [v for v in probe.values() if None not in v]
        out["probing_beats_outcome_sampling"] = {
            "claim": "outcome sampling with probing beats outcome sampling in time (Gibson et al. 2012, AAAI)",
            "reproduced": all(a < b for a, b in pairs) if pairs else None,  # None: not measured
            "final_mbb_os_probe_vs_os": probe,
        }
        limits = [g for g in part2 if part2[g]["limit"]]
        pcs = {g: (final(g, "pcs"), final(g, "cs")) for g in limits}
        pairs = [v for v in pcs.values() if None not in v]
        out["pcs_beats_cs_on_limit_games"] = {
            "claim": "public chance sampling beats chance sampling in wall time on limit games (Johanson et al. 2012)",
            "reproduced": all(a < b for a, b in pairs) if pairs else None,  # None: not measured
            "final_mbb_pcs_vs_cs": pcs,
        }
        nl = [g for g in part2 if not part2[g]["limit"]]
        avg = {g: (final(g, "as"), final(g, "es")) for g in nl}
        pairs = [v for v in avg.values() if None not in v]
        out["as_beats_es_with_many_bet_sizes"] = {
            "claim": "average strategy sampling beats external sampling on no-limit games with many bet sizes (Gibson et al. 2012, NIPS)",
            "reproduced": all(a < b for a, b in pairs) if pairs else None,  # None: not measured
            "final_mbb_as_vs_es": avg,
        }
        family = ("cs", "es", "as", "os")
        orders = {}
        for g, res in part2.items():
            m = res["methods"]
            if not all(k in m for k in family):
                continue
            its = [m[k]["iterations_to_target"] for k in family]
            spi = [m[k]["seconds_per_iteration"] for k in family]
            orders[g] = {
                "iterations_to_target": dict(zip(family, its)),
                "seconds_per_iteration": dict(zip(family, spi)),
                "iterations_rise": None not in its and all(a <= b for a, b in zip(its, its[1:])),
                "time_per_iteration_falls": all(a >= b for a, b in zip(spi, spi[1:])),
            }
        out["family_order"] = {
            "claim": "iterations needed rise from chance to external to average strategy to outcome sampling while time per iteration falls",
            "reproduced": (
                all(o["iterations_rise"] and o["time_per_iteration_falls"] for o in orders.values()) if orders else None
            ),
            "per_game": orders,
        }
    return out


def _plot(part2: dict[str, Any], folder: Path) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for key, res in part2.items():
        fig, ax = plt.subplots(figsize=(6, 4))
        for method, m in res["methods"].items():
            xs = [p[0] for p in m["curve_mean"]]
            ys = [p[1] for p in m["curve_mean"]]
            ax.plot(xs, ys, marker="o", label=method)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("seconds of solving (one thread)")
        ax.set_ylabel("exploitability (mbb/g)")
        ax.set_title(f"{res['game']} {res['betting'] or ''}".strip())
        ax.legend()
        path = folder / f"seed_claims_{key}.png"
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(str(path))
    return written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--parts", nargs="+", choices=("cfr_plus", "sampling"), default=["cfr_plus", "sampling"])
    ap.add_argument("--games", nargs="+", choices=tuple(GAMES), default=None)
    ap.add_argument("--methods", nargs="+", choices=tuple(METHODS), default=list(METHODS))
    ap.add_argument("--seeds", nargs="+", type=int, default=None)
    ap.add_argument("--seconds", type=float, default=None, help="part 2: seconds of solving a run")
    ap.add_argument("--cfr-seconds", type=float, default=None, help="part 1: seconds of solving a run")
    ap.add_argument(
        "--first-eval", type=float, default=0.02,
        help="part 2: seconds of solving before the first evaluation (then at every doubling)",
    )  # fmt: skip
    ap.add_argument("--out", type=Path)
    ap.add_argument("--png", type=Path, metavar="DIR")
    ap.add_argument(
        "--merge", nargs="+", type=Path, metavar="JSON",
        help="run nothing: put together part 2 of earlier outputs (say one seed each) and judge the claims",
    )  # fmt: skip
    args = ap.parse_args()
    if args.merge:
        part2 = merge(args.merge)
        merged = {"sampling": part2, "claims": claims(None, part2), "merged": [str(p) for p in args.merge]}
        if args.png is not None:
            merged["png"] = _plot(part2, args.png)
        text = json.dumps(merged)
        if args.out is not None:
            args.out.write_text(text + "\n")
        print(text)
        return
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    quick = args.quick
    seeds = args.seeds or ([1] if quick else [1, 2, 3])
    seconds = args.seconds or (4.0 if quick else 60.0)
    cfr_seconds = args.cfr_seconds or (5.0 if quick else 60.0)
    games = args.games or ["leduc", "nl_leduc"]
    t0 = time.perf_counter()
    part1 = part2 = None
    if "cfr_plus" in args.parts:
        one_card = ["kuhn.limit.2p", "leduc.limit.2p"] if quick else [
            "kuhn.limit.2p", "onecard13", "onecard52", "leduc.limit.2p"]
        part1 = cfr_plus(one_card, cfr_seconds)
    if "sampling" in args.parts:
        part2 = sampling(games, args.methods, seeds, seconds, args.first_eval)
    result = {
        "cfr_plus": part1,
        "sampling": part2,
        "claims": claims(part1, part2),
        "seeds": seeds,
        "seconds_per_run": seconds,
        "cfr_seconds_per_run": cfr_seconds,
        "quick": quick,
        "wall_s": round(time.perf_counter() - t0, 1),
    }
    if args.png is not None and part2:
        result["png"] = _plot(part2, args.png)
    text = json.dumps(result)
    if args.out is not None:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
