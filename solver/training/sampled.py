"""The sampled CFR core: what every sampling scheme shares, and nothing that picks one.

:class:`SampledCFRSolver` holds the regret and average tables (one flat array each, in a
bucket-major :class:`TableLayout` by default: the rows one deal can touch are
neighbours; policies and checkpoints come out in vector CFR's layout, which
:mod:`solver.evaluation.best_response` and :mod:`solver.strategy_io` read), the deal tables
(:func:`build_deal`), seeded RNG streams (:func:`seed_streams`), Hogwild threads and
the random state a checkpoint records. :class:`SamplingOptions` holds the options every
scheme takes (seed, threads, dtype, averaging, stratification, layout, regret floor),
validated in one place. A scheme is a kernel configuration (:func:`make_config`):
external and outcome sampling (:mod:`solver.training.mccfr`, Lanctot et al. 2009) and
Targeted CFR (:mod:`solver.training.tcfr`, Jackson 2017) extend the core with theirs; the
traversals are in :mod:`solver.training._sampling_kernels`.
"""

from __future__ import annotations

import operator
import os
import weakref
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np

from .. import _kernels as K
from . import _sampling_kernels as SK
from ..problem import Problem
from ..strategy import Strategy
from ..strategy_io import quantize, quantize_sums
from .schedules import NEVER, Discounting, Pruning, discount_tables

__all__ = [
    "LAYOUTS",
    "LIST_DEALS_UP_TO",
    "PREFETCH_ABOVE",
    "Averaging",
    "SampledCFRSolver",
    "SamplingOptions",
    "TableLayout",
    "build_deal",
    "chance_key",
    "make_config",
    "seed_streams",
]


class Averaging(Enum):
    """Weight of iteration t's contribution to the average strategy."""

    UNIFORM = "uniform"  # 1 (the papers' choice)
    LINEAR = "linear"  # t (as CFR+ does; Brown and Sandholm 2019 for sampled CFR)


_DTYPES = {"float64": np.float64, "float32": np.float32}
#: :class:`TableLayout` kinds.
LAYOUTS = ("bucket", "node")


@dataclass(frozen=True)
class SamplingOptions:
    """The options every sampled scheme takes; a scheme's own (outcome sampling's
    epsilon, Targeted CFR's targeting, ...) are its constructor's.

    * ``seed``: of the threads' RNG streams and of the per-iteration chance streams;
    * ``threads``: Hogwild threads sharing the tables, each with its own stream (the
      solver refuses more than the machine's CPUs);
    * ``dtype``: of the regret and average tables, 'float64' or 'float32' (the latter
      for tables too large for memory);
    * ``averaging``: an :class:`Averaging` (its value is accepted and converted);
    * ``stratify``: deal without replacement when the game's deals can be listed
      (:data:`LIST_DEALS_UP_TO`);
    * ``layout``: the :class:`TableLayout` kind, 'bucket' (the default) or 'node';
      both give identical runs;
    * ``floor``: keep cumulative regrets at or above 0 after every update (as
      regret-matching+ does; Tammelin 2014, Eq. 3's floor);
    * ``discount``: a :class:`~solver.training.schedules.Discounting` (Linear or
      Discounted CFR's weights, per batch of iterations), or None;
    * ``pruning``: a :class:`~solver.training.schedules.Pruning` (MCCFR-P), or None.

    Every value is checked here, on construction (``ValueError``, one line).
    """

    seed: int = 0
    threads: int = 1
    dtype: str = "float64"
    averaging: Averaging = Averaging.UNIFORM
    stratify: bool = True
    layout: str = "bucket"
    floor: bool = False
    discount: Discounting | None = None
    pruning: Pruning | None = None

    def __post_init__(self) -> None:
        for name in ("seed", "threads"):
            value = getattr(self, name)
            try:
                if isinstance(value, bool):
                    raise TypeError
                object.__setattr__(self, name, operator.index(value))
            except TypeError:
                raise ValueError(f"{name} {value!r} is not a whole number") from None
        if self.seed < 0:
            raise ValueError(f"seed {self.seed} must not be negative")
        if self.threads < 1:
            raise ValueError(f"threads {self.threads} must be at least 1")
        if self.dtype not in _DTYPES:
            raise ValueError(f"dtype {self.dtype!r} is not one of {sorted(_DTYPES)}")
        object.__setattr__(self, "averaging", Averaging(self.averaging))
        if self.layout not in LAYOUTS:
            raise ValueError(f"table layout {self.layout!r} is not 'bucket' or 'node'")
        for name in ("stratify", "floor"):
            object.__setattr__(self, name, bool(getattr(self, name)))
        if self.discount is not None and not isinstance(self.discount, Discounting):
            raise ValueError(f"discount {self.discount!r} is not a Discounting")
        if self.pruning is not None and not isinstance(self.pruning, Pruning):
            raise ValueError(f"pruning {self.pruning!r} is not a Pruning")
        if self.discount is not None and self.averaging is Averaging.LINEAR:
            raise ValueError("a discount weights the average itself: leave averaging uniform")
        if self.pruning is not None and self.floor:
            raise ValueError("pruning needs negative regrets: it cannot run with the regret floor at 0")

    def record(self) -> dict[str, Any]:
        """The options that define a run's tables, as checkpoints record them (seed and
        threads are recorded beside them; the layout changes no result)."""
        out: dict[str, Any] = {
            "averaging": self.averaging.value,
            "dtype": self.dtype,
            "stratify": self.stratify,
        }
        # each recorded only when set: older checkpoints have no such keys
        if self.floor:
            out["floor"] = True
        if self.discount is not None:
            out["discount"] = self.discount.record()
        if self.pruning is not None:
            out["pruning"] = self.pruning.record()
        return out

    @classmethod
    def from_record(
        cls, record: Mapping[str, Any], *, seed: int, threads: int, layout: str = "bucket"
    ) -> SamplingOptions:
        """The options :meth:`record` wrote into ``record`` (a checkpoint's options),
        with its ``seed`` and ``threads``."""
        return cls(
            seed=seed,
            threads=threads,
            dtype=str(record.get("dtype", "float64")),
            averaging=record.get("averaging", Averaging.UNIFORM.value),
            stratify=bool(record.get("stratify", True)),
            layout=layout,
            floor=bool(record.get("floor", False)),
            discount=Discounting.from_record(record["discount"]) if record.get("discount") else None,
            pruning=Pruning.from_record(record["pruning"]) if record.get("pruning") else None,
        )


#: What a row whose average was never updated plays (:meth:`SampledCFRSolver.average_policy`).
FALLBACKS = ("uniform", "current")
#: Games with at most this many deals (both hands and the board) list them and deal
#: without replacement (a shuffled pass at a time): on Leduc this halves the
#: exploitability of external sampling at equal iterations (chance variance).
LIST_DEALS_UP_TO = 1 << 18
#: Tables with more entries than this prefetch what the next iterations need (see the
#: kernels): smaller tables stay in the caches, where prefetching only costs instructions.
PREFETCH_ABOVE = 1 << 21


@dataclass(frozen=True, eq=False)
class TableLayout:
    """Where the sampled solvers keep information set (node, bucket)'s row.

    Entry of action a: ``offset[node] + bucket * row_stride[node] + a``. ``"node"`` is vector
    CFR's layout (``problem.offset``, ``row_stride = n_child``: one block per node).
    ``"bucket"`` is bucket-major: for each street s and player p, the rows of all of p's
    decisions on s for one bucket b are one contiguous block of ``block_width[s, p]``
    entries at ``block_base[s, p] + b * block_width[s, p]`` (decisions in node order).
    One deal fixes each player's bucket per street, so its walks touch at most
    2 x streets such blocks: on 20-card hold'em (205M entries) that is a few cache lines
    per street, where the node layout puts every row of a walk on another page.

    Both layouts give bit-identical runs (the kernels only compute addresses from it);
    :meth:`to_canonical` and :meth:`from_canonical` convert to and from vector CFR's.
    """

    kind: str
    offset: np.ndarray  # int64[n_nodes]
    row_stride: np.ndarray  # int64[n_nodes]
    block_base: np.ndarray  # int64[streets, 2]
    block_width: np.ndarray  # int64[streets, 2]: 0 for the node layout
    problem: Problem

    @classmethod
    def build(cls, problem: Problem, kind: str = "bucket") -> TableLayout:
        """The ``kind`` ('bucket' or 'node') layout of ``problem``'s tables."""
        tree = problem.tree
        n_s = tree.n_streets
        base = np.zeros((n_s, 2), dtype=np.int64)
        width = np.zeros((n_s, 2), dtype=np.int64)
        n_child = tree.n_child.astype(np.int64)
        if kind == "node":
            return cls(kind, problem.offset, n_child, base, width, problem)
        if kind != "bucket":
            raise ValueError(f"table layout {kind!r} is not 'bucket' or 'node'")
        offset = np.full(tree.n_nodes, -1, dtype=np.int64)
        stride = n_child.copy()
        at = 0
        for st in range(n_s):
            for p in range(2):
                nodes = tree.decision_nodes(street=st, player=p)
                w = int(n_child[nodes].sum())
                offset[nodes] = at + np.cumsum(n_child[nodes]) - n_child[nodes]
                stride[nodes] = w
                base[st, p] = at
                width[st, p] = w
                at += w * int(problem.chance.n_buckets[st])
        assert at == problem.size
        return cls(kind, offset, stride, base, width, problem)

    @property
    def kernel(self) -> SK.KLayout:
        """The bundle the kernels take."""
        return SK.KLayout(self.offset, self.row_stride, self.block_base, self.block_width)

    def entry(self, node: int, bucket: int, action: int) -> int:
        """Table index of (node, bucket, action)."""
        return int(self.offset[node]) + bucket * int(self.row_stride[node]) + action

    def node_entries(self, node: int) -> np.ndarray:
        """Table indices of every (bucket, action) of ``node``, in vector CFR's order
        (bucket-major, as ``problem.offset[node] + bucket * n + action`` runs)."""
        n = int(self.problem.tree.n_child[node])
        nb = int(self.problem.chance.n_buckets[self.problem.tree.street[node]])
        rows = int(self.offset[node]) + np.arange(nb, dtype=np.int64) * int(self.row_stride[node])
        return (rows[:, None] + np.arange(n, dtype=np.int64)[None, :]).reshape(-1)

    def node_blocks(self, table: np.ndarray) -> Iterator[tuple[int, slice, np.ndarray]]:
        """Per decision node of ``table`` (this layout): its street, its block in vector
        CFR's layout, and its rows here as a [buckets, actions] view (no copy)."""
        p = self.problem
        tree = p.tree
        for node in tree.decision_nodes():
            n = int(tree.n_child[node])
            nb = int(p.chance.n_buckets[tree.street[node]])
            o = int(self.offset[node])
            w = int(self.row_stride[node])
            rows = table[o : o + (nb - 1) * w + n]
            yield (
                int(tree.street[node]),
                slice(int(p.offset[node]), int(p.offset[node]) + nb * n),
                np.lib.stride_tricks.as_strided(
                    rows, shape=(nb, n), strides=(w * table.itemsize, table.itemsize)
                ),
            )

    def to_canonical(self, table: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """``table`` (in this layout) in vector CFR's layout: a copy, or written into
        ``out`` (which may have another dtype)."""
        if out is None:
            out = np.empty_like(table)
        if self.kind == "node":
            out[:] = table
            return out
        for _, block, rows in self.node_blocks(table):
            out[block].reshape(rows.shape)[:] = rows
        return out

    def canonical_pieces(self, table: np.ndarray, piece_entries: int = 1 << 22) -> Iterator[np.ndarray]:
        """``table`` in vector CFR's layout as contiguous pieces, in order, each of about
        ``piece_entries`` entries (a node's block is never split; the node layout's
        pieces are views): for writing a table out without copying it whole."""
        if self.kind == "node":
            for i in range(0, table.shape[0], piece_entries):
                yield table[i : i + piece_entries]
            return
        buf = np.empty(min(piece_entries, table.shape[0]), dtype=table.dtype)
        at = 0  # vector CFR's index of buf[0]
        fill = 0
        for _, block, rows in sorted(self.node_blocks(table), key=lambda b: b[1].start):
            if block.start != at + fill:
                raise AssertionError(f"the blocks do not tile the table at {at + fill}")
            size = block.stop - block.start
            if fill + size > buf.shape[0]:
                if fill:
                    yield buf[:fill]
                    buf = np.empty_like(buf)  # the piece handed out stays as it was
                    at += fill
                    fill = 0
                if size > buf.shape[0]:
                    yield np.ascontiguousarray(rows).reshape(-1)
                    at += size
                    continue
            buf[fill : fill + size].reshape(rows.shape)[:] = rows
            fill += size
        if fill:
            yield buf[:fill]
            at += fill
        if at != table.shape[0]:
            raise AssertionError(f"the blocks cover {at} of {table.shape[0]} entries")

    def from_canonical(self, src: np.ndarray, table: np.ndarray) -> None:
        """Write ``src`` (vector CFR's layout) into ``table`` (this layout)."""
        if self.kind == "node":
            table[:] = src
            return
        for _, block, rows in self.node_blocks(table):
            rows[:] = src[block].reshape(rows.shape)


def build_deal(problem: Problem, list_up_to: int = LIST_DEALS_UP_TO) -> SK.KDeal:
    """The deal tables of ``problem`` (board navigation, buckets, showdown strengths, and
    the list of all deals when there are at most ``list_up_to``)."""
    kc = problem.kchance
    hands = problem.chance.hands
    n_h = hands.shape[0]
    masks = np.zeros(n_h, dtype=np.int64)
    for j in range(hands.shape[1]):
        masks |= np.left_shift(np.int64(1), hands[:, j].astype(np.int64))
    n_final = kc.sd_len.shape[0]
    strength = np.full((n_final, n_h), np.iinfo(np.int64).min, dtype=np.int64)
    rows, cols = np.nonzero(np.arange(n_h)[None, :] < kc.sd_len[:, None])
    strength[rows, kc.sd_order[rows, cols]] = kc.sd_key[rows, cols]
    n_bs = kc.bucket.shape[0]
    parent = np.full(n_bs, -1, dtype=np.int32)
    for b in np.flatnonzero(kc.bs_n_child > 0):
        parent[kc.bs_child[b] : kc.bs_child[b] + kc.bs_n_child[b]] = b
    board = problem.chance.board_cards.astype(np.int64)
    bs_mask = np.bitwise_or.reduce(
        np.where(board >= 0, np.left_shift(np.int64(1), np.maximum(board, 0)), 0), axis=1
    ).astype(np.int64)
    deals = np.zeros((0, 3), dtype=np.int32)
    per_board = int(kc.sd_len[0]) * (int(kc.sd_len[0]) - 1) if n_final else 0
    if 0 < n_final * per_board <= list_up_to:
        rows_out = []
        disjoint = (masks[:, None] & masks[None, :]) == 0
        for j in range(n_final):
            valid = kc.bucket[kc.sd_first + j] >= 0
            h0, h1 = np.nonzero(disjoint & valid[:, None] & valid[None, :])
            rows_out.append(np.stack([np.full(h0.size, kc.sd_first + j), h0, h1], axis=1))
        deals = np.ascontiguousarray(np.concatenate(rows_out), dtype=np.int32)
    return SK.KDeal(
        root_states=kc.root_states,
        bs_child=kc.bs_child,
        bs_n_child=kc.bs_n_child,
        bs_parent=parent,
        bucket=kc.bucket,
        hand_mask=masks,
        strength=strength,
        sd_first=int(kc.sd_first),
        deals=deals,
        bs_mask=bs_mask,
    )


_M64 = (1 << 64) - 1


def _splitmix64(x: int) -> int:
    """The splitmix64 output function (Steele, Lea and Flood 2014), nonzero."""
    z = x & _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    z ^= z >> 31
    return z or 0x9E3779B97F4A7C15


def seed_streams(seed: int, n: int) -> np.ndarray:
    """``n`` independent nonzero xorshift64* states from ``seed`` (splitmix64 outputs)."""
    if seed < 0:
        raise ValueError(f"seed {seed} must not be negative")
    x = (seed * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & _M64
    out = np.zeros(n, dtype=np.uint64)
    for k in range(n):
        x = (x + 0x9E3779B97F4A7C15) & _M64
        out[k] = _splitmix64(x)
    return out


def chance_key(seed: int) -> np.uint64:
    """Key of the per-iteration chance streams of a run seeded ``seed`` (independent of
    the thread count, so iteration t gets the same deal with any number of threads)."""
    if seed < 0:
        raise ValueError(f"seed {seed} must not be negative")
    return np.uint64(_splitmix64(seed * 0xD1B54A32D192ED03 + 0x8BB84B93962EACC9))


_LINE = 64  # bytes of a cache line


def _per_thread(n_t: int, shape: tuple[int, ...], dtype: Any, fill: Any = 0) -> np.ndarray:
    """An ``(n_t, *shape)`` array whose per-thread slices each start on a cache line of
    their own and share none: Hogwild threads write their scratch space on every
    iteration, and two threads writing one line make it bounce between the cores."""
    dt = np.dtype(dtype)
    inner = np.empty(shape, dtype=dt)
    step = -(-max(inner.nbytes, 1) // _LINE) * _LINE  # whole lines per thread
    buf = np.zeros(n_t * step + _LINE, dtype=np.uint8)
    start = (-buf.ctypes.data) % _LINE
    flat = buf[start : start + n_t * step].view(dt)
    out = np.lib.stride_tricks.as_strided(flat, shape=(n_t, *shape), strides=(step, *inner.strides))
    out[...] = fill
    return out


def _scratch(problem: Problem, rng: np.ndarray, n_deals: int) -> SK.KScratch:
    """Scratch bundles for ``len(rng)`` threads (leading axis = thread; see
    :func:`_per_thread`)."""
    tree = problem.tree
    n_t = rng.shape[0]
    d = tree.max_depth + 2
    a = tree.max_actions
    s = tree.n_streets
    f8, i8, i4 = np.float64, np.int64, np.int32
    game = problem.game
    n_cards = game.num_hole_cards + sum(game.num_board_cards)
    order = _per_thread(n_t, (n_deals,), i4)
    order[:] = np.arange(n_deals, dtype=i4)
    return SK.KScratch(
        frames=_per_thread(n_t, (d, 3), i8),
        vals=_per_thread(n_t, (d, a), f8),
        sig=_per_thread(n_t, (d, a), f8),
        rho=_per_thread(n_t, (d + 1, s), f8, 1.0),
        reach=_per_thread(n_t, (d,), f8),
        bk=_per_thread(n_t, (2, s), i4),
        path=_per_thread(n_t, (s,), i8),
        rng=_per_thread(n_t, (1,), np.uint64, rng[:, None]),
        order=order,
        cursor=_per_thread(n_t, (1,), i8),
        ahead=_per_thread(n_t, (3, s + 2), i8),
        bk_ahead=_per_thread(n_t, (3, 2, s), i4),
        res_ahead=_per_thread(n_t, (3,), f8),
        mask_ahead=_per_thread(n_t, (3,), i8),
        ix_ahead=_per_thread(n_t, (3, 2, s), i8),
        pc=_per_thread(n_t, (2, max(1, n_cards)), i8),
    )


def _thread(sc: SK.KScratch, k: int) -> SK.KScratch:
    return SK.KScratch(*(x[k] for x in sc))


def make_config(
    algo: int,
    n_streets: int,
    *,
    epsilon: float = 0.6,
    target_mask: np.ndarray | None = None,
    target_cum: np.ndarray | None = None,
    modulus: int = 0,
    q_mask: np.ndarray | None = None,
    q_freq: np.ndarray | None = None,
    importance: bool = False,
    close: float = 0.0,
    pure: bool = False,
    as_epsilon: float = 0.0,
    as_beta: float = 0.0,
    as_tau: float = 0.0,
    probe: bool = False,
) -> SK.KConfig:
    """The kernel configuration of a scheme; without targeting arrays every street is
    always targeted (external sampling). Types are fixed here so the kernels compile
    once; :class:`SampledCFRSolver` fills in what its :class:`SamplingOptions` decide
    (averaging, regret floor, prefetching, chance key)."""
    full = (1 << n_streets) - 1
    one = np.array([full], dtype=np.int64)
    return SK.KConfig(
        algo=int(algo),
        epsilon=float(epsilon),
        target_mask=np.ascontiguousarray(
            one if target_mask is None else target_mask, dtype=np.int64
        ),
        target_cum=np.ascontiguousarray(
            np.ones(1) if target_cum is None else target_cum, dtype=np.float64
        ),
        modulus=int(modulus),
        q_mask=np.ascontiguousarray(one if q_mask is None else q_mask, dtype=np.int64),
        q_freq=np.ascontiguousarray(np.ones(1) if q_freq is None else q_freq, dtype=np.float64),
        importance=int(bool(importance)),
        close=float(close),
        pure=int(bool(pure)),
        averaging=SK.AVG_UNIFORM,  # the solver sets it from its options
        all_mask=int(full),
        prefetch=0,  # the solver decides from the table size and layout
        chance_key=np.uint64(0),  # the solver sets it from the seed
        floor=0,  # the solver sets it from its options
        floor_at=0.0,
        prune_from=NEVER,  # the solver sets pruning from its options
        prune_share=0.0,
        prune_at=0.0,
        as_epsilon=float(as_epsilon),
        as_beta=float(as_beta),
        as_tau=float(as_tau),
        probe=int(bool(probe)),
    )


class SampledCFRSolver:
    """The shared core of the sampled schemes: tables, RNG streams, threads.

    ``regrets`` and ``avg_sums`` are flat arrays of ``problem.size`` entries in the
    :class:`TableLayout` ``layout`` (policies and checkpoints use vector CFR's layout);
    ``sampling`` (:class:`SamplingOptions`, default all defaults) sets their dtype, the
    threads and seed, averaging, stratification and the regret floor, and is kept as
    :attr:`sampling`. A problem with ``cards`` (:mod:`solver.training.dealt`) deals from the
    deck instead of its chance layer. Subclasses fix the kernel configuration ``config``
    (:func:`make_config`).
    """

    algorithm = ""

    def __init__(
        self, problem: Problem, config: SK.KConfig, sampling: SamplingOptions | None = None
    ) -> None:
        sampling = SamplingOptions() if sampling is None else sampling
        if sampling.threads > (os.cpu_count() or 1):
            raise ValueError(f"threads {sampling.threads} is more than the {os.cpu_count()} CPUs")
        self.problem = problem
        self.sampling = sampling
        self.layout = TableLayout.build(problem, sampling.layout)
        # Prefetching pays once the tables outgrow the caches (it costs ~10% on Leduc). In
        # the bucket layout a node's children mostly share its block, so a full
        # iteration fetches both players' blocks up front instead of the children's rows.
        prefetch = 0
        if problem.size > PREFETCH_ABOVE:
            bucket = sampling.layout == "bucket"
            prefetch = SK.PF_DEAL | (SK.PF_BLOCKS if bucket else SK.PF_CHILDREN)
        linear = sampling.averaging is Averaging.LINEAR
        pruning = sampling.pruning
        if pruning is not None and (config.algo != SK.ALG_TARGETED or config.as_epsilon > 0.0):
            raise ValueError("pruning skips actions the traverser explores: es and tcfr only")
        self.config = config._replace(
            averaging=SK.AVG_LINEAR if linear else SK.AVG_UNIFORM,
            prefetch=prefetch,
            chance_key=chance_key(sampling.seed),
            floor=int(sampling.floor or pruning is not None),
            floor_at=0.0 if pruning is None else float(pruning.floor),
            prune_from=NEVER if pruning is None else pruning.after,
            prune_share=0.0 if pruning is None else pruning.share,
            prune_at=0.0 if pruning is None else pruning.threshold,
        )
        # The kernel's plain variant where the configuration allows it (see its docstring).
        plain = config.algo == SK.ALG_TARGETED and not (config.importance or config.pure)
        plain = plain and pruning is None  # (pruning runs in the general variant)
        plain = plain and config.as_epsilon == 0.0 and not config.probe  # (so do these)
        self._general: int | None = None if plain and config.close == 0.0 else 1
        self.iterations = 0
        self.nodes = 0
        # np.full writes every page now: the walks touch the tables at random, and a
        # first touch of a lazily mapped page at random cost ~2 ms on the development VM
        # (a 1.6 GB table spent minutes faulting), against ~0.5 s for one sequential pass.
        dtype = _DTYPES[sampling.dtype]
        self.regrets = np.full(problem.size, 0.0, dtype=dtype)
        self.avg_sums = np.full(problem.size, 0.0, dtype=dtype)
        # A dealt problem (no chance layer: :mod:`solver.training.dealt`) deals from the deck.
        self._cards = problem.cards if problem.cards is not None else SK.no_cards()
        listed = sampling.stratify and problem.cards is None
        self._deal = build_deal(problem, LIST_DEALS_UP_TO if listed else 0)
        self._scratch = _scratch(
            problem, seed_streams(sampling.seed, sampling.threads), self._deal.deals.shape[0]
        )
        self._pool: ThreadPoolExecutor | None = None
        #: Runs iterations elsewhere when set (:mod:`solver.training.cluster`):
        #: ``runner(first, n)`` does global iterations first .. first + n - 1 on the
        #: tables and returns the nodes touched; discounting stays here, between calls.
        self.runner: Callable[[int, int], int] | None = None

    def random_state(self) -> dict[str, np.ndarray]:
        """Every thread's RNG state and place in its pass over the listed deals (copies)."""
        sc = self._scratch
        return {
            "rng": sc.rng[:, 0].copy(),
            "order": sc.order.copy(),
            "cursor": sc.cursor[:, 0].copy(),
        }

    def set_random_state(self, rng: np.ndarray, order: np.ndarray, cursor: np.ndarray) -> None:
        """Restore what :meth:`random_state` returned."""
        sc = self._scratch
        rng = np.asarray(rng, dtype=np.uint64)
        threads = self.sampling.threads
        if rng.shape != (threads,) or not rng.all():
            raise ValueError(f"need {threads} nonzero RNG states, got {rng.tolist()}")
        order = np.asarray(order)
        cursor = np.asarray(cursor)
        if order.shape != sc.order.shape or cursor.shape != (threads,):
            raise ValueError("the deal order does not fit this game and thread count")
        if not all(np.array_equal(np.sort(row), np.arange(row.size)) for row in order):
            raise ValueError("the deal order is not a permutation")
        if ((cursor < 0) | (cursor >= max(1, order.shape[1]))).any():
            raise ValueError(f"deal cursor {cursor.tolist()} is out of range")
        sc.rng[:, 0] = rng
        sc.order[:] = order
        sc.cursor[:, 0] = cursor

    def options(self) -> dict[str, Any]:
        """The settings that define the run (recorded in checkpoints): the
        :meth:`SamplingOptions.record`, whether it deals from the deck, and the scheme's
        own options (subclasses add them)."""
        out = self.sampling.record()
        if self.problem.cards is not None:
            out["deals"] = "dealt"
        return out

    def iterate(self, iterations: int = 1) -> int:
        """Run ``iterations`` more iterations; return the nodes they touched (every
        visit of a node by a walk counts once: decision, chance and terminal nodes, the
        opponent's as well as the traverser's).

        With one thread the run is deterministic for a given seed, and splitting it into
        several calls does not change it. With T threads, T Python threads each run
        ``per = iterations // T`` consecutive iterations (thread k: start + k per, ...,
        start + (k + 1) per - 1; consecutive, so that each thread gets its share of a
        targeting schedule's full iterations) in the GIL-free kernel, on the shared
        tables without locks, each with its own RNG stream and scratch space, on cache
        lines of its own (Hogwild: Recht, Re, Wright and Niu 2011); the remainder runs
        on the first stream. Iteration t deals the same cards and targets the same
        streets with any number of threads. Races are tolerable: two threads rarely
        update the same information set at the same moment, a lost update drops one
        sampled increment (an unbiased estimate that later visits replace), and aligned
        4- or 8-byte floats are never torn. The result is then reproducible only
        statistically. (Plain threads rather than ``prange``: they add no compile.)
        """
        if iterations < 0:
            raise ValueError(f"iterations {iterations} must not be negative")
        discount = self.sampling.discount
        if discount is None:
            return self._run(iterations)
        # Batches end at multiples of discount.every however the calls split the run.
        touched = 0
        while iterations > 0:
            step = discount.until_next(self.iterations)
            n = iterations if step is None else min(iterations, step)
            touched += self._run(n)
            iterations -= n
            if discount.due(self.iterations):
                self._discount(self.iterations // discount.every)
        return touched

    @property
    def discounts(self) -> int:
        """How many discounts the run has applied (0 without a discount)."""
        d = self.sampling.discount
        return 0 if d is None else d.applied(self.iterations)

    def _discount(self, batch: int) -> None:
        """Apply the discount that follows the ``batch``-th batch (1-based)."""
        assert self.sampling.discount is not None
        pos, neg, avg = self.sampling.discount.factors(batch)
        discount_tables(self.regrets, self.avg_sums, pos, neg, avg)

    def _run(self, iterations: int) -> int:
        """:meth:`iterate` without discounts."""
        if self.runner is not None:
            touched = int(self.runner(self.iterations, iterations))
            self.iterations += iterations
            self.nodes += touched
            return touched
        p, g, sc, lay = self.problem, self.config, self._scratch, self.layout.kernel
        n_t = self.sampling.threads
        start = self.iterations
        per = iterations // n_t if n_t > 1 else 0
        touched = 0
        if per > 0:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(n_t, thread_name_prefix="hogwild")
                weakref.finalize(self, self._pool.shutdown, wait=False)
            jobs = [
                self._pool.submit(
                    SK.run_iterations,
                    p.ktree,
                    lay,
                    self._deal,
                    self._cards,
                    g,
                    self.regrets,
                    self.avg_sums,
                    _thread(sc, k),
                    start + k * per,
                    per,
                    1,
                    self._general,
                )
                for k in range(n_t)
            ]
            try:
                touched += sum(int(j.result()) for j in jobs)
            finally:
                wait(jobs)  # even when interrupted: no thread may outlive the call
        rest = iterations - per * n_t
        if rest > 0:
            touched += int(
                SK.run_iterations(
                    p.ktree,
                    lay,
                    self._deal,
                    self._cards,
                    g,
                    self.regrets,
                    self.avg_sums,
                    _thread(sc, 0),
                    start + per * n_t,
                    rest,
                    1,
                    self._general,
                )
            )
        self.iterations += iterations
        self.nodes += touched
        return touched

    def _normalise(self, table: np.ndarray) -> np.ndarray:
        out = self.layout.to_canonical(table, np.empty(self.problem.size))
        K.regret_match(self.problem.ktree, self.problem.kchance, out, out, -1)  # in place
        return out

    def _current_rows(self, rows: np.ndarray) -> np.ndarray:
        """The current strategy of regret ``rows`` ([rows, actions], float64): regret
        matching, positive parts normalised and uniform where none is positive (Zinkevich
        et al. 2007, Eq. 8), or with pure strategies the highest regret's action (the
        lowest index on ties)."""
        if self.config.pure:
            out = np.zeros(rows.shape)
            out[np.arange(rows.shape[0]), rows.argmax(axis=1)] = 1.0
            return out
        pos = np.maximum(rows.astype(np.float64), 0.0)
        total = pos.sum(axis=1, keepdims=True)
        return np.divide(pos, total, out=np.full(rows.shape, 1.0 / rows.shape[1]), where=total > 0.0)

    def current_policy(self) -> np.ndarray:
        """The current strategy (regret matching of the cumulative regrets), in vector
        CFR's layout."""
        out = np.empty(self.problem.size)
        for _, block, rows in self.layout.node_blocks(self.regrets):
            out[block] = self._current_rows(rows).reshape(-1)
        return out

    def average_policy(self, fallback: str = "uniform") -> np.ndarray:
        """The normalised average strategy, in vector CFR's layout. A row (information
        set) whose average sums are all zero plays ``fallback``: 'uniform', or 'current'
        (the current strategy, regret matching of its regrets: what training learned there
        when the average was never updated, as Targeted CFR leaves rows its partial
        iterations reach; uniform too where the regrets are all zero). Node by node: the
        result is the only table-sized array it makes."""
        if fallback not in FALLBACKS:
            raise ValueError(f"fallback {fallback!r} is not one of {', '.join(FALLBACKS)}")
        out = self._normalise(self.avg_sums)
        if fallback == "current":
            for (_, block, avg), (_, _, reg) in self._both_blocks():
                empty = ~avg.any(axis=1)
                if empty.any():
                    out[block].reshape(avg.shape)[empty] = self._current_rows(reg[empty])
        return out

    def quantized_average(self, fallback: str = "uniform") -> np.ndarray:
        """:meth:`average_policy` as a strategy file stores it at one byte per probability
        (:func:`solver.strategy_io.quantize`: the same bytes), made node by node without the
        float64 policy: the uint8 table, in vector CFR's layout, is the only table-sized
        array it makes."""
        if fallback not in FALLBACKS:
            raise ValueError(f"fallback {fallback!r} is not one of {', '.join(FALLBACKS)}")
        if self.config.pure:  # its current strategy is no normalisation of the regrets
            p = self.problem
            return quantize(self.average_policy(fallback), p.tree, p.offset, list(p.chance.n_buckets))
        out = np.empty(self.problem.size, dtype=np.uint8)
        current = fallback == "current"
        for (_, block, avg), (_, _, reg) in self._both_blocks():
            quantize_sums(avg, reg, current, out[block].reshape(avg.shape))
        return out

    def average_strategy(self, fallback: str = "uniform") -> Strategy:
        """The average strategy as a :class:`Strategy` (``fallback``: as in
        :meth:`average_policy`)."""
        return Strategy(self.problem, self.average_policy(fallback), self.iterations, self.algorithm)

    def _both_blocks(self) -> Iterator[tuple[tuple[int, slice, np.ndarray], tuple[int, slice, np.ndarray]]]:
        """:meth:`TableLayout.node_blocks` of the average sums and of the regrets, node by node."""
        return zip(self.layout.node_blocks(self.avg_sums), self.layout.node_blocks(self.regrets))

    def unaveraged_rows(self) -> dict[str, list[int]]:
        """Per street: ``rows`` (information sets), ``unaveraged`` (rows whose average
        sums are all zero) and ``untouched`` (those whose regrets are all zero too: never
        updated)."""
        s = self.problem.tree.n_streets
        out = {"rows": [0] * s, "unaveraged": [0] * s, "untouched": [0] * s}
        for (st, _, avg), (_, _, reg) in self._both_blocks():
            empty = ~avg.any(axis=1)
            out["rows"][st] += avg.shape[0]
            out["unaveraged"][st] += int(empty.sum())
            out["untouched"][st] += int((empty & ~reg.any(axis=1)).sum())
        return out
