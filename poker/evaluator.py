"""Poker hand evaluator: comparable integer ranks for 1 to 7 cards.

A rank is an integer, higher is better, equal is a tie, under the standard "best five
of however many cards you have" ordering (A-2-3-4-5 is the lowest straight). Hands of
fewer than five cards follow the reference dealer's rule (SPEC §5.2): the same ordering
applied to the cards there are, with no straights or flushes. Every rank reads
``category << 12 | index`` (index >= 1): :func:`hand_category` recovers the category
(0 = high card .. 8 = straight flush) and ``index`` orders hands within it. One scale
serves every number of cards, but only hands of the same size are meant to be compared
(within a category a missing kicker sorts below any card).

Design: the key-sum idea of Kenneth Shackleton's SKPokerEval, as refined in zekyll's
OMPEval (and b-inary's holdem-hand-evaluator), written anew here:

* Each rank has a small key. The 13 keys come from a greedy search (smallest key, rank
  by rank, such that every multiset of at most 7 ranks with at most 4 copies of each
  has its own sum); ``tests/test_evaluator.py`` re-checks the property. Sums are unique
  across hand sizes too, so one table serves 1..7 cards.
* A card's 64-bit key is ``rank_key * M (mod 2**64)`` plus a one in its suit's 4-bit
  counter (bits 0..15). ``M`` is a multiplier with 20 zero low bits, so the products
  leave bits 0..19 alone and summing card keys sums both parts: the top bits of a
  hand's key are a multiplicative hash (Knuth, TAOCP vol. 3 §6.4) of its rank multiset,
  computed by the additions alone.
* Counters start at 3, so a counter reaches 8 exactly when its suit holds 5+ cards:
  one AND tells whether the hand has a flush. With at most 7 cards a flush hand can
  hold nothing better than its flush or straight flush, so it is ranked from the
  13-bit mask of its flush suit's ranks by an 8,192-entry table.
* Otherwise the top 17 bits of the key, XORed with a per-bucket displacement (bucket =
  the next 14 bits), index a table of 2**17 ranks. The displacements are found as in
  "hash, displace and compress" (Belazzougui, Botelho and Dietzfelbinger, ESA 2009),
  largest buckets first, so the hash is perfect over the 76,155 rank multisets.
* Card keys 52..255 add one to a poison counter (bits 16..19) that the flush test
  also reads: invalid cards cost nothing on the fast path and rank -1.

The tables (about 340 KB, so they stay in L2) are built at import by plain numpy in
about 50 ms, then frozen into the kernels as constants, so :func:`rank_cards` and
:func:`eval7_njit` can be called from any other ``@njit`` code with just the cards.
numba itself is imported, and the kernels compiled or loaded from its cache, the first
time one of them is asked for: :func:`evaluate` and :func:`evaluate_trusted` rank hands
in plain Python over the same tables, so a process that needs only those (the dealer,
a client) starts without numba.
The builder lives in this file on purpose: editing it also invalidates numba's cache
of the kernels that embed the tables.

Public API: :func:`evaluate` (one hand, checked), :func:`evaluate_batch` (arrays,
optionally multi-threaded), the njit kernels :func:`rank_cards` and :func:`eval7_njit`,
:func:`hand_category` / :func:`category_name`, and :func:`exhaustive_category_counts`
(all 133,784,560 seven-card hands in one incremental pass).

From another kernel::

    from poker.evaluator import eval7_njit, rank_cards

    @njit(cache=True)
    def showdown(hole, board, out):  # uint8[h, 2], uint8[5], int32[h]
        cards = np.empty(7, np.uint8)
        cards[2:] = board
        for i in range(hole.shape[0]):
            cards[0], cards[1] = hole[i, 0], hole[i, 1]
            out[i] = rank_cards(cards, 7)  # or eval7_njit(c0, ..., c6)
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from .cards import DECK_SIZE, CardError, format_cards

__all__ = [
    "CATEGORY_NAMES",
    "CATEGORY_SHIFT",
    "FLUSH",
    "FOUR_OF_A_KIND",
    "FULL_HOUSE",
    "HIGH_CARD",
    "ONE_PAIR",
    "RANK_KEYS",
    "STRAIGHT",
    "STRAIGHT_FLUSH",
    "THREE_OF_A_KIND",
    "TWO_PAIR",
    "ExhaustiveCounts",
    "category_name",
    "eval7_njit",
    "evaluate",
    "evaluate_batch",
    "evaluate_trusted",
    "exhaustive_category_counts",
    "hand_categories",
    "hand_category",
    "rank_cards",
]

# ---------------------------------------------------------------- categories

HIGH_CARD = 0
ONE_PAIR = 1
TWO_PAIR = 2
THREE_OF_A_KIND = 3
STRAIGHT = 4
FLUSH = 5
FULL_HOUSE = 6
FOUR_OF_A_KIND = 7
STRAIGHT_FLUSH = 8
CATEGORY_NAMES: tuple[str, ...] = (
    "high card",
    "one pair",
    "two pair",
    "three of a kind",
    "straight",
    "flush",
    "full house",
    "four of a kind",
    "straight flush",
)
CATEGORY_SHIFT = 12  # rank = category << CATEGORY_SHIFT | index within the category

# ---------------------------------------------------------------- key layout

# Greedy rank keys, deuce first: all sums of <= 7 keys with <= 4 copies each differ.
RANK_KEYS: tuple[int, ...] = (
    1, 5, 24, 112, 521, 2247, 9244, 30823, 103066, 250154, 667453, 1526359, 3453520,
)
_MAX_CARDS = 7
_SUIT_BIAS = 0x3333  # 3 in each 4-bit suit counter: 3 + count >= 8 iff count >= 5
_POISON = 1 << 16  # key of a non-card: its own counter, bits 16..19
_FLUSH_TEST = 0xF8888  # a counter's top bit (flush) or any non-card
_MULT_SHIFT = 20  # multiplier's zero low bits: room for the counters
_SLOT_BITS = 17  # hash table of 2**17 ranks, indexed by the key's top 17 bits
_BUCKET_BITS = 14  # 2**14 displacements, chosen by the 14 bits below those
_SLOT_SHIFT = 64 - _SLOT_BITS
_BUCKET_SHIFT = _SLOT_SHIFT - _BUCKET_BITS
_GOLDEN = 0x9E3779B97F4A7C15  # multipliers tried: odd multiples of 2**64 / phi


# ---------------------------------------------------------------- table builder
#
# Plain numpy, so that importing the module never waits for numba. A hand's "code" is an
# order-preserving integer: category << 20, then five 4-bit slots holding rank + 1 of
# the ranks that decide it, most significant first (0 = no card, below any rank).


def _mask_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per 13-bit rank mask: its top five ranks as slots, its best straight's top rank
    (3 for the wheel, -1 if none) and its number of ranks."""
    masks = np.arange(8192)
    top5 = np.zeros(8192, np.int64)
    n = np.zeros(8192, np.int64)
    for r in range(12, -1, -1):
        has = (masks >> r) & 1
        top5 |= np.where((has == 1) & (n < 5), (r + 1) << (4 * (4 - np.minimum(n, 4))), 0)
        n += has
    straight = np.full(8192, -1, np.int64)
    straight[masks & 0x100F == 0x100F] = 3  # A-2-3-4-5
    for t in range(4, 13):
        straight[(masks >> (t - 4)) & 0x1F == 0x1F] = t
    return top5, straight, n


def _rank_multisets() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every multiset of 0..7 ranks with <= 4 copies each (76,155, the empty one first):
    copies packed 3 bits per rank, number of cards, and rank-key sum."""
    packed = np.zeros(1, np.int64)
    size = np.zeros(1, np.int64)
    sums = np.zeros(1, np.int64)
    for r, key in enumerate(RANK_KEYS):
        keep = [size + j <= _MAX_CARDS for j in range(5)]
        packed = np.concatenate([packed[keep[j]] | j << (3 * r) for j in range(5)])
        sums = np.concatenate([sums[keep[j]] + j * key for j in range(5)])
        size = np.concatenate([size[keep[j]] + j for j in range(5)])
    return packed, size, sums


def _multiset_codes(packed: np.ndarray, size: np.ndarray, top5: np.ndarray, straight: np.ndarray) -> np.ndarray:
    """Code of the best non-flush hand of each rank multiset (-1 for the empty one)."""
    zero = np.zeros_like(packed)
    present, quads, trips, pairs = zero.copy(), zero.copy(), zero.copy(), zero.copy()
    for r in range(13):
        c = (packed >> (3 * r)) & 7
        present |= np.where(c > 0, 1 << r, 0)
        quads |= np.where(c == 4, 1 << r, 0)
        trips |= np.where(c == 3, 1 << r, 0)
        pairs |= np.where(c == 2, 1 << r, 0)
    high = top5 >> 16  # slot of the highest rank of a mask

    def bit(s: np.ndarray) -> np.ndarray:  # mask bit of a slot (none for slot 0)
        return np.where(s > 0, 1 << np.maximum(s - 1, 0), 0)

    q, t, p = high[quads], high[trips], high[pairs]
    fh_pair = high[(pairs | trips) & ~bit(t)]  # a second trips can serve as the pair
    two = top5[pairs] >> 12  # the two best pairs, 8 bits
    st = straight[present]
    conds = [q > 0, (t > 0) & (fh_pair > 0), (size >= 5) & (st >= 0), t > 0, (two & 15) > 0, p > 0]
    codes = [
        FOUR_OF_A_KIND << 20 | q << 16 | high[present & ~bit(q)] << 12,
        FULL_HOUSE << 20 | t << 16 | fh_pair << 12,
        STRAIGHT << 20 | (st + 1) << 16,
        THREE_OF_A_KIND << 20 | t << 16 | (top5[present & ~bit(t)] >> 12) << 8,
        TWO_PAIR << 20 | two << 12 | high[present & ~bit(two >> 4) & ~bit(two & 15)] << 8,
        ONE_PAIR << 20 | p << 16 | (top5[present & ~bit(p)] >> 8) << 4,
    ]
    out: np.ndarray = np.select(conds, codes, default=HIGH_CARD << 20 | top5[present])
    out[size == 0] = -1
    return out


def _displace(bucket: np.ndarray, slot: np.ndarray, n_buckets: int, n_slots: int) -> np.ndarray | None:
    """Per bucket a displacement d such that ``slot ^ d`` is one-to-one over all keys.

    Buckets are placed largest first, as in hash-and-displace; buckets of one size are
    placed together, each testing a window of candidates sized to its expected number
    of tries, and when proposals overlap the first bucket keeps its slots. ``None`` if
    some bucket fits nowhere.
    """
    order = np.argsort(bucket, kind="stable")
    size = np.bincount(bucket, minlength=n_buckets)
    first_key = np.cumsum(size) - size
    free = np.ones(n_slots, np.bool_)
    disp = np.zeros(n_buckets, np.int64)
    for k in range(int(size.max()), 0, -1):
        members = np.flatnonzero(size == k)
        slots = slot[order[first_key[members][:, None] + np.arange(k)]]  # (buckets, k)
        start = (members * 40503) % n_slots  # spread first tries: fewer overlaps
        tried = np.zeros(members.size, np.int64)
        pend = np.arange(members.size)
        while pend.size:
            expect = 1.0 / max(float(free.mean()) ** k, 1.0 / n_slots)
            width = min(n_slots, 1 << max(3, int(np.ceil(np.log2(2.0 * expect)))))
            cand = (start[pend, None] + tried[pend, None] + np.arange(width)) % n_slots
            fits = free[slots[pend][:, :, None] ^ cand[:, None, :]].all(axis=1)
            found = fits.any(axis=1)
            tried[pend[~found]] += width
            if (tried >= n_slots).any():
                return None
            prop = pend[found]
            d = cand[found, fits[found].argmax(axis=1)]
            target = slots[prop] ^ d[:, None]
            owner = np.full(n_slots, prop.size)
            np.minimum.at(owner, target.ravel(), np.repeat(np.arange(prop.size), k))
            won = (owner[target] == np.arange(prop.size)[:, None]).all(axis=1)
            free[target[won]] = False
            disp[members[prop[won]]] = d[won]
            pend = np.sort(np.concatenate((pend[~found], prop[~won])))
    return disp


class _Tables(NamedTuple):
    card_keys: np.ndarray  # uint64[256]
    displacement: np.ndarray  # uint32[2**_BUCKET_BITS]
    hash_ranks: np.ndarray  # uint16[2**_SLOT_BITS]
    flush_ranks: np.ndarray  # uint16[8192]
    multiplier: int


def _build_tables() -> _Tables:
    """Build the lookup tables: deterministic, a few tens of milliseconds."""
    top5, straight, n_ranks = _mask_tables()
    packed, size, sums = _rank_multisets()
    codes = _multiset_codes(packed, size, top5, straight)
    flush_codes = np.where(
        n_ranks < 5, -1,
        np.where(straight >= 0, STRAIGHT_FLUSH << 20 | (straight + 1) << 16, FLUSH << 20 | top5),
    )
    # Rank = category << 12 | 1-based position of the code among its category's codes.
    every = np.sort(np.concatenate((codes[codes >= 0], flush_codes[flush_codes >= 0])))
    uniq = every[np.concatenate(([True], every[1:] != every[:-1]))]
    cat = uniq >> 20
    values = cat << CATEGORY_SHIFT | (np.arange(uniq.size) - np.searchsorted(uniq, cat << 20) + 1)

    flush_ranks = np.zeros(8192, np.uint16)
    has = flush_codes >= 0
    flush_ranks[has] = values[np.searchsorted(uniq, flush_codes[has])]

    n_slots, n_buckets = 1 << _SLOT_BITS, 1 << _BUCKET_BITS
    usums = sums.astype(np.uint64)
    for attempt in range(1, 1000, 2):
        mult = ((_GOLDEN * attempt) << _MULT_SHIFT) & 0xFFFF_FFFF_FFFF_FFFF
        h = usums * np.uint64(mult)  # wraps mod 2**64, as the kernels' sums do
        slot = (h >> np.uint64(_SLOT_SHIFT)).astype(np.int64)
        bucket = ((h >> np.uint64(_BUCKET_SHIFT)) & np.uint64(n_buckets - 1)).astype(np.int64)
        pairs = np.sort(bucket << _SLOT_BITS | slot)
        if (pairs[1:] == pairs[:-1]).any():
            continue  # two multisets share bucket and slot: no displacement separates them
        disp = _displace(bucket, slot, n_buckets, n_slots)
        if disp is not None:
            break
    else:  # pragma: no cover - the first multiplier works
        raise RuntimeError("no perfect hash found for the rank keys")
    hash_ranks = np.zeros(n_slots, np.uint16)
    hashed = codes >= 0
    hash_ranks[slot[hashed] ^ disp[bucket[hashed]]] = values[np.searchsorted(uniq, codes[hashed])]

    card = np.arange(DECK_SIZE)
    rank_part = np.array(RANK_KEYS, np.uint64)[card >> 2] * np.uint64(mult)
    card_keys = np.full(256, _POISON, np.uint64)
    card_keys[:DECK_SIZE] = rank_part + (np.uint64(1) << (4 * (card & 3)).astype(np.uint64))
    return _Tables(card_keys, disp.astype(np.uint32), hash_ranks, flush_ranks, mult)


_TABLES = _build_tables()
# Globals read by the kernels: numba freezes them into the compiled code as constants.
# uint64 throughout, because the key sums wrap around (signed overflow is undefined).
# Run without the JIT, the kernels give the same ranks and numpy warns of the wrap.
_CARD_KEYS = _TABLES.card_keys
_DISPLACEMENT = _TABLES.displacement
_HASH_RANKS = _TABLES.hash_ranks
_FLUSH_RANKS = _TABLES.flush_ranks
_U_BIAS = np.uint64(_SUIT_BIAS)
_U_FLUSH_TEST = np.uint64(_FLUSH_TEST)
_U_POISON_SHIFT = np.uint64(16)
_U_SLOT_SHIFT = np.uint64(_SLOT_SHIFT)
_U_BUCKET_SHIFT = np.uint64(_BUCKET_SHIFT)
_U_BUCKET_MASK = np.uint64((1 << _BUCKET_BITS) - 1)
# Suit-major bit of each card (suit * 16 + rank), for the exhaustive pass.
_SUIT_MAJOR_BITS = np.array([1 << ((c & 3) * 16 + (c >> 2)) for c in range(DECK_SIZE)], np.int64)

# ---------------------------------------------------------------- njit kernels
#
# Written as plain functions (``_<name>_py``) and wrapped with numba by :func:`_jit` the
# first time a kernel is asked for (the module's ``__getattr__``; :func:`evaluate_batch`
# and :func:`exhaustive_category_counts` ask themselves): the dealer and the client rank
# hands in plain Python (:func:`evaluate_trusted`) and never pay for importing numba. The
# kernels call one another by their wrapped names, which numba resolves when it compiles.

#: The kernels by name, and the options numba compiles each with.
_KERNELS: dict[str, dict[str, bool | str]] = {
    "_flush_suit": {"inline": "always"},
    "_nonflush_rank": {"inline": "always"},
    "rank_cards": {},
    "eval7_njit": {},
    "_batch_serial": {},
    "_batch_parallel": {"parallel": True},
    "_exhaustive_hist": {},
}
_JIT_LOCK = threading.Lock()
_jitted = False


def _flush_suit_py(key: np.uint64) -> int:
    """The suit whose counter in ``key`` shows 5+ cards."""
    low = np.int64(key & np.uint64(0xFFFF))
    for s in range(3):
        if (low >> (4 * s + 3)) & 1:
            return s
    return 3


def _nonflush_rank_py(key: np.uint64) -> int:
    """Rank of a hand whose key shows no flush: perfect-hash lookup of its rank multiset."""
    slot = (key >> _U_SLOT_SHIFT) ^ _DISPLACEMENT[(key >> _U_BUCKET_SHIFT) & _U_BUCKET_MASK]
    return int(_HASH_RANKS[slot])


def _rank_cards_py(cards: np.ndarray, n: int) -> int:
    """Rank of the hand ``cards[:n]`` (1 <= n <= 7 distinct cards in 0..51); njit-callable.

    ``cards`` is a 1-D integer array (uint8 is the natural type). Meant for other
    ``@njit`` kernels, so nothing is checked: a card in 52..255 gives -1; repeated cards,
    n > 7 or cards outside 0..255 give a meaningless value or worse.
    """
    key = _U_BIAS
    for j in range(n):
        key += _CARD_KEYS[cards[j]]
    if key & _U_FLUSH_TEST:
        if key >> _U_POISON_SHIFT & np.uint64(0xF):
            return -1
        suit = _flush_suit(key)
        mask = 0
        for j in range(n):
            c = int(cards[j])
            if (c & 3) == suit:
                mask |= 1 << (c >> 2)
        return int(_FLUSH_RANKS[mask])
    return _nonflush_rank(key)


def _eval7_njit_py(c0: int, c1: int, c2: int, c3: int, c4: int, c5: int, c6: int) -> int:
    """Rank of the 7-card hand c0..c6 (distinct cards in 0..51); njit-callable.

    The fast path for other kernels (showdowns, equity loops). Unchecked, like
    :func:`rank_cards`: a card in 52..255 gives -1.
    """
    key = (
        _U_BIAS
        + _CARD_KEYS[c0]
        + _CARD_KEYS[c1]
        + _CARD_KEYS[c2]
        + _CARD_KEYS[c3]
        + _CARD_KEYS[c4]
        + _CARD_KEYS[c5]
        + _CARD_KEYS[c6]
    )
    if key & _U_FLUSH_TEST:
        if key >> _U_POISON_SHIFT & np.uint64(0xF):
            return -1
        suit = _flush_suit(key)
        mask = 0
        for c in (int(c0), int(c1), int(c2), int(c3), int(c4), int(c5), int(c6)):
            if (c & 3) == suit:
                mask |= 1 << (c >> 2)
        return int(_FLUSH_RANKS[mask])
    return _nonflush_rank(key)


def _batch_serial_py(hands: np.ndarray, out: np.ndarray) -> int:
    """``out[i]`` = rank of row i of ``hands`` (uint8[n, k]); returns rows with a non-card."""
    bad = 0
    k = hands.shape[1]
    if k == 7:  # unrolled: the common case
        for i in range(hands.shape[0]):
            r = eval7_njit(
                hands[i, 0], hands[i, 1], hands[i, 2], hands[i, 3], hands[i, 4], hands[i, 5], hands[i, 6]
            )
            out[i] = r
            bad += r < 0
    else:
        for i in range(hands.shape[0]):
            r = rank_cards(hands[i], k)
            out[i] = r
            bad += r < 0
    return bad


def _batch_parallel_py(hands: np.ndarray, out: np.ndarray) -> int:
    """:func:`_batch_serial` with the rows split over numba's threads."""
    k = hands.shape[1]
    bad = 0
    for i in prange(hands.shape[0]):
        if k == 7:
            r = eval7_njit(
                hands[i, 0], hands[i, 1], hands[i, 2], hands[i, 3], hands[i, 4], hands[i, 5], hands[i, 6]
            )
        else:
            r = rank_cards(hands[i], k)
        out[i] = r
        bad += r < 0
    return bad


def _exhaustive_hist_py(hist: np.ndarray) -> None:
    """Add every 7-card hand of the 52-card deck to ``hist[rank]``.

    Incremental: each loop level carries the key sum (and suit-major card mask) of the
    cards above it, so the innermost loop is one add, the flush test and the lookup.
    """
    for c0 in range(46):
        k0 = _U_BIAS + _CARD_KEYS[c0]
        m0 = _SUIT_MAJOR_BITS[c0]
        for c1 in range(c0 + 1, 47):
            k1 = k0 + _CARD_KEYS[c1]
            m1 = m0 | _SUIT_MAJOR_BITS[c1]
            for c2 in range(c1 + 1, 48):
                k2 = k1 + _CARD_KEYS[c2]
                m2 = m1 | _SUIT_MAJOR_BITS[c2]
                for c3 in range(c2 + 1, 49):
                    k3 = k2 + _CARD_KEYS[c3]
                    m3 = m2 | _SUIT_MAJOR_BITS[c3]
                    for c4 in range(c3 + 1, 50):
                        k4 = k3 + _CARD_KEYS[c4]
                        m4 = m3 | _SUIT_MAJOR_BITS[c4]
                        for c5 in range(c4 + 1, 51):
                            k5 = k4 + _CARD_KEYS[c5]
                            m5 = m4 | _SUIT_MAJOR_BITS[c5]
                            for c6 in range(c5 + 1, 52):
                                key = k5 + _CARD_KEYS[c6]
                                if key & _U_FLUSH_TEST:
                                    m = m5 | _SUIT_MAJOR_BITS[c6]
                                    r = _FLUSH_RANKS[(m >> (16 * _flush_suit(key))) & 0x1FFF]
                                else:
                                    r = _nonflush_rank(key)
                                hist[r] += 1


def _jit() -> None:
    """Import numba and put every kernel's compiled form under its own name (once)."""
    global _jitted
    if _jitted:  # no lock on the batch API's every call
        return
    with _JIT_LOCK:
        if _jitted:
            return
        from numba import njit, prange

        space = globals()
        space["prange"] = prange  # read by _batch_parallel when numba compiles it
        for name, options in _KERNELS.items():
            space[name] = njit(cache=True, **options)(space[f"_{name.lstrip('_')}_py"])
        _jitted = True  # set last: every kernel is in place once it reads True


def __getattr__(name: str) -> object:
    """The njit kernels (:data:`_KERNELS`), wrapped on first use."""
    if name in _KERNELS:
        _jit()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---------------------------------------------------------------- Python API


def hand_category(rank: int) -> int:
    """Category of a rank: 0 = high card, 1 = one pair, ... 8 = straight flush."""
    rank = operator.index(rank)
    if rank <= 0 or rank >> CATEGORY_SHIFT > STRAIGHT_FLUSH:
        raise ValueError(f"{rank} is not a hand rank")
    return rank >> CATEGORY_SHIFT


def hand_categories(ranks: np.ndarray) -> np.ndarray:
    """Categories of an array of ranks (not checked), as int8."""
    return (np.asarray(ranks) >> CATEGORY_SHIFT).astype(np.int8)


def category_name(rank: int) -> str:
    """Name of the category of ``rank``, e.g. ``"full house"``."""
    return CATEGORY_NAMES[hand_category(rank)]


_PY_TABLES: tuple[list[int], list[int], list[int], list[int]] | None = None


def _py_tables() -> tuple[list[int], list[int], list[int], list[int]]:
    """The tables as Python lists (indexing a list beats indexing a numpy array)."""
    global _PY_TABLES
    if _PY_TABLES is None:
        _PY_TABLES = (
            _CARD_KEYS[:DECK_SIZE].tolist(),
            _DISPLACEMENT.tolist(),
            _HASH_RANKS.tolist(),
            _FLUSH_RANKS.tolist(),
        )
    return _PY_TABLES


def _rank_of(key: int, seen: int) -> int:
    """The rank of the hand whose card keys sum to ``key`` (plus the suit bias) and whose
    cards are the set bits of ``seen``."""
    _, disp, hashed, flushes = _py_tables()
    if key & _FLUSH_TEST:
        suit = 0
        while not (key >> (4 * suit + 3)) & 1:
            suit += 1
        mask = 0
        for r in range(13):
            if (seen >> (4 * r + suit)) & 1:
                mask |= 1 << r
        return flushes[mask]
    # Bits below 2**64 of the exact sum are those of the kernels' wrapped sum.
    slot = ((key >> _SLOT_SHIFT) & ((1 << _SLOT_BITS) - 1)) ^ disp[(key >> _BUCKET_SHIFT) & ((1 << _BUCKET_BITS) - 1)]
    return hashed[slot]


def evaluate(cards: Sequence[int]) -> int:
    """Rank of one hand of 1..7 distinct cards (ACPC integers 0..51); higher is better.

    Plain Python over the kernels' tables: a call into numba would cost more than the
    work. Raises :class:`~poker.cards.CardError` (a ``ValueError``) for a non-card or a
    repeated card and ``ValueError`` for fewer than 1 or more than 7 cards.
    """
    n = len(cards)
    if not 1 <= n <= _MAX_CARDS:
        raise ValueError(f"a hand has 1..{_MAX_CARDS} cards, got {n}")
    keys = _py_tables()[0]
    key = _SUIT_BIAS
    seen = 0
    for c in cards:
        try:
            c = operator.index(c)
        except TypeError:
            raise CardError(f"card {c!r} is not an integer 0..51") from None
        if not 0 <= c < DECK_SIZE:
            raise CardError(f"card {c} is outside 0..51")
        if (seen >> c) & 1:
            raise CardError(f"hand {format_cards(operator.index(x) for x in cards)} repeats a card")
        seen |= 1 << c
        key += keys[c]
    return _rank_of(key, seen)


def evaluate_trusted(cards: Sequence[int]) -> int:
    """:func:`evaluate` of 1..7 cards already known to be distinct ints 0..51, unchecked.

    For callers whose cards come from a validated deal (a dealer's shuffle, a parsed and
    checked message): a match ranks two hands per showdown, and the checks would cost
    more than the ranking.
    """
    keys = _py_tables()[0]
    key = _SUIT_BIAS
    seen = 0
    for c in cards:
        seen |= 1 << c
        key += keys[c]
    return _rank_of(key, seen)


def evaluate_batch(hands: np.ndarray, parallel: bool = False) -> np.ndarray:
    """Ranks of many hands: ``hands`` is an ``(n, k)`` integer array(-like), 1 <= k <= 7.

    Returns ``int32[n]``. Rows must hold distinct cards (not checked: repeated cards
    give meaningless ranks); cards outside 0..51 raise ``CardError`` (a ``ValueError``).
    uint8 input is read as it is; other integer types are range-checked and converted.
    ``parallel=True`` splits the rows over all of numba's threads.
    """
    hands = np.asarray(hands)
    if hands.ndim != 2:
        raise ValueError(f"hands must be a 2-D array (n, k), got shape {hands.shape}")
    if not 1 <= hands.shape[1] <= _MAX_CARDS:
        raise ValueError(f"hands must have 1..{_MAX_CARDS} columns (cards), got shape {hands.shape}")
    if hands.dtype != np.uint8:
        if not np.issubdtype(hands.dtype, np.integer):
            raise ValueError(f"hands must be an integer array, got dtype {hands.dtype}")
        if hands.size and (hands.min() < 0 or hands.max() >= DECK_SIZE):
            raise CardError(f"hands hold cards outside 0..51 (min {hands.min()}, max {hands.max()})")
        hands = hands.astype(np.uint8)
    hands = np.ascontiguousarray(hands)
    out = np.empty(hands.shape[0], np.int32)
    _jit()
    kernel = globals()["_batch_parallel" if parallel else "_batch_serial"]
    bad = kernel(hands, out)
    if bad:
        row = int(np.flatnonzero(out < 0)[0])
        raise CardError(f"{bad} hand(s) hold cards outside 0..51; first is row {row}: {hands[row].tolist()}")
    return out


class ExhaustiveCounts(NamedTuple):
    """Result of :func:`exhaustive_category_counts`."""

    category_counts: np.ndarray  # int64[9]: hands per category, high card first
    distinct_ranks: int  # number of distinct ranks among the hands
    rank_counts: np.ndarray  # int64[2**16]: hands per rank


def exhaustive_category_counts() -> ExhaustiveCounts:
    """Rank all C(52, 7) = 133,784,560 seven-card hands, incrementally, on one thread.

    Expected: 23,294,460 high cards .. 41,584 straight flushes, 4,824 distinct ranks.
    """
    hist = np.zeros(1 << 16, np.int64)
    _jit()
    globals()["_exhaustive_hist"](hist)
    per_cat = np.bincount(np.arange(hist.size) >> CATEGORY_SHIFT, weights=hist, minlength=16)
    return ExhaustiveCounts(
        category_counts=per_cat[: STRAIGHT_FLUSH + 1].astype(np.int64),
        distinct_ranks=int(np.count_nonzero(hist)),
        rank_counts=hist,
    )
