"""Terminal values of two reach vectors over private hands in O(n), not O(n^2).

At a terminal of a public tree walked with a reach vector per player over the same list
of ``n`` private hands (one board), the pair sums are

* fold: ``F = sum_{i, j disjoint} r0[i] r1[j]`` (every pair of hands that can be dealt
  together), the dense ``r0 @ consistent @ r1``;
* showdown: ``S = sum_{i, j disjoint} r0[i] r1[j] sign(rank[i] - rank[j])``, the dense
  ``r0 @ showdown @ r1``.

Both are computed in O(n) by the fast terminal evaluation of Johanson, Waugh, Bowling
and Zinkevich 2011 ("Accelerating best response calculation in large extensive games",
IJCAI), used by every vector-form CFR since (Johanson et al. 2012, "Efficient Nash
equilibrium approximation through Monte Carlo counterfactual regret minimization",
AAMAS, public chance sampling):

* card removal by inclusion-exclusion: the opponent reach disjoint from hand ``i`` is
  the total, minus the reach of the hands holding each of ``i``'s cards, plus the reach
  of the hands holding two of them (for 2-card hands: hand ``i`` itself, which both
  subtractions removed);
* showdowns: hands sorted by rank once per board, then one ascending sweep keeps the
  running total and per-card totals of both players' reach over strictly weaker hands
  (a tie group is added after all its hands are scored, so ties count zero);
  ``S = sum_i r0[i] * weaker1(i) - sum_j r1[j] * weaker0(j)``, each ``weaker`` by the
  inclusion-exclusion above (no add-back: hand ``i`` is never strictly weaker than
  itself).

Hands of 1 or 2 hole cards (Kuhn, Leduc, hold'em); cards are ACPC integers 0..51.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from poker.evaluator import evaluate_batch

__all__ = ["PairValues"]

_CARDS = 52


@njit(cache=True)
def _disjoint_sum(hands: np.ndarray, r0: np.ndarray, r1: np.ndarray) -> float:
    """``sum_{i, j disjoint} r0[i] r1[j]`` over ``hands`` (int64[n, k], k = 1 or 2)."""
    n, k = hands.shape
    per_card = np.zeros(_CARDS)
    total = 0.0
    for j in range(n):
        w = r1[j]
        total += w
        for c in range(k):
            per_card[hands[j, c]] += w
    out = 0.0
    for i in range(n):
        w = r0[i]
        if w == 0.0:
            continue
        s = total
        for c in range(k):
            s -= per_card[hands[i, c]]
        if k == 2:
            s += r1[i]  # the one hand holding both cards, subtracted twice
        out += w * s
    return out


@njit(cache=True)
def _showdown_sum(hands: np.ndarray, order: np.ndarray, ranks: np.ndarray, r0: np.ndarray,
                  r1: np.ndarray) -> float:
    """``sum_{i, j disjoint} r0[i] r1[j] sign(rank i - rank j)``: ``order`` lists the
    hands by ascending rank, ``ranks`` their ranks in that order."""
    n, k = hands.shape
    card0 = np.zeros(_CARDS)  # reach of the weaker hands holding each card
    card1 = np.zeros(_CARDS)
    weak0 = 0.0
    weak1 = 0.0
    out = 0.0
    start = 0
    while start < n:
        end = start + 1
        while end < n and ranks[end] == ranks[start]:
            end += 1
        for t in range(start, end):  # score the tie group against the weaker hands
            i = order[t]
            a = r0[i]
            b = r1[i]
            if a != 0.0:
                s = weak1
                for c in range(k):
                    s -= card1[hands[i, c]]
                out += a * s
            if b != 0.0:
                s = weak0
                for c in range(k):
                    s -= card0[hands[i, c]]
                out -= b * s
        for t in range(start, end):  # then make it weaker than what follows
            i = order[t]
            a = r0[i]
            b = r1[i]
            weak0 += a
            weak1 += b
            for c in range(k):
                card0[hands[i, c]] += a
                card1[hands[i, c]] += b
        start = end
    return out


class PairValues:
    """The two pair sums of one final board (module docstring) over ``hands``
    (int[n, k], the hole cards of each hand, 1 <= k <= 2, every hand missing ``board``),
    both players' reach vectors indexed by the same rows."""

    def __init__(self, hands: np.ndarray, board: tuple[int, ...]) -> None:
        hands = np.ascontiguousarray(hands, dtype=np.int64)
        if hands.ndim != 2 or not 1 <= hands.shape[1] <= 2:
            raise ValueError(f"hands must be (n, 1) or (n, 2) hole cards, got shape {hands.shape}")
        self.hands = hands
        cards = np.concatenate([hands, np.tile(np.asarray(board, dtype=np.int64), (hands.shape[0], 1))], axis=1)
        self.ranks = evaluate_batch(cards).astype(np.int64)
        self.order = np.argsort(self.ranks, kind="stable")
        self._sorted = np.ascontiguousarray(self.ranks[self.order])

    def disjoint(self, r0: np.ndarray, r1: np.ndarray) -> float:
        """``sum r0[i] r1[j]`` over the pairs of disjoint hands (a fold's weight)."""
        return float(_disjoint_sum(self.hands, r0, r1))

    def showdown(self, r0: np.ndarray, r1: np.ndarray) -> float:
        """``sum r0[i] r1[j] sign(rank i - rank j)`` over the pairs of disjoint hands:
        seat 0's showdowns won minus lost, weighted by both reaches."""
        return float(_showdown_sum(self.hands, self.order, self._sorted, r0, r1))
