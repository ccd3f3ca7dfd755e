"""Hand names: the category agrees with treys' class on random seven-card hands, and the
deciding ranks with a count of the cards made here independently of the evaluator."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from poker.cards import card_to_str, parse_cards
from poker.hand_names import RANK_WORDS, hand_name

_TREYS_CLASS = {
    "Royal Flush": ("royal flush",),
    "Straight Flush": ("straight flush",),
    "Four of a Kind": ("four of a kind",),
    "Full House": ("full house",),
    "Flush": ("flush",),
    "Straight": ("straight",),
    "Three of a Kind": ("three of a kind",),
    "Two Pair": ("two pair",),
    "Pair": ("pair of",),
    "High Card": ("",),
}
_PLURAL = {w: w + ("es" if w == "six" else "s") for w in RANK_WORDS}


def _straight_tops(ranks: set[int]) -> list[int]:
    """Every straight's top rank among ``ranks`` (the wheel's top is the five, rank 3)."""
    have = set(ranks) | ({-1} if 12 in ranks else set())
    return [top for top in range(3, 13) if all(top - i in have for i in range(5))]


def _expected_words(cards: list[int], category: str) -> str:
    """The deciding ranks of ``category`` counted from the cards themselves."""
    ranks = Counter(c >> 2 for c in cards)
    by_count = lambda k: sorted((r for r, n in ranks.items() if n >= k), reverse=True)  # noqa: E731
    if category in ("Royal Flush", "Straight Flush", "Flush"):
        suits = Counter(c & 3 for c in cards)
        suit = max(suits, key=lambda s: suits[s])
        suited = {c >> 2 for c in cards if c & 3 == suit}
        if category == "Flush":
            return f"flush, {RANK_WORDS[max(suited)]} high"
        top = max(_straight_tops(suited))
        return "royal flush" if top == 12 else f"straight flush, {RANK_WORDS[top]} high"
    if category == "Straight":
        return f"straight, {RANK_WORDS[max(_straight_tops(set(ranks)))]} high"
    if category == "Four of a Kind":
        return f"four of a kind, {_PLURAL[RANK_WORDS[by_count(4)[0]]]}"
    if category == "Full House":
        trips = by_count(3)[0]
        pair = max(r for r in by_count(2) if r != trips)
        return f"full house, {_PLURAL[RANK_WORDS[trips]]} full of {_PLURAL[RANK_WORDS[pair]]}"
    if category == "Three of a Kind":
        return f"three of a kind, {_PLURAL[RANK_WORDS[by_count(3)[0]]]}"
    if category == "Two Pair":
        hi, lo = by_count(2)[:2]
        return f"two pair, {_PLURAL[RANK_WORDS[hi]]} and {_PLURAL[RANK_WORDS[lo]]}"
    if category == "Pair":
        return f"pair of {_PLURAL[RANK_WORDS[by_count(2)[0]]]}"
    return f"{RANK_WORDS[max(ranks)]} high"


def test_seven_card_names_agree_with_treys_and_a_count_of_the_cards() -> None:
    treys = pytest.importorskip("treys")
    evaluator = treys.Evaluator()
    rng = np.random.default_rng(7)
    seen: Counter[str] = Counter()
    # Random hands, plus a deal of each rare category so every branch is checked.
    hands = [list(map(int, rng.permutation(52)[:7])) for _ in range(3000)]
    hands += [parse_cards(t) for t in ("AsKsQsJsTs2d3c", "5h4h3h2hAh9c9d", "9s9d9h9c2s3d4h",
                                       "KsKdKh5c5s5d9c", "Ah2d3c4s5h9cKd", "TsTdTh2c7s8d4h",
                                       "JsJd4c4d2s2h9c")]
    for cards in hands:
        text = "".join(card_to_str(c) for c in cards)
        klass = evaluator.class_to_string(evaluator.get_rank_class(
            evaluator.evaluate([treys.Card.new(text[0:2]), treys.Card.new(text[2:4])],
                               [treys.Card.new(text[i:i + 2]) for i in range(4, 14, 2)])))
        name = hand_name(cards)
        assert name.startswith(_TREYS_CLASS[klass]) or klass == "High Card", (text, name, klass)
        assert name == _expected_words(cards, klass), text
        seen[klass] += 1
    assert set(seen) == set(_TREYS_CLASS)


@pytest.mark.parametrize(("cards", "name"), [
    ("Ks", "king high"),            # Kuhn: one card
    ("QhQs", "pair of queens"),     # Leduc: a pair with the board card
    ("KhQs", "king high"),
    ("6s6d6h2c2d", "full house, sixes full of twos"),
    ("As2d3c4h5s", "straight, five high"),
])
def test_short_hands_and_the_wheel(cards: str, name: str) -> None:
    assert hand_name(parse_cards(cards)) == name


def test_a_kicker_is_named_exactly_when_a_lower_card_decides() -> None:
    """Over random showdowns on one board: the kicker is named when both hands have one
    name and the evaluator says one wins (straights of one name always tie), never for
    the loser or a tie; it is a rank the winner holds in its best hand."""
    from poker.evaluator import evaluate
    from poker.hand_names import kicker

    rng = np.random.default_rng(11)
    named = 0
    for _ in range(1500):
        deal = [int(c) for c in rng.permutation(52)[:9]]
        a, b, board = deal[:2], deal[2:4], deal[4:]
        ra, rb = evaluate(a + board), evaluate(b + board)
        same = hand_name(a + board) == hand_name(b + board)
        ka, kb = kicker(a + board, b + board), kicker(b + board, a + board)
        if not same or ra == rb:
            assert ka is None and kb is None
            continue
        winner, k, other = (a, ka, kb) if ra > rb else (b, kb, ka)
        assert other is None and k is not None
        assert k in {RANK_WORDS[c >> 2] for c in winner + board}
        named += 1
    assert named > 50
    assert kicker(parse_cards("AhKd") + parse_cards("AsAc7d5h2s"), parse_cards("AdQd") + parse_cards("AsAc7d5h2s")) == "king"
