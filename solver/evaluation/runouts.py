"""Showdown values over the boards still to come, drawn or enumerated: the leaves of a
depth-limited walk.

A walk that stops at the end of its street (a depth-limited re-solve,
:mod:`solver.resolve.subgame`; the alternatives that guard it,
:func:`solver.evaluation.real_response.responder_values`), or where both players are all
in with cards to come, values what is left as a showdown of the pot over the complete
boards that can still come: the value of checking the hand down, as local best response
assumes (Lisý & Bowling 2017). Preflop that is C(50, 5) = 2,118,760 boards for a pair of
hands; :class:`RunOuts` instead draws ``n`` complete boards, seeded, uniformly from the
cards the known board leaves, and enumerates them where there are at most ``n``.

With ``D`` cards left after the known board, ``m`` to come and ``k`` hole cards, a
hand's value against an opponent reach ``r`` is

    v(h) = sum_{h' disjoint} r(h') E[sign(rank h - rank h') | the board misses h, h'],

and each of the ``C(D - 2k, m)`` boards that miss both hands is equally likely. The
enumeration weighs each board by ``1 / C(D - 2k, m)``; a draw of ``n`` boards from all
``C(D, m)`` weighs each by ``C(D, m) / (n C(D - 2k, m))`` and counts only the pairs it
misses, which is unbiased: a board misses a given pair of hands with probability
``C(D - 2k, m) / C(D, m)``, the same for every pair. The values of every hand against a
range cost O(n) per board (:func:`solver.evaluation._terminal._hand_showdown`); a walk
that needs them for many ranges at once (a subgame's leaves, every iteration) takes one
matrix product with the boards' showdown matrix instead (:meth:`RunOuts.values_many`:
built once in O(n^2) per board, kept for the same boards).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations

import numpy as np
from numba import njit

from poker.cards import deck_cards
from poker.game import Game

from ._terminal import HandValues, _hand_showdown

__all__ = ["RunOuts", "runout_values"]

#: Showdown matrices kept between subgames (a few: each is hands^2 float64, 14 MB for
#: the full deck), keyed by the boards and the rows.
_MATRICES: dict[tuple[bytes, bytes], np.ndarray] = {}
_MATRICES_KEPT = 4


@njit(cache=True)
def runout_values(hands: np.ndarray, order: np.ndarray, ranks: np.ndarray, live: np.ndarray, reach: np.ndarray,
                  weight: float, scratch: np.ndarray, got: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """``out[h] = weight * sum_s live[s, h] * sum_{h' disjoint} reach[h'] live[s, h']
    sign(rank_s h - rank_s h')`` over the boards ``s`` (``order[s]``, ``ranks[s]``: the
    hands by ascending rank on board ``s`` and their ranks; ``live[s, h]``: 1 where hand
    ``h`` misses board ``s``); ``scratch`` and ``got`` are float64[1, n] work rows."""
    n_boards, n = live.shape
    for h in range(n):
        out[h] = 0.0
    for s in range(n_boards):
        for h in range(n):
            scratch[0, h] = reach[h] * live[s, h]
        _hand_showdown(hands, order[s : s + 1], ranks[s : s + 1], scratch, got)
        for h in range(n):
            out[h] += weight * got[0, h] * live[s, h]


@njit(cache=True)
def _showdown_matrix(hands: np.ndarray, order: np.ndarray, ranks: np.ndarray, live: np.ndarray,
                     weight: float) -> np.ndarray:  # pragma: no cover - compiled
    """``M[h, h'] = weight * sum_s live[s, h] live[s, h'] sign(rank_s h - rank_s h')`` for
    hands ``h, h'`` that share no card (0 for those that do): ``M @ r`` is
    :func:`runout_values` of ``r``."""
    n_boards, n = live.shape
    k = hands.shape[1]
    out = np.zeros((n, n))
    rank = np.empty(n, dtype=np.int64)
    for s in range(n_boards):
        for t in range(n):
            rank[order[s, t]] = ranks[s, t]
        for i in range(n):
            if live[s, i] == 0.0:
                continue
            ri = rank[i]
            for j in range(i + 1, n):
                if live[s, j] == 0.0:
                    continue
                rj = rank[j]
                if ri > rj:
                    out[i, j] += weight
                    out[j, i] -= weight
                elif ri < rj:
                    out[i, j] -= weight
                    out[j, i] += weight
    for i in range(n):
        for j in range(n):
            for a in range(k):
                for b in range(k):
                    if hands[i, a] == hands[j, b]:
                        out[i, j] = 0.0
    return out


class RunOuts:
    """The complete boards a showdown after ``board`` is valued over (module docstring):
    ``n`` drawn with ``seed`` from the cards ``board`` leaves, or every one of them where
    there are at most ``n``; :meth:`values` over the rows of ``hands`` (int64[H, hole
    cards], ACPC cards)."""

    def __init__(self, game: Game, hands: np.ndarray, board: Sequence[int], n: int, seed: int) -> None:
        if n < 1:
            raise ValueError(f"run-outs: at least 1 board, got {n}")
        board = tuple(int(c) for c in board)
        self.hands = np.ascontiguousarray(hands, dtype=np.int64)
        k = self.hands.shape[1]
        left = [c for c in deck_cards(game.num_ranks, game.num_suits) if c not in board]
        m = game.total_board_cards - len(board)
        if m < 1:
            raise ValueError("the board is complete: nothing left to run out")
        every = math.comb(len(left), m)
        both_miss = math.comb(len(left) - 2 * k, m)
        #: whether :attr:`boards` are every board that can come (else a seeded draw)
        self.exact = every <= n
        if self.exact:
            new = np.array(list(combinations(left, m)), dtype=np.int64).reshape(every, m)
            self.weight = 1.0 / both_miss
        else:
            rng = np.random.default_rng(seed)
            pool = np.asarray(left, dtype=np.int64)
            new = np.stack([rng.choice(pool, size=m, replace=False) for _ in range(n)])
            self.weight = every / (n * both_miss)
        self.boards = np.ascontiguousarray(np.concatenate(
            [np.broadcast_to(np.asarray(board, dtype=np.int64), (new.shape[0], len(board))), new], axis=1))
        hv = HandValues(self.hands, self.boards)
        assert hv.order is not None and hv._sorted is not None
        self.order, self.ranks = hv.order, hv._sorted
        #: live[s, h]: hand h misses board s
        self.live = np.ascontiguousarray(
            (~(self.hands[None, :, :, None] == self.boards[:, None, None, :]).any(axis=(2, 3))).astype(np.float64))
        n_hands = self.hands.shape[0]
        self._scratch = np.zeros((1, n_hands))
        self._got = np.zeros((1, n_hands))

    def __len__(self) -> int:
        return int(self.boards.shape[0])

    def matrix(self) -> np.ndarray:
        """The boards' showdown matrix (:func:`_showdown_matrix`), computed once for the
        same boards and rows."""
        key = (self.boards.tobytes(), self.hands.tobytes())
        got = _MATRICES.get(key)
        if got is None:
            got = _showdown_matrix(self.hands, self.order, self.ranks, self.live, self.weight)
            while len(_MATRICES) >= _MATRICES_KEPT:
                _MATRICES.pop(next(iter(_MATRICES)))
            _MATRICES[key] = got
        return got

    def values_many(self, reach: np.ndarray) -> np.ndarray:
        """:meth:`values` of each row of ``reach`` (float64[m, hands]) by one matrix
        product."""
        return np.ascontiguousarray(reach, dtype=np.float64) @ self.matrix().T

    def values(self, reach: np.ndarray) -> np.ndarray:
        """Per hand: its showdowns won minus lost against the opponent ``reach`` (over the
        same rows), in expectation over the boards to come given both hands."""
        out = np.empty(self.hands.shape[0])
        runout_values(self.hands, self.order, self.ranks, self.live, np.ascontiguousarray(reach, dtype=np.float64),
                      self.weight, self._scratch, self._got, out)
        return out
