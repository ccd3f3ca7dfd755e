"""Hands named as players say them: "two pair, kings and fives", "flush, ace high".

:func:`hand_name` takes one player's hole and board cards (1 to 7 cards, any game of
the project: Kuhn's one card, Leduc's two, hold'em's seven), finds the best hand of at
most five of them with :func:`poker.evaluator.evaluate` and names its category and the
ranks that decide it. The category is the evaluator's own, so the name always agrees
with who won the showdown.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import combinations

from .cards import rank_of
from .evaluator import evaluate, hand_category

__all__ = ["hand_name", "kicker", "RANK_WORDS"]

#: Rank words, index = ACPC rank (0 is a two, 12 an ace).
RANK_WORDS = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
              "jack", "queen", "king", "ace")
_PLURAL = ("twos", "threes", "fours", "fives", "sixes", "sevens", "eights", "nines", "tens",
           "jacks", "queens", "kings", "aces")
_ACE = 12


def _best_five(cards: Sequence[int]) -> tuple[int, ...]:
    """The best hand of at most five of ``cards`` (all of them when five or fewer)."""
    if len(cards) <= 5:
        return tuple(cards)
    return max(combinations(cards, 5), key=evaluate)


def _straight_top(ranks: list[int]) -> int:
    """The top rank of a straight's five distinct ranks (the wheel A-2-3-4-5 is five-high)."""
    ranks = sorted(set(ranks))
    return 3 if ranks == [0, 1, 2, 3, _ACE] else ranks[-1]


def _shape(cards: Sequence[int]) -> tuple[int, Counter[int], list[int]]:
    """The best hand's category, its rank counts, and its ranks grouped by how often they
    occur (the larger group, then the higher rank, first): the order ranks decide in."""
    best = _best_five(cards)
    counts = Counter(rank_of(c) for c in best)
    return hand_category(evaluate(best)), counts, sorted(counts, key=lambda r: (counts[r], r), reverse=True)


def kicker(winner: Sequence[int], loser: Sequence[int]) -> str | None:
    """The rank that makes ``winner``'s hand beat ``loser``'s hand of the same name (``"jack"``
    in "pair of sixes, jack kicker"); None when the names differ or ``winner`` does not win
    on a lower card.

    >>> from poker.cards import parse_cards
    >>> board = parse_cards("As9d6s3d6c")
    >>> kicker(parse_cards("8dJd") + board, parse_cards("Td4d") + board)
    'jack'
    """
    if hand_name(winner) != hand_name(loser):
        return None
    category, _, mine = _shape(winner)
    if category in (4, 8):  # straights of one name tie
        return None
    for a, b in zip(mine, _shape(loser)[2]):
        if a != b:
            return RANK_WORDS[a] if a > b else None
    return None


def hand_name(cards: Sequence[int]) -> str:
    """The name of the best hand in ``cards`` (distinct cards, 1 to 7).

    >>> from poker.cards import parse_cards
    >>> hand_name(parse_cards("KsKd5h5c9s2d3c"))
    'two pair, kings and fives'
    >>> hand_name(parse_cards("Ah2h3h4h5h"))
    'straight flush, five high'
    >>> hand_name(parse_cards("Qs"))
    'queen high'
    """
    category, counts, groups = _shape(cards)
    top = groups[0]
    if category == 8:
        high = _straight_top(list(counts))
        return "royal flush" if high == _ACE else f"straight flush, {RANK_WORDS[high]} high"
    if category == 7:
        return f"four of a kind, {_PLURAL[top]}"
    if category == 6:
        return f"full house, {_PLURAL[top]} full of {_PLURAL[groups[1]]}"
    if category == 5:
        return f"flush, {RANK_WORDS[max(counts)]} high"
    if category == 4:
        return f"straight, {RANK_WORDS[_straight_top(list(counts))]} high"
    if category == 3:
        return f"three of a kind, {_PLURAL[top]}"
    if category == 2:
        return f"two pair, {_PLURAL[groups[0]]} and {_PLURAL[groups[1]]}"
    if category == 1:
        return f"pair of {_PLURAL[top]}"
    return f"{RANK_WORDS[max(counts)]} high"
