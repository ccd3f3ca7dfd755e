"""Successor tables: a hand's index on every round by one table lookup a round.

:func:`~abstraction.indexer.index_hand_njit` computes a hand's suit-isomorphism class
(Waugh 2013) from scratch: on 20-card hold'em about 55 ns for the hole cards and 85 ns
for the river, so a dealt training iteration that indexes both players' hands on four
streets spends about 570 ns of its 1.9 us there. Where a game's classes are few, the
same indices come from tables instead, one lookup a round:

* a class of round r - 1 is kept with a suit permutation ``pi`` that maps the hand's
  actual cards onto the class's canonical representative (the indexer's unindex),
  group by group;
* round r's new cards, mapped by ``pi`` and ranked in colex order over the deck
  (the combinatorial number system), select the entry ``step[r][class, colex]``: the
  class of round r and the permutation ``sigma`` that maps the representative plus the
  mapped new cards onto the new class's representative. The hand's permutation becomes
  ``sigma`` after ``pi``.

Suit permutations leave a hand's class unchanged, which is why the lookup of the mapped
cards is the class of the actual ones. The tables have ``count(r - 1) * C(deck, k_r)``
entries on round r: 70,000 on 20-card hold'em, 3.7 M for full hold'em's flop and
2.9 G for its river, so :func:`build_index_tables` builds them only under a cap and the
caller keeps the indexer otherwise.

:func:`index_with` is compiled into the sampled training kernel, as the hand indexer's
:func:`~abstraction.indexer.index_hand_njit` is; numba's cache keys a function on its own
file, so after an edit here a cached kernel keeps the old code until the cache is cleared
(delete the ``__pycache__`` ``*.nbi``/``*.nbc`` files) or the kernel's file changes.
"""

from __future__ import annotations

from itertools import permutations
from math import comb, factorial
from typing import NamedTuple

import numpy as np
from numba import njit

from .indexer import HandIndexer, index_hand_njit, unindex_hand_njit

__all__ = ["IndexTables", "MAX_TABLE_ENTRIES", "build_index_tables", "index_rounds", "index_with", "table_bytes"]

#: Successor tables are built only when all rounds together have at most this many
#: entries (8 bytes each).
MAX_TABLE_ENTRIES = 1 << 22


class IndexTables(NamedTuple):
    """The flat arrays :func:`index_with` reads.

    ``pos[card]``: the card's position in the deck (-1 outside it); ``apply[p, x]``: the
    position of deck card x under suit permutation p (permutation 0 is the identity);
    ``compose[s, p]``: the permutation "p, then s"; ``binom[n, k]`` = C(n, k);
    ``group[r]``: the cards round r deals; round r's entries start at ``offset[r]``, one
    row of ``width[r]`` = C(deck, group[r]) per class of round r - 1 (one row on round
    0); an entry is ``class * n_perm + sigma``, -1 where the new cards meet the
    representative's.
    """

    pos: np.ndarray  # int64[64]
    apply: np.ndarray  # int64[n_perm, deck]
    compose: np.ndarray  # int64[n_perm, n_perm]
    binom: np.ndarray  # int64[deck + 1, kmax + 1]
    group: np.ndarray  # int64[R]
    offset: np.ndarray  # int64[R]
    width: np.ndarray  # int64[R]
    table: np.ndarray  # int64[entries]
    n_perm: int


@njit(cache=True, inline="always")
def index_with(tables: IndexTables, cards: np.ndarray, n_rounds: int, out: np.ndarray) -> None:
    """The index after every round 0..``n_rounds`` - 1 of the hand ``cards`` (the groups
    in order, as for :func:`~abstraction.indexer.index_hand_njit`) into ``out[r]``. The
    cards must be distinct cards of the deck (not checked: a dealt hand is). Allocates
    nothing; callable from ``@njit`` code (the dealt training kernel, where round s is
    street s)."""
    t = tables
    perm = 0
    cls = 0
    start = 0
    for r in range(n_rounds):
        k = t.group[r]
        code = 0
        for a in range(k):
            pa = t.apply[perm, t.pos[cards[start + a]]]
            below = 0  # the card's order among the group's mapped positions
            for b in range(k):
                if t.apply[perm, t.pos[cards[start + b]]] < pa:
                    below += 1
            code += t.binom[pa, below + 1]
        e = t.table[t.offset[r] + cls * t.width[r] + code]
        cls = e // t.n_perm
        perm = t.compose[e - cls * t.n_perm, perm]
        out[r] = cls
        start += k


@njit(cache=True)
def _index_batch(tables: IndexTables, hands: np.ndarray, out: np.ndarray) -> None:
    for i in range(hands.shape[0]):
        index_with(tables, hands[i], out.shape[1], out[i])


def index_rounds(tables: IndexTables, hands: np.ndarray) -> np.ndarray:
    """int64[n, R]: the index after every round of each row of ``hands`` (int64[n, cards],
    distinct deck cards, the groups in order)."""
    hands = np.ascontiguousarray(hands, np.int64)
    out = np.empty((hands.shape[0], tables.group.shape[0]), np.int64)
    _index_batch(tables, hands, out)
    return out


@njit(cache=True)
def _fill_round(
    ix: np.ndarray, rnd: int, n_prev: int, k: int, width: int, prefix: int, deck: np.ndarray,
    pos: np.ndarray, apply: np.ndarray, starts: np.ndarray, n_perm: int, out: np.ndarray,
) -> int:  # fmt: skip
    """Round ``rnd``'s rows into ``out`` (``n_prev`` rows of ``width``): for each class
    of round rnd - 1 (one empty hand on round 0) and each k-subset of the deck in colex
    order, the new class and the permutation onto its representative. ``starts``
    holds each group's first card position (``prefix`` cards before round rnd). Returns
    the number of entries with no permutation found (0 for a correct indexer)."""
    total = prefix + k
    hand = np.zeros(total, np.int64)
    rep = np.zeros(total, np.int64)
    sub = np.zeros(k, np.int64)
    missing = 0
    for c in range(n_prev):
        if rnd > 0:
            unindex_hand_njit(ix, c, rnd - 1, hand)
        used = 0
        for i in range(prefix):
            used |= np.int64(1) << pos[hand[i]]
        for i in range(k):
            sub[i] = i
        for code in range(width):
            clash = False
            for i in range(k):
                if (used >> sub[i]) & 1:
                    clash = True
                hand[prefix + i] = deck[sub[i]]
            if clash:
                out[c * width + code] = -1
            else:
                cls = index_hand_njit(ix, hand, rnd)
                unindex_hand_njit(ix, cls, rnd, rep)
                found = -1
                for p in range(n_perm):
                    same = True
                    g = 0
                    while same and g < starts.shape[0] - 1 and starts[g] < total:
                        lo = starts[g]
                        hi = min(starts[g + 1], total)
                        mine = 0
                        theirs = 0
                        for i in range(lo, hi):
                            mine |= np.int64(1) << apply[p, pos[hand[i]]]
                            theirs |= np.int64(1) << pos[rep[i]]
                        same = mine == theirs
                        g += 1
                    if same:
                        found = p
                        break
                if found < 0:
                    missing += 1
                out[c * width + code] = cls * n_perm + max(found, 0)
            # the next k-subset in colex order
            i = 0
            while i < k - 1 and sub[i] + 1 == sub[i + 1]:
                sub[i] = i
                i += 1
            sub[i] += 1
    return missing


def _sizes(indexer: HandIndexer) -> tuple[int, list[int], list[int], list[int]]:
    """(deck size, per round: rows, row width, entries) of ``indexer``'s tables."""
    n = indexer.num_ranks * indexer.num_suits
    widths = [comb(n, k) for k in indexer.rounds]
    rows = [1] + [indexer.count(r) for r in range(indexer.num_rounds - 1)]
    return n, rows, widths, [r * w for r, w in zip(rows, widths)]


def table_bytes(indexer: HandIndexer, max_entries: int = MAX_TABLE_ENTRIES) -> int:
    """Bytes :func:`build_index_tables` would hold for ``indexer`` (0 where it builds none)."""
    n, _, _, sizes = _sizes(indexer)
    if n > 63 or sum(sizes) > max_entries:
        return 0
    n_perm = factorial(indexer.num_suits)
    return 8 * (sum(sizes) + 64 + n_perm * (n + n_perm) + (n + 1) * (max(indexer.rounds) + 1) + 3 * indexer.num_rounds)


def build_index_tables(indexer: HandIndexer, max_entries: int = MAX_TABLE_ENTRIES) -> IndexTables | None:
    """The successor tables of ``indexer``, or None where they would exceed
    ``max_entries`` entries (or the deck has more than 63 cards)."""
    from poker.cards import deck_cards

    deck = np.asarray(deck_cards(indexer.num_ranks, indexer.num_suits), np.int64)
    n, rows, widths, sizes = _sizes(indexer)
    groups = list(indexer.rounds)
    if n > 63 or sum(sizes) > max_entries:
        return None
    pos = np.full(64, -1, np.int64)
    pos[deck] = np.arange(n)
    suits = sorted({int(c) % 4 for c in deck})
    perms = list(permutations(range(len(suits))))  # the identity first
    n_perm = len(perms)
    apply = np.empty((n_perm, n), np.int64)
    for p, perm in enumerate(perms):
        for x, card in enumerate(deck):
            suit = suits[perm[suits.index(int(card) % 4)]]
            apply[p, x] = pos[int(card) // 4 * 4 + suit]
    where = {tuple(row): p for p, row in enumerate(apply.tolist())}
    compose = np.empty((n_perm, n_perm), np.int64)
    for s in range(n_perm):
        for p in range(n_perm):
            compose[s, p] = where[tuple(apply[s, apply[p]].tolist())]
    kmax = max(groups)
    binom = np.array([[comb(i, k) for k in range(kmax + 1)] for i in range(n + 1)], np.int64)
    starts = np.cumsum([0] + groups).astype(np.int64)
    ix = np.ascontiguousarray(indexer.tables, np.int64)
    table = np.empty(sum(sizes), np.int64)
    offset = np.cumsum([0] + sizes[:-1]).astype(np.int64)
    for r, k in enumerate(groups):
        part = table[offset[r] : offset[r] + sizes[r]]
        missing = _fill_round(ix, r, rows[r], k, widths[r], int(starts[r]), deck, pos, apply, starts, n_perm, part)
        if missing:
            raise AssertionError(f"round {r}: {missing} hands map onto no representative")
    return IndexTables(
        pos=pos, apply=apply, compose=compose, binom=binom, group=np.asarray(groups, np.int64),
        offset=offset, width=np.asarray(widths, np.int64), table=table, n_perm=n_perm,
    )  # fmt: skip
