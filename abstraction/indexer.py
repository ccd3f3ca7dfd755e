"""Suit-isomorphic hand indexing.

Implements the indexing scheme of Kevin Waugh, "A Fast and Optimal Hand Isomorphism
Algorithm" (AAAI-13 Workshop on Computer Poker and Imperfect Information, 2013). A hand
is a sequence of card groups (one per betting round, e.g. hole cards, flop, turn,
river); two hands are isomorphic when a permutation of the suits maps one onto the
other, group by group. The index is a dense, optimal (no gaps) number in
``[0, count(round))`` built from the paper's four layers:

1. **Rank sets** — each suit's ranks in one group are indexed with the combinatorial
   number system (colex order), among the ranks that suit has *not* used in earlier
   groups, so a suit's whole history is a mixed-radix number (the "suit index").
2. **Suit configuration** — the per-group card counts of every suit. Suits are sorted by
   their count vectors; the sorted vectors (the configuration) are enumerated ahead of
   time and each one owns a contiguous block of indices (its offset).
3. **Multisets of equal suits** — suits with the same count vector are interchangeable,
   so their suit indices are a multiset, indexed with the combinatorial number system
   on ``a_1 + (k-1) > a_2 + (k-2) > ... > a_k`` (``a`` sorted decreasing).
4. The multiset indices of the configuration's groups are combined in mixed radix and
   added to the configuration's offset.

Unindexing inverts each layer. The per-hand kernels (:func:`index_hand_njit`,
:func:`unindex_hand_njit`) take the indexer's packed table array
(:attr:`HandIndexer.tables`) and can be called from other ``@njit`` code;
:class:`HandIndexer` validates input, allocates, and runs the batch kernels.

Cards use ACPC's encoding ``rank * 4 + suit``. A reduced deck uses the highest
``num_ranks`` ranks and the last ``num_suits`` suits; internally ranks and suits are
renumbered densely from 0.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from math import comb

import numpy as np
from numba import njit

from poker.cards import DECK_SIZE, NUM_RANKS, NUM_SUITS, deck_cards, format_cards

__all__ = [
    "HandIndexer",
    "index_hand_njit",
    "unindex_hand_njit",
]

_MAX_SUITS = 4  # kernels always work on four suit slots; missing suits stay empty
_SUIT_SHIFT = 16  # bits per suit in the packed 64-bit card mask
_BINOM_N = NUM_RANKS + 1  # the small binomial table is _BINOM_N x _BINOM_N
_MAX_INDEX = 1 << 56  # counts stay well inside int64 (kernel intermediates need slack)

# Layout of the packed table array (one int64 array, so that a kernel call passes a
# single array: numba reference-counts every array argument on every call). The header
# holds scalars and the offsets of the sub-tables; C = configurations over all rounds,
# R = rounds.
_H_ROUNDS = 0  # R
_H_NUM_RANKS = 1
_H_NUM_SUITS = 2
_H_LOW_RANK = 3  # lowest ACPC rank of the deck
_H_LOW_SUIT = 4  # lowest ACPC suit of the deck
_H_ROUND_START = 5  # (R+1,) first card position of each round's group
_H_COUNTS = 6  # (R,) canonical hands after each round
_H_CARD_CODE = 7  # (52,) dense suit * 16 + dense rank, or -1 if not in the deck
_H_POPCOUNT = 8  # (8192,) bits set in a 13-bit rank mask
_H_BINOM = 9  # (14, 14) n choose k
_H_KEY_WEIGHT = 10  # (R,) weight of a suit's round-j card count in its key
_H_KEY_BASE = 11  # (R,) exclusive bound of the keys after round r
_H_CFG_START = 12  # (R+1,) round r owns configurations cfg_start[r]:cfg_start[r+1]
_H_CFG_CODE = 13  # (C,) code of the sorted suit keys (ascending within a round)
_H_CFG_OFFSET = 14  # (C,) first index of the configuration within its round
_H_GROUP_LEN = 15  # (C, 4) length of the equal-suit group starting at a slot, or 0
_H_GROUP_SIZE = 16  # (C, 4) number of multisets of that group
_H_SUIT_SIZE = 17  # (C, 4) rank histories of one suit in that slot
_H_CARD_COUNT = 18  # (C, 4, R) cards of the slot's suit in each round
_H_CARD_POS = 19  # (C, 4, R) where those cards go in an unindexed hand
_H_KEY_MULT = 20  # (key_base[R-1],) rank histories of a suit whose key so far is k
_H_SLOT_K = 21  # (C, 4) colex arity of a slot in its group (group length - rank)
_H_SLOT_MULT = 22  # (C, 4) mixed-radix multiplier of the slot's group
_H_HASH_START = 23  # (R,) offset of round r's hash table inside the _H_HASH array
_H_HASH_MASK = 24  # (R,) size - 1 of that table (a power of two)
_H_HASH = 25  # configuration ids by hash of their code, linear probing; -1 = empty
_HEADER = 26
_IDX_BITS = 40  # a suit's sort value is key << 40 | suit index


# --------------------------------------------------------------------------- kernels


@njit(cache=True)
def _choose(n: int, k: int) -> int:
    """``n`` choose ``k`` for ``0 <= k <= 4`` (sizes of multisets of equal suits)."""
    if n < k:
        return 0
    if k == 0:
        return 1
    if k == 1:
        return n
    if k == 2:
        return (n * (n - 1)) >> 1
    if k == 3:
        return ((n * (n - 1)) >> 1) * (n - 2) // 3
    return (((n * (n - 1)) >> 1) * (((n - 2) * (n - 3)) >> 1)) // 6


@njit(cache=True)
def _hash(code: int) -> int:
    """Hash of a configuration code (< 2**60) without int64 overflow."""
    return ((code >> 30) * 0x9E3779B1 + (code & 0x3FFFFFFF) * 0x85EBCA77) >> 16


@njit(cache=True)
def _cswap(a, b):
    """Compare-exchange into decreasing order (branch-free max/min)."""
    return max(a, b), min(a, b)


@njit(cache=True)
def _index_core(tab, cards, start, rnd):
    """Index of the hand ``cards[start:start + n]`` after round ``rnd``, or -1."""
    rs = tab[_H_ROUND_START]
    if cards.shape[0] < start + tab[rs + rnd + 1]:
        return -1
    cc = tab[_H_CARD_CODE]
    pc = tab[_H_POPCOUNT]
    bo = tab[_H_BINOM]
    km = tab[_H_KEY_MULT]
    used = 0  # cards of earlier rounds: bit suit * 16 + rank
    keys = 0  # per-suit keys (card counts per round), 16 bits per suit
    i0 = i1 = i2 = i3 = 0  # per-suit indices of the rank histories
    for j in range(rnd + 1):
        lo = start + tab[rs + j]
        hi = start + tab[rs + j + 1]
        w = tab[tab[_H_KEY_WEIGHT] + j]
        cur = 0
        new_keys = keys
        for p in range(lo, hi):
            c = np.int64(cards[p])
            if c < 0 or c >= DECK_SIZE:
                return -1
            code = tab[cc + c]
            if code < 0:
                return -1
            bit = np.int64(1) << code
            if (used | cur) & bit:
                return -1
            cur |= bit
            new_keys += w << (code & 0x30)
        # each card adds choose(position among the suit's unused ranks, its order among
        # the suit's cards of this round) to its suit's colex index, scaled by the
        # number of rank histories of the suit's earlier rounds
        for p in range(lo, hi):
            code = tab[cc + np.int64(cards[p])]
            shift = code & 0x30
            below = (np.int64(1) << (code & 15)) - 1
            order = tab[pc + ((cur >> shift) & below)] + 1
            pos = (code & 15) - tab[pc + ((used >> shift) & below)]
            x = tab[bo + pos * _BINOM_N + order] * tab[km + ((keys >> shift) & 0xFFFF)]
            suit = shift >> 4
            i0 += x * (suit == 0)
            i1 += x * (suit == 1)
            i2 += x * (suit == 2)
            i3 += x * (suit == 3)
        used |= cur
        keys = new_keys
    # sort the suits decreasingly by (key, index): 5-comparator network
    v0 = ((keys & 0xFFFF) << _IDX_BITS) | i0
    v1 = (((keys >> 16) & 0xFFFF) << _IDX_BITS) | i1
    v2 = (((keys >> 32) & 0xFFFF) << _IDX_BITS) | i2
    v3 = (((keys >> 48) & 0xFFFF) << _IDX_BITS) | i3
    v0, v1 = _cswap(v0, v1)
    v2, v3 = _cswap(v2, v3)
    v0, v2 = _cswap(v0, v2)
    v1, v3 = _cswap(v1, v3)
    v1, v2 = _cswap(v1, v2)
    # the configuration: hash-table lookup of the sorted keys' code
    base = tab[tab[_H_KEY_BASE] + rnd]
    code = (
        ((v0 >> _IDX_BITS) * base + (v1 >> _IDX_BITS)) * base + (v2 >> _IDX_BITS)
    ) * base + (v3 >> _IDX_BITS)
    co = tab[_H_CFG_CODE]
    table = tab[_H_HASH] + tab[tab[_H_HASH_START] + rnd]
    mask = tab[tab[_H_HASH_MASK] + rnd]
    h = _hash(code) & mask
    cfg = tab[table + h]
    while cfg >= 0 and tab[co + cfg] != code:
        h = (h + 1) & mask
        cfg = tab[table + h]
    if cfg < 0:
        return -1  # unreachable for a valid hand
    # multiset index of each group of equal suits, combined in mixed radix: slot s
    # adds choose(a_s + k_s - 1, k_s) times its group's multiplier
    sk = tab[_H_SLOT_K] + cfg * _MAX_SUITS
    sm = tab[_H_SLOT_MULT] + cfg * _MAX_SUITS
    low = (np.int64(1) << _IDX_BITS) - 1
    k = tab[sk]
    total = tab[tab[_H_CFG_OFFSET] + cfg] + _choose((v0 & low) + k - 1, k) * tab[sm]
    k = tab[sk + 1]
    total += _choose((v1 & low) + k - 1, k) * tab[sm + 1]
    k = tab[sk + 2]
    total += _choose((v2 & low) + k - 1, k) * tab[sm + 2]
    k = tab[sk + 3]
    total += _choose((v3 & low) + k - 1, k) * tab[sm + 3]
    return total


@njit(cache=True)
def index_hand_njit(tables: np.ndarray, cards: np.ndarray, rnd: int) -> int:
    """Index of the hand ``cards`` after round ``rnd``; callable from ``@njit`` code.

    ``tables`` is :attr:`HandIndexer.tables`. Reads the first ``num_cards(rnd)`` entries
    of the 1-d array ``cards`` (ACPC card ints, the groups in order; later entries are
    ignored, so one full-hand array serves every round). Returns -1 if ``cards`` is too
    short, holds a card outside the deck, or repeats a card. ``rnd`` is not checked.
    """
    return _index_core(tables, cards, 0, rnd)


@njit(cache=True)
def _unrank_choose(g: int, k: int, hi: int) -> int:
    """Largest ``n`` < ``hi`` with ``choose(n, k) <= g``, for ``1 <= k <= 4``."""
    if k == 1:
        return g
    lo = k - 1  # choose(k-1, k) = 0 <= g
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if _choose(mid, k) <= g:
            lo = mid
        else:
            hi = mid
    return lo


@njit(cache=True)
def _emit_suit(tab, cfg, slot, rnd, a, out, start):
    """Write the cards of the suit in ``slot`` whose suit index is ``a``."""
    n_rounds = tab[_H_ROUNDS]
    pc = tab[_H_POPCOUNT]
    bo = tab[_H_BINOM]
    low_rank = tab[_H_LOW_RANK]
    suit = slot + tab[_H_LOW_SUIT]
    row = (cfg * _MAX_SUITS + slot) * n_rounds
    counts = tab[_H_CARD_COUNT] + row
    positions = tab[_H_CARD_POS] + row
    used = 0
    for j in range(rnd + 1):
        cnt = tab[counts + j]
        if cnt == 0:
            continue
        avail = tab[_H_NUM_RANKS] - tab[pc + used]
        size = tab[bo + avail * _BINOM_N + cnt]
        x = a % size
        a //= size
        dst = start + tab[positions + j]
        pos = avail
        new = 0
        for i in range(cnt, 0, -1):
            # largest compressed position with choose(pos, i) <= x
            pos -= 1
            while tab[bo + pos * _BINOM_N + i] > x:
                pos -= 1
            x -= tab[bo + pos * _BINOM_N + i]
            # the pos-th (0-based) rank not in `used`
            r = 0
            left = pos
            while left > 0 or (used >> r) & 1:
                if not (used >> r) & 1:
                    left -= 1
                r += 1
            new |= np.int64(1) << r
            out[dst] = (r + low_rank) * 4 + suit
            dst += 1
        used |= new


@njit(cache=True)
def _unindex_core(tab, index, rnd, out, start):
    """Write the canonical hand of ``index`` to ``out[start:]``; 0, or -1 if invalid."""
    rs = tab[_H_ROUND_START]
    if index < 0 or index >= tab[tab[_H_COUNTS] + rnd]:
        return -1
    if out.shape[0] < start + tab[rs + rnd + 1]:
        return -1
    # the configuration: the last one whose offset is <= index (branch-free search)
    co = tab[_H_CFG_OFFSET]
    cfg = tab[tab[_H_CFG_START] + rnd]
    n = tab[tab[_H_CFG_START] + rnd + 1] - cfg
    while n > 1:
        half = n >> 1
        cfg = cfg + half if tab[co + cfg + half] <= index else cfg
        n -= half
    rem = index - tab[co + cfg]
    gl = tab[_H_GROUP_LEN] + cfg * _MAX_SUITS
    gs = tab[_H_GROUP_SIZE] + cfg * _MAX_SUITS
    ss = tab[_H_SUIT_SIZE] + cfg * _MAX_SUITS
    p = 0
    while p < _MAX_SUITS:
        glen = tab[gl + p]
        gsize = tab[gs + p]
        g = rem % gsize
        rem //= gsize
        # unrank the multiset: b_q = a_q + (glen - 1 - q) strictly decreasing, colex
        bound = tab[ss + p] + glen
        for q in range(glen):
            k = glen - q
            b = _unrank_choose(g, k, bound)
            g -= _choose(b, k)
            bound = b
            _emit_suit(tab, cfg, p + q, rnd, b - (k - 1), out, start)
        p += max(glen, 1)
    # sort each round's group increasingly
    for j in range(rnd + 1):
        s = start + tab[rs + j]
        e = start + tab[rs + j + 1]
        for i in range(s + 1, e):
            v = out[i]
            q = i - 1
            while q >= s and out[q] > v:
                out[q + 1] = out[q]
                q -= 1
            out[q + 1] = v
    return 0


@njit(cache=True)
def unindex_hand_njit(tables: np.ndarray, index: int, rnd: int, out: np.ndarray) -> int:
    """Write the canonical hand of ``index`` after round ``rnd`` into ``out``.

    ``tables`` is :attr:`HandIndexer.tables`. Fills ``out[:num_cards(rnd)]`` (a 1-d
    integer array) with ACPC card ints, each round's group sorted increasingly. Returns
    0, or -1 (``out`` untouched) if ``index`` is not in ``[0, count(rnd))`` or ``out``
    is too short. ``rnd`` is not checked.
    """
    return _unindex_core(tables, index, rnd, out, 0)


@njit(cache=True)
def _index_batch_kernel(tab, flat, k, rnd, out):
    """Index the hands ``flat[i*k:(i+1)*k]``; return the first invalid one, or -1."""
    bad = -1
    for i in range(out.shape[0]):
        v = _index_core(tab, flat, i * k, rnd)
        out[i] = v
        if v < 0 and bad < 0:
            bad = i
    return bad


@njit(cache=True)
def _unindex_batch_kernel(tab, indices, k, rnd, flat):
    """Unindex into ``flat[i*k:(i+1)*k]``; return the first invalid index, or -1."""
    for i in range(indices.shape[0]):
        if _unindex_core(tab, indices[i], rnd, flat, i * k) < 0:
            return i
    return -1


# ------------------------------------------------------------------- table building


def _suit_size(vec: Sequence[int], num_ranks: int) -> int:
    """Number of rank histories of one suit with per-round card counts ``vec``."""
    size = 1
    used = 0
    for m in vec:
        size *= comb(num_ranks - used, m)
        used += m
    return size


def _configurations(
    rounds: Sequence[int], num_ranks: int, num_suits: int
) -> list[tuple[tuple[int, ...], ...]]:
    """All multisets of ``num_suits`` per-suit count vectors that add up to ``rounds``.

    Each is a tuple of ``num_suits`` count vectors in decreasing key order, the key of
    a vector ``v`` being ``sum(v[j] * weight[j])`` with weights growing with ``j`` (see
    ``HandIndexer._build_tables``), i.e. the order of the reversed vectors.
    """
    n_rounds = len(rounds)
    vectors: list[tuple[int, ...]] = [()]
    for c in rounds:
        vectors = [
            v + (m,) for v in vectors for m in range(min(c, num_ranks - sum(v)) + 1)
        ]
    vectors.sort(key=lambda v: tuple(reversed(v)), reverse=True)
    out: list[tuple[tuple[int, ...], ...]] = []

    def extend(
        prefix: list[tuple[int, ...]], start: int, remaining: tuple[int, ...]
    ) -> None:
        left = num_suits - len(prefix)
        if left == 0:
            if not any(remaining):
                out.append(tuple(prefix))
            return
        if (
            any(r > left * num_ranks for r in remaining)
            or sum(remaining) > left * num_ranks
        ):
            return
        for vi in range(start, len(vectors)):
            v = vectors[vi]
            if all(v[j] <= remaining[j] for j in range(n_rounds)):
                prefix.append(v)
                extend(prefix, vi, tuple(remaining[j] - v[j] for j in range(n_rounds)))
                prefix.pop()

    extend([], 0, tuple(rounds))
    return out


class HandIndexer:
    """Dense index of suit-isomorphism classes of hands dealt in rounds.

    ``rounds`` lists the cards dealt in each group, e.g. ``[2, 3, 1, 1]`` for hold'em
    street by street or ``[2, 5]`` for hole cards plus the whole board as one set. Round
    ``r`` (0-based) is the hand made of the first ``r + 1`` groups. The deck is the
    highest ``num_ranks`` ranks of the last ``num_suits`` suits.

    Hands are given as ACPC card ints, the groups one after the other (hole cards
    first); the order of cards inside a group does not matter.
    """

    def __init__(
        self,
        *,
        rounds: Sequence[int],
        num_ranks: int = NUM_RANKS,
        num_suits: int = NUM_SUITS,
    ) -> None:
        try:
            rounds = [operator.index(c) for c in rounds]
        except TypeError:
            raise ValueError(
                f"rounds {rounds!r} must be a list of card counts"
            ) from None
        if not rounds or any(c < 1 for c in rounds):
            raise ValueError(
                f"rounds {rounds} must be a non-empty list of positive card counts"
            )
        if not (
            isinstance(num_ranks, (int, np.integer))
            and isinstance(num_suits, (int, np.integer))
            and 1 <= num_ranks <= NUM_RANKS
            and 1 <= num_suits <= NUM_SUITS
        ):
            raise ValueError(
                f"deck of {num_ranks} ranks x {num_suits} suits is not possible "
                f"(1..{NUM_RANKS} ranks, 1..{NUM_SUITS} suits)"
            )
        if sum(rounds) > num_ranks * num_suits:
            raise ValueError(
                f"rounds {rounds} deal {sum(rounds)} cards, more than the "
                f"{num_ranks * num_suits}-card deck holds"
            )
        self.rounds: tuple[int, ...] = tuple(rounds)
        self.num_ranks = int(num_ranks)
        self.num_suits = int(num_suits)
        #: Packed lookup tables (one ``int64`` array) for :func:`index_hand_njit` and
        #: :func:`unindex_hand_njit`.
        self.tables: np.ndarray = self._build_tables()

    # ---------------------------------------------------------------- construction

    def _build_tables(self) -> np.ndarray:
        rounds, n, s = self.rounds, self.num_ranks, self.num_suits
        n_rounds = len(rounds)
        # key of a suit's count vector v: sum v[j] * weight[j]; weights grow with j, so
        # sorting keys matches sorting reversed vectors, and a round-r key only uses
        # rounds 0..r
        weight = [1] * n_rounds
        for j in range(1, n_rounds):
            weight[j] = weight[j - 1] * (min(rounds[j - 1], n) + 1)
        key_base = [weight[j] * (min(rounds[j], n) + 1) for j in range(n_rounds)]
        if key_base[-1] > 1 << 15:  # keys are packed 16 bits per suit
            raise ValueError(f"rounds {list(rounds)}: too many rounds to index")

        cfg_rows: list[tuple] = []  # (round, code, vectors)
        counts: list[int] = []
        cfg_start = [0]
        for r in range(n_rounds):
            base = key_base[r]
            rows = []
            for cfg in _configurations(rounds[: r + 1], n, s):
                vecs = list(cfg) + [(0,) * (r + 1)] * (_MAX_SUITS - s)
                code = 0
                for v in vecs:
                    code = code * base + sum(m * weight[j] for j, m in enumerate(v))
                rows.append((code, vecs))
            rows.sort()
            cfg_rows.extend((r, code, vecs) for code, vecs in rows)
            cfg_start.append(len(cfg_rows))

        n_cfg = len(cfg_rows)
        cfg_code = np.zeros(n_cfg, np.int64)
        cfg_offset = np.zeros(n_cfg, np.int64)
        glen_a = np.zeros((n_cfg, _MAX_SUITS), np.int64)
        gsize_a = np.ones((n_cfg, _MAX_SUITS), np.int64)
        ssize_a = np.ones((n_cfg, _MAX_SUITS), np.int64)
        slot_k = np.zeros((n_cfg, _MAX_SUITS), np.int64)
        slot_mult = np.zeros((n_cfg, _MAX_SUITS), np.int64)
        ccount_a = np.zeros((n_cfg, _MAX_SUITS, n_rounds), np.int64)
        cpos_a = np.zeros((n_cfg, _MAX_SUITS, n_rounds), np.int64)
        round_start = [0]
        for c in rounds:
            round_start.append(round_start[-1] + c)

        total = 0
        for ci, (r, code, vecs) in enumerate(cfg_rows):
            if ci == cfg_start[r]:
                total = 0
            cfg_code[ci] = code
            cfg_offset[ci] = total
            mult = 1
            p = 0
            while p < _MAX_SUITS:
                q = p
                while q < _MAX_SUITS and vecs[q] == vecs[p]:
                    q += 1
                glen = q - p
                size = _suit_size(vecs[p], n)
                gsize = comb(size + glen - 1, glen)
                glen_a[ci, p] = glen
                gsize_a[ci, p] = gsize
                ssize_a[ci, p:q] = size
                slot_k[ci, p:q] = range(glen, 0, -1)
                slot_mult[ci, p:q] = mult
                if size >= 1 << _IDX_BITS:
                    raise ValueError(
                        f"rounds {list(rounds)}: too many rank histories per suit"
                    )
                mult *= gsize
                if mult >= _MAX_INDEX:
                    raise ValueError(
                        f"rounds {list(rounds)}: too many hands to index in int64"
                    )
                p = q
            for j in range(r + 1):
                pos = round_start[j]
                for p in range(_MAX_SUITS):
                    ccount_a[ci, p, j] = vecs[p][j]
                    cpos_a[ci, p, j] = pos
                    pos += vecs[p][j]
            total += mult
            if total >= _MAX_INDEX:
                raise ValueError(
                    f"rounds {list(rounds)}: too many hands to index in int64"
                )
            if ci + 1 == cfg_start[r + 1]:
                counts.append(total)

        card_code = np.full(DECK_SIZE, -1, np.int64)
        low_rank, low_suit = NUM_RANKS - n, NUM_SUITS - s
        for rank in range(low_rank, NUM_RANKS):
            for suit in range(low_suit, NUM_SUITS):
                card_code[rank * 4 + suit] = (
                    (suit - low_suit) * _SUIT_SHIFT + rank - low_rank
                )
        popcount = np.array([i.bit_count() for i in range(1 << NUM_RANKS)], np.int64)
        binom = np.array(
            [[comb(a, b) for b in range(NUM_RANKS + 1)] for a in range(NUM_RANKS + 1)],
            np.int64,
        )
        # per-round hash tables of the configuration codes (load factor <= 1/4)
        hash_start, hash_mask, hash_table = [], [], []
        for r in range(n_rounds):
            size = 4
            while size < 4 * (cfg_start[r + 1] - cfg_start[r]):
                size *= 2
            slots = [-1] * size
            for ci in range(cfg_start[r], cfg_start[r + 1]):
                h = _hash.py_func(int(cfg_code[ci])) & (size - 1)
                while slots[h] >= 0:
                    h = (h + 1) & (size - 1)
                slots[h] = ci
            hash_start.append(len(hash_table))
            hash_mask.append(size - 1)
            hash_table += slots
        key_mult = []
        for key in range(key_base[-1]):
            digits = [
                key // weight[j] % (min(rounds[j], n) + 1) for j in range(n_rounds)
            ]
            key_mult.append(_suit_size(digits, n) if sum(digits) <= n else 0)
        parts = {
            _H_ROUND_START: round_start,
            _H_COUNTS: counts,
            _H_CARD_CODE: card_code,
            _H_POPCOUNT: popcount,
            _H_BINOM: binom,
            _H_KEY_WEIGHT: weight,
            _H_KEY_BASE: key_base,
            _H_CFG_START: cfg_start,
            _H_CFG_CODE: cfg_code,
            _H_CFG_OFFSET: cfg_offset,
            _H_GROUP_LEN: glen_a,
            _H_GROUP_SIZE: gsize_a,
            _H_SUIT_SIZE: ssize_a,
            _H_CARD_COUNT: ccount_a,
            _H_CARD_POS: cpos_a,
            _H_KEY_MULT: key_mult,
            _H_SLOT_K: slot_k,
            _H_SLOT_MULT: slot_mult,
            _H_HASH_START: hash_start,
            _H_HASH_MASK: hash_mask,
            _H_HASH: hash_table,
        }
        header = np.zeros(_HEADER, np.int64)
        header[[_H_ROUNDS, _H_NUM_RANKS, _H_NUM_SUITS, _H_LOW_RANK, _H_LOW_SUIT]] = (
            n_rounds,
            n,
            s,
            low_rank,
            low_suit,
        )
        chunks = [header]
        offset = _HEADER
        for slot, part in parts.items():
            flat = np.asarray(part, np.int64).ravel()
            header[slot] = offset
            chunks.append(flat)
            offset += flat.size
        self._round_start = round_start
        self._counts = counts
        return np.concatenate(chunks)

    # ---------------------------------------------------------------------- queries

    def __repr__(self) -> str:
        return (
            f"HandIndexer(rounds={list(self.rounds)}, num_ranks={self.num_ranks}, "
            f"num_suits={self.num_suits})"
        )

    @property
    def num_rounds(self) -> int:
        """Number of rounds (card groups)."""
        return len(self.rounds)

    def num_cards(self, round: int) -> int:
        """Number of cards in a hand after ``round``."""
        return self._round_start[self._check_round(round) + 1]

    def count(self, round: int | None = None) -> int:
        """Number of canonical hands after ``round`` (default: the last round)."""
        r = self.num_rounds - 1 if round is None else self._check_round(round)
        return self._counts[r]

    def _check_round(self, round: int) -> int:
        if isinstance(round, bool) or not isinstance(round, (int, np.integer)):
            raise ValueError(f"round {round!r} is not an integer")
        if not 0 <= round < self.num_rounds:
            raise ValueError(f"round {round} is out of range 0..{self.num_rounds - 1}")
        return int(round)

    def _round_for(self, num_cards: int, round: int | None) -> int:
        if round is None:
            starts = self._round_start
            if num_cards not in starts[1:]:
                raise ValueError(
                    f"{num_cards} cards is not a hand after any round of "
                    f"{list(self.rounds)}"
                )
            return starts.index(num_cards) - 1
        r = self._check_round(round)
        if num_cards != self._round_start[r + 1]:
            raise ValueError(
                f"round {r} hands have {self._round_start[r + 1]} cards, "
                f"got {num_cards}"
            )
        return r

    def _explain(self, hand: np.ndarray) -> str:
        cards = [int(c) for c in hand]
        deck = set(deck_cards(self.num_ranks, self.num_suits))
        outside = [c for c in cards if c not in deck]
        if outside:
            return (
                f"cards {outside} are not in the {self.num_ranks}x{self.num_suits} deck"
            )
        return f"hand {format_cards(cards)} repeats a card"

    def index_batch(self, cards: np.ndarray, round: int | None = None) -> np.ndarray:
        """Indices of the hands in the rows of ``cards`` (shape ``(n, num_cards)``).

        ``round`` defaults to the round whose hands have ``cards.shape[1]`` cards.
        Raises ``ValueError`` on a card outside the deck, a repeated card, or a row
        length that does not match the round.
        """
        arr = np.asarray(cards)
        if arr.ndim != 2:
            raise ValueError(
                f"cards must be a 2-d array (hands x cards), got shape {arr.shape}"
            )
        r = self._round_for(arr.shape[1], round)
        if arr.dtype != np.uint8:
            if arr.size and not np.issubdtype(arr.dtype, np.integer):
                raise ValueError(f"cards must be integers, got dtype {arr.dtype}")
            if arr.size and (arr.min() < 0 or arr.max() >= DECK_SIZE):
                bad = int(
                    np.flatnonzero(((arr < 0) | (arr >= DECK_SIZE)).any(axis=1))[0]
                )
                raise ValueError(f"hand {bad}: {self._explain(arr[bad])}")
        arr = np.ascontiguousarray(arr, dtype=np.uint8)
        out = np.empty(arr.shape[0], np.int64)
        bad = _index_batch_kernel(self.tables, arr.reshape(-1), arr.shape[1], r, out)
        if bad >= 0:
            raise ValueError(f"hand {bad}: {self._explain(arr[bad])}")
        return out

    def index(self, cards: Sequence[int], round: int | None = None) -> int:
        """Index of one hand (ACPC card ints, the groups in order)."""
        arr = np.asarray(list(cards), dtype=np.int64)
        return int(self.index_batch(arr.reshape(1, -1), round)[0])

    def unindex_batch(
        self, indices: np.ndarray, round: int | None = None
    ) -> np.ndarray:
        """Canonical hands of ``indices`` as a ``(n, num_cards)`` ``uint8`` array.

        Each group's cards are sorted increasingly; ``round`` defaults to the last.
        Raises ``ValueError`` on an index outside ``[0, count(round))``.
        """
        r = self.num_rounds - 1 if round is None else self._check_round(round)
        idx = np.asarray(indices)
        if idx.ndim != 1:
            raise ValueError(f"indices must be a 1-d array, got shape {idx.shape}")
        if idx.size and not np.issubdtype(idx.dtype, np.integer):
            raise ValueError(f"indices must be integers, got dtype {idx.dtype}")
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        k = self._round_start[r + 1]
        out = np.zeros((idx.shape[0], k), np.uint8)
        bad = _unindex_batch_kernel(self.tables, idx, k, r, out.reshape(-1))
        if bad >= 0:
            raise ValueError(
                f"index {int(idx[bad])} is out of range 0..{self.count(r) - 1} "
                f"for round {r}"
            )
        return out

    def unindex(self, index: int, round: int | None = None) -> list[int]:
        """Canonical hand of ``index``: ACPC card ints, each group sorted up."""
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise ValueError(f"index {index!r} is not an integer")
        r = self.num_rounds - 1 if round is None else self._check_round(round)
        if not 0 <= index < self.count(r):
            raise ValueError(
                f"index {index} is out of range 0..{self.count(r) - 1} for round {r}"
            )
        return [int(c) for c in self.unindex_batch(np.array([index], np.int64), r)[0]]
