"""Average strategy sampling and probing (solver.training.mccfr, the sampled kernel).

Oracles: with eps = 1 every action is explored and average strategy sampling is external
sampling, bit for bit. Under a pure current strategy every value is deterministic, so
external sampling's update of the first walk is the exact counterfactual regret of the
deal. At the walk's first node (reached with q = 1) average strategy sampling with
probing must give it exactly: an explored action returns its value and a left-out one a
probe that follows the same pure play. Deeper, and for average strategy sampling
without probing and outcome sampling with probing, it must give it in expectation: the
mean over seeds lies within a few standard errors of it, entry by entry, where a scheme
that dropped its 1 / rho or its 1 / q(h) would not.
"""

from __future__ import annotations

import numpy as np
import pytest

from solver import _kernels as K
from solver.problem import make_problem
from solver.training.algorithms import make_training_solver
from solver.training.mccfr import AverageStrategySamplingSolver, ExternalSamplingSolver
from solver.training.sampled import SamplingOptions as SO

from ._solver_twins import player_entries


@pytest.fixture(scope="module")
def leduc():
    return make_problem("leduc.limit.2p")


def _pure_tables(problem, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Regrets with one positive action per row (a pure current strategy everywhere) and
    average sums of mixed sizes (so that average strategy sampling's rho varies)."""
    rng = np.random.default_rng(seed)
    regrets = -np.ones(problem.size)
    avg = rng.uniform(0.0, 3.0, problem.size)
    t = problem.tree
    for node in range(len(t.kind)):
        if t.kind[node] != K.DECISION:
            continue
        n = int(t.n_child[node])
        o = int(problem.offset[node])
        for b in range(int(problem.chance.n_buckets[t.street[node]])):
            regrets[o + b * n + rng.integers(n)] = 1.0
    return regrets, avg


def _first_update(problem, solver, regrets, avg) -> np.ndarray:
    """Player 0's regret change over one iteration from the given tables (its own walk
    comes first and player 1's walk leaves its regrets alone)."""
    solver.layout.from_canonical(regrets, solver.regrets)
    solver.layout.from_canonical(avg, solver.avg_sums)
    solver.iterate(1)
    return (solver.layout.to_canonical(solver.regrets) - regrets)[player_entries(problem, 0)]


AS = {"beta": 1.0, "tau": 1.0, "epsilon": 0.05}  # small beta: the average decides rho


def test_average_strategy_sampling_with_eps_one_is_external_sampling(leduc):
    a = ExternalSamplingSolver(leduc, SO(seed=3, dtype="float64"))
    b = AverageStrategySamplingSolver(leduc, SO(seed=3, dtype="float64"), epsilon=1.0)
    a.iterate(20_000)
    b.iterate(20_000)
    np.testing.assert_array_equal(a.regrets, b.regrets)
    np.testing.assert_array_equal(a.avg_sums, b.avg_sums)


@pytest.mark.parametrize("seed", range(6))
def test_probing_under_a_pure_strategy_gives_the_first_nodes_exact_update(leduc, seed):
    regrets, avg = _pure_tables(leduc, seed)
    root = int(leduc.offset[0])  # player 0 acts first: the walk's first node, q = 1
    row = slice(root, root + int(leduc.chance.n_buckets[0]) * int(leduc.tree.n_child[0]))
    first = np.zeros(leduc.size, dtype=bool)
    first[row] = True
    first = first[player_entries(leduc, 0)]
    exact = _first_update(leduc, ExternalSamplingSolver(leduc, SO(seed=seed, dtype="float64")), regrets, avg)
    probed = AverageStrategySamplingSolver(leduc, SO(seed=seed, dtype="float64"), probe=True, **AS)
    got = _first_update(leduc, probed, regrets, avg)
    np.testing.assert_allclose(got[first], exact[first], rtol=1e-12, atol=1e-12)
    assert np.abs(exact[first]).max() > 0  # the deal moved some regret there
    # without probing a left-out action is worth 0 and an explored one its value / rho
    plain = AverageStrategySamplingSolver(leduc, SO(seed=seed, dtype="float64"), **AS)
    assert not np.allclose(_first_update(leduc, plain, regrets, avg)[first], exact[first])


@pytest.fixture(scope="module")
def kuhn_exact_updates():
    """Kuhn, its pure tables, and external sampling's (exact) first update for seeds 0 to
    2,999, shared by the schemes below (each compares itself to the same 3,000)."""
    kuhn = make_problem("kuhn.limit.2p")
    regrets, avg = _pure_tables(kuhn, 11)
    exact = [
        _first_update(kuhn, ExternalSamplingSolver(kuhn, SO(seed=seed, dtype="float64")), regrets, avg)
        for seed in range(3_000)
    ]
    return kuhn, regrets, avg, exact


@pytest.mark.parametrize(
    "algo,options",
    [
        ("as", AS),
        ("as", {**AS, "probe": True}),
        ("os", {"probe": True}),
        ("os", {"probe": True, "epsilon": 0.3}),
    ],
    ids=["as", "as-probe", "os-probe", "os-probe-eps0.3"],
)
def test_sampled_updates_are_unbiased_under_a_pure_strategy(algo, options, kuhn_exact_updates):
    # Kuhn: each seed deals one of 6 deals; the same seed deals it to both schemes, so
    # the mean over seeds of (scheme - exact) estimates 0 entry by entry.
    kuhn, regrets, avg, exact = kuhn_exact_updates
    diffs = []
    for seed in range(len(exact)):
        solver = make_training_solver(kuhn, algo, SO(seed=seed, dtype="float64"), **options)
        diffs.append(_first_update(kuhn, solver, regrets, avg) - exact[seed])
    d = np.array(diffs)
    se = d.std(axis=0, ddof=1) / np.sqrt(len(d))
    varied = se > 0
    assert varied.sum() >= 2  # the scheme does sample
    z = np.abs(d.mean(axis=0)[varied]) / se[varied]
    assert z.max() < 4.5, z.max()
