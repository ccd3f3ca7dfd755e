"""What the papers the project rests on claim, measured here.

1. ``cfr_plus`` (Tammelin 2014): CFR+ needs an order of magnitude fewer iterations than
   CFR for the same exploitability. Vector CFR and CFR+ (and Linear CFR, Brown &
   Sandholm 2019, beside them) on Kuhn, Leduc and one-card poker with 13 and 52 cards
   (Kuhn's rules with a bigger deck; 52 cards are 13 ranks in 4 suits, equal ranks
   split); the iterations and seconds each needs to reach 1 and 0.1 mbb/g (``null``: not
   within ``--cfr-seconds`` of solving), and the ratio CFR / CFR+ of the iterations (the
   claim is judged at 0.1 mbb/g; where CFR does not get there, the iterations it ran
   bound the ratio from below).
2. ``sampling``: the sampling papers' claims, on ``leduc.limit.2p``, ``leduc.nolimit.2p``
   with five bet sizes (``0.25p,0.5p,1p,2p,a``) and, with ``--games ... limit20``, a
   20-card limit hold'em (``short20``'s deck and stacks, limit betting, two raises a
   street; a table of 77 M entries): chance sampling (``cs``), public chance sampling
   (``pcs``), external (``es``), average strategy (``as``, the paper's parameters) and
   outcome sampling (``os``), and outcome sampling with probing (``os_probe``). Each runs
   ``--seconds`` of one thread's solving per seed (``--seeds``), its average strategy's
   exact exploitability taken at doubling times (evaluation not counted); per method the
   mean and spread over seeds at each time, iterations per second, nodes per iteration
   (every node a walk visits, probes included; for ``pcs`` node x hand visits, every
   node of the public tree once per walk with a vector over every hand), and the
   iterations to reach the worst run's final exploitability in the game (every run gets
   there, so the family's order can be read; log-log interpolation between evaluations,
   which come at ``--first-eval`` seconds of solving, 0.02 by default, and then at every
   doubling). Where ``as`` and ``es`` both run, ``es`` runs again for each seed to the
   very iteration counts at which that seed's ``as`` run was evaluated
   (``es_at_as_iterations``), so the two also meet at equal iterations, each with the
   nodes it touched. ``limit20``'s exact evaluation takes about 90 s on the 2-vCPU VM:
   it is not in the default games, and wants a later first evaluation.
3. ``dcfr`` (Brown & Sandholm 2019): Discounted CFR as the paper poses it, full
   traversals with alternating updates and its alpha = 3/2, beta = 0, gamma = 2
   (:class:`solver.training.cfr.DiscountedCFRSolver`), against CFR+ and Linear CFR, on
   ``leduc.limit.2p`` and on ``leduc.nolimit.2p`` with part 2's five bet sizes: the
   iterations (log-log interpolated between evaluations, which come after every 10% more
   iterations) and seconds each needs to reach 1, 0.1 and 0.01 mbb/g on Leduc, 10 and
   1 mbb/g on no-limit Leduc (``null``: not within ``--dcfr-seconds`` of solving).

Every timed run records ``cpu_share``, this process's CPU seconds over the wall seconds
of its solving (about 1 on a quiet machine; 0.5 when other processes took half of the
core), and ``load_1min``, the 1-minute load average before and after it. ``machine``
has the cores, the load averages around the whole benchmark, the lowest share of any
run and ``loaded_runs``, how many ran below a share of 0.9: their seconds are inflated,
their iterations are not.

The claims, each with ``reproduced`` true, false or null (not measured, or measured only
as a bound that cannot decide it) and the figures behind it:

* Tammelin 2014: CFR+ needs an order of magnitude fewer iterations than CFR (at
  0.1 mbb/g; where CFR never got there, the iterations it ran bound the ratio from
  below, which decides the claim only once the bound itself is 10 or more);
* Gibson et al. 2012 (AAAI): outcome sampling with probing beats outcome sampling in
  time (``os_probe`` below ``os`` at the last time point, every game);
* Johanson et al. 2012: public chance sampling beats chance sampling in wall time on
  limit games (``pcs`` below ``cs`` at the last time point, limit games);
* Gibson, Burch, Lanctot & Szafron 2012 (NIPS), "AS converges faster than previous
  MCCFR algorithms in both no-limit poker and Bluff", their bounds counting iterations:
  average strategy sampling below external sampling on no-limit Leduc with five sizes,
  judged at equal solving time (``as_beats_es_with_many_bet_sizes``: each iteration's
  cost counts, and an iteration of this AS kernel costs 2.3 to 2.6 times one of ES's,
  ``seconds_per_iteration_as_over_es``) and, on its own, at equal iterations
  (``as_beats_es_with_many_bet_sizes_per_iteration``, with the nodes each touched);
* Lanctot, Waugh, Zinkevich & Bowling 2009: sampling less per iteration, from chance to
  external to outcome sampling, makes an iteration cheaper and the iterations needed
  more (``family_order_lanctot_2009``);
* what Gibson et al. 2012 (NIPS) added to that order: average strategy sampling, which
  samples a subset of the traverser's actions, sits between external and outcome
  sampling in both (``family_order_gibson_2012``). The two order claims are judged in
  nodes touched per iteration, the papers' unit of work; ``reproduced_in_seconds``
  judges the same orders with this implementation's seconds per iteration;
* Brown & Sandholm 2019 (AAAI): Discounted CFR, "a variant that outperforms CFR+ ... in
  every game tested": DCFR reaches each exploitability target in fewer iterations than
  CFR+ (an iteration costs the same in both: one walk of the tree per player), judged
  where decidable (a run that never reached a target bounds its need from below);
  Linear CFR's iterations beside.

Prints one JSON object as its last line (also to ``--out``); with matplotlib,
exploitability against seconds per game of part 2 and against iterations per game of
part 3 in ``--png DIR``. ``--quick``: Kuhn and Leduc only for part 1 (5 s a run), the
two Leduc games for part 2 with 4 s a run and seed 1, 3 s a run for part 3 (about 2
minutes; too short for part 3 to decide on no-limit Leduc).

Runs made apart (one seed each, side by side) are put together by ``--merge A.json
B.json ...``, which runs nothing.

Usage: ``python bench/seed_claims.py [--quick] [--parts cfr_plus sampling dcfr] [--games
leduc nl_leduc limit20] [--seeds 1 2 3] [--seconds S] [--cfr-seconds S] [--dcfr-seconds
S] [--out FILE] [--png DIR]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
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
#: Part 3's games (keys of :data:`GAMES`) and each one's exploitability targets in mbb/g.
DCFR_TARGETS = {"leduc": (1.0, 0.1, 0.01), "nl_leduc": (10.0, 1.0)}
#: Part 3's algorithms: CFR+, Linear CFR and DCFR (alpha = 3/2, beta = 0, gamma = 2).
DCFR_ALGOS = ("cfr+", "lcfr", "dcfr")
#: Below this CPU share a timed run counts as loaded.
CLEAN_SHARE = 0.9


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


class _Clock:
    """Wall and CPU seconds of this process inside one run's timed calls, and the
    1-minute load average when the run started."""

    def __init__(self) -> None:
        self.wall = 0.0
        self.cpu = 0.0
        self.load_before = os.getloadavg()[0]

    def __call__(self, work: Callable[[], Any]) -> float:
        """Run ``work()``; its wall seconds."""
        w, c = time.perf_counter(), time.process_time()
        work()
        dw = time.perf_counter() - w
        self.wall += dw
        self.cpu += time.process_time() - c
        return dw

    def record(self) -> dict[str, Any]:
        """``cpu_share`` (CPU over wall seconds of the timed calls; None: nothing timed)
        and ``load_1min`` [before, after]."""
        share = round(self.cpu / self.wall, 3) if self.wall > 0 else None
        return {"cpu_share": share, "load_1min": [round(self.load_before, 2), round(os.getloadavg()[0], 2)]}


def _levels_key(level: float) -> str:
    return f"to_{level:g}_mbb"


def _to_levels(problem, algo: str, seconds: float, levels: tuple[float, ...], growth: float) -> dict[str, Any]:
    """Run ``algo`` (a vector CFR variant) until its average strategy is at the lowest of
    ``levels`` (mbb/g) or ``seconds`` of solving have passed, evaluating after every
    ``growth`` more iterations; per level the first evaluation at or below it
    (``null``: none), and the curve [[iterations, seconds, mbb/g], ...]."""
    warm_up(algo)
    solver = make_solver(problem, algo)
    clock = _Clock()
    solved, batch, mbb = 0.0, 1, np.inf
    curve: list[list[float]] = []
    while solved < seconds and mbb > min(levels):
        solved += clock(lambda: solver.iterate(batch))
        mbb = _mbb(problem, solver.average_policy(), solver.iterations, algo)
        curve.append([solver.iterations, round(solved, 4), mbb])
        batch = max(1, int(solver.iterations * growth))
    out: dict[str, Any] = {}
    for level in levels:
        hit = next((p for p in curve if p[2] <= level), None)
        out[_levels_key(level)] = None if hit is None else {"iterations": hit[0], "seconds": hit[1]}
    out["last"] = curve[-1]
    out["curve"] = curve
    out.update(clock.record())
    return out


def cfr_plus(games: list[str], seconds: float) -> dict[str, Any]:
    """Part 1: iterations and seconds to 1 and 0.1 mbb/g for cfr, cfr+ and lcfr."""
    out: dict[str, Any] = {}
    for name in games:
        problem = make_problem(_game(name))
        row: dict[str, Any] = {}
        for algo in ("cfr", "cfr+", "lcfr"):
            run = _to_levels(problem, algo, seconds, (1.0, 0.1), 0.25)  # about 25% more a step
            del run["curve"]
            row[algo] = run
            _log(f"{name} {algo}: {run['to_1_mbb']} {run['to_0.1_mbb']} last {run['last']} cpu {run['cpu_share']}")
        ratios = {}
        for key in ("to_1_mbb", "to_0.1_mbb"):
            a, b = row["cfr"][key], row["cfr+"][key]
            ratios[key] = None if a is None or b is None else round(a["iterations"] / b["iterations"], 1)
        row["cfr_over_cfr_plus_iterations"] = ratios
        out[name] = row
    return out


def dcfr(seconds: float) -> dict[str, Any]:
    """Part 3: CFR+, Linear CFR and DCFR to fixed exploitabilities on the two Leduc games."""
    out: dict[str, Any] = {}
    for key, levels in DCFR_TARGETS.items():
        name, betting, _ = GAMES[key]
        problem = make_problem(_game(name), betting)
        row: dict[str, Any] = {"game": name, "betting": betting, "targets_mbb": list(levels)}
        for algo in DCFR_ALGOS:
            run = _to_levels(problem, algo, seconds, levels, 0.1)
            points = [[s, it, mbb] for it, s, mbb in run["curve"]]
            for level in levels:
                hit = run[_levels_key(level)]
                if hit is not None:  # between evaluations: log-log, as part 2's targets
                    hit["evaluated_at"] = hit["iterations"]
                    hit["iterations"] = round(_iterations_to(points, level), 1)
            row[algo] = run
            _log(f"{key} {algo}: " + ", ".join(f"{lv:g}: {run[_levels_key(lv)]}" for lv in levels)
                 + f"; last {run['last']} cpu {run['cpu_share']}")
        ratios: dict[str, Any] = {}
        for level in levels:
            k = _levels_key(level)
            d = row["dcfr"][k]
            ratios[k] = {
                f"{other}_over_dcfr": None if d is None or row[other][k] is None
                else round(row[other][k]["iterations"] / d["iterations"], 2)
                for other in ("cfr+", "lcfr")
            }
        row["iterations_over_dcfr"] = ratios
        out[key] = row
    return out


def _run(problem, method: str, seed: int, seconds: float, first_eval: float = 0.02) -> dict[str, Any]:
    """One method, one seed: exploitability at ``first_eval`` seconds of solving, then at
    every doubling, and at the end."""
    algo, options = METHODS[method]
    if method in VECTOR:
        solver = make_solver(problem, algo, seed=seed)
    else:
        solver = make_training_solver(problem, algo, SamplingOptions(seed=seed, dtype="float64"), **options)
    clock = _Clock()
    solved, batch, mark = 0.0, 16, first_eval
    points = []
    while solved < seconds:
        dt = clock(lambda: solver.iterate(batch))
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
    return {
        "seed": seed,
        "points": points,
        "iterations_per_s": solver.iterations / solved,
        "nodes_per_iteration": nodes,
        **clock.record(),
    }


def _run_to(problem, method: str, seed: int, marks: list[int]) -> dict[str, Any]:
    """One sampled method, one seed, evaluated at exactly the iteration counts ``marks``
    (ascending): points [[seconds, iterations, mbb/g], ...] as :func:`_run`'s."""
    algo, options = METHODS[method]
    solver = make_training_solver(problem, algo, SamplingOptions(seed=seed, dtype="float64"), **options)
    clock = _Clock()
    solved = 0.0
    points = []
    for mark in marks:
        if mark > solver.iterations:
            solved += clock(lambda: solver.iterate(mark - solver.iterations))
        mbb = _mbb(problem, solver.average_policy(), solver.iterations, algo)
        points.append([round(solved, 3), int(solver.iterations), mbb])
    return {
        "seed": seed,
        "points": points,
        "nodes_per_iteration": solver.nodes / max(1, solver.iterations),
        **clock.record(),
    }


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
    """Part 2: every method on every game, seconds of solving per seed; and external
    sampling again at average strategy sampling's iteration counts."""
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
                 f"{game_out['methods'][method]['iterations_per_s']:.0f} it/s, "
                 f"cpu {[r['cpu_share'] for r in runs]}")
        if "as" in methods and "es" in methods:
            at = []
            for run in game_out["methods"]["as"]["runs"]:
                at.append(_run_to(problem, "es", run["seed"], [p[1] for p in run["points"]]))
                _log(f"{key} es at as's iterations, seed {run['seed']}: {at[-1]['points'][-1]} "
                     f"(as {run['points'][-1]}) cpu {at[-1]['cpu_share']}")
            game_out["es_at_as_iterations"] = {"runs": at}
        _targets(game_out)
        _equal_iterations(game_out)
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


def _equal_iterations(game_out: dict[str, Any]) -> None:
    """Average strategy and external sampling at equal iterations: each seed's ``as``
    run at its last evaluation beside that seed's ``es`` run at the same count, with the
    nodes each touched to get there; means over the seeds both have."""
    at = game_out.get("es_at_as_iterations")
    methods = game_out["methods"]
    if not at or "as" not in methods:
        return
    es_runs = {r["seed"]: r for r in at["runs"]}
    pairs = []
    for a in methods["as"]["runs"]:
        e = es_runs.get(a.get("seed"))
        if e is None or e["points"][-1][1] != a["points"][-1][1]:
            continue
        its = a["points"][-1][1]
        pairs.append({
            "seed": a["seed"],
            "iterations": its,
            "as_mbb": a["points"][-1][2],
            "es_mbb": e["points"][-1][2],
            "as_nodes": round(its * a["nodes_per_iteration"]),
            "es_nodes": round(its * e["nodes_per_iteration"]),
        })
    if not pairs:
        return
    at["per_seed"] = pairs
    for k in ("iterations", "as_mbb", "es_mbb", "as_nodes", "es_nodes"):
        at[f"{k}_mean"] = float(np.mean([p[k] for p in pairs]))


def merge(paths: list[Path]) -> dict[str, Any]:
    """Part 2 of several runs of this benchmark (say one seed each, run side by side) as
    one: each game's and method's runs put together and summarised again."""
    out: dict[str, Any] = {}
    for path in paths:
        for key, game in (json.loads(path.read_text()).get("sampling") or {}).items():
            into = out.setdefault(
                key, {k: v for k, v in game.items() if k not in ("methods", "target_mbb", "es_at_as_iterations")}
            )
            methods = into.setdefault("methods", {})
            for method, m in game["methods"].items():
                methods.setdefault(method, []).extend(m["runs"])
            if game.get("es_at_as_iterations"):
                into.setdefault("es_at_as_iterations", {"runs": []})["runs"].extend(game["es_at_as_iterations"]["runs"])
    for game_out in out.values():
        game_out["methods"] = {k: _summary(runs) for k, runs in game_out["methods"].items()}
        _targets(game_out)
        _equal_iterations(game_out)
    return out


def _all(verdicts: list[bool | None]) -> bool | None:
    """One verdict from several: false if any is false, else null if any is null (or
    there are none), else true."""
    if any(v is False for v in verdicts):
        return False
    if not verdicts or any(v is None for v in verdicts):
        return None
    return True


def _fewer(a: dict[str, Any], b: dict[str, Any], key: str) -> bool | None:
    """Whether run ``a`` reached level ``key`` in fewer iterations than run ``b``; None
    where the runs cannot tell (a run that never got there needed more than the
    iterations it ran, and no more is known)."""
    ra, rb = a[key], b[key]
    if ra is not None and rb is not None:
        return ra["iterations"] < rb["iterations"]
    if ra is not None:
        return True if ra["iterations"] <= b["last"][0] else None
    if rb is not None:
        return False if rb["iterations"] <= a["last"][0] else None
    return None


def _order(part2: dict[str, Any], chain: tuple[str, ...]) -> dict[str, Any]:
    """Per game with every method of ``chain``: iterations to the game's target, nodes
    and seconds per iteration, and whether the first rise and the others fall along it."""
    orders = {}
    for g, res in part2.items():
        m = res["methods"]
        if not all(k in m for k in chain):
            continue
        its = [m[k]["iterations_to_target"] for k in chain]
        nodes = [m[k]["nodes_per_iteration"] for k in chain]
        spi = [m[k]["seconds_per_iteration"] for k in chain]
        orders[g] = {
            "iterations_to_target": dict(zip(chain, its)),
            "nodes_per_iteration": dict(zip(chain, nodes)),
            "seconds_per_iteration": dict(zip(chain, spi)),
            "iterations_rise": None not in its and all(a <= b for a, b in zip(its, its[1:])),
            "nodes_per_iteration_fall": all(a >= b for a, b in zip(nodes, nodes[1:])),
            "seconds_per_iteration_fall": all(a >= b for a, b in zip(spi, spi[1:])),
        }
    return orders


def claims(
    part1: dict[str, Any] | None, part2: dict[str, Any] | None, part3: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Each claim: reproduced true, false or None (not measured, or only bounded), with
    its figures."""
    out: dict[str, Any] = {}
    if part1:
        ratios = {g: r["cfr_over_cfr_plus_iterations"] for g, r in part1.items()}
        # at 0.1 mbb/g; where CFR never got there, its iterations so far bound the ratio
        # from below: a bound of 10 or more proves the claim, a smaller one decides nothing
        tight: dict[str, Any] = {}
        for g, r in part1.items():
            plus = r["cfr+"]["to_0.1_mbb"]
            if plus is None:
                tight[g] = {"ratio": None, "bound": None, "reproduced": None}
            elif r["cfr"]["to_0.1_mbb"] is not None:
                ratio = ratios[g]["to_0.1_mbb"]
                tight[g] = {"ratio": ratio, "bound": False, "reproduced": ratio >= 10}
            else:
                ratio = round(r["cfr"]["last"][0] / plus["iterations"], 1)
                tight[g] = {"ratio": ratio, "bound": True, "reproduced": True if ratio >= 10 else None}
        out["cfr_plus_order_of_magnitude"] = {
            "claim": "CFR+ needs an order of magnitude fewer iterations than CFR (Tammelin 2014)",
            "reproduced": _all([v["reproduced"] for v in tight.values()]),
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
        nips = ("average strategy sampling converges faster than external sampling in no-limit poker with many bet "
                "sizes (Gibson, Burch, Lanctot & Szafron 2012, NIPS: 'AS converges faster than previous MCCFR "
                "algorithms in both no-limit poker and Bluff')")
        cost = {}
        for g in nl:
            m = part2[g]["methods"]
            if "as" in m and "es" in m:
                cost[g] = round(m["as"]["seconds_per_iteration"] / m["es"]["seconds_per_iteration"], 2)
        avg = {g: (final(g, "as"), final(g, "es")) for g in nl}
        pairs = [v for v in avg.values() if None not in v]
        out["as_beats_es_with_many_bet_sizes"] = {
            "claim": nips + "; here at equal solving time, each iteration's cost counted",
            "reproduced": all(a < b for a, b in pairs) if pairs else None,  # None: not measured
            "final_mbb_as_vs_es": avg,
            "seconds_per_iteration_as_over_es": cost,
        }
        equal = {}
        for g in nl:
            at = part2[g].get("es_at_as_iterations") or {}
            if "as_mbb_mean" in at:
                equal[g] = {k: at[f"{k}_mean"] for k in ("iterations", "as_mbb", "es_mbb", "as_nodes", "es_nodes")}
        out["as_beats_es_with_many_bet_sizes_per_iteration"] = {
            "claim": nips + "; here at equal iterations (the same seeds, external sampling run to the iteration "
                            "counts average strategy sampling reached), each iteration's cost left out",
            "reproduced": all(v["as_mbb"] < v["es_mbb"] for v in equal.values()) if equal else None,
            "at_equal_iterations": equal,
            "seconds_per_iteration_as_over_es": cost,
        }
        for name, chain, text in (
            ("family_order_lanctot_2009", ("cs", "es", "os"),
             "sampling less per iteration, from chance to external to outcome sampling, makes an iteration "
             "cheaper and the iterations needed more (Lanctot, Waugh, Zinkevich & Bowling 2009)"),
            ("family_order_gibson_2012", ("es", "as", "os"),
             "average strategy sampling, which samples a subset of the traverser's actions, sits between "
             "external and outcome sampling in both iterations needed and cost per iteration (what Gibson, "
             "Burch, Lanctot & Szafron 2012, NIPS, added to that order)"),
        ):
            orders = _order(part2, chain)
            out[name] = {
                "claim": text + "; cost in nodes touched per iteration",
                "reproduced": (
                    all(o["iterations_rise"] and o["nodes_per_iteration_fall"] for o in orders.values())
                    if orders else None
                ),
                "reproduced_in_seconds": (
                    all(o["iterations_rise"] and o["seconds_per_iteration_fall"] for o in orders.values())
                    if orders else None
                ),
                "per_game": orders,
            }
    if part3:
        per_game = {}
        for g, row in part3.items():
            levels = {_levels_key(lv): _fewer(row["dcfr"], row["cfr+"], _levels_key(lv)) for lv in row["targets_mbb"]}
            per_game[g] = {"fewer_iterations_than_cfr_plus": levels, "reproduced": _all(list(levels.values()))}
        out["dcfr_beats_cfr_plus"] = {
            "claim": "Discounted CFR (alpha = 3/2, beta = 0, gamma = 2), 'a variant that outperforms CFR+ ... in "
                     "every game tested' (Brown & Sandholm 2019, AAAI): fewer iterations than CFR+ to each "
                     "exploitability target, full traversals and alternating updates for both",
            "reproduced": _all([v["reproduced"] for v in per_game.values()]),
            "per_game": per_game,
            "iterations_over_dcfr": {g: row["iterations_over_dcfr"] for g, row in part3.items()},
        }
    return out


def _shares(node: Any) -> list[float]:
    """Every ``cpu_share`` recorded anywhere in ``node``."""
    found: list[float] = []
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "cpu_share" and isinstance(v, (int, float)):
                found.append(float(v))
            else:
                found.extend(_shares(v))
    elif isinstance(node, list):
        for v in node:
            found.extend(_shares(v))
    return found


def _load(parts: list[Any]) -> dict[str, Any]:
    """The lowest CPU share of any timed run in ``parts`` and how many ran loaded."""
    shares = [s for p in parts for s in _shares(p)]
    return {
        "cpu_share_min": min(shares) if shares else None,
        "loaded_runs": sum(s < CLEAN_SHARE for s in shares),
        "timed_runs": len(shares),
        "loaded_below_share": CLEAN_SHARE,
    }


def _plot(part2: dict[str, Any] | None, part3: dict[str, Any] | None, folder: Path) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for key, res in (part2 or {}).items():
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
    for key, row in (part3 or {}).items():
        fig, ax = plt.subplots(figsize=(6, 4))
        for algo in DCFR_ALGOS:
            curve = row[algo]["curve"]
            ax.plot([p[0] for p in curve], [p[2] for p in curve], label=algo)
        for level in row["targets_mbb"]:
            ax.axhline(level, color="grey", linewidth=0.5)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("iterations")
        ax.set_ylabel("exploitability (mbb/g)")
        ax.set_title(f"{row['game']} {row['betting'] or ''}".strip())
        ax.legend()
        path = folder / f"seed_claims_dcfr_{key}.png"
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(str(path))
    return written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument(
        "--parts", nargs="+", choices=("cfr_plus", "sampling", "dcfr"), default=["cfr_plus", "sampling", "dcfr"]
    )
    ap.add_argument("--games", nargs="+", choices=tuple(GAMES), default=None)
    ap.add_argument("--methods", nargs="+", choices=tuple(METHODS), default=list(METHODS))
    ap.add_argument("--seeds", nargs="+", type=int, default=None)
    ap.add_argument("--seconds", type=float, default=None, help="part 2: seconds of solving a run")
    ap.add_argument("--cfr-seconds", type=float, default=None, help="part 1: seconds of solving a run")
    ap.add_argument("--dcfr-seconds", type=float, default=None, help="part 3: seconds of solving a run")
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
    for flag in ("seconds", "cfr_seconds", "dcfr_seconds", "first_eval"):
        value = getattr(args, flag)
        if value is not None and not value > 0:
            ap.error(f"--{flag.replace('_', '-')} {value} must be a positive number of seconds")
    if args.merge:
        missing = [str(p) for p in args.merge if not p.is_file()]
        if missing:
            ap.error(f"--merge: no such file: {', '.join(missing)}")
        part2 = merge(args.merge)
        merged = {
            "sampling": part2,
            "claims": claims(None, part2),
            "merged": [str(p) for p in args.merge],
            "machine": _load([part2]),
        }
        if args.png is not None:
            merged["png"] = _plot(part2, None, args.png)
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
    dcfr_seconds = args.dcfr_seconds or (3.0 if quick else 60.0)
    games = args.games or ["leduc", "nl_leduc"]
    t0 = time.perf_counter()
    load0 = [round(x, 2) for x in os.getloadavg()]
    part1 = part2 = part3 = None
    if "cfr_plus" in args.parts:
        one_card = ["kuhn.limit.2p", "leduc.limit.2p"] if quick else [
            "kuhn.limit.2p", "onecard13", "onecard52", "leduc.limit.2p"]
        part1 = cfr_plus(one_card, cfr_seconds)
    if "sampling" in args.parts:
        part2 = sampling(games, args.methods, seeds, seconds, args.first_eval)
    if "dcfr" in args.parts:
        part3 = dcfr(dcfr_seconds)
    result = {
        "cfr_plus": part1,
        "sampling": part2,
        "dcfr": part3,
        "claims": claims(part1, part2, part3),
        "seeds": seeds,
        "seconds_per_run": seconds,
        "cfr_seconds_per_run": cfr_seconds,
        "dcfr_seconds_per_run": dcfr_seconds,
        "quick": quick,
        "machine": {
            "cpus": os.cpu_count(),
            "loadavg_before": load0,
            "loadavg_after": [round(x, 2) for x in os.getloadavg()],
            **_load([part1, part2, part3]),
        },
        "wall_s": round(time.perf_counter() - t0, 1),
    }
    if args.png is not None and (part2 or part3):
        result["png"] = _plot(part2, part3, args.png)
    text = json.dumps(result)
    if args.out is not None:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
