"""Hand evaluator: known counts, independent oracles (treys, a plain-Python slow twin),
agreement of every entry point, hands of fewer than five cards, and bad input."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from numba import njit

import poker.evaluator as ev
from poker.cards import CardError, deck_cards, parse_cards

# ---------------------------------------------------------------- helpers


def all_hands(deck: list[int], k: int) -> np.ndarray:
    """Every k-card hand of ``deck`` as a uint8 (n, k) array, in combinations order."""
    flat = itertools.chain.from_iterable(itertools.combinations(deck, k))
    return np.fromiter(flat, dtype=np.uint8, count=math.comb(len(deck), k) * k).reshape(-1, k)


def random_hands(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """n random k-card hands of the full deck (distinct cards per row), uint8."""
    return np.argsort(rng.random((n, 52)), axis=1)[:, :k].astype(np.uint8)


def twin_key(cards: tuple[int, ...] | list[int]) -> tuple[int, tuple[int, ...]]:
    """Plain-Python slow twin: (category, deciding ranks), straight from the rules.

    Five or more cards: the best 5-card hand among all subsets of five. Fewer than
    five: no straight or flush; groups ordered by (copies, rank), most first.
    """
    cards = [int(c) for c in cards]
    if len(cards) >= 5:
        return max(_five_key(five) for five in itertools.combinations(cards, 5))
    return _group_key([c >> 2 for c in cards])


def _group_key(ranks: list[int]) -> tuple[int, tuple[int, ...]]:
    groups = sorted(((n, r) for r, n in Counter(ranks).items()), reverse=True)
    shape = [n for n, _ in groups]
    order = tuple(r for _, r in groups)
    if shape[0] == 4:
        cat = 7
    elif shape[:2] == [3, 2]:
        cat = 6
    elif shape[0] == 3:
        cat = 3
    elif shape[:2] == [2, 2]:
        cat = 2
    elif shape[0] == 2:
        cat = 1
    else:
        cat = 0
    return cat, order


def _five_key(five: tuple[int, ...]) -> tuple[int, tuple[int, ...]]:
    ranks = sorted((c >> 2 for c in five), reverse=True)
    flush = len({c & 3 for c in five}) == 1
    distinct = len(set(ranks)) == 5
    top = None
    if distinct and ranks[0] - ranks[4] == 4:
        top = ranks[0]
    elif ranks == [12, 3, 2, 1, 0]:  # A-2-3-4-5
        top = 3
    if top is not None:
        return (8 if flush else 4), (top,)
    if flush:
        return 5, tuple(ranks)
    return _group_key(ranks)


def assert_same_order(ranks: np.ndarray, keys: list) -> None:
    """``ranks`` order the hands exactly as ``keys`` do (ties included)."""
    idx = sorted(range(len(keys)), key=keys.__getitem__)
    for a, b in itertools.pairwise(idx):
        if keys[a] == keys[b]:
            assert ranks[a] == ranks[b], (keys[a], ranks[a], ranks[b])
        else:
            assert ranks[a] < ranks[b], (keys[a], keys[b], ranks[a], ranks[b])


@njit(cache=True)
def _kernel_ranks(hands: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Another numba kernel calling the evaluator's njit entry points."""
    n, k = hands.shape
    by_rank_cards = np.empty(n, np.int64)
    by_eval7 = np.full(n, -2, np.int64)
    for i in range(n):
        by_rank_cards[i] = ev.rank_cards(hands[i], k)
        if k == 7:
            h = hands[i]
            by_eval7[i] = ev.eval7_njit(h[0], h[1], h[2], h[3], h[4], h[5], h[6])
    return by_rank_cards, by_eval7


SEVEN_CARD_COUNTS = [23_294_460, 58_627_800, 31_433_400, 6_461_620, 6_180_020, 4_047_644, 3_473_184, 224_848, 41_584]
FIVE_CARD_COUNTS = [1_302_540, 1_098_240, 123_552, 54_912, 10_200, 5_108, 3_744, 624, 40]

# ---------------------------------------------------------------- known counts


@pytest.mark.slow
def test_exhaustive_seven_card_counts():
    result = ev.exhaustive_category_counts()
    assert result.category_counts.tolist() == SEVEN_CARD_COUNTS
    assert result.distinct_ranks == 4824
    assert result.rank_counts.sum() == 133_784_560


def test_all_five_card_hands():
    hands = all_hands(list(range(52)), 5)
    assert hands.shape == (2_598_960, 5)
    ranks = ev.evaluate_batch(hands)
    assert np.unique(ranks).size == 7462
    assert np.bincount(ev.hand_categories(ranks), minlength=9).tolist() == FIVE_CARD_COUNTS


def test_rank_keys_give_unique_sums():
    """The design's premise: every multiset of <= 7 ranks (<= 4 each) has its own sum."""
    sums = [0]
    sizes = [0]
    for key in ev.RANK_KEYS:
        sums, sizes = (
            [s + j * key for s, z in zip(sums, sizes) for j in range(5) if z + j <= 7],
            [z + j for z in sizes for j in range(5) if z + j <= 7],
        )
    assert len(sums) == 76_155
    assert len(set(sums)) == len(sums)


def test_tables_are_deterministic():
    again = ev._build_tables()
    for a, b in zip(again, ev._TABLES):
        assert np.array_equal(a, b)


# ---------------------------------------------------------------- treys oracle


def _treys_ranks(hands: np.ndarray) -> np.ndarray:
    treys = pytest.importorskip("treys")
    cards = [treys.Card.new(s) for s in (r + s for r in "23456789TJQKA" for s in "cdhs")]
    evaluator = treys.Evaluator()
    rows = [[cards[c] for c in row] for row in hands.tolist()]
    return np.array([evaluator.evaluate(row[:2], row[2:]) for row in rows])


@pytest.mark.parametrize(("k", "pairs"), [(7, 200_000), (6, 20_000), (5, 20_000)])
def test_order_agrees_with_treys(k, pairs):
    rng = np.random.default_rng(20240 + k)
    hands = random_hands(rng, 2 * pairs, k)
    ours = ev.evaluate_batch(hands).astype(np.int64)
    theirs = _treys_ranks(hands)  # lower is better in treys
    ours_cmp = np.sign(ours[0::2] - ours[1::2])
    theirs_cmp = np.sign(theirs[1::2] - theirs[0::2])
    assert np.array_equal(ours_cmp, theirs_cmp)
    assert (ours_cmp == 0).any() and (ours_cmp > 0).any() and (ours_cmp < 0).any()


def test_known_hands():
    def rank(text: str) -> int:
        return ev.evaluate(parse_cards(text))

    royal = rank("AsKsQsJsTs2c3d")
    assert ev.hand_category(royal) == ev.STRAIGHT_FLUSH
    assert ev.category_name(royal) == "straight flush"
    assert rank("5s4s3s2sAs") < rank("6s5s4s3s2s") < rank("KsQsJsTs9s")
    assert rank("5c4d3h2sAs") < rank("6c5c4d3h2s")  # the wheel is the lowest straight
    assert ev.category_name(rank("5c4d3h2sAs")) == "straight"
    assert ev.category_name(rank("AcAdAhKsKc2d3d")) == "full house"
    assert rank("AcAdAhKsKcQdQh") == rank("AcAdAhKsKc2d3d")  # a third pair does not play
    assert rank("2c2d2h2sAc") > rank("AcAdAhKsKc")
    assert ev.category_name(rank("7c8c9cJcQc2d2h")) == "flush"  # a flush beats the pair
    assert rank("AcKd9h7s5c4d3h") == rank("AcKd9h7s5c3d2h")  # only five cards play
    assert rank("AcAd9h7s5c") > rank("KcKdQhJsTc")
    for name in ev.CATEGORY_NAMES:
        assert isinstance(name, str)


# ---------------------------------------------------------------- entry points agree


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 6, 7])
def test_batch_single_and_kernels_agree(k):
    rng = np.random.default_rng(99 + k)
    hands = random_hands(rng, 3000, k)
    batch = ev.evaluate_batch(hands)
    assert batch.dtype == np.int32
    single = np.array([ev.evaluate(row) for row in hands.tolist()])
    assert np.array_equal(batch, single)
    trusted = np.array([ev.evaluate_trusted(tuple(row)) for row in hands.tolist()])
    assert np.array_equal(batch, trusted)
    by_rank_cards, by_eval7 = _kernel_ranks(hands)
    assert np.array_equal(batch, by_rank_cards)
    if k == 7:
        assert np.array_equal(batch, by_eval7)
        assert ev.eval7_njit(*hands[0].tolist()) == batch[0]
    assert ev.rank_cards(hands[1], k) == batch[1]
    assert np.array_equal(ev.evaluate_batch(hands, parallel=True), batch)
    # Other integer types, a non-contiguous view, tuples for the single call.
    assert np.array_equal(ev.evaluate_batch(hands.astype(np.int64)), batch)
    assert np.array_equal(ev.evaluate_batch(np.asfortranarray(hands)), batch)
    assert ev.evaluate(tuple(hands[2].tolist())) == batch[2]


def test_parallel_matches_serial_on_many_hands():
    hands = random_hands(np.random.default_rng(5), 300_000, 7)
    assert np.array_equal(ev.evaluate_batch(hands, parallel=True), ev.evaluate_batch(hands))
    assert ev.evaluate_batch(np.zeros((0, 7), np.uint8)).shape == (0,)
    assert ev.evaluate_batch([[0, 1, 2, 3, 4, 5, 6]]).tolist() == [ev.evaluate(range(7))]


def test_order_of_cards_does_not_matter():
    rng = np.random.default_rng(11)
    hands = random_hands(rng, 2000, 7)
    shuffled = rng.permuted(hands, axis=1)
    assert np.array_equal(ev.evaluate_batch(hands), ev.evaluate_batch(shuffled))


# ---------------------------------------------------------------- slow twin, all sizes


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_fewer_than_five_cards_full_deck(k):
    """Every 1..4-card hand of the full deck, against the plain-Python rule."""
    hands = all_hands(list(range(52)), k)
    ranks = ev.evaluate_batch(hands)
    keys = [_group_key([c >> 2 for c in row]) for row in hands.tolist()]
    assert_same_order(ranks, keys)
    assert np.array_equal(ev.hand_categories(ranks), [key[0] for key in keys])


@pytest.mark.parametrize(("num_ranks", "num_suits"), [(3, 2), (4, 1), (5, 4), (13, 2)])
def test_reduced_decks_every_size(num_ranks, num_suits):
    deck = deck_cards(num_ranks, num_suits)
    for k in range(1, min(len(deck), 7) + 1):
        hands = all_hands(deck, k)
        if hands.shape[0] > 12_000:  # the slow twin costs ~50 us a 7-card hand
            hands = hands[np.random.default_rng(k).choice(hands.shape[0], 12_000, replace=False)]
        ranks = ev.evaluate_batch(hands)
        keys = [twin_key(row) for row in hands.tolist()]
        assert_same_order(ranks, keys)


def test_kuhn_and_leduc():
    kuhn = deck_cards(4, 1)  # Js Qs Ks As
    assert [ev.evaluate([c]) for c in kuhn] == sorted(ev.evaluate([c]) for c in kuhn)
    assert len({ev.evaluate([c]) for c in kuhn}) == 4
    leduc = deck_cards(3, 2)  # Q K A in two suits
    hands = list(itertools.combinations(leduc, 2))
    ranks = {h: ev.evaluate(h) for h in hands}
    pairs = [h for h in hands if h[0] >> 2 == h[1] >> 2]
    others = [h for h in hands if h[0] >> 2 != h[1] >> 2]
    assert min(ranks[h] for h in pairs) > max(ranks[h] for h in others)
    for a, b in itertools.product(hands, repeat=2):
        ka = sorted((c >> 2 for c in a), reverse=True)
        kb = sorted((c >> 2 for c in b), reverse=True)
        if a in pairs and b in pairs or a in others and b in others:
            assert (ranks[a] > ranks[b]) == (ka > kb) and (ranks[a] == ranks[b]) == (ka == kb)
    assert ev.evaluate(parse_cards("KsKh")) > ev.evaluate(parse_cards("AsKs"))
    assert ev.evaluate(parse_cards("AsQs")) > ev.evaluate(parse_cards("KsQh"))
    assert ev.evaluate(parse_cards("AsKs")) > ev.evaluate(parse_cards("AhQs"))


@pytest.mark.parametrize("k", [5, 6, 7])
def test_best_five_of_k_slow_twin(k):
    rng = np.random.default_rng(700 + k)
    hands = random_hands(rng, 3000, k)
    # Make the rare categories common: a third of the rows from 8 ranks x 2 suits
    # (flushes, straight flushes), a third from A, 2..6 x 4 suits (wheels, quads).
    low_deck = [r * 4 + s for r in (12, 0, 1, 2, 3, 4) for s in range(4)]
    for start, deck in ((0, deck_cards(8, 2)), (1, low_deck)):
        m = hands[start::3].shape[0]
        pick = np.argsort(rng.random((m, len(deck))), axis=1)[:, :k]
        hands[start::3] = np.array(deck, np.uint8)[pick]
    ranks = ev.evaluate_batch(hands)
    keys = [twin_key(row) for row in hands.tolist()]
    assert_same_order(ranks, keys)
    assert np.array_equal(ev.hand_categories(ranks), [key[0] for key in keys])


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("cards", "message"),
    [
        ([], "1..7 cards, got 0"),
        (list(range(8)), "1..7 cards, got 8"),
        ([0, 52], "outside 0..51"),
        ([-1, 3], "outside 0..51"),
        ([5, 7, 5], "repeats a card"),
        ([1.5, 2], "not an integer"),
    ],
)
def test_evaluate_rejects_bad_hands(cards, message):
    with pytest.raises(ValueError, match=message):
        ev.evaluate(cards)


def test_card_errors_are_card_errors():
    with pytest.raises(CardError):
        ev.evaluate([51, 51])


@pytest.mark.parametrize(
    ("hands", "message"),
    [
        (np.zeros(7, np.uint8), "2-D"),
        (np.zeros((2, 7, 1), np.uint8), "2-D"),
        ([0, 1, 2, 3, 4, 5, 6], "2-D"),
        (np.zeros((3, 8), np.uint8), "1..7 columns"),
        (np.zeros((3, 0), np.uint8), "1..7 columns"),
        (np.array([[0, 1, 2, 3, 4, 5, 52]], np.uint8), "outside 0..51"),
        (np.array([[0, 1, 2, 3, 4, 5, 255]], np.uint8), "outside 0..51"),
        (np.array([[0, 1, 2, 3, 4, 5, 60]], np.int64), "outside 0..51"),
        (np.array([[0, 1, 2, 3, 4, -1, 6]], np.int32), "outside 0..51"),
        (np.zeros((2, 7), np.float64), "integer"),
    ],
)
def test_evaluate_batch_rejects_bad_arrays(hands, message):
    for parallel in (False, True):
        with pytest.raises(ValueError, match=message):
            ev.evaluate_batch(hands, parallel=parallel)


def test_bad_card_row_is_named():
    hands = random_hands(np.random.default_rng(3), 10, 5)
    hands[7, 2] = 200
    with pytest.raises(CardError, match="row 7"):
        ev.evaluate_batch(hands)


def test_kernels_flag_non_cards():
    assert ev.rank_cards(np.array([3, 60, 9], np.uint8), 3) == -1
    assert ev.eval7_njit(0, 1, 2, 3, 4, 5, 52) == -1
    assert ev.eval7_njit(0, 1, 2, 3, 4, 5, 6) > 0


def test_hand_category_rejects_non_ranks():
    for bad in (0, -3, 9 << ev.CATEGORY_SHIFT):
        with pytest.raises(ValueError, match="not a hand rank"):
            ev.hand_category(bad)
