"""Weighted k-means for card abstraction: k-means++ seeding, then Lloyd iterations whose
assignment step is Yinyang k-means (Ding, Zhao, Shen, Musuvathi & Mytkowicz, "Yinyang
K-Means: A Drop-In Replacement of the Classic K-Means with Consistent Speedup", ICML
2015) with Hamerly's centre-gap test; deterministic for a seed, parallel with numba.

Given points ``x_i`` with weights ``w_i`` (how many real hands a canonical class stands
for), find ``k`` centres minimising ``sum_i w_i ||x_i - c(x_i)||^2``. The weights enter
the seeding, the means and the inertia; the assignment is by distance alone, so a point
of weight zero is assigned but never seeds or re-seeds a centre.

1. **Seeding** -- k-means++ (Arthur & Vassilvitskii, "k-means++: the advantages of careful
   seeding", SODA 2007), weighted: the first centre is drawn with probability
   proportional to ``w``, each next one proportional to ``w * D^2`` (``D`` = distance to
   the nearest centre chosen so far), by walking the running total in point order. Above
   ``sample_size`` points it runs on a uniform sample drawn without replacement (weights
   kept). One generator, ``np.random.default_rng(seed)``, draws the sample and then the
   ``k`` uniforms, all up front. Fewer than ``k`` distinct points of positive weight (in
   the sample) is a ``ValueError``. ``init`` replaces the seeding with given centres.
2. **Groups** -- the ``k`` centres are split once, at the start, into ``t`` groups
   (default ``min(32, k // 10)``, at least 1) by a plain k-means of the starting centres
   themselves: at most 5 iterations, from the first ``t`` of them (k-means++ order is
   random), as Yinyang groups its centres. The grouping then stays fixed.
3. **Assignment** -- each point goes to its nearest centre (squared L2, lowest centre
   index on a tie). Per point the method keeps an upper bound ``u`` on the distance to
   its own centre (float64) and, per group ``g``, a lower bound ``l[g]`` on the distance
   to every centre of ``g`` other than its own (float32): ``t`` bounds, between Hamerly's
   one ("Making k-means even faster", SDM 2010) and Elkan's ``k`` ("Using the triangle
   inequality to accelerate k-means", ICML 2003; too much memory for 14 M points and
   1,000 centres). Per centre it keeps ``s``, half the distance to its nearest other
   centre (recomputed each iteration). After the centres move, ``u`` grows by its centre's
   move and ``l[g]`` shrinks by the largest move in ``g``; then, per point:

   * *global filter*: the point keeps its centre if ``u < max(s, min_g l[g])``; if not,
     ``u`` is tightened to the exact distance and the test is made again;
   * *group filter*: the groups with ``l[g] <= u`` fail. If more than a sixteenth of
     the groups fail (with fewer than 16 groups: any), the point joins a block of four
     for a full scan of every centre, which sets ``u`` and every ``l[g]`` exactly.
     Otherwise the failing groups are scanned in order, each skipped if its bound already
     exceeds the best distance found so far; a scanned group's centres are all computed
     (no per-centre *local filter*: a group's columns vectorise) and its bound is set
     exactly. A point that changes centre lowers its old group's bound to the distance
     to its old centre if that group was not scanned.

   Every test clears its bound by a relative slack (1e-4), so float rounding never
   decides a skip and the labels equal the plain Lloyd step's (a test checks it, with
   and without groups; the slack is a margin against rounding, not a proof).
   ``accelerated=False`` (and ``k == 1``) scans every point every time: plain Lloyd.
4. **Update** -- each centre moves to the weighted mean of its points (float64 sums,
   stored as float32). A centre whose points weigh nothing is **re-seeded**, never
   dropped: the empty centres, lowest index first, take the points of positive weight
   farthest from their own (updated) centre, farthest first (lowest index on a tie),
   skipping a position already taken and never a point on its centre; fewer such points
   than empty centres is a ``ValueError``.
5. Repeat 3-4 until at most ``tol * n`` points change centre and no cluster is empty
   (``converged``), or ``max_iter`` updates have run and no cluster is empty (past
   ``max_iter``, it keeps going while one is, and gives up with ``RuntimeError`` after
   ``max(10, max_iter)`` more). The last step is an assignment: the labels are the
   nearest centres of the returned centroids.

**Determinism and parallelism.** The kernels run numba ``prange`` loops over fixed chunks
of 32,768 points; a chunk owns its points' labels and bounds and its own slot of every
counter and partial sum, so nothing is written by two threads. Sums (the means, the
inertia, the counts of moved points) are made per chunk and added in chunk order, and a
point's assignment depends on its own bounds only: the same seed gives the same centroids
and labels, bit for bit, whatever the thread count or scheduling, and whichever
:class:`Assignment` runs the steps (:class:`LocalAssignment` here; on a Ray cluster,
:class:`abstraction.cluster.ShardedAssignment` splits the points between workers).

The full nearest-centre scan (the first assignment, points whose bounds fail widely, and
:func:`nearest`) keeps the centres transposed (``d x k``; in :func:`kmeans` grouped, each
group padded to a multiple of 16 columns by centres placed far away) and accumulates the
squared distances of a block of four points lane by lane, which vectorises without
reassociating any sum: every distance is the same float32 sum, in the same order, as the
scalar loop, so :func:`nearest` on one point and on a batch agree bit for bit.

**Stopping and progress.** Every kernel that runs over all the points reads a stop flag
(:class:`poker._stop.Stop`) once per block of points (per point in a Yinyang step, per
centre in the seeding) and counts its work in a counter of its own slot per chunk, so a
run stops within a fraction of a second of SIGINT or SIGTERM, raising
:class:`poker._stop.Interrupted` (never a partial result), and its progress
(:class:`KMeansProgress`) is read while a step runs. The kernels release the GIL, and
:func:`kmeans` runs them off the main thread, where the signal handlers run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple, Protocol, TypeVar

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from poker._compile import cold
from poker._stop import Stop, counter, run_stoppable, stoppable

__all__ = [
    "Assignment",
    "KMeansProgress",
    "KMeansResult",
    "LocalAssignment",
    "kmeans",
    "kmeans_plus_plus",
    "nearest",
]

T = TypeVar("T")

_CHUNK = 1 << 15  # points per chunk of the deterministic reductions and scans
_SLACK = 1e-4  # relative slack on the bounds: rounding never decides a skip
_BLOCK = 4  # points per block of the vectorised scan
_PAD = 16  # centre columns per group rounded up to this (one AVX-512 register of float32)
_FAR = np.float32(1e15)  # coordinate of padding columns: squared distances ~1e30, never nearest


class _Layout(NamedTuple):
    """Centres as columns, grouped for the bounds (Yinyang); read-only in the kernels.

    Column p of ``ctg`` (``float32[d, m]``) is centre ``order[p]`` (-1: padding); group g
    owns columns ``gstart[g]:gstart[g + 1]``; ``pos[j]`` is centre j's column and
    ``gof[j]`` its group.
    """

    ctg: np.ndarray
    order: np.ndarray
    gstart: np.ndarray
    pos: np.ndarray
    gof: np.ndarray


@dataclass(frozen=True)
class KMeansResult:
    """Outcome of :func:`kmeans`.

    ``labels[i]`` is the nearest centre of point i under ``centroids`` (as :func:`nearest`
    computes it); every cluster has positive weight.
    """

    centroids: np.ndarray  # float32[k, d]
    labels: np.ndarray  # int32[n]
    inertia: float  # sum_i w_i ||x_i - c(x_i)||^2
    iterations: int
    converged: bool  # stopped because at most tol * n points changed centre
    reseeded: int  # empty clusters re-seeded along the way
    full_scans: float  # points fully scanned, in units of n (work measure)


class Assignment(Protocol):
    """Where :func:`kmeans` runs its assignment steps: every point's label and its
    Yinyang bounds. :class:`LocalAssignment` runs them here; another implementation
    (:class:`abstraction.cluster.ShardedAssignment`) runs them on a cluster, each worker
    owning a range of points. A point's step reads only its own bounds and the centres,
    so any split gives the same labels, bit for bit."""

    labels: np.ndarray  # int32[n], kept current by full() and step()

    def full(self, lay: _Layout) -> int:
        """Scan every point against every centre (labels, upper and group bounds);
        return how many points changed centre."""
        ...

    def step(self, c: np.ndarray, lay: _Layout, half: np.ndarray, move: np.ndarray, gmove: np.ndarray) -> tuple[int, int]:
        """One Yinyang step after the centres moved by ``move`` (see :func:`_yinyang_assign`);
        return the points that changed centre and the centre distances computed."""
        ...

    def points_done(self) -> int:
        """Points the step under way has finished, 0 when none is: read from another
        thread while it runs, for a progress bar."""
        ...

    def close(self) -> None:
        """Release what the steps held (workers, memory)."""
        ...


class LocalAssignment:
    """:class:`Assignment` in this process, over points ``x`` with ``t`` centre groups.

    ``flag`` (a :class:`poker._stop.Stop`'s): once set, a step under way stops early,
    leaving the labels and bounds incomplete; :func:`kmeans` then raises
    :class:`poker._stop.Interrupted`."""

    def __init__(self, x: np.ndarray, t: int, flag: np.ndarray | None = None) -> None:
        n = x.shape[0]
        self.x = x
        self.labels = np.zeros(n, np.int32)
        self.upper = np.zeros(n)
        self.lb = np.zeros((n, t), np.float32)
        chunks = (n + _CHUNK - 1) // _CHUNK
        self._changed = np.zeros(chunks, np.int64)
        self._scanned = np.zeros(chunks, np.int64)
        self._done = counter(chunks)
        self.flag = np.zeros(1, np.int64) if flag is None else flag

    def full(self, lay: _Layout) -> int:
        self._changed[:] = 0
        try:
            _full_assign(self.x, lay, self.labels, self.upper, self.lb, self._changed, self.flag, self._done)
        finally:
            self._done[:] = 0
        return int(self._changed.sum())

    def step(self, c: np.ndarray, lay: _Layout, half: np.ndarray, move: np.ndarray, gmove: np.ndarray) -> tuple[int, int]:
        self._changed[:] = 0
        self._scanned[:] = 0
        try:
            _yinyang_assign(self.x, c, lay, half, move, gmove, self.labels, self.upper, self.lb, self._changed,
                            self._scanned, self.flag, self._done)
        finally:
            self._done[:] = 0
        return int(self._changed.sum()), int(self._scanned.sum())

    def points_done(self) -> int:
        return int(self._done.sum())

    def close(self) -> None:
        pass


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


# ------------------------------------------------------------------ kernels


@njit(cache=True)
def _scan_block(x, idx, nb, ct, order, dist, out_best, out_d1, out_d2):  # pragma: no cover
    """Squared distances of points ``idx[:nb]`` (nb <= 4) to every centre, into ``dist``.

    ``ct`` is ``float32[d, m]`` (centres as columns, in any order); column p is centre
    ``order[p]``, or padding if ``order[p] < 0``. Writes the nearest centre (lowest centre index on a tie), its squared
    distance and the second smallest squared distance. ``dist`` is scratch
    ``float32[4, k]``; absent block slots repeat point ``idx[0]`` and are ignored.
    """
    d, k = ct.shape
    i0 = idx[0]
    i1 = idx[1] if nb > 1 else i0
    i2 = idx[2] if nb > 2 else i0
    i3 = idx[3] if nb > 3 else i0
    for p in range(k):
        dist[0, p] = 0.0
        dist[1, p] = 0.0
        dist[2, p] = 0.0
        dist[3, p] = 0.0
    for j in range(d):
        x0 = x[i0, j]
        x1 = x[i1, j]
        x2 = x[i2, j]
        x3 = x[i3, j]
        row = ct[j]
        for p in range(k):
            r = row[p]
            t0 = x0 - r
            t1 = x1 - r
            t2 = x2 - r
            t3 = x3 - r
            dist[0, p] += t0 * t0
            dist[1, p] += t1 * t1
            dist[2, p] += t2 * t2
            dist[3, p] += t3 * t3
    for q in range(nb):
        best = -1
        d1 = np.float32(np.inf)
        d2 = np.float32(np.inf)
        for p in range(k):
            v = dist[q, p]
            if order[p] < 0:
                continue  # padding column
            if best < 0 or v < d1 or (v == d1 and order[p] < best):
                d2 = d1
                d1 = v
                best = order[p]
            elif v < d2:
                d2 = v
        out_best[q] = best
        out_d1[q] = d1
        out_d2[q] = d2


@njit(cache=True, parallel=True, nogil=True)
def _nearest_kernel(x, ct, labels, d1s, flag, done):  # pragma: no cover - compiled
    """Plain nearest-centre assignment of every point (labels and squared distances).

    ``done[ch]``: points of chunk ch assigned so far; a chunk stops early once ``flag[0]``
    is set (the labels are then incomplete).
    """
    n = x.shape[0]
    k = ct.shape[1]
    order = np.arange(k)
    n_chunks = (n + _CHUNK - 1) // _CHUNK
    for ch in prange(n_chunks):
        dist = np.empty((_BLOCK, k), np.float32)
        idx = np.empty(_BLOCK, np.int64)
        best = np.empty(_BLOCK, np.int64)
        d1 = np.empty(_BLOCK, np.float32)
        d2 = np.empty(_BLOCK, np.float32)
        lo = ch * _CHUNK
        hi = min(n, lo + _CHUNK)
        for b0 in range(lo, hi, _BLOCK):
            if _asked(flag) != 0:
                break
            nb = min(_BLOCK, hi - b0)
            for q in range(nb):
                idx[q] = b0 + q
            _scan_block(x, idx, nb, ct, order, dist, best, d1, d2)
            for q in range(nb):
                labels[b0 + q] = best[q]
                d1s[b0 + q] = d1[q]
            _put(done, ch, b0 + nb - lo)


@njit(cache=True)
def _sqdist(x, i, c, j):  # pragma: no cover - compiled
    """Squared distance of point ``x[i]`` and centre ``c[j]``, summed as the scan sums it."""
    s = np.float32(0.0)
    for t in range(x.shape[1]):
        v = x[i, t] - c[j, t]
        s += v * v
    return s


@njit(cache=True, parallel=True, nogil=True)
def _full_assign(x, lay, labels, upper, lb, changed, flag, done):  # pragma: no cover
    """Scan every point against every centre: labels, upper bounds and group lower bounds.

    ``lb[i, g]`` becomes the exact distance from point i to the nearest centre of group g
    other than its own. ``done[ch]``: points of chunk ch scanned so far; a chunk stops
    early once ``flag[0]`` is set.
    """
    ctg, order, gstart, pos, gof = lay.ctg, lay.order, lay.gstart, lay.pos, lay.gof  # unpack before prange
    n = x.shape[0]
    k = ctg.shape[1]
    n_chunks = (n + _CHUNK - 1) // _CHUNK
    for ch in prange(n_chunks):
        dist = np.empty((_BLOCK, k), np.float32)
        idx = np.empty(_BLOCK, np.int64)
        best = np.empty(_BLOCK, np.int64)
        d1 = np.empty(_BLOCK, np.float32)
        d2 = np.empty(_BLOCK, np.float32)
        lo = ch * _CHUNK
        hi = min(n, lo + _CHUNK)
        moved = 0
        for b0 in range(lo, hi, _BLOCK):
            if _asked(flag) != 0:
                break
            nb = min(_BLOCK, hi - b0)
            for q in range(nb):
                idx[q] = b0 + q
            _scan_block(x, idx, nb, ctg, order, dist, best, d1, d2)
            for q in range(nb):
                i = b0 + q
                moved += labels[i] != best[q]
                labels[i] = best[q]
                upper[i] = np.sqrt(np.float64(d1[q]))
                _group_bounds(dist, q, gstart, pos, gof, best[q], lb, i)
            _put(done, ch, b0 + nb - lo)
        changed[ch] = moved


@njit(cache=True)
def _group_bounds(dist, q, gstart, pos, gof, best, lb, i):  # pragma: no cover - compiled
    """``lb[i, g]``: distance from point i (row q of a block scan) to the nearest centre
    of group g other than ``best`` (padding columns are far enough to never count)."""
    t = gstart.shape[0] - 1
    for g in range(t):
        m = np.float32(np.inf)
        for p in range(gstart[g], gstart[g + 1]):
            v = dist[q, p]
            m = min(m, v)
        lb[i, g] = np.sqrt(np.float64(m))
    g = gof[best]
    pb = pos[best]
    m = np.float32(np.inf)
    for p in range(gstart[g], gstart[g + 1]):
        v = dist[q, p]
        if p != pb and v < m:
            m = v
    lb[i, g] = np.sqrt(np.float64(m))


@njit(cache=True, parallel=True, nogil=True)
def _yinyang_assign(x, c, lay, half, move, gmove, labels, upper, lb, changed, scanned, flag, visited):  # pragma: no cover
    """One accelerated assignment step after the centres moved by ``move``.

    First the bounds follow the centres (triangle inequality): a point's upper bound grows
    by its own centre's move, each group's lower bound shrinks by the group's largest
    move ``gmove[g]``.

    Per point (Ding et al., "Yinyang k-means", ICML 2015, with Hamerly's centre-gap test):
    skip if its upper bound clears ``max(half[own], min_g lb[g])``, tightening the upper
    bound once if needed. Otherwise, if more than a sixteenth of the groups' bounds fail,
    the point joins a block of four for a full scan (about 2.5 times cheaper per distance
    than a scan of one group, measured); else only the
    failing groups are scanned, in order, against the best distance so far, and their
    bounds refreshed. ``scanned[ch]`` counts centre distances computed, ``visited[ch]``
    the points of chunk ch visited so far; a chunk stops early once ``flag[0]`` is set.
    """
    ctg, order, gstart, pos, gof = lay.ctg, lay.order, lay.gstart, lay.pos, lay.gof  # unpack before prange
    n, d = x.shape
    t = gstart.shape[0] - 1
    m_cols = ctg.shape[1]
    n_chunks = (n + _CHUNK - 1) // _CHUNK
    for ch in prange(n_chunks):
        dist = np.empty(m_cols, np.float32)
        gm1 = np.empty(t, np.float32)
        gm2 = np.empty(t, np.float32)
        gbest = np.empty(t, np.int64)
        done = np.zeros(t, np.bool_)
        bdist4 = np.empty((_BLOCK, m_cols), np.float32)
        idx = np.empty(_BLOCK, np.int64)
        best4 = np.empty(_BLOCK, np.int64)
        d14 = np.empty(_BLOCK, np.float32)
        d24 = np.empty(_BLOCK, np.float32)
        nb = 0
        lo = ch * _CHUNK
        hi = min(n, lo + _CHUNK)
        moved = 0
        work = 0
        for i in range(lo, hi + 1):
            _put(visited, ch, i - lo)
            if _asked(flag) != 0:
                break
            if i < hi:
                a = labels[i]
                upper[i] += move[a]
                glb = np.inf
                for g in range(t):
                    v = lb[i, g] - gmove[g]
                    lb[i, g] = v
                    glb = min(glb, v)
                m = max(half[a], glb)
                if upper[i] * (1.0 + _SLACK) < m:
                    continue
                du = _sqdist(x, i, c, a)
                u = np.sqrt(np.float64(du))
                upper[i] = u
                work += 1
                if u * (1.0 + _SLACK) < m:
                    continue
                need = 0
                for g in range(t):
                    if lb[i, g] <= u * (1.0 + _SLACK):
                        need += 1
                if 16 * need > t:
                    idx[nb] = i
                    nb += 1
                else:
                    best = a
                    bd = du
                    bdist = u
                    for g in range(t):
                        done[g] = False
                        if lb[i, g] > bdist * (1.0 + _SLACK):
                            continue  # every centre of g is farther than the best so far
                        done[g] = True
                        p0 = gstart[g]
                        p1 = gstart[g + 1]
                        work += p1 - p0
                        for p in range(p0, p1):
                            dist[p] = 0.0
                        for j in range(d):
                            xj = x[i, j]
                            for p in range(p0, p1):
                                v = xj - ctg[j, p]
                                dist[p] += v * v
                        m1 = np.float32(np.inf)
                        m2 = np.float32(np.inf)
                        b1 = -1
                        for p in range(p0, p1):
                            v = dist[p]
                            if order[p] < 0:
                                continue  # padding column
                            if v < m1 or (v == m1 and order[p] < b1):
                                m2 = m1
                                m1 = v
                                b1 = order[p]
                            elif v < m2:
                                m2 = v
                        gm1[g] = m1
                        gm2[g] = m2
                        gbest[g] = b1
                        if m1 < bd or (m1 == bd and b1 < best):
                            bd = m1
                            best = b1
                            bdist = np.sqrt(np.float64(m1))
                    for g in range(t):
                        if done[g]:
                            lb[i, g] = np.sqrt(np.float64(gm2[g] if gbest[g] == best else gm1[g]))
                    if best != a:
                        ga = gof[a]
                        if not done[ga] and u < lb[i, ga]:
                            lb[i, ga] = u  # the old centre is now one of its group's others
                        labels[i] = best
                        upper[i] = bdist
                        moved += 1
            if nb == _BLOCK or (i == hi and nb > 0):
                _scan_block(x, idx, nb, ctg, order, bdist4, best4, d14, d24)
                for q in range(nb):
                    j = idx[q]
                    moved += labels[j] != best4[q]
                    labels[j] = best4[q]
                    upper[j] = np.sqrt(np.float64(d14[q]))
                    _group_bounds(bdist4, q, gstart, pos, gof, best4[q], lb, j)
                work += nb * m_cols
                nb = 0
        changed[ch] = moved
        scanned[ch] = work


@njit(cache=True, parallel=True, nogil=True)
def _partial_sums(x, w, labels, sums, wsum, flag):  # pragma: no cover - compiled
    """Per fixed chunk of points: weighted coordinate sums and weight per cluster.

    The caller adds the chunks in order, which makes the reduction deterministic. Chunks
    not started when ``flag[0]`` is set are skipped (the sums are then incomplete).
    """
    n, d = x.shape
    n_chunks = sums.shape[0]
    for ch in prange(n_chunks):
        if _asked(flag) == 0:
            lo = ch * _CHUNK
            hi = min(n, lo + _CHUNK)
            for i in range(lo, hi):
                a = labels[i]
                wi = w[i]
                wsum[ch, a] += wi
                for t in range(d):
                    sums[ch, a, t] += wi * np.float64(x[i, t])


@njit(cache=True, parallel=True, nogil=True)
def _inertia(x, w, c, labels, out):  # pragma: no cover - compiled
    """Per chunk: sum of w * squared distance to the assigned centre."""
    n = x.shape[0]
    for ch in prange(out.shape[0]):
        lo = ch * _CHUNK
        hi = min(n, lo + _CHUNK)
        s = 0.0
        for i in range(lo, hi):
            s += w[i] * np.float64(_sqdist(x, i, c, labels[i]))
        out[ch] = s


@njit(cache=True, parallel=True, nogil=True)
def _own_dist(x, c, labels, out):  # pragma: no cover - compiled
    """Squared distance of every point to its assigned centre."""
    for i in prange(x.shape[0]):
        out[i] = _sqdist(x, i, c, labels[i])


@njit(cache=True, parallel=True, nogil=True)
def _centre_gaps(c, half):  # pragma: no cover - compiled
    """``half[j]``: half the distance from centre j to its nearest other centre."""
    k, d = c.shape
    for j in prange(k):
        best = np.inf
        for q in range(k):
            if q != j:
                s = 0.0
                for t in range(d):
                    v = np.float64(c[j, t]) - np.float64(c[q, t])
                    s += v * v
                best = min(best, s)
        half[j] = 0.5 * np.sqrt(best)


@njit(cache=True, nogil=True)
def _pp_seed(x, w, k, uniforms, centres, chosen, flag, done):  # pragma: no cover - compiled
    """k-means++ (weighted): ``chosen[j]`` is the point index of centre j.

    Draw j uses ``uniforms[j]`` against the running total of ``w * D^2`` in point order.
    Returns the number of centres placed (fewer than k if the points run out of distinct
    positions, or once ``flag[0]`` is set); ``done[0]`` counts them as they are placed.
    """
    n, d = x.shape
    d2 = np.full(n, np.inf)
    xt = np.ascontiguousarray(x.T)
    buf = np.empty(n, np.float32)
    total = 0.0
    for i in range(n):
        total += w[i]
    for j in range(k):
        if _asked(flag) != 0:
            return j
        if j > 0:
            total = 0.0
            for i in range(n):
                total += w[i] * d2[i]
            if not total > 0.0:
                return j
        target = uniforms[j] * total
        acc = 0.0
        pick = -1
        last = -1
        for i in range(n):
            p = w[i] * (d2[i] if j > 0 else 1.0)
            if p > 0.0:
                last = i
                acc += p
                if acc > target:
                    pick = i
                    break
        if pick < 0:
            pick = last  # rounding left target at the very end
        chosen[j] = pick
        for t in range(d):
            centres[j, t] = x[pick, t]
        _pp_update(xt, centres, j, d2, buf)
        _put(done, 0, j + 1)
    return k


@njit(cache=True, parallel=True)
def _pp_update(xt, centres, j, d2, buf):  # pragma: no cover - compiled
    """Lower every point's D^2 to its squared distance to the new centre j.

    The points are columns of ``xt`` (``d x n``) so the loop runs across points.
    """
    d, n = xt.shape
    n_chunks = (n + 4095) // 4096
    for ch in prange(n_chunks):
        lo = ch * 4096
        hi = min(n, lo + 4096)
        for i in range(lo, hi):
            buf[i] = 0.0
        for t in range(d):
            cv = centres[j, t]
            for i in range(lo, hi):
                v = xt[t, i] - cv
                buf[i] += v * v
        for i in range(lo, hi):
            d2[i] = min(d2[i], buf[i])


# ------------------------------------------------------------------ Python API


def _check_points(points: np.ndarray, weights: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(points)
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(f"points must be a non-empty 2-d array (n, d), got shape {x.shape}")
    x = np.ascontiguousarray(x, dtype=np.float32)
    if not np.isfinite(x).all():
        raise ValueError("points must be finite")
    if weights is None:
        w = np.ones(x.shape[0])
    else:
        w = np.ascontiguousarray(weights, dtype=np.float64)
        if w.shape != (x.shape[0],):
            raise ValueError(f"weights must have shape ({x.shape[0]},), got {w.shape}")
        if not (np.isfinite(w).all() and (w >= 0).all()) or not w.sum() > 0:
            raise ValueError("weights must be finite, non-negative and not all zero")
    return x, w


def _stoppably(work: Callable[[Stop], T], stop: Stop | None, on_poll: Callable[[], None] | None = None) -> T:
    """``work(stop)``, whose kernels read ``stop.flag``, with ``stop`` (default: a new one)
    registered for signals and, from the main thread, run off it
    (:func:`poker._stop.run_stoppable`); raises :class:`poker._stop.Interrupted` once a
    stop is asked."""
    with stoppable(stop) as st:
        return run_stoppable(lambda: work(st), st, on_poll=on_poll)


def nearest(points: np.ndarray, centroids: np.ndarray, *, stop: Stop | None = None) -> np.ndarray:
    """Index of the nearest centroid (squared L2, lowest index on a tie) of each point.

    ``points`` ``(n, d)`` and ``centroids`` ``(k, d)`` are used as float32. The same
    arithmetic as :func:`kmeans`'s scans, so one point alone or in a batch gets the same
    answer. Returns ``int32[n]``. With ``stop`` (for a long scan) the kernel reads its
    flag, off the main thread, and :class:`poker._stop.Interrupted` is raised once it is
    set; without, it runs right here (one hand's bucket pays for no thread).
    """
    x = np.ascontiguousarray(points, dtype=np.float32)
    c = np.ascontiguousarray(centroids, dtype=np.float32)
    if x.ndim != 2 or c.ndim != 2 or x.shape[1] != c.shape[1] or c.shape[0] == 0:
        raise ValueError(f"points {x.shape} and centroids {c.shape} do not match")
    labels = np.empty(x.shape[0], np.int32)
    d1 = np.empty(x.shape[0], np.float32)
    if x.shape[0]:
        ct = np.ascontiguousarray(c.T)
        done = counter((x.shape[0] + _CHUNK - 1) // _CHUNK)
        if stop is None:
            _nearest_kernel(x, ct, labels, d1, np.zeros(1, np.int64), done)
        else:
            _stoppably(lambda st: _nearest_kernel(x, ct, labels, d1, st.flag, done), stop)
    return labels


class KMeansProgress(NamedTuple):
    """Where a :func:`kmeans` run is: what its ``watch`` callback receives.

    ``step`` is ``"seeding"`` (``done`` of ``total`` = k centres placed by k-means++),
    ``"assigning"`` (the first full assignment: points scanned of every point) or
    ``"iterating"`` (``done``: updates finished plus the share of the points the step
    under way has visited; ``total``: ``max_iter``, an upper bound, as the run stops once
    it converges). ``compiling``: the step waits for its kernels to compile (first run
    only) and has counted no work yet.
    """

    step: str
    done: float
    total: float
    compiling: bool


class _Watch:
    """A run's position, written by the thread running it and read by the one drawing its
    progress: one tuple, replaced whole, so a reader never sees half of an update."""

    def __init__(self) -> None:
        self.state: tuple[str, float, float, float, Callable[[], int] | None, bool] = (
            "seeding", 0.0, 0.0, 1.0, None, False)

    def enter(self, step: str, total: float, *, base: float = 0.0, count: Callable[[], int] | None = None,
              scale: float = 1.0, compiling: bool = False) -> None:
        """Now in ``step``: ``base + count() * scale`` of ``total`` done."""
        self.state = (step, base, float(total), scale, count, compiling)

    def read(self) -> KMeansProgress:
        step, base, total, scale, count, compiling = self.state
        done = base + (count() * scale if count is not None else 0.0)
        return KMeansProgress(step, done, total, compiling and done == base)


def _seed(x: np.ndarray, w: np.ndarray, k: int, seed: int | np.random.SeedSequence, sample_size: int,
          stop: Stop, watch: _Watch) -> np.ndarray:
    """k-means++ (see :func:`kmeans_plus_plus`), reading ``stop.flag``."""
    rng = np.random.default_rng(seed)
    if x.shape[0] > sample_size:
        pick = np.sort(rng.choice(x.shape[0], size=sample_size, replace=False))
        xs, ws = np.ascontiguousarray(x[pick]), np.ascontiguousarray(w[pick])
    else:
        xs, ws = x, w
    uniforms = rng.random(k)
    centres = np.zeros((k, x.shape[1]), np.float32)
    chosen = np.full(k, -1, np.int64)
    done = counter()
    watch.enter("seeding", k, count=lambda: int(done[0]), compiling=cold(_pp_seed))
    placed = _pp_seed(xs, ws, k, uniforms, centres, chosen, stop.flag, done)
    stop.check()
    if placed < k:
        where = "the sample" if xs is not x else "the points"
        raise ValueError(f"only {placed} distinct points in {where} for {k} clusters")
    return centres


def kmeans_plus_plus(
    points: np.ndarray,
    k: int,
    *,
    weights: np.ndarray | None = None,
    seed: int | np.random.SeedSequence,
    sample_size: int = 200_000,
    stop: Stop | None = None,
) -> np.ndarray:
    """k-means++ seeds (weighted), on a uniform sample of at most ``sample_size`` points.

    Returns ``float32[k, d]``. Raises ``ValueError`` if there are fewer than ``k``
    distinct (positive-weight) points to seed from, and :class:`poker._stop.Interrupted`
    once ``stop`` (default: a new :class:`Stop`, registered for signals) is set.
    """
    x, w = _check_points(points, weights)
    return _stoppably(lambda st: _seed(x, w, k, seed, sample_size, st, _Watch()), stop)


def _group_layout(gof: np.ndarray, t: int) -> tuple[np.ndarray, np.ndarray]:
    """Column layout of the grouped centres: ``order[p]`` (centre of column p, -1 for
    padding) and ``gstart`` (first column of each group). Groups are padded to a multiple
    of 16 columns so the per-group loops vectorise without a scalar remainder."""
    cols: list[int] = []
    gstart = [0]
    for g in range(t):
        members = np.flatnonzero(gof == g).tolist()
        cols += members + [-1] * (-len(members) % _PAD)
        gstart.append(len(cols))
    return np.array(cols, np.int64), np.array(gstart, np.int64)


def _columns(c: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Centres as columns in ``order`` (``float32[d, m]``); padding columns sit far away."""
    ct = np.full((c.shape[1], order.shape[0]), _FAR, np.float32)
    real = order >= 0
    ct[:, real] = c[order[real]].T
    return ct


def _centre_groups(c: np.ndarray, groups: int, stop: Stop) -> np.ndarray:
    """Group of each centre: a short plain k-means of the centres themselves (Yinyang's
    grouping), started from the first ``groups`` centres (k-means++ order is random)."""
    k = c.shape[0]
    if groups <= 1:
        return np.zeros(k, np.int64)
    r = kmeans(c, groups, init=c[:groups], max_iter=5, accelerated=False, groups=1, stop=stop)
    return r.labels.astype(np.int64)


def kmeans(
    points: np.ndarray,
    k: int,
    *,
    weights: np.ndarray | None = None,
    seed: int | np.random.SeedSequence = 0,
    max_iter: int = 100,
    tol: float = 0.0,
    accelerated: bool = True,
    groups: int | None = None,
    init: np.ndarray | None = None,
    sample_size: int = 200_000,
    progress: Callable[[int, int, int], None] | None = None,
    assignment: Callable[[np.ndarray, int], Assignment] | None = None,
    stop: Stop | None = None,
    watch: Callable[[KMeansProgress], None] | None = None,
) -> KMeansResult:
    """Weighted k-means of ``points`` (``(n, d)``) into ``k`` clusters; see the module doc.

    ``weights`` default to 1. ``seed`` drives the k-means++ seeding (ignored if ``init``
    gives the starting centres). Iterates until at most ``tol * n`` points change centre
    (``tol=0``: until nothing changes) or ``max_iter`` updates. ``accelerated=False`` runs
    plain Lloyd (every point scanned every time): same result, slower. ``groups`` is the
    number of centre groups with their own lower bound (Yinyang); default
    ``min(32, k // 10)``, and 1 is Hamerly's single bound.
    ``progress(iteration, max_iter, changed)`` is called after each assignment (on the
    thread that runs the kernels).
    ``assignment(x, t)`` makes the :class:`Assignment` that runs the assignment steps
    (default :class:`LocalAssignment`; the result is the same, bit for bit).

    The kernels read ``stop``'s flag (default: a new :class:`Stop`, registered so that
    the command line's SIGINT and SIGTERM reach it) and return within a fraction of a
    second once it is set; the run then raises :class:`poker._stop.Interrupted` and returns
    nothing.
    Called from the main thread, the run goes on a worker thread (so signal handlers run
    at once) and ``watch(KMeansProgress)`` is called about every 0.1 s from this one;
    from another thread, ``watch`` is called once, at the end.

    Raises ``ValueError`` if ``k`` is not in ``1..n`` or there are fewer than ``k``
    distinct points of positive weight.
    """
    x, w = _check_points(points, weights)
    n, d = x.shape
    if not isinstance(k, (int, np.integer)) or not 1 <= k <= n:
        raise ValueError(f"k = {k} clusters for {n} points: need 1 <= k <= n")
    k = int(k)
    if init is not None:
        init = np.array(init, dtype=np.float32)
        if init.shape != (k, d):
            raise ValueError(f"init must have shape ({k}, {d}), got {init.shape}")
    state = _Watch()

    def run(st: Stop) -> KMeansResult:
        return _kmeans(x, w, k, seed=seed, max_iter=max_iter, tol=tol, accelerated=accelerated, groups=groups,
                       init=init, sample_size=sample_size, progress=progress, assignment=assignment, stop=st,
                       watch=state)

    return _stoppably(run, stop, None if watch is None else lambda: watch(state.read()))


def _kmeans(
    x: np.ndarray,
    w: np.ndarray,
    k: int,
    *,
    seed: int | np.random.SeedSequence,
    max_iter: int,
    tol: float,
    accelerated: bool,
    groups: int | None,
    init: np.ndarray | None,
    sample_size: int,
    progress: Callable[[int, int, int], None] | None,
    assignment: Callable[[np.ndarray, int], Assignment] | None,
    stop: Stop,
    watch: _Watch,
) -> KMeansResult:
    """:func:`kmeans` on checked points, on the thread that runs its kernels."""
    n, d = x.shape
    c = _seed(x, w, k, seed, sample_size, stop, watch) if init is None else init
    t = max(1, min(32, k // 10)) if groups is None else max(1, min(int(groups), k))
    if accelerated and t > 1:
        # grouping the centres is a small k-means of its own, which compiles the kernels
        # of the assignment and the update when they are cold
        watch.enter("assigning", n, compiling=cold(_full_assign, _partial_sums, _inertia))
    gof = _centre_groups(c, t, stop) if accelerated else np.zeros(k, np.int64)
    t = int(gof.max()) + 1
    order, gstart = _group_layout(gof, t)
    pos = np.zeros(k, np.int64)  # column of each centre
    pos[order[order >= 0]] = np.flatnonzero(order >= 0)

    n_chunks = (n + _CHUNK - 1) // _CHUNK
    half = np.zeros(k)
    sums = np.zeros((n_chunks, k, d))
    wsum = np.zeros((n_chunks, k))
    cost = np.zeros(n_chunks)
    own = np.zeros(n, np.float32)

    local = assignment is None
    assign = LocalAssignment(x, t, stop.flag) if assignment is None else assignment(x, t)
    try:
        labels = assign.labels
        watch.enter("assigning", n, count=assign.points_done, compiling=local and cold(_full_assign))
        assign.full(_Layout(_columns(c, order), order, gstart, pos, gof))
        stop.check()
        full_scans = 1.0
        reseeded = 0
        iterations = 0
        converged = False
        limit = int(tol * n)
        if progress is not None:
            progress(0, max_iter, n)
        extra = 0
        # the update's and the step's kernels compile before the first step counts a point
        compiling = cold(_partial_sums, _centre_gaps) or (local and accelerated and k > 1 and cold(_yinyang_assign))
        while True:
            watch.enter("iterating", max_iter, base=iterations, compiling=compiling)
            # update: weighted means, re-seeding empty clusters on far points
            sums[:] = 0.0
            wsum[:] = 0.0
            _partial_sums(x, w, labels, sums, wsum, stop.flag)
            stop.check()
            tot_w = wsum.sum(axis=0)
            new_c = (sums.sum(axis=0) / np.maximum(tot_w, 1e-300)[:, None]).astype(np.float32)
            empty = np.flatnonzero(tot_w <= 0)
            if empty.size:
                new_c[empty] = c[empty]
                _own_dist(x, new_c, labels, own)
                # farthest points first (ties: lowest index); only points of positive weight
                score = np.where(w > 0, own, -1.0)
                order_far = np.argsort(-score, kind="stable")
                taken: list[int] = []
                for i in order_far:
                    if len(taken) == empty.size or score[i] <= 0:
                        break
                    if any(np.array_equal(x[i], x[j]) for j in taken):
                        continue
                    taken.append(int(i))
                if len(taken) < empty.size:
                    raise ValueError(f"fewer than {k} distinct points of positive weight for {k} clusters")
                new_c[empty] = x[taken]
                reseeded += empty.size
            move = np.sqrt(((new_c.astype(np.float64) - c.astype(np.float64)) ** 2).sum(axis=1))
            c = new_c
            watch.enter("iterating", max_iter, base=iterations, count=assign.points_done, scale=1.0 / n,
                        compiling=compiling)
            iterations += 1
            lay = _Layout(_columns(c, order), order, gstart, pos, gof)
            if accelerated and k > 1:
                gmove = np.zeros(t)
                np.maximum.at(gmove, gof, move)
                _centre_gaps(c, half)
                moved, scanned = assign.step(c, lay, half, move, gmove)
                full_scans += scanned / (n * k)
            else:
                moved = assign.full(lay)
                full_scans += 1.0
            stop.check()
            compiling = False
            watch.enter("iterating", max_iter, base=iterations)
            if progress is not None:
                progress(iterations, max_iter, moved)
            stopping = moved <= limit or iterations >= max_iter
            counts_ok = stopping and np.bincount(labels, weights=w, minlength=k).min() > 0
            if moved <= limit and counts_ok:
                converged = True
                break
            if iterations >= max_iter:
                if counts_ok:
                    break
                extra += 1  # keep going until no cluster is empty
                if extra > max(10, max_iter):
                    raise RuntimeError("k-means could not fill every cluster")
    finally:
        assign.close()
    # labels are the nearest centres of c (the last step was an assignment)
    _inertia(x, w, c, labels, cost)
    return KMeansResult(
        centroids=c,
        labels=labels,
        inertia=float(cost.sum()),
        iterations=iterations,
        converged=converged,
        reseeded=reseeded,
        full_scans=full_scans,
    )
