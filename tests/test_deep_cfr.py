"""Deep CFR (solver.training.deep_cfr, its kernel and its networks).

Oracles: vector CFR's first iteration (itself checked against the plain-Python twin in
test_cfr.py), whose regrets the external-sampling traversals' sampled regrets average to;
the strategy table the traversals read, which every strategy sample must repeat; the
uniform strategy's exploitability, which training must cut tenfold; a run never stopped,
which a resumed one must repeat bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from solver.evaluation.best_response import exploitability as _exploitability
from solver.problem import make_problem
from solver.strategy import Strategy
from solver.strategy_io import open_strategy
from solver.training.algorithms import make_training_solver
from solver.training.cfr import CFRSolver
from solver.training.config import AlgorithmConfig, ConfigError
from solver.training.deep_cfr import (
    DeepCFROptions,
    DeepCFRSolver,
    _regret_matching,
    deep_refusal,
    encode_infosets,
)
from solver._kernels import deep_traversals

from ._solver_twins import player_entries

KUHN = "kuhn.limit.2p"


def exploitability(strategy: Strategy) -> float:
    return _exploitability(None, strategy).mbb_per_game

#: A budget that trains Kuhn in seconds once the networks are compiled.
SMALL = dict(traversals=300, memory=100_000, hidden=32, sgd_steps=300, batch=256)
#: Kuhn tenfold below uniform: 80 iterations of these reached 14 to 33 mbb/g over seeds
#: 0 to 4 (uniform: 458), 30 iterations reach about 100.
CONVERGE = dict(traversals=1000, memory=200_000, hidden=32, sgd_steps=300, batch=256, policy_steps=1500)


def _uniform(problem, rows) -> np.ndarray:
    return rows.scatter(rows.uniform(), np.zeros(problem.size))


def _traverse(problem, sigma, trav, n, seed=1):
    """``n`` traversals into memories big enough to keep every sample, in order."""
    rows = encode_infosets(problem)
    t = problem.tree
    width, depth, ns = t.max_actions, t.max_depth + 2, t.n_streets
    cap = n * int((t.kind == 0).sum())
    mem = dict(
        adv_rows=np.zeros(cap, np.int32), adv_vals=np.zeros((cap, width), np.float32),
        adv_iter=np.zeros(cap, np.int32), strat_rows=np.zeros(cap, np.int32),
        strat_vals=np.zeros((cap, width), np.float32), strat_iter=np.zeros(cap, np.int32),
    )  # fmt: skip
    counts = np.zeros(2, np.int64)
    nodes = deep_traversals(
        problem.ktree, problem.chance.kernel, trav, n, seed, 7, sigma, rows.row_of,
        mem["adv_rows"], mem["adv_vals"], mem["adv_iter"],
        mem["strat_rows"], mem["strat_vals"], mem["strat_iter"], counts,
        np.zeros((depth, width)), np.zeros((depth, width)), np.zeros((depth, 2), np.int64),
        np.full(ns, -1, np.int32), np.zeros((2, ns), np.int32),
    )  # fmt: skip
    assert counts.max() < cap  # nothing was dropped
    return rows, mem, counts, nodes


@pytest.mark.parametrize("game,n", [(KUHN, 200_000), ("leduc.limit.2p", 100_000)])
def test_sampled_regrets_average_to_vector_cfr(game, n):
    p = make_problem(game)
    rows = encode_infosets(p)
    rows, mem, counts, nodes = _traverse(p, _uniform(p, rows), 0, n)
    assert nodes > n
    k = int(counts[0])
    assert (mem["adv_iter"][:k] == 7).all()
    # per entry: the mean over traversals of the regret samples stored there
    total = np.zeros(p.size)
    square = np.zeros(p.size)
    for a in range(rows.masks.shape[1]):
        ent = rows.entry[mem["adv_rows"][:k]] + a
        live = a < rows.n_act[mem["adv_rows"][:k]]
        np.add.at(total, ent[live], mem["adv_vals"][:k, a][live])
        np.add.at(square, ent[live], mem["adv_vals"][:k, a][live].astype(np.float64) ** 2)
    mean = total / n
    se = np.sqrt(np.maximum(square / n - mean**2, 0) / n)
    cfr = CFRSolver(p)
    cfr.iterate(1)  # player 0's walk reads the uniform strategy
    mine = player_entries(p, 0)
    assert np.abs(cfr.regrets[mine]).max() > 0.1
    # a sampled regret that left out a factor or a sign misses by far more than 5 SE
    assert np.all(np.abs(mean[mine] - cfr.regrets[mine]) <= 5 * se[mine] + 1e-6)
    assert not (total[~mine] != 0).any()  # no regret lands on the opponent's rows


def test_strategy_samples_repeat_the_table_the_traversals_read():
    p = make_problem("leduc.limit.2p")
    rows = encode_infosets(p)
    rng = np.random.default_rng(3)
    sigma = np.zeros(p.size)
    for r in range(rows.entry.size):
        w = rng.random(rows.n_act[r])
        sigma[rows.entry[r] : rows.entry[r] + rows.n_act[r]] = w / w.sum()
    rows, mem, counts, _ = _traverse(p, sigma, 1, 2_000)
    k = int(counts[1])
    assert k > 2_000
    got = mem["strat_rows"][:k]
    assert (rows.player[got] == 0).all()  # the opponent's information sets only
    for i in range(0, k, 97):
        r = got[i]
        n = rows.n_act[r]
        np.testing.assert_allclose(mem["strat_vals"][i, :n], sigma[rows.entry[r] : rows.entry[r] + n], rtol=1e-6)
        assert not mem["strat_vals"][i, n:].any()


def test_a_full_reservoir_keeps_a_uniform_sample_of_everything_offered():
    p = make_problem(KUHN)
    rows = encode_infosets(p)
    t = p.tree
    width, depth = t.max_actions, t.max_depth + 2
    cap, n_iter, per = 500, 20, 500
    mem = [np.zeros(cap, np.int32), np.zeros((cap, width), np.float32), np.zeros(cap, np.int32)]
    smem = [np.zeros(cap, np.int32), np.zeros((cap, width), np.float32), np.zeros(cap, np.int32)]
    counts = np.zeros(2, np.int64)
    offered = []
    for it in range(1, n_iter + 1):
        before = int(counts[0])
        deep_traversals(
            p.ktree, p.chance.kernel, 0, per, it, it, _uniform(p, rows), rows.row_of, *mem, *smem,
            counts, np.zeros((depth, width)), np.zeros((depth, width)),
            np.zeros((depth, 2), np.int64), np.full(1, -1, np.int32), np.zeros((2, 1), np.int32),
        )  # fmt: skip
        offered.append(int(counts[0]) - before)
    share = np.bincount(mem[2], minlength=n_iter + 1)[1:] / cap
    expected = np.array(offered) / sum(offered)
    # each iteration keeps its share of the offers, not the last ones only
    assert np.abs(share - expected).max() < 0.03
    assert share[0] > 0.02


def test_regret_matching_plays_the_best_action_when_none_is_positive():
    adv = np.array([[1.0, 3.0, 0.0], [-2.0, -0.5, -1.0], [-1.0, 5.0, 7.0]])
    masks = np.array([[1, 1, 1], [1, 1, 1], [1, 1, 0]], dtype=float)
    out = _regret_matching(adv, masks)
    np.testing.assert_allclose(out, [[0.25, 0.75, 0.0], [0.0, 1.0, 0.0], [0.0, 1.0, 0.0]])


def test_every_information_set_has_its_own_input():
    p = make_problem("leduc.nolimit.2p", "0.5p,1p,a")
    rows = encode_infosets(p)
    assert rows.entry.size == int((rows.row_of >= 0).sum())
    assert np.unique(rows.feats, axis=0).shape[0] == rows.entry.size
    # a first-street row: one card (one rank, one suit) and no board yet
    first = int(np.flatnonzero(p.tree.street[rows.node] == 0)[0])
    per = 3 + 2  # Leduc's ranks and suits
    assert rows.feats[first, :per].sum() == 2 and rows.feats[first, per : 2 * per].sum() == 0


def test_deep_refuses_a_card_abstraction_in_one_line():
    p = make_problem(KUHN, bucket_fn=lambda s, h, b: 0, bucket_counts=[1])
    assert "without a card abstraction" in deep_refusal(p)
    with pytest.raises(ConfigError, match="deep"):
        AlgorithmConfig("deep", traversals=0)
    with pytest.raises(ConfigError, match="--traversals applies to --algo deep"):
        AlgorithmConfig("es", traversals=10)


def test_without_jax_deep_says_how_to_install_it(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "jax", None)  # import jax now raises ImportError
    with pytest.raises(ValueError, match=r"pip install -e '\.\[deep\]'"):
        DeepCFRSolver(make_problem(KUHN))


def test_deep_cfr_cuts_kuhn_exploitability_tenfold():
    p = make_problem(KUHN)
    s = make_training_solver(p, "deep", options=DeepCFROptions(**CONVERGE, seed=1))
    uniform = exploitability(s.average_strategy())
    s.iterate(80)
    got = exploitability(s.average_strategy())
    assert got < uniform / 10, (got, uniform)
    rec = s.record()
    assert rec["traversals"] == 80 * 2 * CONVERGE["traversals"]
    assert rec["sgd_steps"] == 80 * 2 * CONVERGE["sgd_steps"]
    assert rec["strategy_samples"] > 0 and rec["advantage_memory"][0] > 0


def test_a_resumed_deep_run_repeats_the_run_never_stopped(tmp_path):
    from solver.training.checkpoint import load_checkpoint, restore_checkpoint, save_checkpoint

    p = make_problem(KUHN)
    opts = DeepCFROptions(**{**SMALL, "memory": 2_000}, seed=4)  # the reservoirs fill up
    whole = DeepCFRSolver(p, opts)
    whole.iterate(6)
    first = DeepCFRSolver(p, opts)
    first.iterate(3)
    save_checkpoint(tmp_path / "run.ckpt", first, seconds=1.0)
    ckpt = load_checkpoint(tmp_path / "run.ckpt")
    again = DeepCFRSolver(p, opts)
    restore_checkpoint(again, ckpt)
    again.iterate(3)
    assert again.iterations == 6
    np.testing.assert_array_equal(again.sigma, whole.sigma)
    for name in ("adv_rows", "adv_vals", "strat_rows", "strat_vals", "strat_iter", "offered"):
        np.testing.assert_array_equal(getattr(again, name), getattr(whole, name))
    np.testing.assert_array_equal(again.average_strategy().policy, whole.average_strategy().policy)
    other = DeepCFRSolver(p, DeepCFROptions(**{**SMALL, "memory": 2_000}, seed=5))
    with pytest.raises(ValueError, match="seed"):
        restore_checkpoint(other, ckpt)


def test_train_writes_a_deep_strategy_file_that_plays(tmp_path, capsys):
    from solver.training.config import Budget, TrainingConfig
    from solver.training.run import run_training

    out = tmp_path / "kuhn.deep.strategy"
    config = TrainingConfig(
        game=KUHN,
        algorithm=AlgorithmConfig("deep", traversals=200, sgd_steps=200, net_width=32, memory_size=50_000),
        budget=Budget(iterations=4),
        seed=1,
        out=out,
    )
    run = run_training(config)
    assert run.training["deep"]["traversals"] == 4 * 2 * 200
    assert run.training["options"]["traversals"] == 200 and run.training["seed"] == 1
    opened = open_strategy(out)
    assert opened.training["algorithm"] == "deep"
    strategy = opened.to_strategy()
    # the file's u8 policy is the strategy network's, rounded
    np.testing.assert_allclose(strategy.policy, run.strategy.policy, atol=1 / 255 + 1e-9)
    uniform = Strategy(strategy.problem, _uniform(strategy.problem, encode_infosets(strategy.problem)))
    assert exploitability(strategy) < exploitability(uniform)
    # pokerbot play seats it at our dealer's table
    from .test_play_cli import _OurDealer, _play

    dealer = _OurDealer(KUHN, hands=20)
    status, _, err = _play(["--port", str(dealer.port), "--strategy", str(out), "--hands", "20"], capsys)
    dealer.join()
    assert (status, err) == (0, []) and dealer.result.hands_played == 20
