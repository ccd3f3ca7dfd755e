"""Hand-strength features for card abstraction, per street, for every canonical hand.

Street by street (imperfect recall: each street sees only its own cards):

* **Last street (river): E[HS]**, the expected hand strength against one uniformly random
  opponent hand, wins plus half the ties, with card removal (Billings et al., "The
  challenge of poker", AIJ 2002). It is kept exactly, as the integer
  ``v = 2 * wins + ties`` out of ``scale = 2 * opponents`` (E[HS] = v / scale): 1,981
  possible values on the full deck.

  All 123,156,254 canonical river hands are computed **per canonical board**, not per
  hand: for each of the 134,459 suit-isomorphic 5-card boards, every hole pair is
  evaluated once (1,081 evaluations), the pairs are sorted by rank, and one sweep over
  the sorted pairs counts, for each pair, the pairs ranked below and level with it. Pairs
  that share a card with it are not possible opponents; they are removed with per-card
  counters (inclusion-exclusion: the pair itself is the only one sharing two cards).
  That is O(m log m) per board for m hole pairs instead of the O(m^2) pairwise loop.

* **Earlier streets: the distribution of river E[HS] over all run-outs** (a histogram of
  ``bins`` equal-width bins over [0, 1], plus the exact sums of E[HS] and E[HS^2]). This
  is the "distribution-aware" feature of Gilpin, Sandholm & Sorensen, "Potential-aware
  automated abstraction of sequential games" (AAAI 2007) and of Johanson, Burch, Valenzano
  & Bowling, "Evaluating state-space abstractions in extensive-form games" (AAMAS 2013),
  who compare such histograms with the earth mover's distance; :mod:`abstraction.kmeans`
  uses L2 on the histograms' CDFs as its proxy (for 1-D histograms the EMD is the L1
  distance between the CDFs). E[HS^2] is the feature of Johanson's "Robust strategies
  and counter-strategies" (MSc thesis, 2007).

  The histograms are built **by lookups, not by evaluating again**: a street's histogram
  is the sum, over the cards the next street adds, of the next street's histograms (or,
  just before the river, of the bins of the river E[HS] table), found with the
  suit-isomorphic indexer (:mod:`abstraction.indexer`, Waugh 2013). Every quantity is an
  integer count or sum, so the same feature computed directly from the cards
  (:func:`direct_features`, the on-the-fly path of the card abstraction) is bitwise equal.

* **Weights:** how many real (hole, board) deals each canonical class stands for (its
  orbit under suit permutations), so that clustering weighs classes by how often they
  occur.

A reduced deck (short decks, Leduc) uses the highest ranks and the last suits, as
:mod:`poker.cards` does; 1 or 2 hole cards, any board per street, two players.

The river sweep and the towers read a stop flag (:class:`poker._stop.Stop`) per board or
hand and count what they finished, one counter slot per thread: :func:`river_table` and
:func:`tower_features` run them off the main thread, report progress within the walk and
raise :class:`poker._stop.Interrupted` (never a partial table) within a fraction of a
second of SIGINT or SIGTERM.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import permutations
from math import comb
from typing import NamedTuple

import numpy as np
from llvmlite import ir
from numba import config, get_thread_id, njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from poker._stop import Stop, counter, run_stoppable, stoppable
from poker.cards import NUM_RANKS, NUM_SUITS, deck_cards
from poker.evaluator import eval7_njit, rank_cards
from poker.game import Game

from .indexer import HandIndexer, index_hand_njit, unindex_hand_njit

__all__ = [
    "METRIC_CDF",
    "METRIC_EHS",
    "METRIC_MOMENTS",
    "CardSpace",
    "RiverTable",
    "StreetFeatures",
    "board_ehs",
    "canonical_boards",
    "direct_features",
    "feature_dims",
    "feature_vectors",
    "hole_combinations",
    "river_feature_table",
    "river_table",
    "tower_features",
]

ProgressFn = Callable[[float, float], None]

# Feature vectors a street can be clustered on (see :func:`feature_vectors`).
METRIC_CDF = 0  # CDF of the E[HS] histogram, bins - 1 values: L2 here ~ EMD
METRIC_MOMENTS = 1  # (E[HS], E[HS^2])
METRIC_EHS = 2  # E[HS] alone (the river)

_MAX_HOLE = 2
_BOARD_CHUNK = 2048  # canonical boards per kernel call (progress granularity)
_HAND_CHUNK = 1 << 18  # canonical hands per kernel call


# ------------------------------------------------------------------ the stop flag and counters
# A parallel loop's body takes its arrays as noalias: the compiler may then read a flag
# that nothing in the loop writes once, before the loop, and keep a counter in a register
# until the loop ends. These accesses are atomic (monotonic: plain moves on x86), which it
# may neither hoist nor sink, so a stop asked from another thread is seen at the next
# read and progress while the loop runs. (A copy in each kernel module: numba's cache
# notices edits only to the file of the kernel it caches.)


@intrinsic
def _asked(typingctx, flag):  # type: ignore[no-untyped-def]
    """``flag[0]`` of an ``int64`` array, read anew each time: nonzero once a stop is asked."""

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.load_atomic(ary.data, "monotonic", 8, typ=ir.IntType(64))

    return types.int64(flag), codegen


@intrinsic
def _tally(typingctx, counts, i):  # type: ignore[no-untyped-def]
    """``counts[i] += 1`` (an ``int64`` array; one writer per slot), stored at once:
    another thread reads it."""

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        aty = signature.args[0]
        ary = context.make_array(aty)(context, builder, args[0])
        idx = context.cast(builder, args[1], signature.args[1], types.intp)
        ptr = cgutils.get_item_pointer(context, builder, aty, ary, [idx], wraparound=False)
        one = ir.Constant(ir.IntType(64), 1)
        builder.store_atomic(builder.add(builder.load_atomic(ptr, "monotonic", 8, typ=ir.IntType(64)), one), ptr,
                             "monotonic", 8)
        return context.get_dummy_value()

    return types.void(counts, i), codegen


# ------------------------------------------------------------------ the game's cards


@dataclass(frozen=True)
class CardSpace:
    """The cards of a two-player hold'em-like game: deck, hole cards, board per street.

    ``board_through[s]`` is the number of board cards visible on street ``s``. Street
    ``s``'s hands are indexed as hole cards plus the board as one set (grouping
    ``[hole, board_through[s]]``, or ``[hole]`` with no board).
    """

    num_ranks: int
    num_suits: int
    hole: int
    board_through: tuple[int, ...]

    def __post_init__(self) -> None:
        if not 1 <= self.hole <= _MAX_HOLE:
            raise ValueError(f"{self.hole} hole cards: only 1 or 2 are supported")
        if any(b < a for a, b in zip(self.board_through, self.board_through[1:])):
            raise ValueError(f"board sizes {list(self.board_through)} must not decrease")
        need = 2 * self.hole + self.board_through[-1]
        if need > self.num_ranks * self.num_suits:
            raise ValueError(f"{need} cards do not fit a {self.num_ranks * self.num_suits}-card deck")

    @classmethod
    def from_game(cls, game: Game) -> CardSpace:
        """The card space of a game; raises ``ValueError`` if it is not 2-player hold'em-like."""
        if game.num_players != 2:
            raise ValueError(
                f"game {game.name or '?'} has {game.num_players} players; the card abstraction "
                "measures strength against one opponent (2 players only)"
            )
        return cls(
            num_ranks=game.num_ranks,
            num_suits=game.num_suits,
            hole=game.num_hole_cards,
            board_through=tuple(game.board_cards_through(r) for r in range(game.num_rounds)),
        )

    @property
    def num_streets(self) -> int:
        """Number of streets (betting rounds)."""
        return len(self.board_through)

    @property
    def last(self) -> int:
        """Index of the last street (the river)."""
        return len(self.board_through) - 1

    @property
    def deck_size(self) -> int:
        """Cards in the deck."""
        return self.num_ranks * self.num_suits

    @cached_property
    def deck(self) -> np.ndarray:
        """The deck's cards, increasing, as ``uint8``."""
        return np.array(sorted(deck_cards(self.num_ranks, self.num_suits)), np.uint8)

    def grouping(self, street: int) -> list[int]:
        """Card groups of the indexer of ``street``: hole cards, then the board as one set."""
        b = self.board_through[street]
        return [self.hole, b] if b else [self.hole]

    def split_grouping(self, street: int) -> list[int]:
        """Card groups with the board split by street (what history-carrying buckets see)."""
        groups = [self.hole]
        prev = 0
        for b in self.board_through[: street + 1]:
            if b > prev:
                groups.append(b - prev)
            prev = b
        return groups

    def indexer(self, street: int) -> HandIndexer:
        """The suit-isomorphic indexer of ``street``'s hands (cached)."""
        return self._indexers[street]

    @cached_property
    def _indexers(self) -> list[HandIndexer]:
        return [
            HandIndexer(rounds=self.grouping(s), num_ranks=self.num_ranks, num_suits=self.num_suits)
            for s in range(self.num_streets)
        ]

    def count(self, street: int) -> int:
        """Canonical hands of ``street``."""
        return self.indexer(street).count()

    @property
    def opponents(self) -> int:
        """Opponent hands possible at the river for a given hand (card removal)."""
        left = self.deck_size - self.hole - self.board_through[-1]
        return comb(left, self.hole)

    @property
    def scale(self) -> int:
        """River E[HS] is stored as an integer ``v`` in ``0..scale`` (E[HS] = v / scale)."""
        return 2 * self.opponents

    def runouts(self, street: int) -> int:
        """Board run-outs from ``street`` to the river, as the tower counts them.

        The street's histogram sums over the next street's cards, and so on, so each
        unordered run-out is counted once per split of it into the later streets' cards.
        """
        total = 1
        left = self.deck_size - self.hole - self.board_through[street]
        for s in range(street, self.last):
            add = self.board_through[s + 1] - self.board_through[s]
            total *= comb(left, add)
            left -= add
        return total

    @cached_property
    def perm_maps(self) -> np.ndarray:
        """``int16[num_suits!, 52]``: card -> card under each permutation of the deck's suits."""
        suits = list(range(NUM_SUITS - self.num_suits, NUM_SUITS))
        rows = []
        for perm in permutations(suits):
            to = dict(zip(suits, perm))
            rows.append([(c >> 2) * 4 + to.get(c & 3, c & 3) for c in range(NUM_RANKS * NUM_SUITS)])
        return np.array(rows, np.int16)


def canonical_boards(space: CardSpace, street: int) -> np.ndarray:
    """One board per suit-isomorphism class of ``street``'s board, as ``uint8[n, b]``.

    With no board yet this is one empty board.
    """
    b = space.board_through[street]
    if b == 0:
        return np.zeros((1, 0), np.uint8)
    ix = HandIndexer(rounds=[b], num_ranks=space.num_ranks, num_suits=space.num_suits)
    return ix.unindex_batch(np.arange(ix.count(), dtype=np.int64), 0)


def hole_combinations(space: CardSpace, board: Sequence[int]) -> np.ndarray:
    """The hole-card combinations possible on ``board``, in the order :func:`board_ehs` uses.

    Lexicographic over the deck's remaining cards (increasing), as ``uint8[m, hole]``.
    """
    used = {int(c) for c in board}
    rem = [int(c) for c in space.deck if int(c) not in used]
    if space.hole == 1:
        return np.array(rem, np.uint8).reshape(-1, 1)
    return np.array([(a, b) for i, a in enumerate(rem) for b in rem[i + 1 :]], np.uint8).reshape(-1, 2)


# ------------------------------------------------------------------ shared kernel helpers


@njit(cache=True)
def _remaining(deck, hand, n, out):  # pragma: no cover - compiled
    """Write the deck's cards not among ``hand[:n]`` into ``out``; return how many."""
    used = np.int64(0)
    for j in range(n):
        used |= np.int64(1) << np.int64(hand[j])
    m = 0
    for c in deck:
        if not (used >> np.int64(c)) & 1:
            out[m] = c
            m += 1
    return m


@njit(cache=True)
def _next_combo(ix, k, n):  # pragma: no cover - compiled
    """Advance ``ix[:k]`` to the next k-combination of ``range(n)`` (lexicographic); False at the end."""
    i = k - 1
    while i >= 0 and ix[i] == n - k + i:
        i -= 1
    if i < 0:
        return False
    ix[i] += 1
    for j in range(i + 1, k):
        ix[j] = ix[j - 1] + 1
    return True


@njit(cache=True)
def _orbit_size(cards, hole, n, perm_maps):  # pragma: no cover - compiled
    """Real deals in the suit-isomorphism class of (``cards[:hole]``, ``cards[hole:n]``).

    The orbit of the hand (hole set, board set) under the permutations of the deck's
    suits: number of permutations over the size of the stabilizer.
    """
    hm = np.int64(0)
    bm = np.int64(0)
    for j in range(n):
        bit = np.int64(1) << np.int64(cards[j])
        if j < hole:
            hm |= bit
        else:
            bm |= bit
    stab = 0
    for p in range(perm_maps.shape[0]):
        ph = np.int64(0)
        pb = np.int64(0)
        for j in range(n):
            bit = np.int64(1) << np.int64(perm_maps[p, np.int64(cards[j])])
            if j < hole:
                ph |= bit
            else:
                pb |= bit
        if ph == hm and pb == bm:
            stab += 1
    return perm_maps.shape[0] // stab


@njit(cache=True)
def _river_value(hand, opp, hole, n, rem, nrem):  # pragma: no cover - compiled
    """River E[HS] of ``hand[:n]`` (hole cards first) as ``2 * wins + ties``.

    The direct way: one evaluation per possible opponent hand from ``rem[:nrem]`` (the
    cards not in the hand); ``opp`` is scratch of length ``n``. Used on the fly and by
    nothing that runs over all hands.
    """
    if n == 7 and hole == 2:
        # hold'em: the scalar 7-card entry point (array arguments cost a reference count
        # per call, which is most of the time of such a small function)
        b0, b1, b2, b3, b4 = hand[2], hand[3], hand[4], hand[5], hand[6]
        ours = eval7_njit(hand[0], hand[1], b0, b1, b2, b3, b4)
        v = 0
        for i in range(nrem):
            o0 = rem[i]
            for j in range(i + 1, nrem):
                r = eval7_njit(o0, rem[j], b0, b1, b2, b3, b4)
                v += 2 * (ours > r) + (ours == r)
        return v
    ours = rank_cards(hand, n)
    for j in range(hole, n):
        opp[j] = hand[j]
    v = 0
    if hole == 1:
        for i in range(nrem):
            opp[0] = rem[i]
            r = rank_cards(opp, n)
            v += 2 * (ours > r) + (ours == r)
    else:
        for i in range(nrem):
            opp[0] = rem[i]
            for j in range(i + 1, nrem):
                opp[1] = rem[j]
                r = rank_cards(opp, n)
                v += 2 * (ours > r) + (ours == r)
    return v


# ------------------------------------------------------------------ river E[HS] by sweeps


@njit(cache=True)
def _sweep_one(board, deck, hole, rem, cards, keys, order_cards, vals):  # pragma: no cover
    """River E[HS] of every hole combination on one board (the sort-and-sweep of the module doc).

    ``vals[q]`` gets ``2 * wins + ties`` of the q-th combination of the remaining cards
    (lexicographic, as :func:`hole_combinations`); returns the number of combinations.
    """
    b = board.shape[0]
    n = hole + b
    nrem = _remaining(deck, board, b, rem)
    for j in range(b):
        cards[hole + j] = board[j]
    m = 0
    if hole == 1:
        for i in range(nrem):
            cards[0] = rem[i]
            keys[m] = (np.int64(rank_cards(cards, n)) << 32) | m
            order_cards[m, 0] = rem[i]
            m += 1
    else:
        for i in range(nrem):
            cards[0] = rem[i]
            for j in range(i + 1, nrem):
                cards[1] = rem[j]
                if n == 7:
                    r = eval7_njit(rem[i], rem[j], cards[2], cards[3], cards[4], cards[5], cards[6])
                else:
                    r = rank_cards(cards, n)
                keys[m] = (np.int64(r) << 32) | m
                order_cards[m, 0] = rem[i]
                order_cards[m, 1] = rem[j]
                m += 1
    srt = np.sort(keys[:m])
    lt_card = np.zeros(64, np.int64)  # combinations ranked below the current group, per card
    eq_card = np.zeros(64, np.int64)  # combinations in the current group, per card
    below = 0
    g0 = 0
    while g0 < m:
        r = srt[g0] >> 32
        g1 = g0
        while g1 < m and (srt[g1] >> 32) == r:
            g1 += 1
        size = g1 - g0
        for g in range(g0, g1):
            q = srt[g] & 0xFFFFFFFF
            for j in range(hole):
                eq_card[order_cards[q, j]] += 1
        for g in range(g0, g1):
            q = srt[g] & 0xFFFFFFFF
            if hole == 1:
                wins = below
                ties = size - 1
            else:
                a = order_cards[q, 0]
                c = order_cards[q, 1]
                # pairs sharing a card are not opponents; (a, c) itself shares both
                wins = below - lt_card[a] - lt_card[c]
                ties = size - eq_card[a] - eq_card[c] + 1
            vals[q] = 2 * wins + ties
        for g in range(g0, g1):
            q = srt[g] & 0xFFFFFFFF
            for j in range(hole):
                c = order_cards[q, j]
                lt_card[c] += 1
                eq_card[c] = 0
        below += size
        g0 = g1
    return m


@njit(cache=True, parallel=True)
def _sweep_boards(boards, deck, hole, out):  # pragma: no cover - compiled
    """``out[i, q]``: river E[HS] (``2 * wins + ties``) of hole combination q on board i."""
    b = boards.shape[1]
    m_max = out.shape[1]
    for i in prange(boards.shape[0]):
        rem = np.empty(64, np.uint8)
        cards = np.empty(hole + b, np.uint8)
        keys = np.empty(m_max, np.int64)
        oc = np.empty((m_max, 2), np.uint8)
        vals = np.empty(m_max, np.int64)
        m = _sweep_one(boards[i], deck, hole, rem, cards, keys, oc, vals)
        for q in range(m):
            out[i, q] = vals[q]


@njit(cache=True, parallel=True, nogil=True)
def _river_scatter(tab, rnd, boards, deck, hole, perm_maps, values, weights, flag, done):  # pragma: no cover
    """Sweep each canonical board and write every hole combination's E[HS] and weight.

    ``values[index(hand)] = 2 * wins + ties``; ``weights[index(hand)] += orbit(board)``:
    each real deal (hole', board') with board' in the board's orbit maps to exactly one
    hole combination on the canonical board, so a class weighs the orbit size times the
    number of its combinations here. Distinct canonical boards give distinct classes, so
    threads never write the same entry. ``done[thread]`` counts the boards swept; once
    ``flag[0]`` is set the boards not started are skipped (the table is then incomplete).
    """
    b = boards.shape[1]
    n = hole + b
    m_max = _comb_count(deck.shape[0] - b, hole)
    for i in prange(boards.shape[0]):
        if _asked(flag) != 0:
            continue
        rem = np.empty(64, np.uint8)
        cards = np.empty(n, np.uint8)
        keys = np.empty(m_max, np.int64)
        oc = np.empty((m_max, 2), np.uint8)
        vals = np.empty(m_max, np.int64)
        m = _sweep_one(boards[i], deck, hole, rem, cards, keys, oc, vals)
        orbit = _orbit_size(cards[hole:], 0, b, perm_maps) if b > 0 else 1
        for q in range(m):
            for j in range(hole):
                cards[j] = oc[q, j]
            idx = index_hand_njit(tab, cards, rnd)
            values[idx] = vals[q]
            weights[idx] += orbit
        _tally(done, get_thread_id())


@njit(cache=True)
def _comb_count(n, k):  # pragma: no cover - compiled
    """``n`` choose ``k`` (small arguments), njit-callable."""
    if k < 0 or k > n:
        return 0
    r = 1
    for i in range(k):
        r = r * (n - i) // (i + 1)
    return r


class RiverTable(NamedTuple):
    """River E[HS] of every canonical river hand, and its weight."""

    values: np.ndarray  # uint16[n]: 2 * wins + ties, E[HS] = values / scale
    weights: np.ndarray  # uint8[n]: real deals per canonical class


def board_ehs(space: CardSpace, boards: np.ndarray) -> np.ndarray:
    """River E[HS] (``2 * wins + ties``) of every hole combination on each board.

    ``boards`` is ``(n, b)`` with ``b`` the river board size; column q of the result is
    the q-th combination of :func:`hole_combinations` for that board. For tests and
    tools; the river table uses the same sweep.
    """
    boards = np.ascontiguousarray(boards, dtype=np.uint8)
    b = space.board_through[-1]
    if boards.ndim != 2 or boards.shape[1] != b:
        raise ValueError(f"boards must have shape (n, {b}), got {boards.shape}")
    m = comb(space.deck_size - b, space.hole)
    out = np.zeros((boards.shape[0], m), np.int64)
    _sweep_boards(boards, space.deck, space.hole, out)
    return out


def river_table(space: CardSpace, progress: ProgressFn | None = None, *, stop: Stop | None = None) -> RiverTable:
    """E[HS] and weight of every canonical river hand (sweep per canonical board).

    ``progress(done_boards, total_boards)`` is called about every 0.1 s while the boards
    are swept (from this thread, if it is the main one; else once, at the end). The
    kernel reads ``stop``'s flag (default: a new :class:`poker._stop.Stop`, registered so
    that SIGINT and SIGTERM reach it) and :class:`poker._stop.Interrupted` is raised once
    it is set, within a fraction of a second.
    """
    return RiverTable(*_river_sweep(space, None, progress, stop))


def _stoppably(work: Callable[[np.ndarray], None], stop: Stop | None, done: np.ndarray, total: int,
               progress: ProgressFn | None) -> None:
    """``work(flag)``, whose kernels read ``flag`` and count their items in ``done`` (one
    slot per thread), off the main thread (:func:`poker._stop.run_stoppable`), with
    ``stop`` (default: a new one) registered for signals and ``progress(done, total)``
    drawn while it runs. Raises :class:`poker._stop.Interrupted` once a stop is asked."""
    last = [-1]

    def poll() -> None:
        now = int(done.sum())
        if now != total or last[0] != total:  # the finished count once (the bar draws it each time)
            last[0] = now
            assert progress is not None
            progress(now, total)

    with stoppable(stop) as st:
        run_stoppable(lambda: work(st.flag), st, on_poll=None if progress is None else poll)


def _thread_slots() -> np.ndarray:
    """A kernel's progress counter with a slot per numba thread (``get_thread_id``), so
    the threads of a parallel loop never write the same slot."""
    return counter(config.NUMBA_NUM_THREADS)


def _river_sweep(
    space: CardSpace, part: tuple[int, int] | None, progress: ProgressFn | None, stop: Stop | None
) -> tuple[np.ndarray, np.ndarray]:
    """(values, weights) over every canonical river hand, written for the canonical boards
    ``part[0] .. part[1] - 1`` only (None: all)."""
    ix = space.indexer(space.last)
    n = ix.count()
    values = np.zeros(n, np.uint16)
    weights = np.zeros(n, np.uint8)
    rnd = ix.num_rounds - 1
    b = space.board_through[space.last]
    n_boards = HandIndexer(rounds=[b], num_ranks=space.num_ranks, num_suits=space.num_suits).count() if b else 1
    first, end = (0, n_boards) if part is None else part
    done = _thread_slots()

    def work(flag: np.ndarray) -> None:
        # the boards are unindexed here, off the main thread, like every kernel call
        boards = canonical_boards(space, space.last)[first:end]
        for lo in range(0, boards.shape[0], _BOARD_CHUNK):
            hi = min(lo + _BOARD_CHUNK, boards.shape[0])
            _river_scatter(ix.tables, rnd, boards[lo:hi], space.deck, space.hole, space.perm_maps, values, weights,
                           flag, done)
            if flag[0]:
                return

    _stoppably(work, stop, done, max(end - first, 0), progress)
    return values, weights


def river_part(space: CardSpace, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The river table's entries of canonical boards ``lo .. hi - 1`` (their order in
    :func:`canonical_boards`): ``(indices, values, weights)``. Distinct canonical boards
    give distinct classes, so the parts of disjoint board ranges never overlap and
    together write exactly :func:`river_table` (how a cluster shares the stage)."""
    values, weights = _river_sweep(space, (lo, hi), None, None)
    index = np.flatnonzero(weights)  # every class written weighs at least one deal
    return index, values[index], weights[index]


# ------------------------------------------------------------------ earlier streets: towers


class StreetFeatures(NamedTuple):
    """Histogram features of every canonical hand of one street (integers, exact).

    ``counts[i, j]``: run-outs whose river E[HS] falls in bin ``j``; ``s1``/``s2``: sums of
    ``v`` and ``v**2`` over the run-outs (``v = 2 * wins + ties``); ``weights``: real deals
    per class (all ones for hands computed directly from cards).
    """

    counts: np.ndarray  # uint32[n, bins]
    s1: np.ndarray  # int64[n]
    s2: np.ndarray  # int64[n]
    weights: np.ndarray  # uint8[n]


class _Next(NamedTuple):
    """What a tower kernel reads of the next street: the river table, or its histograms."""

    values: np.ndarray  # uint16[n_next] (river) or empty
    counts: np.ndarray  # uint32[n_next, bins] or empty
    s1: np.ndarray
    s2: np.ndarray


@njit(cache=True, parallel=True, nogil=True)
def _tower(tab, rnd, ntab, nrnd, deck, perm_maps, hole, b, add, lo, scale, nxt, out, flag, done):  # pragma: no cover
    """Histogram of hands ``lo .. lo + len(out.s1)`` of a street, from the next street.

    For each canonical hand (unindexed), every combination of ``add`` remaining cards is
    appended to the board and the resulting next-street hand is indexed: just before the
    river its E[HS] value lands in a bin, otherwise the next street's counts and sums are
    added. Each hand writes only its own row. ``done[thread]`` counts the hands done; once
    ``flag[0]`` is set the hands not started are skipped (the features are then incomplete).
    """
    n = hole + b
    # unpacked before prange, and sums accumulated in place: numba 0.68 loses writes made
    # through a tuple's arrays in a parallel loop, and scalar accumulators carried through
    # a while loop inside one
    counts, s1_out, s2_out, weights = out.counts, out.s1, out.s2, out.weights
    values, ncounts, ns1, ns2 = nxt.values, nxt.counts, nxt.s1, nxt.s2
    bins = counts.shape[1]
    from_river = values.shape[0] > 0
    for t in prange(s1_out.shape[0]):
        if _asked(flag) != 0:
            continue
        cards = np.empty(n + add, np.uint8)
        unindex_hand_njit(tab, lo + t, rnd, cards)
        weights[t] = _orbit_size(cards, hole, n, perm_maps)
        rem = np.empty(64, np.uint8)
        nrem = _remaining(deck, cards, n, rem)
        ix = np.arange(max(add, 1))
        while True:
            for j in range(add):
                cards[n + j] = rem[ix[j]]
            k = index_hand_njit(ntab, cards, nrnd)
            if from_river:
                v = np.int64(values[k])
                counts[t, v * bins // (scale + 1)] += 1
                s1_out[t] += v
                s2_out[t] += v * v
            else:
                for j in range(bins):
                    counts[t, j] += ncounts[k, j]
                s1_out[t] += ns1[k]
                s2_out[t] += ns2[k]
            if add == 0 or not _next_combo(ix, add, nrem):
                break
        _tally(done, get_thread_id())


def tower_features(
    space: CardSpace,
    street: int,
    nxt: RiverTable | StreetFeatures,
    bins: int,
    progress: ProgressFn | None = None,
    *,
    stop: Stop | None = None,
) -> StreetFeatures:
    """Histogram features of every canonical hand of ``street`` (< last) by lookups.

    ``nxt`` is the river table when ``street`` is the one before the river, else the
    features of ``street + 1``. Counts are per run-out as :meth:`CardSpace.runouts` counts.
    ``progress(done_hands, total_hands)`` and ``stop`` as for :func:`river_table`.
    """
    if not 0 <= street < space.last:
        raise ValueError(f"street {street} has no later street to look up (0..{space.last - 1})")
    if space.runouts(street) * (space.scale**2) >= 2**62:
        raise ValueError(f"street {street}: too many run-outs for 64-bit sums")
    if street + 1 == space.last:
        if not isinstance(nxt, RiverTable):
            raise ValueError("the street before the river needs the river table")
    elif not isinstance(nxt, StreetFeatures) or nxt.counts.shape[1] != bins:
        raise ValueError(f"street {street} needs the {bins}-bin features of street {street + 1}")
    n_arg = _next_arg(nxt, bins)
    n = space.indexer(street).count()
    out = _empty_features(n, bins)
    done = _thread_slots()

    def work(flag: np.ndarray) -> None:
        for lo in range(0, n, _HAND_CHUNK):
            hi = min(lo + _HAND_CHUNK, n)
            part = StreetFeatures(out.counts[lo:hi], out.s1[lo:hi], out.s2[lo:hi], out.weights[lo:hi])
            _tower_into(space, street, n_arg, lo, part, flag, done)
            if flag[0]:
                return

    _stoppably(work, stop, done, n, progress)
    return out


def _empty_features(n: int, bins: int) -> StreetFeatures:
    return StreetFeatures(
        np.zeros((n, bins), np.uint32), np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.uint8)
    )


def _read_only(a: np.ndarray) -> np.ndarray:
    view = a.view()
    view.flags.writeable = False
    return view


def _next_arg(nxt: RiverTable | StreetFeatures, bins: int) -> _Next:
    # every array read-only, whether read from disk (memory-mapped) or made in memory:
    # one signature of the tower kernel, compiled once, for both kinds of next street
    if isinstance(nxt, RiverTable):
        arrays = (nxt.values, np.zeros((0, bins), np.uint32), np.zeros(0, np.int64), np.zeros(0, np.int64))
    else:
        arrays = (np.zeros(0, np.uint16), nxt.counts, nxt.s1, nxt.s2)
    return _Next(*(_read_only(np.ascontiguousarray(a)) for a in arrays))


def _tower_into(space: CardSpace, street: int, n_arg: _Next, lo: int, part: StreetFeatures,
                flag: np.ndarray, done: np.ndarray) -> None:
    """Histogram features of canonical hands ``lo .. lo + len(part) - 1`` of ``street`` into ``part``."""
    ix, nix = space.indexer(street), space.indexer(street + 1)
    add = space.board_through[street + 1] - space.board_through[street]
    _tower(
        ix.tables, ix.num_rounds - 1, nix.tables, nix.num_rounds - 1, space.deck, space.perm_maps,
        space.hole, space.board_through[street], add, lo, space.scale, n_arg, part, flag, done,
    )


def tower_part(
    space: CardSpace, street: int, nxt: RiverTable | StreetFeatures, bins: int, lo: int, hi: int
) -> StreetFeatures:
    """:func:`tower_features` of canonical hands ``lo .. hi - 1`` only (each hand's
    features depend on its own cards and ``nxt`` alone: how a cluster shares the stage)."""
    out = _empty_features(hi - lo, bins)
    for a in range(lo, hi, _HAND_CHUNK):
        b = min(a + _HAND_CHUNK, hi)
        part = StreetFeatures(out.counts[a - lo:b - lo], out.s1[a - lo:b - lo], out.s2[a - lo:b - lo], out.weights[a - lo:b - lo])
        _tower_into(space, street, _next_arg(nxt, bins), a, part, np.zeros(1, np.int64), _thread_slots())
    return out


# ------------------------------------------------------------------ directly from the cards


@njit(cache=True, parallel=True)
def _direct(hands, deck, hole, b, b_last, scale, out):  # pragma: no cover - compiled
    """Histogram features of arbitrary hands straight from their cards (no table).

    Every unordered run-out of the remaining board is dealt, and its river E[HS] is
    computed by evaluating every possible opponent hand (:func:`_river_value`).
    """
    n = hole + b
    add = b_last - b
    counts, s1_out, s2_out, weights = out.counts, out.s1, out.s2, out.weights  # see _tower
    bins = counts.shape[1]
    for t in prange(hands.shape[0]):
        cards = np.empty(hole + b_last, np.uint8)
        for j in range(n):
            cards[j] = hands[t, j]
        rem = np.empty(64, np.uint8)
        nrem = _remaining(deck, cards, n, rem)
        opp = np.empty(64, np.uint8)
        ocards = np.empty(hole + b_last, np.uint8)
        ix = np.arange(max(add, 1))
        while True:
            used = np.int64(0)
            for j in range(add):
                cards[n + j] = rem[ix[j]]
                used |= np.int64(1) << ix[j]
            no = 0
            for j in range(nrem):
                if not (used >> j) & 1:
                    opp[no] = rem[j]
                    no += 1
            v = np.int64(_river_value(cards, ocards, hole, hole + b_last, opp, no))
            counts[t, v * bins // (scale + 1)] += 1
            s1_out[t] += v
            s2_out[t] += v * v
            if add == 0 or not _next_combo(ix, add, nrem):
                break
        weights[t] = 1


def direct_features(space: CardSpace, hands: np.ndarray, street: int, bins: int) -> StreetFeatures:
    """Features of hands computed from their cards alone (the on-the-fly path).

    ``hands`` is ``(n, hole + board_through[street])`` ACPC cards, hole cards first. At
    the river the single "run-out" is the board itself: ``s1`` is the river E[HS] value.
    Counts are per unordered run-out (a fixed multiple of the tower's), so the feature
    vectors (:func:`feature_vectors`) equal the tower's bitwise. Cards are not checked here.
    """
    hands = np.ascontiguousarray(hands, dtype=np.uint8)
    n = hands.shape[0]
    out = StreetFeatures(
        np.zeros((n, bins), np.uint32), np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.uint8)
    )
    _direct(hands, space.deck, space.hole, space.board_through[street], space.board_through[-1], space.scale, out)
    return out


# ------------------------------------------------------------------ feature vectors


@njit(cache=True, parallel=True, nogil=True)
def _vectors(counts, s1, s2, scale, metric, out):  # pragma: no cover - compiled
    """Feature vectors from exact integer features, as exact integer ratios rounded once.

    Each value is ``float64(a) / float64(b)`` with integers ``a, b < 2**53``, rounded to
    float32: scaling both by the same integer (ordered vs. unordered run-outs) changes
    nothing, so tables and on-the-fly computations agree bit for bit.
    """
    bins = counts.shape[1]
    for i in prange(counts.shape[0]):
        total = np.int64(0)
        for j in range(bins):
            total += np.int64(counts[i, j])
        if metric == 0:
            cum = np.int64(0)
            for j in range(bins - 1):
                cum += np.int64(counts[i, j])
                out[i, j] = np.float32(np.float64(cum) / np.float64(total))
        elif metric == 1:
            out[i, 0] = np.float32(np.float64(s1[i]) / np.float64(total * scale))
            out[i, 1] = np.float32(np.float64(s2[i]) / np.float64(total * scale * scale))
        else:
            out[i, 0] = np.float32(np.float64(s1[i]) / np.float64(total * scale))


def feature_dims(metric: int, bins: int) -> int:
    """Length of the feature vector of ``metric`` with ``bins`` histogram bins."""
    return {METRIC_CDF: bins - 1, METRIC_MOMENTS: 2, METRIC_EHS: 1}[metric]


def feature_vectors(
    counts: np.ndarray, s1: np.ndarray, s2: np.ndarray, scale: int, metric: int, *, stop: Stop | None = None
) -> np.ndarray:
    """``float32[n, d]`` vectors to cluster: the histogram's CDF, (E[HS], E[HS^2]) or E[HS].

    With ``METRIC_CDF`` the last CDF value (always 1) is dropped: ``d = bins - 1``. With
    ``stop`` (a build's), the kernel runs off the main thread, as the build's others do, so
    that a signal handled there never interrupts numba loading or compiling it, and
    :class:`poker._stop.Interrupted` is raised if a stop was asked; without, right here.
    """
    if metric not in (METRIC_CDF, METRIC_MOMENTS, METRIC_EHS):
        raise ValueError(f"unknown metric {metric}")
    counts = np.ascontiguousarray(counts)
    out = np.empty((counts.shape[0], feature_dims(metric, counts.shape[1])), np.float32)
    s1, s2 = np.ascontiguousarray(s1, np.int64), np.ascontiguousarray(s2, np.int64)
    if stop is None:
        _vectors(counts, s1, s2, scale, metric, out)
    else:
        with stoppable(stop) as st:
            run_stoppable(lambda: _vectors(counts, s1, s2, scale, metric, out), st)
    return out


def river_feature_table(scale: int, bins: int, *, stop: Stop | None = None) -> np.ndarray:
    """E[HS] feature of every river value ``v = 0..scale``, as :func:`feature_vectors` makes
    it (``stop`` as there)."""
    v = np.arange(scale + 1, dtype=np.int64)
    counts = np.zeros((scale + 1, bins), np.uint32)
    counts[np.arange(scale + 1), v * bins // (scale + 1)] = 1
    return feature_vectors(counts, v, v * v, scale, METRIC_EHS, stop=stop)
