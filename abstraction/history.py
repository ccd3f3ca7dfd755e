"""History-carrying buckets: the weight of each (previous street's bucket, own bucket) pair.

A street's history bucket clusters the pairs (bucket of the hand's history up to the
previous street, own-street bucket) by the real deals that reach them.
:func:`_pair_weights` counts those deals: for every canonical hand of the street and every
ordering of its board into the earlier streets' groups (:func:`_chains`), it follows the
earlier streets' buckets through their pair maps and adds the hand's weight to the pair
it ends in. :mod:`abstraction.build` runs it in its history stages (and clusters the
pairs); it lives apart from the build so that the build's cost plan
(:mod:`abstraction.plan`, which the build imports) can ask whether it is compiled.

The kernel reads a stop flag (:class:`poker._stop.Stop`) once per hand and counts the
hands of each slice as it goes, so the stage stops within a fraction of a second of
SIGINT or SIGTERM and its progress is read while it runs.
"""

from __future__ import annotations

from itertools import combinations
from typing import NamedTuple

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from . import features as F
from .indexer import index_hand_njit, unindex_hand_njit


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
def _put(typingctx, counts, i, value):  # type: ignore[no-untyped-def]
    """``counts[i] = value`` (an ``int64`` array), stored at once: another thread reads it."""

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        aty = signature.args[0]
        ary = context.make_array(aty)(context, builder, args[0])
        idx = context.cast(builder, args[1], signature.args[1], types.intp)
        ptr = cgutils.get_item_pointer(context, builder, aty, ary, [idx], wraparound=False)
        builder.store_atomic(context.cast(builder, args[2], signature.args[2], types.int64), ptr, "monotonic", 8)
        return context.get_dummy_value()

    return types.void(counts, i, value), codegen


# ------------------------------------------------------------------ the pair weights


class _Chain(NamedTuple):
    """Earlier streets' lookups for :func:`_pair_weights`, packed flat (one array each).

    Street t's indexer table is ``idx_tabs[idx_off[t]:idx_off[t + 1]]`` (round
    ``idx_rnd[t]``), its own-bucket table starts at ``own_all[own_off[t]]`` and, for
    t >= 1, its pair map (``pm_cols[t]`` columns) at ``pm_all[pm_off[t]]``. ``masks[c, t]``:
    the board positions visible on street t in ordering c.
    """

    idx_tabs: np.ndarray
    idx_off: np.ndarray
    idx_rnd: np.ndarray
    own_all: np.ndarray
    own_off: np.ndarray
    pm_all: np.ndarray
    pm_off: np.ndarray
    pm_cols: np.ndarray
    masks: np.ndarray


@njit(cache=True, parallel=True, nogil=True)
def _pair_weights(tab, rnd, hole, b, lo, weights, own_s, chain, out, flag, done):  # pragma: no cover - compiled
    """Weight of each (previous history bucket, own bucket) pair of one street.

    For canonical hands ``lo .. lo + len(weights)`` of the street (hole cards + board as
    a set), each ordering of the board into the earlier streets' groups gives a
    previous-street history bucket, followed through the pair maps from the first
    street's bucket; the pair (that bucket, ``own_s[i]``) gains the hand's weight.
    ``out[part]`` is owned by one slice of the hands; the sums are integers, so the
    result does not depend on the order of the parts. ``done[part]`` counts the slice's
    hands done; once ``flag[0]`` is set every slice stops (the sums are then incomplete).
    """
    idx_tabs, idx_off, idx_rnd = chain.idx_tabs, chain.idx_off, chain.idx_rnd  # unpack before prange
    own_all, own_off = chain.own_all, chain.own_off
    pm_all, pm_off, pm_cols, masks = chain.pm_all, chain.pm_off, chain.pm_cols, chain.masks
    n_hands = weights.shape[0]
    n_parts = out.shape[0]
    s = masks.shape[1]  # earlier streets 0..s-1
    n = hole + b
    for part in prange(n_parts):
        a = part * n_hands // n_parts
        z = (part + 1) * n_hands // n_parts
        cards = np.empty(n, np.uint8)
        sub = np.empty(n, np.uint8)
        memo = np.full(1 << b, -1, np.int64)
        for i in range(a, z):
            _put(done, part, i - a)
            if _asked(flag) != 0:
                break
            unindex_hand_njit(tab, lo + i, rnd, cards)
            memo[:] = -1
            own = own_s[i]
            w = np.int64(weights[i])
            for c in range(masks.shape[0]):
                h = np.int64(-1)
                for t in range(s):
                    mask = masks[c, t]
                    o = memo[mask]
                    if o < 0:
                        for j in range(hole):
                            sub[j] = cards[j]
                        q = hole
                        for j in range(b):
                            if (mask >> j) & 1:
                                sub[q] = cards[hole + j]
                                q += 1
                        k = index_hand_njit(idx_tabs[idx_off[t]: idx_off[t + 1]], sub, idx_rnd[t])
                        o = np.int64(own_all[own_off[t] + k])
                        memo[mask] = o
                    if t == 0:
                        h = o
                    else:
                        h = np.int64(pm_all[pm_off[t] + h * pm_cols[t] + o])
                out[part, h, own] += w
        if _asked(flag) == 0:
            _put(done, part, z - a)


def _chains(space: F.CardSpace, street: int) -> np.ndarray:
    """Every ordering of ``street``'s board positions into the earlier streets' groups.

    Row: per earlier street t, the bit mask of the positions visible on street t.
    """
    bt = space.board_through
    rows: list[list[int]] = []

    def extend(prefix: list[int], used: int, t: int) -> None:
        if t == street:
            rows.append(prefix[:])
            return
        add = bt[t] - (bt[t - 1] if t else 0)
        free = [j for j in range(bt[street]) if not (used >> j) & 1]
        for combo in combinations(free, add):
            m = used
            for j in combo:
                m |= 1 << j
            prefix.append(m)
            extend(prefix, m, t + 1)
            prefix.pop()

    extend([], 0, 0)
    return np.array(rows, np.int64).reshape(len(rows), street)
