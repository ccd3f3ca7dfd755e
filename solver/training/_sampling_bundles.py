"""The bundles the sampled CFR kernel takes (:mod:`solver.training._sampling_kernels`).

Named tuples of flat arrays and plain numbers, built in Python by
:mod:`solver.training.sampled` and :mod:`solver.training.dealt` and read by the kernel:
where each information set keeps its row (:class:`KLayout`), what a deal needs from the
chance layer (:class:`KDeal`) or from the deck (:class:`KCards`), the variant and its
parameters (:class:`KConfig`) and one thread's scratch space (:class:`KScratch`). The
kernel compiles once per combination of their field types.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from abstraction.index_tables import IndexTables

__all__ = [
    "MAX_STREETS",
    "KCards",
    "KConfig",
    "KDeal",
    "KLayout",
    "KScratch",
    "no_cards",
    "no_index_tables",
    "readonly",
]


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
    in dealing order) with the hand indexer ``ix[s]`` after round ``ix_round[s]`` (where
    ``tabled``, lossless classes of a small deck, by one lookup a street in the successor
    tables ``succ`` instead: :mod:`abstraction.index_tables`, the same indices); the
    bucket is ``table[s][index]`` where ``has_table[s]`` (a card abstraction's bucket
    table), else the index itself (lossless canonical classes). With ``history``
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
    tabled: int  # 1: the index of street s is round s of the successor tables ``succ``
    succ: IndexTables  # abstraction.index_tables (placeholders where ``tabled`` is 0)


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
        tabled=0,
        succ=no_index_tables(),
    )


@lru_cache(maxsize=1)
def no_index_tables() -> IndexTables:
    """Placeholder successor tables of the right types (``KCards.tabled`` 0)."""
    one = np.zeros(1, np.int64)
    return IndexTables(
        pos=one, apply=np.zeros((1, 1), np.int64), compose=np.zeros((1, 1), np.int64),
        binom=np.zeros((1, 1), np.int64), group=one, offset=one, width=one, table=one, n_perm=1,
    )  # fmt: skip


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
    averaging: int  # the kernel's AVG_UNIFORM or AVG_LINEAR
    all_mask: int  # bit set of every street
    prefetch: int  # the kernel's PF_* bits: what to prefetch (tables larger than the caches)
    chance_key: np.uint64  # key of the per-iteration chance streams (from the seed)
    floor: int  # keep cumulative regrets >= floor_at after each update
    floor_at: float  # 0 for regret-matching+'s floor; negative with pruning (Pluribus)
    prune_from: int  # first iteration that may prune (MCCFR-P); beyond every iteration: never
    prune_share: float  # share of the iterations from prune_from on that prune
    prune_at: float  # a traverser's action whose regret is below this is skipped
    as_epsilon: float  # average strategy sampling's floor on exploring an action (0: off)
    as_beta: float  # its beta: exploration of rows with little average yet
    as_tau: float  # its tau: weight of the average strategy
    probe: int  # actions left out get the value of one play-out of the current strategy


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
