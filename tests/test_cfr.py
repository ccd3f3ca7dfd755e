"""CFR and CFR+ kernels against the oracle file, the known game values and a slow twin."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from solver.training.algorithms import make_solver, solve
from solver.evaluation.best_response import exploitability
from solver.training.cfr import CFRPlusSolver, CFRSolver
from solver.problem import make_problem
from solver.strategy import Strategy
from solver.strategy_io import (
    StrategyFileError,
    dumps,
    load_strategy,
    loads,
    save_strategy,
)

from ._solver_twins import TWO_CARD_LEDUC, SlowCFR, build_history_tree, entry_map, raw_problem

ORACLE = json.loads(
    (Path(__file__).parent / "data" / "oracles" / "cfr_exploitability.json").read_text()
)
GAMES = {"kuhn": "kuhn.limit.2p", "leduc": "leduc.limit.2p"}
ALGOS = {"cfr": "cfr", "cfr_plus": "cfr+"}

# The oracle is OpenSpiel 2.0.2's Python CFRSolver / CFRPlusSolver. The history-form
# solver (solver.training.history_cfr) repeats its floating-point operations in order and
# reproduces every figure to 1e-9, at every N.
#
# The vector-form kernels compute the same quantities in another order (each
# information set's regret is summed over the opponent's hands before it touches the
# cumulative regret). On Leduc both trajectories amplify rounding differences
# exponentially, so past a horizon no implementation with another operation order
# matches the oracle's digits. Evidence, from running both side by side and comparing
# current strategies information set by information set after every update: they agree
# to 1e-13 until iteration ~40 of CFR+, then drift apart smoothly, by ~1.6x an iteration
# over iterations 108-122 (e.g. player 0 holding a K after "rc/" on a Q board, all
# regrets strictly positive: no tie, no switch between uniform and pure), reaching 1e-9
# at iteration 80 and 6e-3 by 140. The history form itself, with only its deck
# enumerated suit by suit instead of rank by rank (a no-op in real arithmetic), misses
# CFR+ N=200 by 1%; OpenSpiel with its chance loop reversed misses its own figures by
# 1.2e-4 (2.4%) at CFR+ N=200 and by 1.7e-7 at CFR N=1000.
# So the vector form is held to: absolute 1e-9 up to EXACT_UP_TO (at CFR N=500 the
# largest deviation among the roundings below is 8.5e-10); past it, a relative tolerance
# of about 1.5-2x the largest deviation measured over 15 equally valid roundings
# (OpenSpiel with reversed chance loops; these kernels with all payoffs scaled by 0.1,
# 1/3, 1, 3, 5, 7 or 10, with and without zeroing regret increments within 4 ulps of 0).
EXACT_UP_TO = {
    ("kuhn", "cfr"): 10**9,
    ("kuhn", "cfr_plus"): 10**9,
    ("leduc", "cfr"): 500,
    ("leduc", "cfr_plus"): 100,
}
# N -> relative tolerance past the horizon: about 1.5-2x the largest deviation measured
# over those roundings (cfr 1.1e-4 at 1000; cfr_plus 0.024, 0.075, 0.06 at 200, 500,
# 1000), capped at 10%. At N=2000 two of the other roundings deviate by more (cfr 0.16,
# cfr_plus 0.12); the vector form is at 0.011 and 0.086, and a change of summation order
# that moves it past 10% must be looked at, not waved through.
PAST_HORIZON_REL = {
    ("leduc", "cfr"): {1000: 2e-4, 2000: 0.1},
    ("leduc", "cfr_plus"): {200: 0.04, 500: 0.1, 1000: 0.1, 2000: 0.1},
}


@pytest.fixture(scope="module")
def problems():
    # OpenSpiel's information sets are (cards, betting): the raw lossless numbering. Over
    # suit classes (make_problem's buckets) the sums run in another order, so the
    # trajectories part past the horizon as any other rounding does (test_lossless.py
    # holds the classes to the game values instead).
    return {k: raw_problem(v) for k, v in GAMES.items()}


def _oracle_runs(problems, form):
    """Exploitability (and value) of the average strategy after each oracle N."""
    runs = {}
    for game, table in ORACLE["exploitability_after_n_iterations"].items():
        for algo, points in table.items():
            solver = make_solver(problems[game], ALGOS[algo], form=form)
            got = {}
            for n in sorted(int(x) for x in points):
                solver.iterate(n - solver.iterations)
                got[n] = exploitability(None, solver.average_strategy())
            runs[game, algo] = got
    return runs


@pytest.fixture(scope="module")
def oracle_runs(problems):
    return _oracle_runs(problems, "vector")


@pytest.fixture(scope="module")
def history_runs(problems):
    return _oracle_runs(problems, "history")


@pytest.mark.parametrize("game", ["kuhn", "leduc"])
@pytest.mark.parametrize("algo", ["cfr", "cfr_plus"])
def test_history_form_reproduces_oracle(history_runs, game, algo):
    points = ORACLE["exploitability_after_n_iterations"][game][algo]
    for n_text, want in points.items():
        got = history_runs[game, algo][int(n_text)].exploitability
        assert got == pytest.approx(want, abs=1e-9, rel=0), (game, algo, n_text)


@pytest.mark.parametrize("game", ["kuhn", "leduc"])
@pytest.mark.parametrize("algo", ["cfr", "cfr_plus"])
def test_oracle_exploitability(oracle_runs, game, algo):
    points = ORACLE["exploitability_after_n_iterations"][game][algo]
    for n_text, want in points.items():
        n = int(n_text)
        got = oracle_runs[game, algo][n].exploitability
        if n <= EXACT_UP_TO[game, algo]:
            assert got == pytest.approx(want, abs=1e-9, rel=0), (game, algo, n)
        else:
            rel = PAST_HORIZON_REL[game, algo][n]
            assert got == pytest.approx(want, rel=rel, abs=0), (game, algo, n)


def test_game_values(oracle_runs):
    values = ORACLE["game_values_first_player"]
    kuhn = oracle_runs["kuhn", "cfr_plus"][1000]
    assert kuhn.value == pytest.approx(values["kuhn"], abs=1e-3)
    assert kuhn.value == pytest.approx(-1 / 18, abs=1e-5)
    leduc = oracle_runs["leduc", "cfr_plus"][2000]
    assert leduc.value == pytest.approx(values["leduc"], abs=values["leduc_tolerance"])
    # mbb/g: the big blind of these games is the 1-chip ante.
    assert leduc.mbb_per_game == pytest.approx(1000 * leduc.exploitability)
    assert leduc.exploitability < 1e-4


@pytest.mark.parametrize(
    "game,iterations", [("kuhn.limit.2p", 6), ("leduc.limit.2p", 3), (TWO_CARD_LEDUC, 1)]
)
@pytest.mark.parametrize("plus", [False, True])
@pytest.mark.parametrize("form", ["vector", "history"])
@pytest.mark.parametrize("numbering", ["raw", "canonical"])
def test_kernel_matches_slow_twin(game, iterations, plus, form, numbering):
    problem = raw_problem(game) if numbering == "raw" else make_problem(game)
    twin = SlowCFR(build_history_tree(problem.game), plus=plus)
    solver = make_solver(problem, "cfr+" if plus else "cfr", form=form)
    emap = entry_map(problem)
    assert set(emap) == set(twin.regrets)
    members: dict[int, list[tuple]] = {}  # a bucket's information sets (several: suit classes)
    for key, (o, _) in emap.items():
        members.setdefault(o, []).append(key)
    if numbering == "canonical" and problem.game.num_suits > 1:
        assert max(len(keys) for keys in members.values()) > 1
    for _ in range(iterations):
        twin.iterate()
        solver.iterate(1)
        # A bucket's regret is the sum of its information sets' regrets (suit-isomorphic
        # hands have equal ones). The twin sums average contributions once per history,
        # the kernel once per information set: the sums differ by a constant factor, the
        # averages agree.
        avg, twin_avg = solver.average_policy(), twin.average()
        for key, (o, n) in emap.items():
            want = np.sum([twin.regrets[k] for k in members[o]], axis=0)
            np.testing.assert_allclose(solver.regrets[o : o + n], want, rtol=0, atol=1e-12)
            np.testing.assert_allclose(avg[o : o + n], twin_avg[key], rtol=0, atol=1e-12)


def test_history_form_on_nolimit_and_resume():
    # A no-limit tree (unequal bets, all-ins) and two-card hands walked both ways.
    for game, betting in (("leduc.nolimit.2p", "1p,a"), (TWO_CARD_LEDUC, None)):
        problem = make_problem(game, betting)
        vec, hist = CFRPlusSolver(problem), make_solver(problem, "cfr+", form="history")
        vec.iterate(1)
        hist.iterate(1)
        np.testing.assert_allclose(hist.regrets, vec.regrets, rtol=0, atol=1e-12)
        np.testing.assert_allclose(hist.average_policy(), vec.average_policy(), rtol=0, atol=1e-12)
    # Tables restored into a fresh solver continue bit for bit (the current strategy is
    # recomputed from the regrets); the averaging delay leaves the regrets alone.
    problem = make_problem("leduc.limit.2p")
    whole = make_solver(problem, "cfr", form="history")
    whole.iterate(7)
    part = make_solver(problem, "cfr", form="history")
    part.iterate(4)
    resumed = make_solver(problem, "cfr", form="history")
    resumed.regrets[:], resumed.avg_sums[:], resumed.iterations = part.regrets, part.avg_sums, 4
    resumed.iterate(3)
    np.testing.assert_array_equal(resumed.regrets, whole.regrets)
    np.testing.assert_array_equal(resumed.avg_sums, whole.avg_sums)
    delayed = make_solver(problem, "cfr", form="history", delay=4)
    delayed.iterate(7)
    np.testing.assert_array_equal(delayed.regrets, whole.regrets)
    np.testing.assert_allclose(delayed.avg_sums, whole.avg_sums - part.avg_sums, atol=1e-12)
    vec = CFRSolver(problem)
    vec.regrets[:] = whole.regrets
    np.testing.assert_array_equal(whole.current_policy(), vec.current_policy())


def test_history_form_refuses_big_games(monkeypatch):
    import solver.training.history_cfr as H

    problem = make_problem("leduc.limit.2p")
    monkeypatch.setattr(H, "MAX_HISTORIES", H.count_histories(problem) - 1)
    with pytest.raises(ValueError, match="use the vector-form solver"):
        make_solver(problem, "cfr", form="history")
    with pytest.raises(ValueError, match="form"):
        make_solver(problem, "cfr", form="matrix")


def test_first_iterations_by_hand():
    # Kuhn, CFR, one iteration: everybody starts uniform, so the average is uniform.
    s = solve("kuhn.limit.2p", "cfr", iterations=1)
    assert np.allclose(s.policy, 0.5)
    assert s.iterations == 1 and s.algorithm == "cfr"


def test_averaging_delay():
    problem = make_problem("leduc.limit.2p")
    plain = CFRSolver(problem)
    plain.iterate(5)
    before = plain.avg_sums.copy()
    plain.iterate(7)
    delayed = CFRSolver(problem, delay=5)
    delayed.iterate(12)
    # Uniform averaging with delay d sums iterations d+1..N only.
    np.testing.assert_allclose(delayed.avg_sums, plain.avg_sums - before, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(delayed.regrets, plain.regrets)
    # A delay longer than the run leaves nothing averaged: the uniform strategy.
    late = CFRPlusSolver(problem, delay=100)
    late.iterate(3)
    assert not late.avg_sums.any()
    with pytest.raises(ValueError):
        CFRSolver(problem, delay=-1)


def test_solve_api_stops():
    calls = []

    def cb(solver, elapsed):
        calls.append(solver.iterations)
        return solver.iterations >= 30

    s = solve("leduc.limit.2p", "cfr+", iterations=10_000, batch=10, callback=cb)
    assert s.iterations == 30 and calls == [10, 20, 30]
    timed = solve("kuhn.limit.2p", seconds=0.2)
    assert timed.iterations > 0
    with pytest.raises(ValueError):
        solve("kuhn.limit.2p")
    with pytest.raises(ValueError):
        solve("kuhn.limit.2p", "cfr-", iterations=1)


def test_nolimit_leduc_with_betting_abstraction():
    problem = make_problem("leduc.nolimit.2p", "1p,a")
    solver = CFRPlusSolver(problem)
    solver.iterate(50)
    e50 = exploitability("leduc.nolimit.2p", solver.average_strategy()).exploitability
    solver.iterate(250)
    r = exploitability("leduc.nolimit.2p", solver.average_strategy())
    assert 0 <= r.exploitability < e50 / 3 and r.exploitability < 0.02
    assert r.br[0] >= r.value - 1e-12 and r.br[1] >= -r.value - 1e-12


def test_strategy_file_round_trip(tmp_path):
    s = solve("leduc.limit.2p", "cfr+", iterations=20)
    path = tmp_path / "leduc.strategy"
    save_strategy(path, s, "f32")
    back = load_strategy(path)
    np.testing.assert_allclose(back.policy, s.policy, atol=1e-7)
    assert (back.iterations, back.algorithm, back.game) == (20, "cfr+", s.game)
    assert [p.name for p in tmp_path.iterdir()] == ["leduc.strategy"]  # no temp file left
    small = loads(dumps(s))  # one byte per probability
    np.testing.assert_allclose(small.policy, s.policy, atol=1 / 255)
    nl = solve("leduc.nolimit.2p", iterations=2, betting="1p,a")
    assert loads(dumps(nl)).problem.tree.betting_spec == "1p,a"


def test_strategy_file_rejects_damage(tmp_path):
    s = solve("kuhn.limit.2p", iterations=3)
    data = bytearray(dumps(s))
    with pytest.raises(StrategyFileError):
        loads(bytes(data[:-5]))
    data[-1] ^= 1  # flip a bit inside the last array
    with pytest.raises(StrategyFileError, match="checksum"):
        loads(bytes(data))
    with pytest.raises(StrategyFileError):
        loads(b"\x93\x01\x02\x03")
    with pytest.raises(StrategyFileError):
        load_strategy(tmp_path / "missing.strategy")


def test_strategy_probabilities_are_distributions():
    s: Strategy = solve("leduc.limit.2p", iterations=5)
    tree = s.problem.tree
    for n in tree.decision_nodes():
        for b in range(s.problem.chance.n_buckets[tree.street[n]]):
            assert s.probabilities(int(n), b).sum() == pytest.approx(1.0)
