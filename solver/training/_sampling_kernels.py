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

Chance is sampled on-policy, so its probability cancels between a counterfactual value
and its sampling probability; the kernel never carries it. What chance decides about
iteration t (the targeted streets, and the deal unless the deals are listed) comes from
a stream of its own, a function of the run's key and t (counter-based, as in Salmon et
al. 2011, "Parallel random numbers: as easy as 1, 2, 3"): the kernel draws the deal of
iteration t + 2 and looks up the buckets of t + 1 while it walks t, prefetching the lines
they need (on large tables the walk is bound by memory latency, not arithmetic).

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

from functools import lru_cache
from typing import NamedTuple

import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from abstraction.indexer import index_hand_njit
from poker.evaluator import rank_cards

from .._kernels import CHANCE, DECISION, FOLD, KTree

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
_S31 = np.uint64(31)

# Prefetch bits of KConfig.prefetch (chosen by the solver from the table size and layout).
PF_CHILDREN = 1  # a decision node's children's rows
PF_DEAL = 2  # the bucket and strength lines of the next deals
PF_BLOCKS = 4  # before a full iteration, both players' row blocks of both tables


class KLayout(NamedTuple):
    """Where information set (node, bucket) keeps its row in the tables.

    Entry of action a: ``offset[node] + bucket * row_stride[node] + a``. In a bucket-major
    layout the rows of player p's decisions on street s for bucket b are the contiguous
    block ``block_base[s, p] + b * block_width[s, p]`` (``block_width`` 0: no blocks).
    """

    offset: np.ndarray  # int64[n]: -1 at non-decision nodes
    row_stride: np.ndarray  # int64[n]
    block_base: np.ndarray  # int64[S, 2]
    block_width: np.ndarray  # int64[S, 2]


class KDeal(NamedTuple):
    """What a deal needs: board-state navigation, the bucket map and showdown strengths.

    Board states and hands are those of :mod:`solver.chance`; ``strength[j, h]`` is the
    strength of hand ``h`` on the j-th board state of the last street (higher wins),
    ``hand_mask[h]`` the bit set of its deck indices and ``bs_mask[b]`` that of board
    state b's cards. ``deals`` lists every deal as
    (final board state, hand 0, hand 1) when the game is small enough to list them
    (else it has no rows): deals are then drawn without replacement, a shuffled pass over
    the whole list at a time (stratified sampling of chance).
    """

    root_states: np.ndarray  # int32[r]
    bs_child: np.ndarray  # int32[B]
    bs_n_child: np.ndarray  # int32[B]
    bs_parent: np.ndarray  # int32[B]: -1 for first-street board states
    bucket: np.ndarray  # int32[B, H]
    hand_mask: np.ndarray  # int64[H]
    strength: np.ndarray  # int64[Bf, H]
    sd_first: int
    deals: np.ndarray  # int32[n, 3]
    bs_mask: np.ndarray  # int64[B]


class KCards(NamedTuple):
    """Dealing from the deck (``dealt`` 1) instead of from listed board states and hands.

    Each deal draws both players' hole cards and every board card from ``deck`` (ACPC
    cards), then per player and street ``s`` indexes the hand (hole cards, then the board
    in dealing order) with the hand indexer ``ix[s]`` after round ``ix_round[s]``; the
    bucket is ``table[s][index]`` where ``has_table[s]`` (a card abstraction's memory-mapped
    bucket table), else the index itself (lossless canonical classes). With ``history``
    a street's bucket is ``pairs[s][previous bucket, own bucket]``. The showdown ranks
    each player's hole cards and the whole board. Streets past the game's last hold
    placeholders, so the tuples always have :data:`MAX_STREETS` entries (one compile).
    """

    dealt: int
    deck: np.ndarray  # int64[n]
    hole: int
    n_board: int
    ix: tuple  # MAX_STREETS x int64[:]: HandIndexer.tables per street
    ix_round: np.ndarray  # int64[S]
    has_table: np.ndarray  # int64[S]
    table: tuple  # MAX_STREETS x readonly uint16[:] (or int32[:]): own-street bucket per index
    pairs: tuple  # MAX_STREETS x int32[:, :]: history pair maps
    history: int


#: Betting rounds of an ACPC game at most (the protocol allows four).
MAX_STREETS = 4


def readonly(a: np.ndarray) -> np.ndarray:
    """A read-only view (tables are typed read-only in the kernel: one compile for
    memory-mapped and in-memory tables alike)."""
    v = np.asarray(a).view()
    v.flags.writeable = False
    return v


@lru_cache(maxsize=1)
def no_cards() -> KCards:
    """The bundle of a listed problem (``dealt`` 0): placeholders of the right types."""
    return KCards(
        dealt=0,
        deck=np.zeros(1, np.int64),
        hole=0,
        n_board=0,
        ix=tuple(np.zeros(1, np.int64) for _ in range(MAX_STREETS)),
        ix_round=np.zeros(MAX_STREETS, np.int64),
        has_table=np.zeros(MAX_STREETS, np.int64),
        table=tuple(readonly(np.zeros(1, np.uint16)) for _ in range(MAX_STREETS)),
        pairs=tuple(np.zeros((1, 1), np.int32) for _ in range(MAX_STREETS)),
        history=0,
    )


class KConfig(NamedTuple):
    """The variant and its parameters (all plain numbers and small arrays).

    Targeting: on iteration ``it`` (0-based) the targeted streets are the bit set
    ``target_mask[it % modulus]`` if ``modulus`` > 0, else ``target_mask[k]`` with
    probability ``target_cum[k] - target_cum[k - 1]`` (drawn from the iteration's chance
    stream, keyed by ``chance_key``). ``q_mask``/``q_freq``: the
    distinct targeted sets and how often each occurs, for the 1/q correction.
    """

    algo: int
    epsilon: float  # outcome sampling: exploration
    target_mask: np.ndarray  # int64[k]
    target_cum: np.ndarray  # float64[k]
    modulus: int
    q_mask: np.ndarray  # int64[m]
    q_freq: np.ndarray  # float64[m]
    importance: int  # Targeted CFR: scale regret updates by 1/q
    close: float  # Targeted CFR: explore traverser decisions whose top two regrets differ by less
    pure: int  # current strategy = the highest-regret action instead of regret matching
    averaging: int  # AVG_UNIFORM or AVG_LINEAR
    all_mask: int  # bit set of every street
    prefetch: int  # PF_* bits: what to prefetch (tables larger than the caches)
    chance_key: np.uint64  # key of the per-iteration chance streams (from the seed)
    floor: int  # keep cumulative regrets >= 0 after each update (regret-matching+ style)


class KScratch(NamedTuple):
    """One thread's scratch space and RNG state (``D`` = tree depth + 2, ``A`` = most actions,
    ``S`` = streets)."""

    frames: np.ndarray  # int64[D, 3]: node, next action / sampled action, close flag
    vals: np.ndarray  # float64[D, A]: action values of a branching node
    sig: np.ndarray  # float64[D, A]: current strategy at a node of the path
    rho: (
        np.ndarray
    )  # float64[D + 1, S]: traverser's sampling probability per street (last row: live)
    reach: np.ndarray  # float64[D]: opponent reach at a node of the path (outcome sampling)
    bk: np.ndarray  # int32[2, S]: each player's bucket per street (of the last deal walked)
    path: np.ndarray  # int64[S]: board state per street (of the last deal walked)
    rng: np.ndarray  # uint64[1]: xorshift64* state of the players' samples
    order: np.ndarray  # int32[n]: this thread's permutation of the listed deals
    cursor: np.ndarray  # int64[1]: next position in ``order``
    ahead: np.ndarray  # int64[3, S + 2]: deals in the pipeline (board states, hand 0, hand 1)
    bk_ahead: np.ndarray  # int32[3, 2, S]: their buckets
    res_ahead: np.ndarray  # float64[3]: their showdown results for player 0
    mask_ahead: np.ndarray  # int64[3]: their iterations' targeted streets
    ix_ahead: np.ndarray  # int64[3, 2, S]: dealt deals' hand indices per player and street
    pc: np.ndarray  # int64[2, C]: a dealt deal's cards per player (hole, then board)


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
    for it in range(count):
        cs = _deal_cards(_chance_state(key, it), cd.deck, cd.hole, 2 * cd.hole + cd.n_board, pc)
        acc += pc[0, 0]
        if stage < STAGE_INDEX:
            continue
        for p in range(2):
            row = pc[p]
            hb = 0
            for s in range(n_streets):
                if stage >= STAGE_LOOKUP and it > 0:
                    hb = _street_bucket(cd.table, cd.pairs, cd.has_table, cd.history, s, hb, prev[p, s])
                    acc += hb
                ix = index_hand_njit(cd.ix[s], row, cd.ix_round[s])
                acc += ix
                prev[p, s] = ix
                if stage >= STAGE_LOOKUP and cd.has_table[s]:
                    _prefetch_read(cd.table[s], ix)  # type: ignore[call-arg]
        if stage >= STAGE_SHOWDOWN:
            n = cd.hole + cd.n_board
            acc += rank_cards(pc[0], n) - rank_cards(pc[1], n)
        acc += int(cs & np.uint64(1))
    return acc


@njit(cache=True, nogil=True)
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

    One iteration = one deal and one traversal of it per player (0 then 1). The
    sections below are the look-ahead (targeted streets and deals of the next
    iterations), the deal and the walk (each documented where it starts). Deals come
    from ``d`` (board states and hands of the chance layer) or, with ``cd.dealt``, from
    the deck (:class:`KCards`: no chance layer). Every array is bound once, at the top:
    binding arrays inside per-traversal code costs atomic
    reference counts that took most of the time on small trees.

    ``general``: None compiles the plain variant (external sampling and Targeted CFR
    without the 1/q correction, close threshold or pure strategies: those settings of
    ``g`` are then ignored), which runs about 15% faster on small trees than the variant
    that reads them (any integer); numba prunes the unused branches of the None variant.

    The kernel releases the GIL, so several Python threads can run it at once on the
    same tables, each with its own scratch bundle (Hogwild; see
    :meth:`solver.training.sampled.SampledCFRSolver.iterate`).
    """
    kind = t.kind
    player = t.player
    street = t.street
    child = t.child
    n_child = t.n_child
    spent = t.spent
    offset = lay.offset
    row_stride = lay.row_stride
    block_base = lay.block_base
    block_width = lay.block_width
    root_states = d.root_states
    bs_child = d.bs_child
    bs_n_child = d.bs_n_child
    bs_parent = d.bs_parent
    bucket = d.bucket
    hand_mask = d.hand_mask
    strength = d.strength
    deals = d.deals
    sd_first = d.sd_first
    bs_mask = d.bs_mask
    frames = sc.frames
    vals = sc.vals
    sig = sc.sig
    rho = sc.rho
    reach = sc.reach
    bk = sc.bk
    path = sc.path
    order = sc.order
    ahead = sc.ahead
    bk_ahead = sc.bk_ahead
    res_ahead = sc.res_ahead
    mask_ahead = sc.mask_ahead
    ix_ahead = sc.ix_ahead
    pc = sc.pc
    dealt = cd.dealt
    deck = cd.deck
    c_hole = cd.hole
    c_board = cd.n_board
    n_dealt = 2 * c_hole + c_board
    c_ix = cd.ix
    ix_round = cd.ix_round
    has_table = cd.has_table
    c_table = cd.table
    c_pairs = cd.pairs
    c_history = cd.history
    floor = g.floor
    target_mask = g.target_mask
    target_cum = g.target_cum
    q_mask = g.q_mask
    q_freq = g.q_freq
    if general is None:
        algo = ALG_TARGETED
        importance = 0
        close_at = 0.0
        pure = 0
    else:
        algo = g.algo
        importance = g.importance
        close_at = g.close
        pure = g.pure
    eps = g.epsilon
    modulus = g.modulus
    all_mask = g.all_mask
    prefetch = g.prefetch
    key = g.chance_key
    n_streets = bk.shape[1]
    n_deals = deals.shape[0]
    n_h = hand_mask.shape[0]
    bucket_flat = bucket.reshape(-1)  # views, for prefetching by flat index
    strength_flat = strength.reshape(-1)
    line = 64 // regrets.itemsize  # table entries per cache line
    n_targets = target_mask.shape[0]
    live = rho.shape[0] - 1
    state = sc.rng[0]
    cur = sc.cursor[0]
    nodes = 0
    for k in range(count):
        it = start + k * stride
        avg_w = float(it + 1) if g.averaging == AVG_LINEAR else 1.0

        # -- Look ahead. Iteration j's chance stream gives its targeted streets (a bit
        # set, the same for both players) and, unless deals are listed, its deal: the
        # board is one uniformly chosen child board state per street (every deal of a
        # street's cards is equally likely) and the hands are uniform over those missing
        # the board, the second also missing the first (rejection sampling). Deals are
        # drawn two iterations ahead and their lines fetched; buckets are looked up one
        # iteration ahead and, before a full iteration, both players' row blocks fetched.
        for j in range(0 if k == 0 else k + 2, min(k + 3, count)):
            slot = j % 3
            it_j = start + j * stride
            cs = key
            if n_deals == 0 or (n_targets > 1 and modulus == 0):
                cs = _chance_state(key, it_j)
            mask = all_mask
            if n_targets > 1:
                if modulus > 0:
                    mask = target_mask[it_j % modulus]
                else:
                    cs, u = _uniform(cs)
                    mask = target_mask[n_targets - 1]
                    for i in range(n_targets - 1):
                        if u < target_cum[i]:
                            mask = target_mask[i]
                            break
            mask_ahead[slot] = mask
            if n_deals > 0:
                continue
            if dealt:
                # Both players' hole cards, then the board in dealing order: distinct
                # cards drawn uniformly (rejection on a bit set of deck positions).
                cs = _deal_cards(cs, deck, c_hole, n_dealt, pc)
                for p in range(2):
                    row = pc[p]
                    for s in range(n_streets):
                        ix = index_hand_njit(c_ix[s], row, ix_round[s])
                        ix_ahead[slot, p, s] = ix
                        if prefetch & PF_DEAL and has_table[s]:
                            _prefetch_read(c_table[s], ix)  # type: ignore[call-arg]
                k0 = rank_cards(pc[0], c_hole + c_board)
                k1 = rank_cards(pc[1], c_hole + c_board)
                res_ahead[slot] = 1.0 if k0 > k1 else (-1.0 if k0 < k1 else 0.0)
                continue
            cs, u = _uniform(cs)
            bs = root_states[_below(u, root_states.shape[0])]
            ahead[slot, 0] = bs
            for s in range(1, n_streets):
                cs, u = _uniform(cs)
                bs = bs_child[bs] + _below(u, bs_n_child[bs])
                ahead[slot, s] = bs
            used = bs_mask[bs]
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
            if prefetch & PF_DEAL:
                for s in range(n_streets):
                    _prefetch_read(bucket_flat, ahead[slot, s] * n_h + h0)  # type: ignore[call-arg]
                    _prefetch_read(bucket_flat, ahead[slot, s] * n_h + h1)  # type: ignore[call-arg]
                _prefetch_read(strength_flat, (bs - sd_first) * n_h + h0)  # type: ignore[call-arg]
                _prefetch_read(strength_flat, (bs - sd_first) * n_h + h1)  # type: ignore[call-arg]
        if n_deals == 0:
            for j in range(0 if k == 0 else k + 1, min(k + 2, count)):
                slot = j % 3
                if dealt:
                    for p in range(2):
                        hb = 0
                        for s in range(n_streets):
                            hb = _street_bucket(
                                c_table, c_pairs, has_table, c_history, s, hb, ix_ahead[slot, p, s]
                            )
                            bk_ahead[slot, p, s] = hb
                else:
                    h0 = ahead[slot, n_streets]
                    h1 = ahead[slot, n_streets + 1]
                    for s in range(n_streets):
                        bk_ahead[slot, 0, s] = bucket[ahead[slot, s], h0]
                        bk_ahead[slot, 1, s] = bucket[ahead[slot, s], h1]
                    bs = ahead[slot, n_streets - 1]
                    k0 = strength[bs - sd_first, h0]
                    k1 = strength[bs - sd_first, h1]
                    res_ahead[slot] = 1.0 if k0 > k1 else (-1.0 if k0 < k1 else 0.0)
                if prefetch & PF_BLOCKS and mask_ahead[slot] == all_mask:
                    for s in range(n_streets):
                        for p in range(2):
                            width = block_width[s, p]
                            lo = block_base[s, p] + bk_ahead[slot, p, s] * width
                            for e in range(lo, lo + width, line):
                                _prefetch(regrets, e)  # type: ignore[call-arg]
                                _prefetch(avg, e)  # type: ignore[call-arg]
                            if width > 0:  # the block's last line
                                _prefetch(regrets, lo + width - 1)  # type: ignore[call-arg]
                                _prefetch(avg, lo + width - 1)  # type: ignore[call-arg]

        # -- The deal of this iteration: looked up above, or (listed deals) the next one
        # of a shuffled pass over the list (Fisher-Yates at the start of each pass).
        # Either way every deal of hands and board is equally likely.
        slot = k % 3
        mask = mask_ahead[slot]
        full = mask == all_mask
        if n_deals > 0:
            if cur == 0:
                for i in range(n_deals - 1, 0, -1):
                    state, u = _uniform(state)
                    j = _below(u, i + 1)
                    tmp = order[i]
                    order[i] = order[j]
                    order[j] = tmp
            row = order[cur]
            cur = cur + 1 if cur + 1 < n_deals else 0
            bs = deals[row, 0]
            h0 = deals[row, 1]
            h1 = deals[row, 2]
            b = bs
            for s in range(n_streets - 1, -1, -1):
                path[s] = b
                b = bs_parent[b]
            for s in range(n_streets):
                bk[0, s] = bucket[path[s], h0]
                bk[1, s] = bucket[path[s], h1]
            k0 = strength[bs - sd_first, h0]
            k1 = strength[bs - sd_first, h1]
            res0 = 1.0 if k0 > k1 else (-1.0 if k0 < k1 else 0.0)
        else:
            for s in range(n_streets):
                path[s] = -1 if dealt else ahead[slot, s]
                bk[0, s] = bk_ahead[slot, 0, s]
                bk[1, s] = bk_ahead[slot, 1, s]
            res0 = res_ahead[slot]

        for trav in range(2):
            # -- One walk. Targeted CFR (Jackson 2017, Algorithm 1), which with every
            # street targeted is external sampling: at a traverser node on a targeted
            # street, or whose top two regrets differ by less than ``close_at``,
            # evaluate every action, return c = sum_a sigma(a) v(a) and add
            # v(a) - c (times 1/q with ``importance``) to the regrets; elsewhere the
            # actor plays one action sampled from its current strategy and nothing is
            # updated, except that on full iterations the opponent's average sums get
            # avg_w sigma at its nodes (no rescaling needed: Gibson et al. 2012;
            # ``pure``: the played action gets avg_w). The explicit stack holds only
            # branching nodes: a sampled node hands its child's value through
            # unchanged, so the walk just moves on to that child.
            #
            # Outcome sampling (Lanctot et al. 2009, Section 3): every node is sampled
            # (a frame each); the traverser samples from (1 - eps) sigma + eps uniform,
            # the opponent from sigma; the opponent's average sums get
            # avg_w pi_{-i} sigma / q(z[h]) (stochastically weighted averaging; pi_{-i}
            # is the opponent's own reach, q the prefix's sampling probability). Back
            # up, at each traverser node with sampled action a: W = u(z) pi_{-i}(z[I])
            # / q(z), v(I, a) = W pi(z[Ia], z), v(I) = sigma(a) v(I, a), and
            # r(I, b) += [b = a] v(I, a) - v(I).
            #
            # Regret matching, sampling and payoffs are written out in place: helper
            # calls taking arrays cost atomic reference counts in this loop.
            if importance:
                for s in range(n_streets):
                    rho[live, s] = 1.0
            dep = 0
            node = 0
            opp = 1.0
            samp = 1.0
            while True:
                nodes += 1
                kd = kind[node]
                if kd == CHANCE:
                    node = child[node]
                    continue
                if kd == DECISION:
                    actor = player[node]
                    st = street[node]
                    n = n_child[node]
                    o = offset[node] + bk[actor, st] * row_stride[node]
                    if prefetch & PF_CHILDREN:
                        # Children's rows (through chance nodes) before this row is read.
                        for j in range(n):
                            c = child[node] + j
                            while kind[c] == CHANCE:
                                c = child[c]
                            if kind[c] == DECISION:
                                pa = player[c]
                                oc = offset[c] + bk[pa, street[c]] * row_stride[c]
                                _prefetch(regrets, oc)  # type: ignore[call-arg]
                                if pa != trav and (full or algo == ALG_OUTCOME):
                                    _prefetch(avg, oc)  # type: ignore[call-arg]
                    # Current strategy sigma(I) (Zinkevich et al. 2007, Eq. 8): positive
                    # regrets over their sum ``total``, uniform if none is positive;
                    # ``pure``: the highest regret (lowest index on ties). It is written
                    # out (into sig[dep]) only where more than one sample needs it.
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
                    explored = (
                        algo == ALG_TARGETED and actor == trav and (close or (mask >> st) & 1)
                    )
                    if explored or algo == ALG_OUTCOME:
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
                    if explored:
                        frames[dep, 0] = node
                        frames[dep, 1] = 0
                        frames[dep, 2] = close
                        if importance:
                            for s in range(n_streets):
                                rho[dep, s] = rho[live, s]
                            if not close:
                                rho[live, st] *= sig[dep, 0]
                        dep += 1
                        node = child[node]
                        continue
                    # Sample one action: from sigma, or (outcome sampling's traverser)
                    # from (1 - eps) sigma + eps uniform.
                    state, u = _uniform(state)
                    if algo == ALG_OUTCOME:
                        if actor == trav and u < eps:
                            a = _below(u / eps, n)
                        else:
                            if actor == trav:
                                u = (u - eps) / (1.0 - eps)
                            a = n - 1
                            acc = 0.0
                            for j in range(n - 1):
                                acc += sig[dep, j]
                                if u < acc:
                                    a = j
                                    break
                    elif pure:
                        a = best
                    elif total > 0.0:
                        x = u * total
                        a = n - 1
                        acc = 0.0
                        for j in range(n - 1):
                            acc += max(regrets[o + j], 0.0)
                            if x < acc:
                                a = j
                                break
                    else:
                        a = _below(u, n)
                    if algo == ALG_TARGETED:
                        if actor == trav:
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
                        if actor == trav:
                            samp *= eps / n + (1.0 - eps) * sig[dep, a]
                            reach[dep] = opp
                        else:
                            w = avg_w * opp / samp
                            for b in range(n):
                                avg[o + b] += w * sig[dep, b]
                            opp *= sig[dep, a]
                            samp *= sig[dep, a]
                        frames[dep, 0] = node
                        frames[dep, 1] = a
                        dep += 1
                    node = child[node] + a
                    continue
                # Terminal: the traverser's chips won, net of its own stake.
                if kd == FOLD:
                    folder = player[node]
                    ret = (
                        -float(spent[node, trav]) if folder == trav else float(spent[node, folder])
                    )
                else:
                    ret = float(min(spent[node, 0], spent[node, 1])) * (
                        res0 if trav == 0 else -res0
                    )
                if algo == ALG_OUTCOME:
                    tail = 1.0
                    for j in range(dep - 1, -1, -1):
                        pnode = frames[j, 0]
                        a = frames[j, 1]
                        if player[pnode] == trav:
                            n = n_child[pnode]
                            o = offset[pnode] + bk[trav, street[pnode]] * row_stride[pnode]
                            va = ret * reach[j] / samp * tail
                            v = sig[j, a] * va
                            for b in range(n):
                                regrets[o + b] -= v
                            regrets[o + a] += va
                            if floor:
                                for b in range(n):
                                    if regrets[o + b] < 0.0:
                                        regrets[o + b] = 0.0
                        tail *= sig[j, a]
                    break
                # Ascend: hand the value to the deepest branching node; finish the
                # nodes whose actions are all evaluated.
                more = False
                while dep > 0:
                    f = dep - 1
                    pnode = frames[f, 0]
                    pos = frames[f, 1]
                    vals[f, pos] = ret
                    pos += 1
                    n = n_child[pnode]
                    if pos < n:
                        frames[f, 1] = pos
                        if importance:
                            for s in range(n_streets):
                                rho[live, s] = rho[f, s]
                            if frames[f, 2] == 0:
                                rho[live, street[pnode]] *= sig[f, pos]
                        node = child[pnode] + pos
                        more = True
                        break
                    cv = 0.0
                    for a in range(n):
                        cv += sig[f, a] * vals[f, a]
                    st = street[pnode]
                    o = offset[pnode] + bk[trav, st] * row_stride[pnode]
                    w = 1.0
                    if importance:
                        w = 1.0 / _sample_prob(q_mask, q_freq, rho, f, st, frames[f, 2])
                    for a in range(n):
                        regrets[o + a] += w * (vals[f, a] - cv)
                        if floor and regrets[o + a] < 0.0:
                            regrets[o + a] = 0.0
                    ret = cv
                    dep = f
                if not more:
                    break
    sc.rng[0] = state
    sc.cursor[0] = cur
    return nodes
