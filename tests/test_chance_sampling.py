"""Linear CFR, chance sampling and public chance sampling (solver.training.cfr,
solver.training.chance_sampling).

Oracles: on a game without public chance, public chance sampling is vector CFR
iteration for iteration; over every board (public chance sampling) or every deal
(chance sampling) taken once, a first iteration's regret updates average to vector CFR's
(itself checked against the plain-Python twin in test_cfr.py); Linear CFR is vector CFR
with its regrets rescaled by t / (t + 1) after each iteration, done here in numpy.
"""

from __future__ import annotations

import dataclasses
from itertools import product

import numpy as np
import pytest

from solver import _kernels as K
from solver.evaluation.best_response import exploitability
from solver.problem import make_problem
from solver.strategy import Strategy
from solver.strategy_io import load_strategy
from solver.training.algorithms import make_solver, make_training_solver
from solver.training import chance_sampling
from solver.training.cfr import CFRSolver, LinearCFRSolver
from solver.training.chance_sampling import (
    ChanceSamplingSolver,
    PublicChanceSamplingSolver,
    chance_uniforms,
)
from solver.training.checkpoint import CheckpointError, load_checkpoint
from solver.training.config import (
    AlgorithmConfig,
    Budget,
    CheckpointConfig,
    ConfigError,
    EvaluationConfig,
    TrainingConfig,
)
from solver.training.run import run_training
from solver.training.vector_cfr import VectorCFRSolver

from ._solver_twins import TWO_CARD_LEDUC, player_entries


def _uniform_value(problem) -> float:
    uniform = np.zeros(problem.size)
    K.regret_match(problem.ktree, problem.kchance, uniform, uniform, -1)
    return exploitability(None, Strategy(problem, uniform, 0, "uniform")).mbb_per_game


@pytest.fixture(scope="module")
def leduc():
    return make_problem("leduc.limit.2p")


def test_public_chance_sampling_without_a_board_is_vector_cfr():
    p = make_problem("kuhn.limit.2p")
    a, b = CFRSolver(p), PublicChanceSamplingSolver(p, seed=5)
    a.iterate(300)
    b.iterate(300)
    np.testing.assert_array_equal(a.regrets, b.regrets)
    np.testing.assert_array_equal(a.avg_sums, b.avg_sums)


@pytest.mark.parametrize("game", ["leduc.limit.2p", "two-card leduc"])
def test_public_chance_sampling_averages_to_cfr_over_every_board(game):
    p = make_problem(TWO_CARD_LEDUC if game == "two-card leduc" else game)
    cfr = CFRSolver(p)
    cfr.iterate(1)
    first = player_entries(p, 0)  # player 1's walk meets player 0's update: compare 0's
    boards = int(p.chance.kernel.bs_n_child[p.chance.kernel.root_states[0]])
    assert boards == 6
    total = np.zeros(p.size)
    for k in range(boards):
        s = PublicChanceSamplingSolver(p)
        u = np.zeros((1, K.SAMPLE_UNIFORMS))
        u[0, 1] = (k + 0.5) / boards
        s._run(u)
        total += s.regrets
    np.testing.assert_allclose(total[first] / boards, cfr.regrets[first], rtol=1e-12, atol=1e-15)
    assert np.abs(cfr.regrets[first]).max() > 0.01


@pytest.mark.parametrize(
    "game,hands,others",
    # 6 boards; then the first hand among those alive on the board, the second among
    # those sharing no card with either: 5 x 4 one-card hands, C(5,2) x C(3,2) two-card
    [("leduc.limit.2p", 5, 4), ("two-card leduc", 10, 3)],
)
def test_chance_sampling_averages_to_cfr_over_every_deal(game, hands, others):
    p = make_problem(TWO_CARD_LEDUC if game == "two-card leduc" else game)
    cfr = CFRSolver(p)
    cfr.iterate(1)
    first = player_entries(p, 0)
    total = np.zeros(p.size)
    deals = 0
    for board, h0, h1 in product(range(6), range(hands), range(others)):
        s = ChanceSamplingSolver(p)
        u = np.zeros((1, K.SAMPLE_UNIFORMS))
        u[0, 1] = (board + 0.5) / 6
        u[0, 2] = (h0 + 0.5) / hands
        u[0, 3] = (h1 + 0.5) / others
        s._run(u)
        total += s.regrets
        deals += 1
    # chance sampling leaves the deal's probability out of its values: every deal weighs 1
    np.testing.assert_allclose(total[first] / deals, cfr.regrets[first], rtol=1e-12, atol=1e-15)
    assert np.abs(cfr.regrets[first]).max() > 0.01


def test_linear_cfr_weights_each_iterations_regrets_by_its_number(leduc):
    fast = LinearCFRSolver(leduc)
    fast.iterate(40)
    slow = VectorCFRSolver(leduc, plus=False, linear=True)  # linear averaging, plain regrets
    for t in range(1, 41):
        slow.iterate(1)
        slow.regrets *= t / (t + 1)
    # The kernel rescales player 0's regrets before player 1's walk, the twin after it:
    # regret matching rounds a rescaled row differently in the last bit, and 40 iterations
    # carry that to about 1e-9; a wrong weight differs in the second digit (below).
    np.testing.assert_allclose(fast.regrets, slow.regrets, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(fast.avg_sums, slow.avg_sums, rtol=1e-8, atol=1e-12)
    plain = VectorCFRSolver(leduc, plus=False, linear=True)
    plain.iterate(40)
    assert np.abs(plain.regrets / 41 - fast.regrets).max() > 1e-2
    assert fast.algorithm.value == "lcfr"


@pytest.mark.parametrize(
    "algo,iterations", [("lcfr", 300), ("pcs", 3_000), ("cs", 30_000)]
)
def test_converges_ten_times_below_uniform(leduc, algo, iterations):
    solver = make_solver(leduc, algo)
    solver.iterate(iterations)
    got = exploitability(None, solver.average_strategy()).mbb_per_game
    assert got < _uniform_value(leduc) / 10


def test_public_chance_sampling_on_nolimit_leduc_with_bet_sizes():
    p = make_problem("leduc.nolimit.2p", "0.5p,1p,2p,a")
    solver = make_solver(p, "pcs", seed=2)
    solver.iterate(3_000)
    assert exploitability(None, solver.average_strategy()).mbb_per_game < _uniform_value(p) / 10


@pytest.mark.parametrize("cls", [ChanceSamplingSolver, PublicChanceSamplingSolver])
def test_runs_repeat_however_split_and_depend_on_the_seed(leduc, cls, monkeypatch):
    monkeypatch.setattr(chance_sampling, "_CHUNK", 1_000)  # uniforms drawn a chunk at a time
    a, b, c = cls(leduc, seed=4), cls(leduc, seed=4), cls(leduc, seed=5)
    a.iterate(2_500)
    b.iterate(1)
    b.iterate(1_499)
    b.iterate(1_000)
    c.iterate(2_500)
    np.testing.assert_array_equal(a.regrets, b.regrets)
    np.testing.assert_array_equal(a.avg_sums, b.avg_sums)
    assert not np.array_equal(a.regrets, c.regrets)


def test_chance_uniforms_are_keyed_by_iteration():
    whole = chance_uniforms(9, 0, 10)
    np.testing.assert_array_equal(whole[4:7], chance_uniforms(9, 4, 3))
    assert whole.shape == (10, K.SAMPLE_UNIFORMS)
    assert ((whole >= 0) & (whole < 1)).all()


def test_options_the_vector_algorithms_refuse(leduc):
    with pytest.raises(ValueError, match="history form runs cfr and cfr"):
        make_solver(leduc, "pcs", form="history")
    with pytest.raises(ValueError, match="takes no seed"):
        make_solver(leduc, "lcfr", seed=1)
    with pytest.raises(ConfigError, match="--threads applies to"):
        TrainingConfig("leduc.limit.2p", AlgorithmConfig("cs"), Budget(iterations=1), threads=2)
    with pytest.raises(ConfigError, match="--form applies to"):
        AlgorithmConfig("lcfr", form="history")
    assert make_training_solver(leduc, "cs", seed=3).seed == 3


@pytest.mark.parametrize("algo", ["lcfr", "cs", "pcs"])
def test_stopped_and_resumed_is_the_run_never_stopped(tmp_path, algo):
    def config(folder, iterations, resume=False):
        ckpt = folder / "run.ckpt"
        return TrainingConfig(
            "leduc.limit.2p",
            AlgorithmConfig(algo),
            Budget(iterations=iterations),
            out=folder / "run.strategy",
            seed=7,
            precision="f32",
            checkpoint=CheckpointConfig(ckpt, resume=ckpt if resume else None),
            evaluation=EvaluationConfig(every=0),
        )

    whole, part = tmp_path / "whole", tmp_path / "part"
    whole.mkdir()
    part.mkdir()
    done = run_training(config(whole, 3_000))
    run_training(config(part, 1_234))
    last = run_training(config(part, 3_000, resume=True))
    assert last.iterations == done.iterations == 3_000
    a, b = load_checkpoint(part / "run.ckpt"), load_checkpoint(whole / "run.ckpt")
    for name in ("regrets", "avg_sums"):
        np.testing.assert_array_equal(a.arrays[name], b.arrays[name])
    np.testing.assert_array_equal(
        load_strategy(part / "run.strategy").policy, load_strategy(whole / "run.strategy").policy
    )
    assert done.training["algorithm"] == algo
    assert done.training["seed"] == (7 if algo != "lcfr" else None)
    if algo != "lcfr":
        other = dataclasses.replace(config(part, 4_000, resume=True), seed=8)
        with pytest.raises(CheckpointError, match="same --seed"):
            run_training(other)


def test_chance_sampling_counts_the_nodes_it_walks():
    kuhn = make_problem("kuhn.limit.2p")
    solver = ChanceSamplingSolver(kuhn)
    solver.iterate(1)  # uniform play: both walks visit all 9 nodes of Kuhn's tree
    assert len(kuhn.tree.kind) == 9 and solver.nodes == 18
