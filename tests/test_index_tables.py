"""Successor tables (abstraction.index_tables): every round's index of a hand by table
lookups equals the hand indexer's, exhaustively on small decks and on random hands of
larger ones, and training that deals through them is bit for bit the training that
indexes each street."""

from __future__ import annotations

from itertools import combinations, permutations

import numpy as np
import pytest

from abstraction.index_tables import build_index_tables, index_rounds, table_bytes
from abstraction.indexer import HandIndexer
from poker.cards import deck_cards
from solver.training.algorithms import make_training_solver
from solver.training.dealt import make_dealt_problem
from solver.training.sampled import SamplingOptions


def _every_hand(deck: list[int], groups: list[int]) -> np.ndarray:
    """Every ordered sequence of disjoint groups (each group as a set) of ``deck``."""
    hands: list[tuple[int, ...]] = [()]
    for k in groups:
        hands = [h + c for h in hands for c in combinations([x for x in deck if x not in h], k)]
    return np.asarray(hands, np.int64)


def _indexer_rounds(ix: HandIndexer, hands: np.ndarray) -> np.ndarray:
    ends = np.cumsum(ix.rounds)
    return np.stack([ix.index_batch(hands[:, : ends[r]], r) for r in range(ix.num_rounds)], axis=1)


@pytest.mark.parametrize(
    ("groups", "ranks", "suits"),
    [([1, 1], 3, 2), ([1, 2, 1], 4, 3), ([2, 1, 1], 4, 4), ([2, 1, 1, 1], 5, 4)],
)
def test_every_hand_of_a_small_deck_gets_the_indexers_classes(groups, ranks, suits) -> None:
    ix = HandIndexer(rounds=groups, num_ranks=ranks, num_suits=suits)
    tables = build_index_tables(ix)
    assert tables is not None and tables.n_perm == len(list(permutations(range(suits))))
    hands = _every_hand(deck_cards(ranks, suits), groups)
    every = len(hands) <= 300_000
    if not every:  # 20-card hold'em: a seeded seventh of its 1.9 M sequences
        hands = hands[np.random.default_rng(3).choice(len(hands), 300_000, replace=False)]
    got = index_rounds(tables, hands)
    assert np.array_equal(got, _indexer_rounds(ix, hands))
    if every:  # and every class of every round is reached
        assert [len(np.unique(got[:, r])) for r in range(len(groups))] == [ix.count(r) for r in range(len(groups))]


@pytest.mark.parametrize(("groups", "ranks", "suits"), [([2, 3, 1, 1], 6, 3), ([2, 3], 13, 4), ([2, 3, 1, 1], 5, 4)])
def test_random_hands_of_larger_decks_get_the_indexers_classes(groups, ranks, suits) -> None:
    ix = HandIndexer(rounds=groups, num_ranks=ranks, num_suits=suits)
    tables = build_index_tables(ix)
    assert tables is not None
    deck = np.asarray(deck_cards(ranks, suits))
    rng = np.random.default_rng(7)
    hands = np.stack([rng.choice(deck, sum(groups), replace=False) for _ in range(20_000)]).astype(np.int64)
    assert np.array_equal(index_rounds(tables, hands), _indexer_rounds(ix, hands))


def test_tables_over_the_cap_are_not_built() -> None:
    # full hold'em street by street: 2.9 G entries on the river
    assert build_index_tables(HandIndexer(rounds=[2, 3, 1, 1])) is None
    small = HandIndexer(rounds=[2, 1, 1, 1], num_ranks=5, num_suits=4)
    assert build_index_tables(small, max_entries=69_489) is None
    assert build_index_tables(small, max_entries=69_490) is not None


@pytest.mark.parametrize(("game", "betting", "algo"), [("holdem.nolimit.2p.short20", "1p,cap1", "es"),
                                                       ("leduc.nolimit.2p", "1p,a", "tcfr")])  # fmt: skip
def test_training_through_the_tables_is_bit_identical(game, betting, algo) -> None:
    runs = []
    for tabled in (True, False):
        problem = make_dealt_problem(game, betting, index_tables=tabled)
        assert problem.cards.tabled == int(tabled)
        solver = make_training_solver(problem, algo, SamplingOptions(seed=4, dtype="float32"))
        solver.iterate(200_000)
        runs.append((solver.regrets.copy(), solver.avg_sums.copy()))
    (r1, a1), (r2, a2) = runs
    assert np.abs(r1).sum() > 0 and np.abs(a1).sum() > 0
    assert np.array_equal(r1, r2) and np.array_equal(a1, a2)


def test_the_memory_plan_counts_the_tables_lossless_dealing_builds() -> None:
    from solver.training.memory import estimate_training_memory

    ix = HandIndexer(rounds=[2, 1, 1, 1], num_ranks=5, num_suits=4)
    tables = build_index_tables(ix)
    held = sum(a.nbytes for a in tables if isinstance(a, np.ndarray))
    assert table_bytes(ix) == held == 565_480
    assert table_bytes(HandIndexer(rounds=[2, 3, 1, 1])) == 0
    dealt = estimate_training_memory("holdem.nolimit.2p.short20", "1p,cap1", algorithm="es")
    listed = estimate_training_memory("holdem.nolimit.2p.short20", "1p,cap1", algorithm="cfr+")
    assert dealt.dealt and not listed.dealt
    assert dealt.indexers == listed.indexers + held
