"""Numba kernel of the sampled CFR family: external sampling, outcome sampling, Targeted CFR.

:func:`run_iterations` runs whole iterations. Each deals the whole hand up front (both
players' private hands and every board card, hence each player's bucket on every street
and the showdown result) and then walks the flat public betting tree (``solver.tree``)
once per player with those fixed buckets. The table entry of information set (node,
bucket) and action a is ``offset[node] + bucket * row_stride[node] + a`` (:class:`KLayout`):
with ``row_stride = n_child`` that is vector CFR's layout; :mod:`solver.training.sampled` normally
uses a bucket-major one, where all of one player's rows for one bucket on one street are
contiguous, so the rows one deal can touch share a few cache lines and pages.

* Targeted CFR (Jackson 2017, Algorithm 1), and with every street targeted on every
  iteration external sampling (Lanctot, Waugh, Zinkevich and Bowling 2009, "Monte Carlo
  sampling for regret minimization in extensive games", Section 3): the traverser
  explores every action where its street is targeted (or its decision is close) and
  updates regrets there; elsewhere the actor plays one sampled action and nothing is
  updated.
* Outcome sampling (same paper, Section 3): one trajectory, the traverser's actions
  sampled epsilon-on-policy, regrets updated with importance-weighted sampled
  counterfactual values on the way back up.
* Average strategy sampling (Gibson, Burch, Lanctot & Szafron 2012, NIPS) and probing
  (Gibson, Lanctot, Burch, Szafron & Bowling 2012, AAAI), in the general variant:
  :func:`_as_sample` draws the traverser's explored set, :func:`_probe` plays one
  action out.

Chance is sampled on-policy, so its probability cancels between a counterfactual value
and its sampling probability; the kernel never carries it. What chance decides about
iteration t (the targeted streets, and the deal unless the deals are listed) comes from
a stream of its own, a function of the run's key and t (counter-based, as in Salmon et
al. 2011, "Parallel random numbers: as easy as 1, 2, 3"): the kernel draws the deal of
iteration t + 2 and looks up the buckets of t + 1 while it walks t, prefetching the lines
they need (on large tables the walk is bound by memory latency, not arithmetic).

An iteration has three parts, each a function of its own that :func:`run_iterations`
inlines: the look-ahead (:func:`_look_ahead`), which draws the chance of the iteration
two ahead (:func:`_draw`) and looks up the buckets of the next one (:func:`_lookup`),
prefetching the lines and table rows they will need; the deal (:func:`_deal`), which puts
this iteration's buckets, board states and showdown result in place (or takes the next
deal of a shuffled pass over the listed ones); and the walk (:func:`_walk`; its updates
are :func:`_ascend` and :func:`_back_up_outcome`). The parts stay in this file, with
:func:`run_iterations` that inlines them: numba's cache notices edits only to the file
of the function it caches, so a part kept in another file could run stale compiled code
after an edit. That is why this one concept, the sampled walk and its variants, runs past
900 lines. The bundles the kernel takes (:class:`KLayout`,
:class:`KDeal`, :class:`KCards`, :class:`KConfig`, :class:`KScratch`) are defined in
:mod:`solver.training._sampling_bundles` and re-exported here.

The walk uses an explicit stack (numba cannot load a cached recursive kernel in a new
process) whose frames are only the nodes where the traverser branches: a node where one
action is sampled hands its child's value through unchanged, so the walk just moves on.
The players' sampled actions use an RNG state (xorshift64*: Marsaglia 2003, "Xorshift
RNGs"; Vigna 2016) that lives in each thread's scratch bundle and is written back at the
end of a call; the per-iteration chance streams are seeded by splitmix64 (Steele, Lea
and Flood 2014) of the key and t, so neither depends on how iterations are split into
calls or threads.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from abstraction.index_tables import index_with
from abstraction.indexer import index_hand_njit
from poker.evaluator import rank_cards

from .._kernels import CHANCE, DECISION, FOLD, KTree
from ._sampling_bundles import (
    MAX_STREETS,
    KCards,
    KConfig,
    KDeal,
    KLayout,
    KScratch,
    no_cards,
    readonly,
)

__all__ = [
    "ALG_OUTCOME",
    "ALG_TARGETED",
    "AVG_LINEAR",
    "AVG_UNIFORM",
    "MAX_STREETS",
    "PF_BLOCKS",
    "PF_CHILDREN",
    "PF_DEAL",
    "STAGE_DEAL",
    "STAGE_INDEX",
    "STAGE_LOOKUP",
    "STAGE_SHOWDOWN",
    "KCards",
    "KConfig",
    "KDeal",
    "KLayout",
    "KScratch",
    "deal_costs",
    "no_cards",
    "readonly",
    "run_iterations",
]

# Sampling schemes (the variant is chosen in Python; kernels take it as an integer).
ALG_TARGETED = 0  # Targeted CFR; external sampling is Targeted CFR with every iteration full
ALG_OUTCOME = 1

# Weight of iteration t's contribution to the average strategy.
AVG_UNIFORM = 0  # 1
AVG_LINEAR = 1  # t (1-based)

_MUL = np.uint64(0x2545F4914F6CDD1D)
_S12 = np.uint64(12)
_S25 = np.uint64(25)
_S27 = np.uint64(27)
_S11 = np.uint64(11)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_PRUNE_SALT = np.uint64(0x5851F42D4C957F2D)  # keys the stream that picks MCCFR-P's iterations
_S31 = np.uint64(31)

# Prefetch bits of KConfig.prefetch (chosen by the solver from the table size and layout).
PF_CHILDREN = 1  # a decision node's children's rows
PF_DEAL = 2  # the bucket and strength lines of the next deals
PF_BLOCKS = 4  # before a full iteration, both players' row blocks of both tables


def _prefetch_codegen(write: int):  # type: ignore[no-untyped-def]
    """Code for ``llvm.prefetch`` of ``arr[idx]`` (write: 1 to fetch the line for writing)."""

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]])
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
        # (address, write, locality 3 = keep in all cache levels, data cache)
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(write), i32(3), i32(1)])
        return context.get_dummy_value()

    return codegen


@intrinsic
def _prefetch(typingctx, arr, idx):  # type: ignore[no-untyped-def]
    """Hint the CPU to load ``arr[idx]`` for writing (a table entry); no effect on
    results. The deal fixes every bucket up front, so the kernel knows which table rows
    and lines the next iterations need before it reads them: fetching them early
    overlaps the cache misses on tables larger than the caches."""
    return types.void(arr, idx), _prefetch_codegen(1)


@intrinsic
def _prefetch_read(typingctx, arr, idx):  # type: ignore[no-untyped-def]
    """As :func:`_prefetch`, for data only read (bucket and strength tables, which the
    Hogwild threads share: a line fetched for writing would be taken from the other
    core's cache)."""
    return types.void(arr, idx), _prefetch_codegen(0)


@njit(cache=True, inline="always")
def _uniform(state: np.uint64) -> tuple[np.uint64, float]:
    """Next xorshift64* state and a uniform double in [0, 1) from its top 53 bits."""
    x = state
    x ^= x >> _S12
    x ^= x << _S25
    x ^= x >> _S27
    return x, float((x * _MUL) >> _S11) * _TO_UNIT


@njit(cache=True, inline="always")
def _chance_state(key: np.uint64, it: int) -> np.uint64:
    """Seed of iteration ``it``'s chance stream: splitmix64 of the key and ``it`` (nonzero)."""
    z = key + np.uint64(it + 1) * _GOLDEN
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    z = z ^ (z >> _S31)
    return z if z != 0 else _GOLDEN


@njit(cache=True, inline="always")
def _below(u: float, n: int) -> int:
    """floor(u * n) for u in [0, 1), clamped into 0..n-1."""
    k = int(u * n)
    return k if k < n else n - 1


@njit(cache=True, inline="always")
def _sample_prob(
    q_mask: np.ndarray, q_freq: np.ndarray, rho: np.ndarray, row: int, st: int, close: int
) -> float:
    """q(I): how often the traverser's information set I on street ``st`` is updated.

    ``rho[row, s]``: the probability that sampling from sigma at the traverser's
    decisions on street s before I (close ones excepted: they are always explored) picks
    this path's actions. Under a targeted set R, I is updated if its street is in R or
    its decision is close, and it is reached with the product of ``rho`` over the streets
    outside R (streets in R are explored). q(I) sums that over R, weighted by tau(R)
    (Jackson 2017, the 1/q remark after Algorithm 1; Lanctot et al. 2009, Section 3:
    v~ = ... / q). Opponent and chance factors cancel (they are sampled on-policy).
    """
    q = 0.0
    for k in range(q_mask.shape[0]):
        m = q_mask[k]
        if (m >> st) & 1:
            last = st - 1
        elif close:
            last = st
        else:
            continue
        p = q_freq[k]
        for s in range(last + 1):
            if not (m >> s) & 1:
                p *= rho[row, s]
        q += p
    return q


@njit(cache=True, inline="always")
def _deal_cards(cs: np.uint64, deck: np.ndarray, hole: int, n_dealt: int, pc: np.ndarray) -> np.uint64:
    """Deal ``n_dealt`` distinct cards of ``deck`` uniformly from the stream state ``cs``
    (rejection on a bit set of deck positions): player 0's ``hole`` cards, player 1's,
    then the board in dealing order. ``pc[p]`` gets player p's hole cards followed by
    the board. Returns the stream's next state."""
    n_deck = deck.shape[0]
    used = 0
    for i in range(n_dealt):
        while True:
            cs, u = _uniform(cs)
            x = _below(u, n_deck)
            if not (used >> x) & 1:
                break
        used |= 1 << x
        card = deck[x]
        if i < hole:
            pc[0, i] = card
        elif i < 2 * hole:
            pc[1, i - hole] = card
        else:
            pc[0, i - hole] = card
            pc[1, i - hole] = card
    return cs


@njit(cache=True, inline="always")
def _street_bucket(
    table: tuple, pairs: tuple, has_table: np.ndarray, history: int, s: int, prev: int, ix: int
) -> int:
    """A dealt hand's bucket on street ``s`` from its index ``ix`` there (:class:`KCards`):
    the table's own-street bucket (or the index: lossless), combined with ``prev``, the
    bucket of the street before, through the pair map when the abstraction has history."""
    own = int(table[s][ix]) if has_table[s] else ix
    return pairs[s][prev, own] if history and s > 0 else own


#: Stages of :func:`deal_costs` (each includes the ones before it).
STAGE_DEAL = 0
STAGE_INDEX = 1
STAGE_LOOKUP = 2
STAGE_SHOWDOWN = 3


@njit(cache=True, nogil=True)
def deal_costs(cd: KCards, key: np.uint64, count: int, n_streets: int, stage: int, pc: np.ndarray) -> int:
    """Deal ``count`` hands as :func:`run_iterations` does, up to ``stage`` (deal; then
    index each player's hand per street; then read the buckets; then rank both hands),
    and return a checksum of what was computed. For timing each part of a dealt
    iteration: the differences between stages are their costs. As in the training
    kernel, a deal's table lines are prefetched when it is indexed and read one deal
    later."""
    acc = 0
    prev = np.zeros((2, MAX_STREETS), np.int64)
    now = np.zeros((2, MAX_STREETS), np.int64)
    for it in range(count):
        cs = _deal_cards(_chance_state(key, it), cd.deck, cd.hole, 2 * cd.hole + cd.n_board, pc)
        acc += pc[0, 0]
        if stage < STAGE_INDEX:
            continue
        for p in range(2):
            row = pc[p]
            hb = 0
            if cd.tabled:
                index_with(cd.succ, row, n_streets, now[p])
            for s in range(n_streets):
                if stage >= STAGE_LOOKUP and it > 0:
                    hb = _street_bucket(cd.table, cd.pairs, cd.has_table, cd.history, s, hb, prev[p, s])
                    acc += hb
                ix = now[p, s] if cd.tabled else index_hand_njit(cd.ix[s], row, cd.ix_round[s])
                acc += ix
                prev[p, s] = ix
                if stage >= STAGE_LOOKUP and cd.has_table[s]:
                    _prefetch_read(cd.table[s], ix)  # type: ignore[call-arg]
        if stage >= STAGE_SHOWDOWN:
            n = cd.hole + cd.n_board
            acc += rank_cards(pc[0], n) - rank_cards(pc[1], n)
        acc += int(cs & np.uint64(1))
    return acc


# -- The parts of an iteration. Each is inlined into run_iterations (see the note there).


@njit(cache=True, inline="always")
def _draw(d: KDeal, cd: KCards, g: KConfig, sc: KScratch, slot: int, it: int) -> None:
    """The deal, first part: iteration ``it``'s chance stream gives its targeted streets
    (a bit set, the same for both players) and, unless deals are listed, its deal, into
    pipeline slot ``slot``. From the deck: both players' hole cards and the board (distinct
    cards drawn uniformly), each player's hand index per street and the showdown. From
    board states: one uniformly chosen child board state per street (every deal of a
    street's cards is equally likely) and hands uniform over those missing the board, the
    second also missing the first (rejection sampling). With ``PF_DEAL`` the bucket (and
    strength) lines that :func:`_lookup` reads one iteration later are fetched now."""
    n_deals = d.deals.shape[0]
    target_mask = g.target_mask
    n_targets = target_mask.shape[0]
    modulus = g.modulus
    key = g.chance_key
    cs = key
    if n_deals == 0 or (n_targets > 1 and modulus == 0):
        cs = _chance_state(key, it)
    mask = g.all_mask
    if n_targets > 1:
        if modulus > 0:
            mask = target_mask[it % modulus]
        else:
            cs, u = _uniform(cs)
            mask = target_mask[n_targets - 1]
            for i in range(n_targets - 1):
                if u < g.target_cum[i]:
                    mask = target_mask[i]
                    break
    sc.mask_ahead[slot] = mask
    n_streets = sc.bk.shape[1]
    fetch = g.prefetch & PF_DEAL
    if n_deals > 0:
        pass  # listed deals: :func:`_deal` takes the next one
    elif cd.dealt:
        pc = sc.pc
        hole = cd.hole
        cs = _deal_cards(cs, cd.deck, hole, 2 * hole + cd.n_board, pc)
        for p in range(2):
            row = pc[p]
            if cd.tabled:
                index_with(cd.succ, row, n_streets, sc.ix_ahead[slot, p])
                continue
            for s in range(n_streets):
                ix = index_hand_njit(cd.ix[s], row, cd.ix_round[s])
                sc.ix_ahead[slot, p, s] = ix
                if fetch and cd.has_table[s]:
                    _prefetch_read(cd.table[s], ix)  # type: ignore[call-arg]
        k0 = rank_cards(pc[0], hole + cd.n_board)
        k1 = rank_cards(pc[1], hole + cd.n_board)
        sc.res_ahead[slot] = 1.0 if k0 > k1 else (-1.0 if k0 < k1 else 0.0)
    else:
        ahead = sc.ahead
        root_states = d.root_states
        hand_mask = d.hand_mask
        n_h = hand_mask.shape[0]
        cs, u = _uniform(cs)
        bs = root_states[_below(u, root_states.shape[0])]
        ahead[slot, 0] = bs
        for s in range(1, n_streets):
            cs, u = _uniform(cs)
            bs = d.bs_child[bs] + _below(u, d.bs_n_child[bs])
            ahead[slot, s] = bs
        used = d.bs_mask[bs]
        while True:
            cs, u = _uniform(cs)
            h0 = _below(u, n_h)
            if (hand_mask[h0] & used) == 0:
                break
        used |= hand_mask[h0]
        while True:
            cs, u = _uniform(cs)
            h1 = _below(u, n_h)
            if (hand_mask[h1] & used) == 0:
                break
        ahead[slot, n_streets] = h0
        ahead[slot, n_streets + 1] = h1
        if fetch:
            bucket_flat = d.bucket.reshape(-1)  # views, for prefetching by flat index
            strength_flat = d.strength.reshape(-1)
            for s in range(n_streets):
                _prefetch_read(bucket_flat, ahead[slot, s] * n_h + h0)  # type: ignore[call-arg]
                _prefetch_read(bucket_flat, ahead[slot, s] * n_h + h1)  # type: ignore[call-arg]
            _prefetch_read(strength_flat, (bs - d.sd_first) * n_h + h0)  # type: ignore[call-arg]
            _prefetch_read(strength_flat, (bs - d.sd_first) * n_h + h1)  # type: ignore[call-arg]


@njit(cache=True, inline="always")
def _showdown(d: KDeal, bs: int, h0: int, h1: int) -> float:
    """Player 0's showdown result (1, 0 or -1) with hands ``h0``, ``h1`` on final board
    state ``bs``."""
    k0 = d.strength[bs - d.sd_first, h0]
    k1 = d.strength[bs - d.sd_first, h1]
    return 1.0 if k0 > k1 else (-1.0 if k0 < k1 else 0.0)


@njit(cache=True, inline="always")
def _lookup(d: KDeal, cd: KCards, sc: KScratch, slot: int) -> None:
    """The deal, second part: each player's bucket per street of the deal that
    :func:`_draw` put in ``slot`` (from its hand indices, :class:`KCards`, or the board
    states' bucket map) and, for a deal of board states, the showdown."""
    n_streets = sc.bk.shape[1]
    bk_ahead = sc.bk_ahead
    ahead = sc.ahead
    if cd.dealt:
        for p in range(2):
            hb = 0
            for s in range(n_streets):
                ix = sc.ix_ahead[slot, p, s]
                hb = _street_bucket(cd.table, cd.pairs, cd.has_table, cd.history, s, hb, ix)
                bk_ahead[slot, p, s] = hb
    else:
        h0 = ahead[slot, n_streets]
        h1 = ahead[slot, n_streets + 1]
        for s in range(n_streets):
            bk_ahead[slot, 0, s] = d.bucket[ahead[slot, s], h0]
            bk_ahead[slot, 1, s] = d.bucket[ahead[slot, s], h1]
        sc.res_ahead[slot] = _showdown(d, ahead[slot, n_streets - 1], h0, h1)


@njit(cache=True, inline="always")
def _look_ahead(
    lay: KLayout, d: KDeal, cd: KCards, g: KConfig, regrets: np.ndarray, avg: np.ndarray,
    sc: KScratch, start: int, count: int, stride: int, k: int,
) -> None:  # fmt: skip
    """The look-ahead of the call's ``k``-th iteration: draw the chance of iteration
    ``k + 2`` (:func:`_draw`; the first iteration draws 0 to 2) and look up the buckets of
    ``k + 1`` (:func:`_lookup`; the first also those of 0), whose lines were fetched one
    iteration earlier. A deal's buckets fix every row its walks touch, so before a full
    iteration (``PF_BLOCKS``) both players' row blocks of both tables are fetched now,
    an iteration before the walk reads them. Slots rotate modulo 3."""
    for j in range(0 if k == 0 else k + 2, min(k + 3, count)):
        _draw(d, cd, g, sc, j % 3, start + j * stride)
    line = 64 // regrets.itemsize  # table entries per cache line
    if d.deals.shape[0] == 0:  # (a listed deal is taken when walked: nothing to look up)
        for j in range(0 if k == 0 else k + 1, min(k + 2, count)):
            slot = j % 3
            _lookup(d, cd, sc, slot)
            if g.prefetch & PF_BLOCKS and sc.mask_ahead[slot] == g.all_mask:
                for s in range(sc.bk.shape[1]):
                    for p in range(2):
                        width = lay.block_width[s, p]
                        lo = lay.block_base[s, p] + sc.bk_ahead[slot, p, s] * width
                        for e in range(lo, lo + width, line):
                            _prefetch(regrets, e)  # type: ignore[call-arg]
                            _prefetch(avg, e)  # type: ignore[call-arg]
                        if width > 0:  # the block's last line
                            _prefetch(regrets, lo + width - 1)  # type: ignore[call-arg]
                            _prefetch(avg, lo + width - 1)  # type: ignore[call-arg]


@njit(cache=True, inline="always")
def _deal(d: KDeal, sc: KScratch, dealt: int, slot: int, state: np.uint64, cur: int) -> tuple:
    """The deal walked now, into ``sc.bk`` (buckets) and ``sc.path`` (board states): the
    one looked up in ``slot`` or, with listed deals, the next one of a shuffled pass over
    the list (Fisher-Yates with the players' RNG ``state`` at the start of each pass;
    ``cur``: the position in the pass). Either way every deal of hands and board is
    equally likely. Returns the RNG state, the position and player 0's showdown result."""
    bk = sc.bk
    path = sc.path
    n_streets = bk.shape[1]
    n_deals = d.deals.shape[0]
    if n_deals == 0:
        for s in range(n_streets):
            path[s] = -1 if dealt else sc.ahead[slot, s]
            bk[0, s] = sc.bk_ahead[slot, 0, s]
            bk[1, s] = sc.bk_ahead[slot, 1, s]
        res0 = sc.res_ahead[slot]
    else:
        order = sc.order
        if cur == 0:
            for i in range(n_deals - 1, 0, -1):
                state, u = _uniform(state)
                j = _below(u, i + 1)
                tmp = order[i]
                order[i] = order[j]
                order[j] = tmp
        row = order[cur]
        cur = cur + 1 if cur + 1 < n_deals else 0
        bs = d.deals[row, 0]
        h0 = d.deals[row, 1]
        h1 = d.deals[row, 2]
        b = bs
        for s in range(n_streets - 1, -1, -1):
            path[s] = b
            b = d.bs_parent[b]
        for s in range(n_streets):
            bk[0, s] = d.bucket[path[s], h0]
            bk[1, s] = d.bucket[path[s], h1]
        res0 = _showdown(d, bs, h0, h1)
    return state, cur, res0


@njit(cache=True, inline="always")
def _regret_match(regrets: np.ndarray, o: int, n: int, pure: int, close_at: float) -> tuple:
    """Current strategy sigma(I) of the row at ``o`` (Zinkevich et al. 2007, Eq. 8):
    positive regrets over their sum, uniform if none is positive. Returns that sum, the
    highest-regret action (lowest index on ties; ``pure`` plays it) and whether the top
    two regrets differ by less than ``close_at`` (both computed only when used)."""
    total = 0.0
    for a in range(n):
        total += max(regrets[o + a], 0.0)
    best = 0
    close = 0
    if pure or close_at > 0.0:
        r1 = regrets[o]
        r2 = -np.inf
        for a in range(1, n):
            r = regrets[o + a]
            if r > r1:
                r2 = r1
                r1 = r
                best = a
            elif r > r2:
                r2 = r
        close = 1 if close_at > 0.0 and r1 - r2 < close_at else 0
    return total, best, close


@njit(cache=True, inline="always")
def _write_sigma(
    regrets: np.ndarray, o: int, n: int, sig: np.ndarray, dep: int, pure: int, best: int,
    total: float,
) -> None:  # fmt: skip
    """sigma(I) into ``sig[dep]`` (from :func:`_regret_match`'s ``total`` and ``best``)."""
    if pure:
        for a in range(n):
            sig[dep, a] = 0.0
        sig[dep, best] = 1.0
    elif total > 0.0:
        inv = 1.0 / total
        for a in range(n):
            sig[dep, a] = max(regrets[o + a], 0.0) * inv
    else:
        for a in range(n):
            sig[dep, a] = 1.0 / n


@njit(cache=True, inline="always")
def _pick(
    regrets: np.ndarray, o: int, n: int, sig: np.ndarray, dep: int, u: float, outcome: int,
    mine: int, eps: float, pure: int, best: int, total: float,
) -> int:  # fmt: skip
    """The action sampled with uniform ``u``: from sigma(I) or (outcome sampling's
    traverser, ``mine``) from (1 - eps) sigma + eps uniform. Outcome sampling reads
    sigma from ``sig[dep]``; the other schemes from the regrets (``total``, ``best``)."""
    if outcome:
        if mine and u < eps:
            return _below(u / eps, n)
        if mine:
            u = (u - eps) / (1.0 - eps)
        acc = 0.0
        for j in range(n - 1):
            acc += sig[dep, j]
            if u < acc:
                return j
        return n - 1
    if pure:
        return best
    if total > 0.0:
        x = u * total
        acc = 0.0
        for j in range(n - 1):
            acc += max(regrets[o + j], 0.0)
            if x < acc:
                return j
        return n - 1
    return _below(u, n)


@njit(cache=True, inline="always")
def _prefetch_children(
    t: KTree, lay: KLayout, bk: np.ndarray, regrets: np.ndarray, avg: np.ndarray, node: int,
    trav: int, averaged: bool,
) -> None:  # fmt: skip
    """Fetch the rows of ``node``'s children (through chance nodes) before its own row
    is read, and their average rows where the opponent's are ``averaged``."""
    for j in range(t.n_child[node]):
        c = t.child[node] + j
        while t.kind[c] == CHANCE:
            c = t.child[c]
        if t.kind[c] == DECISION:
            pa = t.player[c]
            oc = lay.offset[c] + bk[pa, t.street[c]] * lay.row_stride[c]
            _prefetch(regrets, oc)  # type: ignore[call-arg]
            if pa != trav and averaged:
                _prefetch(avg, oc)  # type: ignore[call-arg]


@njit(cache=True, inline="always")
def _terminal_value(t: KTree, node: int, trav: int, res0: float) -> float:
    """The traverser's chips won at terminal ``node``, net of its own stake (player 0's
    showdown result ``res0``)."""
    spent = t.spent
    if t.kind[node] == FOLD:
        folder = t.player[node]
        return -float(spent[node, trav]) if folder == trav else float(spent[node, folder])
    return float(min(spent[node, 0], spent[node, 1])) * (res0 if trav == 0 else -res0)


@njit(cache=True, nogil=True, _nrt=False)
def _probe(
    t: KTree, lay: KLayout, sc: KScratch, regrets: np.ndarray, node: int, trav: int, res0: float,
    state: np.uint64,
) -> tuple:  # fmt: skip
    """A probe (Gibson, Lanctot, Burch, Szafron & Bowling 2012, AAAI, Section 5): one
    play-out from ``node`` to the end of the deal, both players sampling their current
    strategies (chance is the deal's). Returns the RNG state, the traverser's payoff (an
    unbiased estimate of the node's value under sigma) and the nodes visited."""
    nodes = 0
    while True:
        nodes += 1
        kd = t.kind[node]
        if kd == CHANCE:
            node = t.child[node]
            continue
        if kd != DECISION:
            return state, _terminal_value(t, node, trav, res0), nodes
        n = t.n_child[node]
        o = lay.offset[node] + sc.bk[t.player[node], t.street[node]] * lay.row_stride[node]
        total, best, _ = _regret_match(regrets, o, n, 0, 0.0)
        state, u = _uniform(state)
        node = t.child[node] + _pick(regrets, o, n, sc.sig, 0, u, 0, 0, 0.0, 0, best, total)


@njit(cache=True, nogil=True, _nrt=False)
def _as_sample(
    t: KTree, lay: KLayout, g: KConfig, sc: KScratch, regrets: np.ndarray, avg: np.ndarray,
    o: int, node: int, n: int, dep: int, trav: int, res0: float, state: np.uint64,
) -> tuple:  # fmt: skip
    """Average strategy sampling at a traverser node (Gibson, Burch, Lanctot & Szafron
    2012, NIPS, Algorithm 1): action a is explored with probability
    rho(a) = min(1, max(eps, (beta + tau s(a)) / (beta + sum_b s(b)))), s the traverser's
    cumulative average strategy at the row ``o``, each action on its own draw.

    Until its value comes back, an explored action's ``sc.vals[dep, a]`` holds rho(a),
    which the value is then divided by (not with probing). An action left out is worth 0,
    or with ``g.probe`` the value of a probe (:func:`_probe`): an unbiased estimate of the
    action's value either way. A node's regrets are reached only through its ancestors'
    draws, so its update is divided by q(h), the product of rho along the traverser's
    path (the paper's q; :func:`_ascend`). Returns the RNG state, the first explored
    action (``n``: none), the frame flags (bit 2: a sampled set; bit 8 + a: action a left
    out) and the nodes the probes visited."""
    total = 0.0
    for a in range(n):
        total += avg[o + a]
    denom = g.as_beta + total
    flags = 4
    first = n
    nodes = 0
    for a in range(n):
        rho = min(1.0, max(g.as_epsilon, (g.as_beta + g.as_tau * avg[o + a]) / denom))
        u = 0.0
        if rho < 1.0:  # a sure exploration draws nothing (eps = 1 is external sampling)
            state, u = _uniform(state)
        if u < rho:
            sc.vals[dep, a] = rho
            if first == n:
                first = a
        else:
            flags |= 1 << (8 + a)
            v = 0.0
            if g.probe:
                state, v, k = _probe(t, lay, sc, regrets, t.child[node] + a, trav, res0, state)
                nodes += k
            sc.vals[dep, a] = v
    return state, first, flags, nodes


@njit(cache=True, inline="always")
def _update_row(
    regrets: np.ndarray, o: int, n: int, sig: np.ndarray, vals: np.ndarray, f: int, w: float,
    floor: int, floor_at: float,
) -> float:  # fmt: skip
    """c = sum_a sigma(a) v(a) over frame ``f``'s action values, regrets += w (v(a) - c)
    (floored at ``floor_at`` with ``floor``); returns c."""
    cv = 0.0
    for a in range(n):
        cv += sig[f, a] * vals[f, a]
    for a in range(n):
        regrets[o + a] += w * (vals[f, a] - cv)
        if floor and regrets[o + a] < floor_at:
            regrets[o + a] = floor_at
    return cv


@njit(cache=True, inline="always")
def _back_up_outcome(
    t: KTree, lay: KLayout, sc: KScratch, regrets: np.ndarray, dep: int, trav: int, ret: float,
    samp: float, floor: int, floor_at: float, probe: int,
) -> None:  # fmt: skip
    """Outcome sampling's regret updates up the trajectory of ``dep`` frames that ended
    with the traverser winning ``ret`` (``samp``: its sampling probability q(z)): at each
    traverser node with sampled action a, W = u(z) pi_{-i}(z[I]) / q(z),
    v(I, a) = W pi(z[Ia], z), v(I) = sigma(a) v(I, a) and r(I, b) += [b = a] v(I, a) - v(I).

    With ``probe`` (Gibson et al. 2012, AAAI, Section 5) every other action b holds a
    probe's payoff in ``sc.vals[j, b]``: x(a) is the estimate from below, x(b) the probe,
    the node's estimate c = sum_b sigma(b) x(b) goes up in place of x, unweighted (each
    x is unbiased for its child), and r(I, b) += (x(b) - c) pi_{-i}(h) / q(h), q(h) the
    prefix's sampling probability (``sc.rho[j, 0]``)."""
    frames = sc.frames
    sig = sc.sig
    if probe:
        x = ret
        for j in range(dep - 1, -1, -1):
            pnode = frames[j, 0]
            if t.player[pnode] != trav:
                continue  # the opponent samples on-policy: x stays unbiased
            n = t.n_child[pnode]
            o = lay.offset[pnode] + sc.bk[trav, t.street[pnode]] * lay.row_stride[pnode]
            sc.vals[j, frames[j, 1]] = x
            x = _update_row(regrets, o, n, sig, sc.vals, j, sc.reach[j] / sc.rho[j, 0], floor, floor_at)
        return
    tail = 1.0
    for j in range(dep - 1, -1, -1):
        pnode = frames[j, 0]
        a = frames[j, 1]
        if t.player[pnode] == trav:
            n = t.n_child[pnode]
            o = lay.offset[pnode] + sc.bk[trav, t.street[pnode]] * lay.row_stride[pnode]
            va = ret * sc.reach[j] / samp * tail
            v = sig[j, a] * va
            for b in range(n):
                regrets[o + b] -= v
            regrets[o + a] += va
            if floor:
                for b in range(n):
                    if regrets[o + b] < floor_at:
                        regrets[o + b] = floor_at
        tail *= sig[j, a]


@njit(cache=True, inline="always")
def _pruned(t: KTree, regrets: np.ndarray, o: int, node: int, a: int, prune_at: float, last: int) -> bool:
    """Whether MCCFR-P skips the traverser's action ``a`` at ``node`` (row at ``o``): its
    regret is below ``prune_at``, the node is not on the ``last`` street, and the action
    does not end the hand (Brown & Sandholm 2019, Science, supplementary, Algorithm 1)."""
    if t.street[node] == last or regrets[o + a] >= prune_at:
        return False
    kd = t.kind[t.child[node] + a]
    return kd == DECISION or kd == CHANCE


@njit(cache=True, inline="always")
def _first_explored(t: KTree, regrets: np.ndarray, o: int, node: int, pos: int, prune_at: float,
                    last: int, vals: np.ndarray, f: int) -> int:  # fmt: skip
    """The first action from ``pos`` on that MCCFR-P explores; every skipped one gets a
    NaN value in ``vals[f]`` (not explored: no regret update, no part of the node's value)."""
    n = t.n_child[node]
    while pos < n and _pruned(t, regrets, o, node, pos, prune_at, last):
        vals[f, pos] = np.nan
        pos += 1
    return pos


@njit(cache=True, inline="always")
def _ascend(
    t: KTree, lay: KLayout, g: KConfig, sc: KScratch, regrets: np.ndarray, dep: int, trav: int,
    ret: float, importance: int, floor: int, prune: int, sampled_sets: bool,
) -> tuple:  # fmt: skip
    """Hand the value ``ret`` to the deepest branching frame and finish the frames whose
    actions are all evaluated: c = sum_a sigma(a) v(a), regrets += v(a) - c (times 1/q
    with ``importance``: :func:`_sample_prob`). Returns (the node of the next action to
    evaluate, the depth, True), or (0, 0, False) once the walk is done.

    ``prune``: a frame whose bit 1 of ``frames[f, 2]`` is set skips the actions MCCFR-P
    prunes (:func:`_pruned`); they take no part in c and get no update.

    ``sampled_sets``: a frame whose bit 2 is set explores the set average strategy
    sampling drew (:func:`_as_sample`): a value coming back is divided by the rho its
    slot held (not with probing), the actions left out (bit 8 + a) keep the value they
    were given, and the regret update is divided by the frame's q(h) (``rho[f, 0]``; the
    live row's ``rho[live, 0]`` is that of the node being walked)."""
    frames = sc.frames
    vals = sc.vals
    sig = sc.sig
    rho = sc.rho
    live = rho.shape[0] - 1
    while dep > 0:
        f = dep - 1
        pnode = frames[f, 0]
        pos = frames[f, 1]
        n = t.n_child[pnode]
        if sampled_sets and frames[f, 2] & 4:
            vals[f, pos] = ret if g.probe else ret / vals[f, pos]
            pos += 1
            while pos < n and (frames[f, 2] >> (8 + pos)) & 1:
                pos += 1
            if pos < n:  # q(h) of the next child: this node's times its rho
                rho[live, 0] = rho[f, 0] * vals[f, pos]
        else:
            vals[f, pos] = ret
            pos += 1
        if prune and frames[f, 2] & 2:
            o = lay.offset[pnode] + sc.bk[trav, t.street[pnode]] * lay.row_stride[pnode]
            pos = _first_explored(t, regrets, o, pnode, pos, g.prune_at, sc.bk.shape[1] - 1, vals, f)
        if pos < n:
            frames[f, 1] = pos
            if importance:
                for s in range(rho.shape[1]):
                    rho[live, s] = rho[f, s]
                if (frames[f, 2] & 1) == 0:
                    rho[live, t.street[pnode]] *= sig[f, pos]
            return t.child[pnode] + pos, dep, True
        st = t.street[pnode]
        o = lay.offset[pnode] + sc.bk[trav, st] * lay.row_stride[pnode]
        w = 1.0
        if importance:
            w = 1.0 / _sample_prob(g.q_mask, g.q_freq, rho, f, st, frames[f, 2] & 1)
        elif sampled_sets and frames[f, 2] & 4:
            w = 1.0 / rho[f, 0]
        floor_at = g.floor_at
        cv = 0.0
        if prune and frames[f, 2] & 2:  # skipped actions (NaN) take no part
            for a in range(n):
                if not np.isnan(vals[f, a]):
                    cv += sig[f, a] * vals[f, a]
            for a in range(n):
                if not np.isnan(vals[f, a]):
                    regrets[o + a] = max(regrets[o + a] + w * (vals[f, a] - cv), floor_at)
        else:
            cv = _update_row(regrets, o, n, sig, vals, f, w, floor, floor_at)
        ret = cv
        dep = f
    return 0, 0, False


@njit(cache=True, inline="always")
def _walk(
    t: KTree, lay: KLayout, g: KConfig, regrets: np.ndarray, avg: np.ndarray, sc: KScratch,
    trav: int, mask: int, avg_w: float, res0: float, state: np.uint64, general: int | None,
    prune: int,
) -> tuple:  # fmt: skip
    """One walk of the deal in ``sc.bk`` for traverser ``trav`` on an iteration that
    targets the streets ``mask`` (average weight ``avg_w``, player 0's showdown result
    ``res0``, the players' RNG ``state``); returns the RNG state and the nodes visited.

    Targeted CFR (Jackson 2017, Algorithm 1), which with every street targeted is
    external sampling: at a traverser node on a targeted street, or whose top two regrets
    differ by less than ``g.close``, evaluate every action, return c = sum_a sigma(a) v(a)
    and add v(a) - c (times 1/q with ``g.importance``) to the regrets (:func:`_ascend`);
    elsewhere the actor plays one action sampled from its current strategy and nothing
    is updated, except that on full iterations the opponent's average sums get
    avg_w sigma at its nodes (no rescaling needed: Gibson et al. 2012; ``pure``: the
    played action gets avg_w). The explicit stack holds only branching nodes: a sampled
    node hands its child's value through unchanged, so the walk just moves on.

    Outcome sampling (Lanctot et al. 2009, Section 3): every node is sampled (a frame
    each); the traverser samples from (1 - eps) sigma + eps uniform, the opponent from
    sigma; the opponent's average sums get avg_w pi_{-i} sigma / q(z[h]) (stochastically
    weighted averaging; pi_{-i} is the opponent's own reach, q the prefix's sampling
    probability); regrets are updated on the way back up (:func:`_back_up_outcome`).

    ``prune``: this iteration is one of MCCFR-P's (Brown & Sandholm 2019, Science,
    supplementary): at an explored traverser node the actions :func:`_pruned` names are
    skipped (unless that would skip them all), and c sums sigma(a) v(a) over the others.

    ``general``: as in :func:`run_iterations` (None: the options it ignores are constants
    here, and numba prunes their branches).
    """
    kind = t.kind
    player = t.player
    street = t.street
    n_child = t.n_child
    offset = lay.offset
    row_stride = lay.row_stride
    frames = sc.frames
    sig = sc.sig
    rho = sc.rho
    bk = sc.bk
    if general is None:
        algo = ALG_TARGETED
        importance = 0
        close_at = 0.0
        pure = 0
        prune = 0
        sampled_sets = False
        probe = 0
    else:
        algo = g.algo
        importance = g.importance
        close_at = g.close
        pure = g.pure
        sampled_sets = g.as_epsilon > 0.0
        probe = g.probe
    eps = g.epsilon
    full = mask == g.all_mask
    live = rho.shape[0] - 1
    if importance:
        for s in range(rho.shape[1]):
            rho[live, s] = 1.0
    if sampled_sets:
        rho[live, 0] = 1.0
    nodes = 0
    dep = 0
    node = 0
    opp = 1.0
    samp = 1.0
    while True:
        nodes += 1
        kd = kind[node]
        if kd == CHANCE:
            node = t.child[node]
            continue
        if kd == DECISION:
            actor = player[node]
            st = street[node]
            n = n_child[node]
            o = offset[node] + bk[actor, st] * row_stride[node]
            if g.prefetch & PF_CHILDREN:
                averaged = full or algo == ALG_OUTCOME
                _prefetch_children(t, lay, bk, regrets, avg, node, trav, averaged)
            # sigma(I) is written out (into sig[dep]) only where more than one sample needs it.
            total, best, close = _regret_match(regrets, o, n, pure, close_at)
            explored = algo == ALG_TARGETED and actor == trav and (close or (mask >> st) & 1)
            if explored or algo == ALG_OUTCOME:
                _write_sigma(regrets, o, n, sig, dep, pure, best, total)
            leaf = False
            if explored:
                first = 0
                flags = close
                if prune:
                    first = _first_explored(t, regrets, o, node, 0, g.prune_at, bk.shape[1] - 1, sc.vals, dep)
                    if first < n:
                        flags |= 2
                    else:  # every action would be skipped: explore them all
                        first = 0
                if sampled_sets:
                    state, first, flags, k = _as_sample(t, lay, g, sc, regrets, avg, o, node, n, dep, trav, res0, state)
                    flags |= close
                    nodes += k
                    leaf = first == n
            if explored and leaf:
                # nothing explored: the node's values are all set, and it hands c up as a
                # terminal hands its payoff (one _ascend below: it is inlined, and big)
                ret = _update_row(regrets, o, n, sig, sc.vals, dep, 1.0 / rho[live, 0], g.floor, g.floor_at)
            elif explored:
                frames[dep, 0] = node
                frames[dep, 1] = first
                frames[dep, 2] = flags
                if sampled_sets:
                    rho[dep, 0] = rho[live, 0]
                    rho[live, 0] *= sc.vals[dep, first]
                if importance:
                    for s in range(rho.shape[1]):
                        rho[dep, s] = rho[live, s]
                    if not close:
                        rho[live, st] *= sig[dep, first]
                dep += 1
                node = t.child[node] + first
                continue
            else:
                state, u = _uniform(state)
                mine = actor == trav
                a = _pick(regrets, o, n, sig, dep, u, algo == ALG_OUTCOME, mine, eps, pure, best, total)
                if algo == ALG_TARGETED:
                    if mine:
                        if importance:
                            if pure:
                                pass  # sigma(best) = 1
                            elif total > 0.0:
                                rho[live, st] *= max(regrets[o + a], 0.0) / total
                            else:
                                rho[live, st] *= 1.0 / n
                    elif full:
                        if pure:
                            avg[o + a] += avg_w
                        elif total > 0.0:
                            w = avg_w / total
                            for b in range(n):
                                avg[o + b] += w * max(regrets[o + b], 0.0)
                        else:
                            w = avg_w / n
                            for b in range(n):
                                avg[o + b] += w
                else:
                    if mine:
                        if probe:  # the other actions' probes, and the prefix's q(h)
                            rho[dep, 0] = samp
                            for b in range(n):
                                if b != a:
                                    state, v, k = _probe(t, lay, sc, regrets, t.child[node] + b, trav, res0, state)
                                    sc.vals[dep, b] = v
                                    nodes += k
                        samp *= eps / n + (1.0 - eps) * sig[dep, a]
                        sc.reach[dep] = opp
                    else:
                        w = avg_w * opp / samp
                        for b in range(n):
                            avg[o + b] += w * sig[dep, b]
                        opp *= sig[dep, a]
                        samp *= sig[dep, a]
                    frames[dep, 0] = node
                    frames[dep, 1] = a
                    dep += 1
                node = t.child[node] + a
                continue
        if kd != DECISION:  # a terminal (a decision here explored nothing: ret is its c)
            ret = _terminal_value(t, node, trav, res0)
            if algo == ALG_OUTCOME:
                _back_up_outcome(t, lay, sc, regrets, dep, trav, ret, samp, g.floor, g.floor_at, probe)
                break
        node, dep, more = _ascend(t, lay, g, sc, regrets, dep, trav, ret, importance, g.floor, prune, sampled_sets)
        if not more:
            break
    return state, nodes


@njit(cache=True, nogil=True, _nrt=False)
def run_iterations(
    t: KTree,
    lay: KLayout,
    d: KDeal,
    cd: KCards,
    g: KConfig,
    regrets: np.ndarray,
    avg: np.ndarray,
    sc: KScratch,
    start: int,
    count: int,
    stride: int,
    general: int | None,
) -> int:
    """Run ``count`` iterations numbered ``start, start + stride, ...`` (0-based); return
    the nodes touched (each visit of a node by a walk counts once, whatever its kind
    and whoever acts there).

    One iteration = one deal and one traversal of it per player (0 then 1): the
    look-ahead (:func:`_look_ahead`: targeted streets and deals of the next iterations,
    drawn by :func:`_draw` and looked up by :func:`_lookup`), the deal (:func:`_deal`)
    and two walks (:func:`_walk`). Deals come from ``d`` (board states and hands of the
    chance layer) or, with ``cd.dealt``, from the deck (:class:`KCards`: no chance layer).

    ``general``: None compiles the plain variant (external sampling and Targeted CFR
    without the 1/q correction, close threshold or pure strategies: those settings of
    ``g`` are then ignored), which runs about 15% faster on small trees than the variant
    that reads them (any integer); numba prunes the unused branches of the None variant.

    The kernel releases the GIL, so several Python threads can run it at once on the
    same tables, each with its own scratch bundle (Hogwild; see
    :meth:`solver.training.sampled.SampledCFRSolver.iterate`).
    """
    # Speed: the parts are inlined and numba's reference counting is off (``_nrt=False``:
    # nothing here allocates, and the caller owns every array). With it, each array a
    # part takes costs an atomic increment and decrement per iteration or per node:
    # inlined so, the split ran 2.3x slower than the single function it replaced on Leduc
    # and 1.7x on the dealt 20-card game; as separate calls, even without reference
    # counts, 1.6x and 1.25x. As it is, one thread runs as fast as that function: 497 ns
    # an iteration against 495 on Leduc (external sampling), 6% to 9% less on the dealt
    # 20-card game (es, os, tcfr), 603k against 596k deals/s in bench/blueprint.py
    # (medians of 4 and 5 runs of each, interleaved, on a shared 2-core machine).
    linear = g.averaging == AVG_LINEAR
    state = sc.rng[0]
    cur = sc.cursor[0]
    nodes = 0
    prune_key = g.chance_key ^ _PRUNE_SALT
    for k in range(count):
        it = start + k * stride
        avg_w = float(it + 1) if linear else 1.0
        _look_ahead(lay, d, cd, g, regrets, avg, sc, start, count, stride, k)
        state, cur, res0 = _deal(d, sc, cd.dealt, k % 3, state, cur)
        mask = sc.mask_ahead[k % 3]
        prune = 0
        if general is not None and it >= g.prune_from:
            # whether iteration it prunes: a stream of its own, as its deal (any threads)
            _, u = _uniform(_chance_state(prune_key, it))
            prune = 1 if u < g.prune_share else 0
        for trav in range(2):
            state, n = _walk(t, lay, g, regrets, avg, sc, trav, mask, avg_w, res0, state, general, prune)
            nodes += n
    sc.rng[0] = state
    sc.cursor[0] = cur
    return nodes
