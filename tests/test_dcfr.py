"""Discounted CFR (full traversals) against a plain-Python twin and Kuhn's game value."""

from __future__ import annotations

import numpy as np
import pytest

from solver.evaluation.best_response import exploitability
from solver.problem import make_problem
from solver.training.algorithms import make_solver
from solver.training.cfr import DiscountedCFRSolver, LinearCFRSolver

from ._solver_twins import HNode, SlowCFR, build_history_tree, entry_map, raw_problem


class SlowDCFR(SlowCFR):
    """The paper's rule word for word on the history tree: after player i's walk of
    iteration t, i's positive regrets times t^alpha / (t^alpha + 1), negative ones times
    t^beta / (t^beta + 1); after the iteration, every average sum times (t / (t + 1))^gamma
    (the twin adds each contribution with weight 1, the kernel with t^gamma)."""

    def __init__(self, root: HNode, alpha: float, beta: float, gamma: float) -> None:
        super().__init__(root, plus=False)
        self.alpha, self.beta, self.gamma = alpha, beta, gamma

    def iterate(self) -> None:
        self.t += 1
        t = float(self.t)
        up = t**self.alpha / (t**self.alpha + 1.0)
        down = t**self.beta / (t**self.beta + 1.0)
        for player in (0, 1):
            self._walk(self.root, [1.0, 1.0, 1.0], player)
            for key, reg in self.regrets.items():
                if key[0] == player:
                    for a in range(len(reg)):
                        reg[a] *= up if reg[a] > 0.0 else down
            self._match(player)
        shrink = (t / (t + 1.0)) ** self.gamma
        for sums in self.avg.values():
            for a in range(len(sums)):
                sums[a] *= shrink


@pytest.fixture(scope="module")
def kuhn():
    return raw_problem("kuhn.limit.2p")


@pytest.mark.parametrize("params", [(1.5, 0.0, 2.0), (2.0, 0.5, 3.0)])
def test_kernel_matches_slow_twin(kuhn, params):
    alpha, beta, gamma = params
    twin = SlowDCFR(build_history_tree(kuhn.game), alpha, beta, gamma)
    solver = DiscountedCFRSolver(kuhn, alpha=alpha, beta=beta, gamma=gamma)
    emap = entry_map(kuhn)
    assert set(emap) == set(twin.regrets)
    negative = False
    for _ in range(8):
        twin.iterate()
        solver.iterate(1)
        avg, twin_avg = solver.average_policy(), twin.average()
        for key, (o, n) in emap.items():
            np.testing.assert_allclose(solver.regrets[o : o + n], twin.regrets[key], rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(avg[o : o + n], twin_avg[key], rtol=0, atol=1e-12)
        negative = negative or bool((solver.regrets < -1e-3).any())
    # both discounts were exercised: positive and negative regrets were there to scale
    assert negative and (solver.regrets > 1e-3).any()


def test_the_discount_is_not_linear_cfrs(kuhn):
    # with alpha = beta = gamma = 1 the rule is Linear CFR's; the paper's parameters differ
    lcfr, one, dcfr = LinearCFRSolver(kuhn), DiscountedCFRSolver(kuhn, alpha=1, beta=1, gamma=1), DiscountedCFRSolver(kuhn)
    for s in (lcfr, one, dcfr):
        s.iterate(20)
    np.testing.assert_allclose(one.regrets, lcfr.regrets, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(one.average_policy(), lcfr.average_policy(), rtol=0, atol=1e-12)
    assert np.abs(dcfr.regrets - lcfr.regrets).max() > 1e-3
    assert np.abs(dcfr.average_policy() - lcfr.average_policy()).max() > 1e-3


def test_batches_count_iterations_on(kuhn):
    whole, steps = DiscountedCFRSolver(kuhn), DiscountedCFRSolver(kuhn)
    whole.iterate(12)
    for n in (1, 2, 4, 5):
        steps.iterate(n)
    assert whole.iterations == steps.iterations == 12
    np.testing.assert_array_equal(whole.regrets, steps.regrets)
    np.testing.assert_array_equal(whole.avg_sums, steps.avg_sums)


def test_converges_to_kuhns_value():
    solver = make_solver(make_problem("kuhn.limit.2p"), "dcfr")
    assert isinstance(solver, DiscountedCFRSolver) and solver.dcfr == (1.5, 0.0, 2.0)
    solver.iterate(10)
    early = exploitability(None, solver.average_strategy()).exploitability
    solver.iterate(990)
    strategy = solver.average_strategy()
    assert strategy.algorithm == "dcfr" and strategy.iterations == 1000
    result = exploitability(None, strategy)
    # measured: 2.3e-2 chips after 10 iterations, 1.5e-4 after 1,000, value off by 4e-8
    assert result.value == pytest.approx(-1 / 18, abs=1e-6)
    assert result.exploitability < min(1e-3, early / 100)


@pytest.mark.parametrize(
    "kwargs,message",
    [({"alpha": float("nan")}, "three finite numbers"), ({"gamma": float("inf")}, "three finite numbers")],
)
def test_rejects_bad_parameters(kuhn, kwargs, message):
    with pytest.raises(ValueError, match=message):
        DiscountedCFRSolver(kuhn, **kwargs)
