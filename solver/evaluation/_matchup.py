"""Exact showdown equity of one hand against another: every run-out of the board enumerated.

The kernel behind :class:`solver.evaluation.aivat.MatchupValue` (AIVAT's value function with both
players' cards). For ``n`` cards still to come from the ``m`` live cards it walks the
``C(m, n)`` run-outs in lexicographic order, keeping the prefix sums of the evaluator's
card keys (:mod:`poker.evaluator`: a hand's rank is a lookup of the sum of its cards'
keys), so each run-out costs about one addition and two lookups: the full deck's
1,712,304 preflop boards take some tens of milliseconds.

The kernel reads the evaluator's private key and rank tables; like every kernel that
calls :func:`poker.evaluator.rank_cards`, numba freezes them into its cache.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from poker.evaluator import _CARD_KEYS, _FLUSH_RANKS, _U_BIAS, _U_FLUSH_TEST, _flush_suit, _nonflush_rank

__all__ = ["matchup_equity"]


@njit(cache=True, inline="always")
def _rank(key, hole, board, live, idx, n_run):  # pragma: no cover - compiled
    """The rank of the hand whose key sum is ``key``: ``hole``, ``board`` and the run-out
    ``live[idx[:n_run]]``; a flush is ranked from its suit's rank mask."""
    if key & _U_FLUSH_TEST:
        suit = _flush_suit(key)
        mask = 0
        for c in hole:
            if (c & 3) == suit:
                mask |= 1 << (c >> 2)
        for c in board:
            if (c & 3) == suit:
                mask |= 1 << (c >> 2)
        for j in range(n_run):
            c = live[idx[j]]
            if (c & 3) == suit:
                mask |= 1 << (c >> 2)
        return int(_FLUSH_RANKS[mask])
    return _nonflush_rank(key)


@njit(cache=True)
def _matchup_halves(a, b, board, live, n_run):  # pragma: no cover - compiled
    """``(2 * wins + ties of a, run-outs)`` over every ``n_run``-card run-out from ``live``."""
    ka = _U_BIAS
    kb = _U_BIAS
    for c in a:
        ka += _CARD_KEYS[c]
    for c in b:
        kb += _CARD_KEYS[c]
    for c in board:
        ka += _CARD_KEYS[c]
        kb += _CARD_KEYS[c]
    n = live.shape[0]
    idx = np.arange(n_run)
    pre = np.zeros(n_run + 1, np.uint64)  # pre[j]: the key sum of the run-out's first j cards
    for j in range(n_run):
        pre[j + 1] = pre[j] + _CARD_KEYS[live[idx[j]]]
    halves = 0
    count = 0
    while True:
        s = pre[n_run]
        ra = _rank(ka + s, a, board, live, idx, n_run)
        rb = _rank(kb + s, b, board, live, idx, n_run)
        if ra > rb:
            halves += 2
        elif ra == rb:
            halves += 1
        count += 1
        i = n_run - 1  # the next combination: bump the last index that can move
        while i >= 0 and idx[i] == n - n_run + i:
            i -= 1
        if i < 0:
            break
        idx[i] += 1
        for j in range(i + 1, n_run):
            idx[j] = idx[j - 1] + 1
        for j in range(i, n_run):
            pre[j + 1] = pre[j] + _CARD_KEYS[live[idx[j]]]
    return halves, count


def matchup_equity(a: Sequence[int], b: Sequence[int], board: Sequence[int], deck: Sequence[int],
                   total_board: int) -> float:
    """The share of the pot (ties half) that hand ``a`` wins at a showdown against hand
    ``b`` over every completion of ``board`` to ``total_board`` cards from ``deck`` minus the
    cards of ``a``, ``b`` and ``board``: exact."""
    used = {*a, *b, *board}
    if len(used) != len(a) + len(b) + len(board):
        raise ValueError(f"the hands {list(a)} and {list(b)} and board {list(board)} share a card")
    n_run = total_board - len(board)
    if n_run < 0:
        raise ValueError(f"board of {len(board)} cards exceeds {total_board}")
    live = np.array([c for c in deck if c not in used], np.int64)
    if n_run > len(live):
        raise ValueError(f"{n_run} board cards to come but {len(live)} cards left")
    halves, count = _matchup_halves(np.asarray(a, np.int64), np.asarray(b, np.int64),
                                    np.asarray(board, np.int64), live, n_run)
    return halves / (2.0 * count)
