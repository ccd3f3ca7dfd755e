"""Best response and exploitability against brute force, a slow twin and bucket expansion."""

from __future__ import annotations

import threading
from itertools import product

import numpy as np
import pytest

from poker.cards import rank_of
from solver.evaluation.best_response import (
    abstract_and_real_exploitability,
    abstract_exploitability,
    abstract_walks,
    best_response_value,
    evaluation_units,
    exploitability,
    profile_value,
    walk_units,
)
from solver.problem import make_problem
from solver.strategy import Strategy

from ._solver_twins import (
    TWO_CARD_LEDUC,
    build_history_tree,
    entry_map,
    infoset_keys,
    profile_values,
    random_policy,
)


def _as_dict(problem, policy):
    return {key: list(policy[o : o + n]) for key, (o, n) in entry_map(problem).items()}


@pytest.mark.parametrize("responder", [0, 1])
@pytest.mark.parametrize("seed", [1, 2])
def test_kuhn_best_response_is_best_pure_strategy(responder, seed):
    problem = make_problem("kuhn.limit.2p")
    policy = random_policy(problem, np.random.default_rng(seed))
    root = build_history_tree(problem.game)
    fixed = _as_dict(problem, policy)
    keys = infoset_keys(root, responder)
    assert len(keys) == 6
    best = -np.inf
    for choice in product(*[range(len(fixed[k])) for k in keys]):
        pure = dict(fixed)
        for k, a in zip(keys, choice):
            pure[k] = [1.0 if i == a else 0.0 for i in range(len(fixed[k]))]
        best = max(best, profile_values(root, pure)[responder])
    assert best_response_value(Strategy(problem, policy), responder) == pytest.approx(
        best, abs=1e-12
    )


@pytest.mark.parametrize("game", ["kuhn.limit.2p", "leduc.limit.2p", TWO_CARD_LEDUC])
def test_profile_value_matches_slow_twin(game):
    problem = make_problem(game)
    policy = random_policy(problem, np.random.default_rng(7))
    v0, v1 = profile_values(build_history_tree(problem.game), _as_dict(problem, policy))
    s = Strategy(problem, policy)
    assert profile_value(s, 0) == pytest.approx(v0, abs=1e-12)
    assert profile_value(s, 1) == pytest.approx(v1, abs=1e-12)
    assert v0 == pytest.approx(-v1, abs=1e-12)


def test_leduc_best_response_bounds():
    problem = make_problem("leduc.limit.2p")
    rng = np.random.default_rng(3)
    s = Strategy(problem, random_policy(problem, rng))
    r = exploitability("leduc.limit.2p", s)
    assert r.br[0] >= r.value and r.br[1] >= -r.value and r.exploitability > 0
    # No pure strategy of the responder (sampled) beats the best response.
    tree = problem.tree
    for _ in range(20):
        mix = s.policy.copy()
        for n in tree.decision_nodes(player=0):
            k = int(tree.n_child[n])
            for b in range(problem.chance.n_buckets[tree.street[n]]):
                o = problem.entry(int(n), b, 0)
                mix[o : o + k] = np.eye(k)[rng.integers(k)]
        assert profile_value(Strategy(problem, mix), 0) <= r.br[0] + 1e-12


def _rank_buckets(street, hole, board):
    """Leduc card abstraction that forgets suits: (hole rank) / (hole rank, board rank)."""
    r = rank_of(hole[0]) - 10
    return r if street == 0 else 3 * r + rank_of(board[0]) - 10


def _pair_buckets(street, hole, board):
    """A coarse imperfect-recall abstraction: preflop rank, then only 'paired or not'."""
    return rank_of(hole[0]) - 10 if street == 0 else int(rank_of(hole[0]) == rank_of(board[0]))


@pytest.mark.parametrize("fn,counts", [(_rank_buckets, [3, 9]), (_pair_buckets, [3, 2])])
def test_best_response_to_bucketed_strategy(fn, counts):
    """A strategy over buckets and its per-hand expansion have the same best responses."""
    abstract = make_problem("leduc.limit.2p", bucket_fn=fn, bucket_counts=counts)
    lossless = make_problem("leduc.limit.2p")
    pol = random_policy(abstract, np.random.default_rng(11))
    expanded = np.zeros(lossless.size)
    ch = lossless.chance
    tree = lossless.tree
    for n in tree.decision_nodes():
        k = int(tree.n_child[n])
        for bs in np.flatnonzero(ch.board_street == tree.street[n]):
            board = tuple(ch.deck[x] for x in ch.board_cards[bs] if x >= 0)
            for h in range(ch.n_hands):
                b = int(ch.kernel.bucket[bs, h])
                if b < 0:
                    continue
                a = fn(int(tree.street[n]), (ch.deck[ch.hands[h, 0]],), board)
                src = abstract.entry(int(n), a, 0)
                dst = lossless.entry(int(n), b, 0)
                expanded[dst : dst + k] = pol[src : src + k]
    ra = exploitability(None, Strategy(abstract, pol))
    rl = exploitability(None, Strategy(lossless, expanded))
    assert ra.br == pytest.approx(rl.br, abs=1e-12)
    assert ra.value == pytest.approx(rl.value, abs=1e-12)


def test_uniform_leduc_exploitability():
    problem = make_problem("leduc.limit.2p")
    tree = problem.tree
    pol = np.zeros(problem.size)
    for n in tree.decision_nodes():
        k = int(tree.n_child[n])
        o = int(problem.offset[n])
        pol[o : o + k * problem.chance.n_buckets[tree.street[n]]] = 1.0 / k
    r = exploitability(None, Strategy(problem, pol))
    assert r.exploitability == pytest.approx(2.373611111, abs=1e-9)  # oracle, N = 1
    with pytest.raises(ValueError):
        exploitability("kuhn.limit.2p", Strategy(problem, pol))


def test_walks_side_by_side_give_the_same_figures_and_count_every_walk():
    """Threads change how fast, not what: every figure equals the one-thread run's bit for
    bit, and progress counts every walk's units to the total it announced first (the
    abstract responders of imperfect-recall buckets make one walk per level of their
    decisions, plus one)."""
    problem = make_problem("leduc.limit.2p", bucket_fn=_pair_buckets, bucket_counts=[3, 2])
    strategy = Strategy(problem, random_policy(problem, np.random.default_rng(5)))
    alone = abstract_and_real_exploitability(strategy)
    heard: list[tuple[int, int]] = []
    lock = threading.Lock()

    def progress(done: int, walks: int) -> None:
        with lock:
            heard.append((done, walks))

    together = abstract_and_real_exploitability(strategy, threads=3, progress=progress)
    assert together == alone
    levels = [abstract_walks(strategy, p) for p in (0, 1)]
    assert min(levels) > 2  # several levels: a real test of the count
    walks = sum(levels) + 3  # and both real responders and the profile's value, once
    total = walks * walk_units(problem)
    assert evaluation_units(strategy) == total
    assert heard[0] == (0, total) and heard[-1] == (total, total)
    assert [d for d, _ in heard] == sorted(d for d, _ in heard)
    # the real responder alone, in threads, is the plain call's
    assert exploitability(None, strategy, threads=2) == exploitability(None, strategy) == alone[1]
    assert abstract_exploitability(None, strategy, threads=2) == alone[0]
    assert alone[0].br[0] < alone[1].br[0] and alone[0].value == alone[1].value
    with pytest.raises(ValueError, match="threads"):
        exploitability(None, strategy, threads=0)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_an_error_in_progress_ends_the_evaluation_with_that_error(threads):
    """A progress callback that raises (how training stops its final evaluation on a
    signal) ends the evaluation: the walks stop and its own error is the one raised
    (tests/test_stop_walks.py stops long walks this way mid-walk)."""
    problem = make_problem("leduc.limit.2p", bucket_fn=_pair_buckets, bucket_counts=[3, 2])
    strategy = Strategy(problem, random_policy(problem, np.random.default_rng(5)))
    heard: list[int] = []

    class Stop(Exception):
        pass

    def progress(done: int, total: int) -> None:
        heard.append(done)
        if done > 0:
            raise Stop

    with pytest.raises(Stop):
        abstract_and_real_exploitability(strategy, threads=threads, progress=progress)
    assert heard[0] == 0 and len(heard) == 2  # the first count of work raised, and no more came
