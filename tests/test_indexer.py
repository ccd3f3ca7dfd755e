"""Tests of abstraction.indexer: Waugh's suit-isomorphism hand indexer.

The indexer is checked against brute force written here independently of it: a hand's
canonical form is the minimum, over all permutations of the deck's suits, of its tuple
of sorted per-group card tuples; class counts come from enumerating hands (small decks)
or from Burnside's lemma (larger ones, cross-checked against enumeration and the known
hold'em counts). Hold'em itself is checked by round trips on random indices and hands.
"""

from __future__ import annotations

import itertools
import math
import subprocess
import sys

import numpy as np
import pytest
from numba import njit

from abstraction.indexer import HandIndexer, index_hand_njit, unindex_hand_njit
from poker.cards import deck_cards, parse_cards

HOLDEM_COUNTS = {
    (2,): [169],
    (2, 3): [169, 1_286_792],
    (2, 4): [169, 13_960_050],
    (2, 5): [169, 123_156_254],
    (2, 3, 1): [169, 1_286_792, 55_190_538],
    (2, 3, 1, 1): [169, 1_286_792, 55_190_538, 2_428_287_420],
    (3,): [1_755],
    (4,): [16_432],
    (5,): [134_459],
}


# ----------------------------------------------------------------- brute force


def deck_suits(num_suits: int) -> list[int]:
    """ACPC suits of a deck with ``num_suits`` suits (the last ones)."""
    return list(range(4 - num_suits, 4))


def group_bounds(rounds) -> list[tuple[int, int]]:
    ends = list(itertools.accumulate(rounds))
    return list(zip([0] + ends[:-1], ends))


def canonical(hand, rounds, suits) -> tuple:
    """Minimum over suit permutations of the tuple of sorted per-group card tuples."""
    bounds = group_bounds(rounds)
    best = None
    for perm in itertools.permutations(suits):
        relabel = dict(zip(suits, perm))
        form = tuple(
            tuple(sorted(c - (c & 3) + relabel[c & 3] for c in hand[a:b]))
            for a, b in bounds
        )
        if best is None or form < best:
            best = form
    return best


def canonical_codes(hands: np.ndarray, rounds, suits) -> np.ndarray:
    """:func:`canonical` of every row, vectorized; encoded as a base-52 integer.

    Groups have fixed lengths, so comparing the concatenated sorted groups as base-52
    numbers is comparing the tuples lexicographically.
    """
    bounds = group_bounds(rounds)
    columns = np.ascontiguousarray(hands.T, dtype=np.intp)
    best = None
    for perm in itertools.permutations(suits):
        table = np.arange(52)
        for s, t in zip(suits, perm):
            table[s::4] = np.arange(s, 52, 4) - s + t
        mapped = table.astype(np.uint8)[columns]
        code = np.zeros(len(hands), np.int64)
        for a, b in bounds:
            # sort the group's columns with a bubble-sort network of min/max
            cols = list(mapped[a:b])
            for i in range(len(cols)):
                for j in range(len(cols) - 1 - i):
                    cols[j], cols[j + 1] = (
                        np.minimum(cols[j], cols[j + 1]),
                        np.maximum(cols[j], cols[j + 1]),
                    )
            for col in cols:
                code = code * 52 + col
        best = code if best is None else np.minimum(best, code)
    return best


def all_hands(rounds, num_ranks: int, num_suits: int) -> np.ndarray:
    """Every hand of the deck: each group an increasing combination of unused cards."""
    deck = np.array(sorted(deck_cards(num_ranks, num_suits)), np.int64)
    hands = np.zeros((1, 0), np.int64)
    for c in rounds:
        used = (hands[:, :, None] == deck[None, None, :]).any(axis=1)
        left = np.broadcast_to(deck, used.shape)[~used].reshape(len(hands), -1)
        combos = np.array(
            list(itertools.combinations(range(left.shape[1]), c)), np.int64
        )
        new = left[:, combos].reshape(-1, c)
        hands = np.concatenate([np.repeat(hands, len(combos), axis=0), new], axis=1)
    return hands


def burnside_count(rounds, num_ranks: int, num_suits: int) -> int:
    """Number of suit-isomorphism classes, by Burnside's lemma.

    A suit permutation fixes a hand iff every group is a union of the permutation's card
    cycles (a suit cycle of length L gives ``num_ranks`` card cycles of length L); count
    the ways to give each cycle to one group or none with the right group sizes.
    """
    total = 0
    for perm in itertools.permutations(range(num_suits)):
        seen, lengths = set(), []
        for s in range(num_suits):
            length = 0
            while s not in seen:
                seen.add(s)
                s = perm[s]
                length += 1
            if length:
                lengths += [length] * num_ranks
        ways = {tuple(rounds): 1}
        for length in lengths:
            nxt: dict[tuple, int] = {}
            for need, w in ways.items():
                nxt[need] = nxt.get(need, 0) + w
                for j, m in enumerate(need):
                    if m >= length:
                        key = need[:j] + (m - length,) + need[j + 1 :]
                        nxt[key] = nxt.get(key, 0) + w
            ways = nxt
        total += ways.get((0,) * len(rounds), 0)
    assert total % math.factorial(num_suits) == 0
    return total // math.factorial(num_suits)


def random_hands(rng, n: int, k: int, deck) -> np.ndarray:
    deck = np.asarray(deck, np.uint8)
    return deck[np.argsort(rng.random((n, len(deck))), axis=1)[:, :k]]


# ------------------------------------------------------------- brute force sanity


def test_canonical_codes_match_python_canonical():
    rng = np.random.default_rng(1)
    rounds, suits = (2, 3, 1), deck_suits(4)
    hands = random_hands(rng, 300, 6, range(52))
    codes = canonical_codes(hands, rounds, suits)
    forms = [canonical(h.tolist(), rounds, suits) for h in hands]
    for i in range(len(hands)):
        for j in range(i + 1, len(hands)):
            assert (codes[i] == codes[j]) == (forms[i] == forms[j])
    # isomorphic variants share the code
    perm = np.array([1, 3, 0, 2])
    variant = (hands // 4) * 4 + perm[hands % 4]
    assert (canonical_codes(variant, rounds, suits) == codes).all()


@pytest.mark.parametrize(
    "rounds,num_ranks,num_suits",
    [
        ((1, 1), 3, 2),
        ((2, 3), 3, 4),
        ((2, 1, 1), 3, 3),
        ((2, 2), 4, 4),
        ((1, 2, 1), 4, 3),
    ],
)
def test_burnside_matches_enumeration(rounds, num_ranks, num_suits):
    suits = deck_suits(num_suits)
    forms = {
        canonical(h, rounds, suits)
        for h in all_hands(rounds, num_ranks, num_suits).tolist()
    }
    assert burnside_count(rounds, num_ranks, num_suits) == len(forms)


@pytest.mark.parametrize("rounds", list(HOLDEM_COUNTS))
def test_burnside_matches_holdem_counts(rounds):
    for r, expected in enumerate(HOLDEM_COUNTS[rounds]):
        assert burnside_count(rounds[: r + 1], 13, 4) == expected


# ------------------------------------------------------------------------ counts


@pytest.mark.parametrize("rounds", list(HOLDEM_COUNTS))
def test_holdem_counts(rounds):
    indexer = HandIndexer(rounds=list(rounds))
    assert [indexer.count(r) for r in range(len(rounds))] == HOLDEM_COUNTS[rounds]
    assert indexer.count() == HOLDEM_COUNTS[rounds][-1]


SMALL_DECKS = [
    ((1, 1), 3, 2),  # Leduc
    ((2, 3, 1, 1), 6, 4),  # 24-card short deck, street by street
    ((2, 5), 6, 4),  # 24-card short deck, whole board
    ((2, 4), 6, 4),
    ((2, 3, 1, 1), 5, 4),  # 20 cards
    ((2, 5), 5, 4),
    ((2, 3), 5, 4),
    ((1, 1), 4, 1),  # Kuhn-like, one suit
    ((2, 2, 2), 4, 2),
    ((3, 2), 5, 3),
    ((1, 1, 1, 1), 2, 4),
    ((4, 4), 2, 4),  # every card dealt
    ((6, 7), 13, 1),
    ((5,), 13, 4),
    ((2, 3, 1, 1), 13, 3),
]


@pytest.mark.parametrize("rounds,num_ranks,num_suits", SMALL_DECKS)
def test_small_deck_counts_match_burnside(rounds, num_ranks, num_suits):
    indexer = HandIndexer(rounds=rounds, num_ranks=num_ranks, num_suits=num_suits)
    for r in range(len(rounds)):
        assert indexer.count(r) == burnside_count(rounds[: r + 1], num_ranks, num_suits)


# ------------------------------------------------------------ exhaustive checks


def check_partition(indexer: HandIndexer, hands: np.ndarray, codes: np.ndarray, r: int):
    """index(h1) == index(h2) iff the codes are equal; indices are 0..count-1."""
    idx = indexer.index_batch(hands.astype(np.uint8), r)
    count = indexer.count(r)
    classes, dense = np.unique(codes, return_inverse=True)
    assert len(classes) == count
    assert np.array_equal(np.unique(idx), np.arange(count))
    # as many distinct (class, index) pairs as classes: the index is a function of the
    # class, and (same number of each) a bijection
    assert len(np.unique(dense.ravel().astype(np.int64) * count + idx)) == count
    return idx


@pytest.mark.parametrize(
    "rounds,num_ranks,num_suits",
    [
        ((1, 1), 3, 2),
        ((2, 3), 3, 4),
        ((2, 1, 1), 3, 3),
        ((2, 2), 4, 4),
        ((1, 2, 1), 4, 3),
        ((2, 3, 1, 1), 2, 4),
        ((3,), 13, 4),
    ],
)
def test_exhaustive_small_decks_python(rounds, num_ranks, num_suits):
    """All hands, plain-Python canonical forms, every round."""
    indexer = HandIndexer(rounds=rounds, num_ranks=num_ranks, num_suits=num_suits)
    suits = deck_suits(num_suits)
    for r in range(len(rounds)):
        hands = all_hands(rounds[: r + 1], num_ranks, num_suits)
        forms = [canonical(h, rounds[: r + 1], suits) for h in hands.tolist()]
        ids = {f: i for i, f in enumerate(sorted(set(forms)))}
        codes = np.array([ids[f] for f in forms], np.int64)
        idx = check_partition(indexer, hands, codes, r)
        # unindex returns a member of the same class, each group sorted
        back = indexer.unindex_batch(idx, r)
        for f, h in zip(forms, back.tolist()):
            assert canonical(h, rounds[: r + 1], suits) == f
            for a, b in group_bounds(rounds[: r + 1]):
                assert h[a:b] == sorted(h[a:b])


@pytest.mark.parametrize(
    "rounds,num_ranks,num_suits",
    [
        ((2, 3), 6, 4),
        ((2, 4), 5, 4),
        ((2, 5), 5, 4),
        ((2, 3, 1), 5, 4),
        ((1, 1), 13, 4),
    ],
)
def test_exhaustive_short_decks(rounds, num_ranks, num_suits):
    """All hands of 20- and 24-card decks, vectorized canonical forms, last round."""
    indexer = HandIndexer(rounds=rounds, num_ranks=num_ranks, num_suits=num_suits)
    hands = all_hands(rounds, num_ranks, num_suits)
    codes = canonical_codes(hands, rounds, deck_suits(num_suits))
    check_partition(indexer, hands, codes, len(rounds) - 1)


@pytest.mark.parametrize(
    "rounds,num_ranks,num_suits",
    [
        ((1, 1), 3, 2),
        ((2, 3, 1, 1), 6, 4),
        ((2, 5), 6, 4),
        ((2, 3, 1, 1), 5, 4),
        ((4, 4), 2, 4),
    ],
)
def test_round_trip_all_indices_small(rounds, num_ranks, num_suits):
    indexer = HandIndexer(rounds=rounds, num_ranks=num_ranks, num_suits=num_suits)
    deck = set(deck_cards(num_ranks, num_suits))
    for r in range(len(rounds)):
        idx = np.arange(indexer.count(r))
        hands = indexer.unindex_batch(idx, r)
        assert np.array_equal(indexer.index_batch(hands, r), idx)
        assert set(np.unique(hands).tolist()) <= deck
        s = np.sort(hands, axis=1)
        assert (s[:, 1:] != s[:, :-1]).all()


@pytest.mark.parametrize("rounds", [(2,), (3,), (4,), (5,), (2, 3)])
def test_round_trip_all_indices_holdem(rounds):
    indexer = HandIndexer(rounds=rounds)
    idx = np.arange(indexer.count())
    assert np.array_equal(indexer.index_batch(indexer.unindex_batch(idx)), idx)


# ----------------------------------------------------------------- hold'em random


@pytest.mark.parametrize("rounds", [(2, 3, 1, 1), (2, 5), (2, 4)])
def test_holdem_random_round_trips(rounds):
    rng = np.random.default_rng(7)
    indexer = HandIndexer(rounds=rounds)
    suits = deck_suits(4)
    n = 100_000
    for r in range(len(rounds)):
        sub = rounds[: r + 1]
        k = sum(sub)
        # random indices: index(unindex(i)) == i, unindexed hands valid and sorted
        idx = rng.integers(0, indexer.count(r), n)
        hands = indexer.unindex_batch(idx, r)
        assert np.array_equal(indexer.index_batch(hands, r), idx)
        s = np.sort(hands, axis=1)
        assert (s[:, 1:] != s[:, :-1]).all() and hands.max() < 52
        for a, b in group_bounds(sub):
            assert (np.diff(hands[:, a:b].astype(int), axis=1) > 0).all()
        # random hands: unindex(index(h)) is isomorphic to h
        hands = random_hands(rng, n, k, range(52))
        idx = indexer.index_batch(hands, r)
        assert ((idx >= 0) & (idx < indexer.count(r))).all()
        back = indexer.unindex_batch(idx, r)
        assert np.array_equal(
            canonical_codes(back, sub, suits), canonical_codes(hands, sub, suits)
        )
        # invariance: random suit permutation per hand, shuffled cards within groups
        perms = np.array(list(itertools.permutations(range(4))))[rng.integers(0, 24, n)]
        variant = (hands // 4) * 4 + np.take_along_axis(
            perms, (hands % 4).astype(np.int64), 1
        )
        for a, b in group_bounds(sub):
            order = np.argsort(rng.random((n, b - a)), axis=1)
            variant[:, a:b] = np.take_along_axis(variant[:, a:b], order, axis=1)
        assert np.array_equal(indexer.index_batch(variant.astype(np.uint8), r), idx)


def test_holdem_preflop_classes():
    indexer = HandIndexer(rounds=[2, 3, 1, 1])
    hands = [indexer.unindex(i, 0) for i in range(169)]
    pairs = sum(a >> 2 == b >> 2 for a, b in hands)
    suited = sum(a & 3 == b & 3 for a, b in hands)
    assert (pairs, suited) == (13, 78)
    aa = indexer.index(parse_cards("AsAh"), 0)
    assert (
        aa
        == indexer.index(parse_cards("AcAd"), 0)
        != indexer.index(parse_cards("KsKh"), 0)
    )
    ak_suited = indexer.index(parse_cards("AsKs"), 0)
    assert ak_suited == indexer.index(parse_cards("KdAd"))
    assert ak_suited != indexer.index(parse_cards("AsKh"))
    # flush draw on the flop is not the same class as a rainbow flop
    fd = indexer.index(parse_cards("AsKs" + "2s7sTd"))
    assert fd == indexer.index(parse_cards("KhAh" + "7h2hTc"))
    assert fd != indexer.index(parse_cards("AsKs" + "2s7dTd"))
    assert indexer.unindex(fd, 1) == indexer.unindex(
        indexer.index(parse_cards("AcKc2c7cTd")), 1
    )


def test_round_inferred_from_card_count():
    indexer = HandIndexer(rounds=[2, 3, 1, 1])
    hand = parse_cards("AsKd2c7hTd4s9c")
    for r, k in enumerate([2, 5, 6, 7]):
        assert indexer.index(hand[:k]) == indexer.index(hand[:k], r)
        assert indexer.num_cards(r) == k
    assert len(indexer.unindex(0)) == 7


def test_reduced_deck_uses_high_ranks_and_last_suits():
    leduc = HandIndexer(rounds=[1, 1], num_ranks=3, num_suits=2)
    assert leduc.count(0) == 3 and leduc.count(1) == 3 + 3 * 2 * 2
    cards = {c for i in range(leduc.count(1)) for c in leduc.unindex(i, 1)}
    assert cards <= set(parse_cards("QhKhAhQsKsAs"))
    assert leduc.index(parse_cards("Qh")) == leduc.index(parse_cards("Qs"))
    assert leduc.index(parse_cards("QhQs")) != leduc.index(parse_cards("QhKs"))
    assert leduc.index(parse_cards("QhKh")) == leduc.index(parse_cards("QsKs"))


# ----------------------------------------------------------------- njit kernels


@njit(cache=True)
def _index_all_rounds(tables, hands, num_rounds, out):
    for i in range(hands.shape[0]):
        for r in range(num_rounds):
            out[i, r] = index_hand_njit(tables, hands[i], r)


@njit(cache=True)
def _unindex_all(tables, indices, rnd, out):
    status = 0
    for i in range(indices.shape[0]):
        status |= unindex_hand_njit(tables, indices[i], rnd, out[i])
    return status


def test_njit_kernels_callable_from_njit():
    rng = np.random.default_rng(3)
    indexer = HandIndexer(rounds=[2, 3, 1, 1])
    hands = random_hands(rng, 2000, 7, range(52))
    out = np.empty((2000, 4), np.int64)
    _index_all_rounds(indexer.tables, hands, 4, out)
    for r, k in enumerate([2, 5, 6, 7]):
        assert np.array_equal(out[:, r], indexer.index_batch(hands[:, :k], r))
    back = np.empty((2000, 7), np.uint8)
    assert _unindex_all(indexer.tables, out[:, 3].copy(), 3, back) == 0
    assert np.array_equal(back, indexer.unindex_batch(out[:, 3], 3))
    # invalid input is reported as -1, not raised
    bad = hands[:1].copy()
    bad[0, 1] = bad[0, 0]
    _index_all_rounds(indexer.tables, bad, 4, out[:1])
    assert (out[0] == -1).all()
    assert _unindex_all(indexer.tables, np.array([-1, indexer.count(3)]), 3, back) == -1


def test_import_compiles_nothing():
    code = (
        "import abstraction.indexer as m\n"
        "fs = [getattr(m, n) for n in dir(m) if hasattr(getattr(m, n), 'signatures')]\n"
        "assert fs and all(not f.signatures for f in fs), fs\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ----------------------------------------------------------------------- errors


def test_bad_construction():
    for kwargs in [
        dict(rounds=[]),
        dict(rounds=[0, 2]),
        dict(rounds=[2, -1]),
        dict(rounds="ab"),
        dict(rounds=[2.5]),
        dict(rounds=[2], num_ranks=0),
        dict(rounds=[2], num_ranks=14),
        dict(rounds=[2], num_suits=5),
        dict(rounds=[2, 5], num_ranks=2, num_suits=3),  # 7 cards from a 6-card deck
        dict(rounds=[3, 3], num_ranks=3, num_suits=1),
    ]:
        with pytest.raises(ValueError):
            HandIndexer(**kwargs)
    HandIndexer(rounds=[3, 3], num_ranks=3, num_suits=2)  # exactly the whole deck


def test_bad_hands():
    holdem = HandIndexer(rounds=[2, 3, 1, 1])
    leduc = HandIndexer(rounds=[1, 1], num_ranks=3, num_suits=2)
    with pytest.raises(ValueError, match="repeats"):
        holdem.index(parse_cards("AsAs"))
    with pytest.raises(ValueError, match="repeats"):
        holdem.index(parse_cards("AsKs2c3cAs"))
    with pytest.raises(ValueError, match="repeats"):
        holdem.index_batch(np.array([[0, 1], [5, 5]], np.uint8))
    with pytest.raises(ValueError, match="not in"):
        holdem.index([51, 52])
    with pytest.raises(ValueError, match="not in"):
        holdem.index([-1, 3])
    with pytest.raises(ValueError, match="not in"):
        holdem.index_batch(np.array([[0, 200]], np.uint8))
    with pytest.raises(ValueError, match="not in"):
        leduc.index(parse_cards("Jh"))
    with pytest.raises(ValueError, match="not in"):
        leduc.index(parse_cards("Qc"))
    with pytest.raises(ValueError):
        holdem.index(parse_cards("AsKsQs"))  # 3 cards is no round
    with pytest.raises(ValueError):
        holdem.index(parse_cards("AsKsQs"), 0)
    with pytest.raises(ValueError):
        holdem.index(parse_cards("AsKs"), 1)
    with pytest.raises(ValueError):
        holdem.index([])
    with pytest.raises(ValueError):
        holdem.index_batch(np.zeros(7, np.uint8))
    with pytest.raises(ValueError):
        holdem.index_batch(np.zeros((1, 2)) + 0.5)
    for r in (-1, 4, 1.0, "1"):
        with pytest.raises(ValueError):
            holdem.count(r)
        with pytest.raises(ValueError):
            holdem.unindex(0, r)
    with pytest.raises(ValueError):
        holdem.index(parse_cards("AsKs"), 4)


def test_bad_indices():
    indexer = HandIndexer(rounds=[2, 3])
    for bad in (-1, 169):
        with pytest.raises(ValueError, match="out of range"):
            indexer.unindex(bad, 0)
    with pytest.raises(ValueError, match="out of range"):
        indexer.unindex_batch(np.array([0, 1, 1_286_792]), 1)
    with pytest.raises(ValueError):
        indexer.unindex(1.5, 0)
    with pytest.raises(ValueError):
        indexer.unindex_batch(np.zeros((2, 2), np.int64), 0)
    assert indexer.unindex_batch(np.zeros(0, np.int64), 1).shape == (0, 5)
    assert indexer.index_batch(np.zeros((0, 5), np.uint8)).shape == (0,)
