"""Targeted CFR: each behaviour of Jackson 2017 pinned on Leduc with a fixed seed."""

from __future__ import annotations

import numpy as np
import pytest

from solver.evaluation.best_response import exploitability
from solver.problem import make_problem
from solver.training.sampled import SamplingOptions as SO
from solver.training.tcfr import (
    PAPER_GAME1,
    PAPER_GAME2,
    SLUMBOT_MOD40,
    TargetedCFRSolver,
    Targeting,
    TargetingError,
    default_targeting,
    parse_targeting,
)

# Leduc: street 0 is preflop, street 1 the flop. A modular schedule whose listed
# remainders target only the flop: iterations 0..m-2 are not full, iteration m-1 is.
FLOP_ONLY_THEN_FULL = "mod4:1@0-2"


@pytest.fixture(scope="module")
def leduc():
    return make_problem("leduc.limit.2p")


def _street_entries(solver, street: int) -> np.ndarray:
    """Indices of every entry on ``street`` in ``solver``'s tables."""
    tree = solver.problem.tree
    return np.concatenate(
        [solver.layout.node_entries(int(n)) for n in tree.decision_nodes(street=street)]
    )


def _node_block(solver, node: int) -> np.ndarray:
    """Indices of ``node``'s entries in ``solver``'s tables, bucket by bucket."""
    return solver.layout.node_entries(node)


def test_targeting_specs():
    assert PAPER_GAME1.weights == (0.2, 0.8) and PAPER_GAME1.sets[1] == frozenset({2, 3})
    assert PAPER_GAME2.full_probability(4) == pytest.approx(0.025)
    assert SLUMBOT_MOD40.modulus == 40 and SLUMBOT_MOD40.full_probability(4) == pytest.approx(
        1 / 40
    )
    resolved = SLUMBOT_MOD40.resolved(4)
    assert resolved[0] == frozenset(range(4))  # remainder 0: every street
    assert [resolved[r] for r in (1, 30, 31, 37, 38, 39)] == [
        frozenset({2, 3}),
        frozenset({2, 3}),
        frozenset({1, 3}),
        frozenset({1, 3}),
        frozenset({0, 3}),
        frozenset({0, 3}),
    ]
    assert parse_targeting("game1") is PAPER_GAME1 and parse_targeting("mod40") is SLUMBOT_MOD40
    t = parse_targeting("0123:1,23:3")
    assert t.weights == (0.25, 0.75)
    m = parse_targeting("mod40:03@38-39;13@31-37;23@1-30")
    assert m.resolved(4) == resolved
    assert parse_targeting(m.spec).resolved(4) == resolved
    assert parse_targeting("full").full_probability(2) == 1.0
    assert default_targeting(4) is SLUMBOT_MOD40
    assert default_targeting(2).full_probability(2) == pytest.approx(0.1)
    arrays = Targeting.table([((0, 1), 0.25), ((1,), 0.75)]).kernel_arrays(2)
    assert arrays["target_mask"].tolist() == [3, 2]
    np.testing.assert_allclose(arrays["target_cum"], [0.25, 1.0])


@pytest.mark.parametrize(
    "spec,message",
    [
        ("1:1", "never targets every street"),
        ("0123:0.5,23:0.5", "street 2"),
        ("01:0.5,01:0.5", "twice"),
        ("01:0", "not positive"),
        ("mod4:1@1-5", "outside"),
        ("mod4:1@1;0@1", "twice"),
        ("01=1", "STREETS:PROBABILITY"),
        ("mod4:1/2", "STREETS@REMAINDERS"),
        ("modx:1@1", "targeting"),
    ],
)
def test_targeting_errors(leduc, spec, message):
    with pytest.raises(TargetingError, match=message):
        TargetedCFRSolver(leduc, targeting=spec)


def test_untargeted_streets_and_non_full_iterations_update_nothing(leduc):
    s = TargetedCFRSolver(leduc, SO(seed=1), targeting=FLOP_ONLY_THEN_FULL)
    pre, flop = _street_entries(s, 0), _street_entries(s, 1)
    s.iterate(3)  # iterations 0, 1, 2 target the flop only
    assert not s.regrets[pre].any()  # preflop: one action sampled, nothing updated
    assert s.regrets[flop].any()  # flop: explored and updated
    assert not s.avg_sums.any()  # not full: the average is untouched
    s.iterate(1)  # iteration 3: full
    assert s.regrets[pre].any() and s.avg_sums.any()


def test_full_iterations_drawn_with_their_probability(leduc):
    s = TargetedCFRSolver(leduc, SO(seed=2), targeting="01:0.25,1:0.75")
    full = 0
    for _ in range(800):
        before = s.avg_sums.sum()
        s.iterate(1)
        full += s.avg_sums.sum() != before
    # Binomial(800, 0.25): mean 200, sd 12.2; 5 sd either way.
    assert 139 < full < 261


def test_importance_correction_scales_updates_by_one_over_q(leduc):
    # Iteration 0 of "mod2:1@0" targets the flop only; R = {flop} and R = all streets
    # each have frequency 1/2. A flop information set reached after the traverser's own
    # k preflop decisions (sampled uniformly from zero regrets, 2 or 3 actions each) has
    # q = 1/2 * prod(1/n_j) + 1/2 * 1, so its update is scaled by 1/q.
    plain = TargetedCFRSolver(leduc, SO(seed=3), targeting="mod2:1@0")
    scaled = TargetedCFRSolver(leduc, SO(seed=3), targeting="mod2:1@0", importance=True)
    plain.iterate(1)
    scaled.iterate(1)
    hit = plain.regrets != 0
    assert hit.any()
    np.testing.assert_array_equal(hit, scaled.regrets != 0)  # the same deal and samples
    ratios = np.unique(np.round(scaled.regrets[hit] / plain.regrets[hit], 9))
    allowed = {round(1 / (0.5 * p + 0.5), 9) for p in (1 / 2, 1 / 3, 1 / 4, 1 / 6, 1 / 9)}
    assert set(ratios.tolist()) <= allowed and len(ratios) >= 1
    # Iteration 1 is full (frequency 1/2): preflop sets are updated only then, q = 1/2;
    # flop sets have q = 1/2 * prod(sigma of the traverser's preflop actions on the
    # explored path) + 1/2, those sigma still uniform (preflop regrets were untouched).
    p0, s0 = plain.regrets.copy(), scaled.regrets.copy()
    plain.iterate(1)
    scaled.iterate(1)
    pre, flop = _street_entries(plain, 0), _street_entries(plain, 1)
    dp, ds = plain.regrets - p0, scaled.regrets - s0
    hit_pre = pre[dp[pre] != 0]
    assert hit_pre.size and np.allclose(ds[hit_pre] / dp[hit_pre], 2.0, rtol=1e-12)
    hit_flop = flop[dp[flop] != 0]
    flop_ratios = set(np.round(ds[hit_flop] / dp[hit_flop], 9).tolist())
    assert flop_ratios <= allowed and flop_ratios
    # With every iteration full, q = 1 for every information set: no scaling.
    es_like = TargetedCFRSolver(leduc, SO(seed=4), targeting="full", importance=True)
    ref = TargetedCFRSolver(leduc, SO(seed=4), targeting="full")
    es_like.iterate(50)
    ref.iterate(50)
    np.testing.assert_array_equal(es_like.regrets, ref.regrets)


def test_close_decisions_are_explored_and_updated(leduc):
    # Only the flop is targeted. At the root (player 0, preflop) every bucket gets
    # regrets (check 1.0, raise 0.5): a gap of 0.5. With a close threshold above the gap
    # the traverser explores both actions there and updates both regrets; below it the
    # root is sampled and left alone.
    moved = {}
    for threshold in (0.4, 1.0):
        s = TargetedCFRSolver(leduc, SO(seed=5), targeting="mod8:1@0-6", close_threshold=threshold)
        root = _node_block(s, 0)
        s.regrets[root] = np.tile([1.0, 0.5], leduc.chance.n_buckets[0])
        before = s.regrets.copy()
        s.iterate(1)
        moved[threshold] = (s.regrets[root] - before[root]).reshape(-1, 2)
    assert not moved[0.4].any()
    changed = moved[1.0][np.abs(moved[1.0]).sum(axis=1) > 0]
    assert len(changed) == 1  # the dealt bucket of player 0
    assert np.all(changed != 0)  # both top actions evaluated: both regrets move
    sig = np.array([1.0, 0.5]) / 1.5  # regret matching of (1.0, 0.5): sum sigma (v - c) = 0
    assert float(sig @ changed[0]) == pytest.approx(0.0, abs=1e-9)


def _flop_nodes_with_updates(solver) -> set[int]:
    tree = solver.problem.tree
    return {
        int(n)
        for n in tree.decision_nodes(street=1)
        if solver.regrets[_node_block(solver, int(n))].any()
    }


def test_pure_current_strategy_plays_the_highest_regret(leduc):
    # Preflop regrets favour action 0 (check/call) everywhere, with action 1 positive
    # too; only the flop is targeted, so the preflop regrets stay as set. Playing the
    # highest regret, every walk checks/calls through the preflop: flop updates only
    # below the preflop line "cc". Regret matching sometimes raises instead.
    tree = leduc.tree
    line_cc = {
        int(n)
        for n in tree.decision_nodes(street=1)
        if tree.betting_string(int(n)).startswith("cc/")
    }
    found = {}
    for pure in (True, False):
        s = TargetedCFRSolver(leduc, SO(seed=6), targeting="mod1000:1@0-998", pure=pure)
        for node in tree.decision_nodes(street=0):
            n = int(tree.n_child[node])
            row = np.zeros(n)
            call = 0 if tree.action[tree.child[node]] != 0 else 1  # skip fold
            row[call] = 2.0
            row[(call + 1) % n] = 1.0
            s.regrets[_node_block(s, int(node))] = np.tile(row, leduc.chance.n_buckets[0])
        s.iterate(200)
        found[pure] = _flop_nodes_with_updates(s)
    assert found[True] and found[True] <= line_cc
    assert found[False] - line_cc


def test_pure_average_counts_played_actions(leduc):
    s = TargetedCFRSolver(leduc, SO(seed=7), targeting="full", pure=True)
    s.iterate(20_000)
    sums = s.avg_sums[s.avg_sums != 0]
    # Every contribution is exactly 1 (the played action of one visit).
    np.testing.assert_array_equal(sums, np.round(sums))
    # Pure current strategies still average to a good strategy: 0.142-0.154 for seeds 0-5.
    assert exploitability(None, s.average_strategy()).exploitability < 0.25


def test_options_are_recorded(leduc):
    s = TargetedCFRSolver(
        leduc, targeting="01:0.2,1:0.8", importance=True, close_threshold=2.5, pure=True
    )
    assert s.options() == {
        "averaging": "uniform",
        "dtype": "float64",
        "stratify": True,
        "targeting": "01:0.2,1:0.8",
        "importance": True,
        "close_threshold": 2.5,
        "pure": True,
    }
    with pytest.raises(ValueError):
        TargetedCFRSolver(leduc, close_threshold=-1.0)
