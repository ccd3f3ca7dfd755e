"""Training without a chance layer: the sampled algorithms deal from the deck.

A chance layer (:mod:`solver.chance`) lists every board and every hand: on full hold'em
that is terabytes, with or without a card abstraction. The sampled algorithms (external
and outcome sampling, Targeted CFR) need none of it: each iteration deals both players'
hole cards and the board from the deck (the iteration's own counter-based stream, so a
deal does not depend on threads or batches), indexes each player's hand per street
with the suit-isomorphic hand indexer (Waugh 2013) and reads its bucket from the card
abstraction's table (read into memory: :func:`load_training_abstraction`; an
abstraction without tables, rebuilt from a model, gets its tables computed from the
features and centroids where a street's canonical hands are few:
:data:`MODEL_TABLE_MAX_HANDS`), or takes the index itself as the bucket
(lossless canonical classes), and ranks both hands once for the showdown. The kernel is the one
of :mod:`solver.training._sampling_kernels` (:class:`~solver.training._sampling_kernels.KCards`).

:func:`make_dealt_problem` builds the :class:`~solver.problem.Problem` such a run trains
on: the betting tree, bucket counts and table layout of the listed problem (so a
policy trained here is addressed exactly as one trained on the chance layer, and
exact best response can evaluate it where the chance layer can be built), and an empty
chance layer. :func:`uses_dealing` says which problem a training run gets.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from abstraction.betting import BettingAbstraction
from poker.cards import deck_cards
from poker.game import Game

from .._kernels import KChance
from abstraction.index_tables import build_index_tables

from ._sampling_kernels import MAX_STREETS, KCards, no_cards, readonly
from ._sampling_bundles import no_index_tables
from ..chance import Chance, lossless_bucket_counts, lossless_indexer, num_deals
from ..problem import Problem, as_game, check_card_abstraction, make_problem
from .sampled import LIST_DEALS_UP_TO
from ..tree import build_tree, table_offsets

if TYPE_CHECKING:
    from abstraction.card_abstraction import CardAbstraction

__all__ = [
    "SAMPLED_ALGORITHMS",
    "build_cards",
    "load_training_abstraction",
    "make_dealt_problem",
    "make_training_problem",
    "no_cards",
    "uses_dealing",
]

#: The algorithms that can train without a chance layer.
SAMPLED_ALGORITHMS = ("es", "os", "as", "tcfr")


def load_training_abstraction(directory: str | Path) -> CardAbstraction:
    """The card abstraction built in ``directory``, opened for training: its files checked
    against its content hash (so a strategy records the hash of the buckets it used), and
    its bucket tables read into the process's memory instead of mapped from their files.

    The kernel reads those tables at random on every deal. Anonymous memory gets huge
    pages where the kernel's transparent huge pages allow them, so far fewer TLB misses
    than a file mapping's 4 KiB pages (``python bench/bucket_tables.py``: 5 to 7% more
    iterations a CPU second on the full deck). Raises ``ValueError`` (one
    line) where the directory holds no finished abstraction or its files do not match.
    """
    # Imported late: only a run over a card abstraction needs that package's heavier modules.
    from abstraction.card_abstraction import CardAbstraction

    return CardAbstraction.load(directory, verify=True, mmap=False)


def build_cards(game: Game, abstraction: CardAbstraction | None = None, index_tables: bool = True) -> KCards:
    """The dealing bundle of ``game``: lossless canonical classes (each street's cards a
    group of the indexer, :func:`solver.chance.lossless_indexer`) or ``abstraction``'s
    buckets, from its tables as loaded (:func:`load_training_abstraction` reads them into
    memory; no table is read here). Lossless classes come from successor tables where
    they fit (:func:`abstraction.index_tables.build_index_tables`; the same indices, about
    four times faster) unless ``index_tables`` is False.

    Raises ``ValueError`` if the abstraction has no tables attached and a street has
    too many hands to compute them from the model (``pokerbot abstract`` writes them), or
    the game has more than four streets.
    """
    n_s = game.num_rounds
    if n_s > MAX_STREETS:
        raise ValueError(f"{game.name or 'the game'} has {n_s} betting rounds; at most {MAX_STREETS}")
    pad_ix = np.zeros(1, np.int64)
    ix: list[np.ndarray] = []
    rounds = np.zeros(MAX_STREETS, np.int64)
    has_table = np.zeros(MAX_STREETS, np.int64)
    tables: list[np.ndarray] = []
    pairs: list[np.ndarray] = []
    history = 0
    succ = None
    if abstraction is None:
        indexer, per_street = lossless_indexer(game)
        for s in range(n_s):
            ix.append(np.ascontiguousarray(indexer.tables, np.int64))
            rounds[s] = per_street[s]
        if index_tables and tuple(per_street) == tuple(range(n_s)) and indexer.num_rounds == n_s:
            succ = build_index_tables(indexer)
    else:
        check_card_abstraction(game, abstraction)
        history = int(abstraction.history)
        raw = [_own_table(abstraction, s) for s in range(n_s)]
        # one dtype for every street (the kernel takes a tuple of like arrays)
        dtype = np.uint16 if all(np.can_cast(t.dtype, np.uint16) for t in raw) else np.int32
        for s in range(n_s):
            indexer = abstraction.indexer(s)
            ix.append(np.ascontiguousarray(indexer.tables, np.int64))
            rounds[s] = indexer.num_rounds - 1
            has_table[s] = 1
            t = raw[s]
            tables.append(readonly(t if t.dtype == dtype else t.astype(dtype)))
            pm = abstraction.pair_map(s) if history else None
            pairs.append(np.ascontiguousarray(pm if pm is not None else np.zeros((1, 1)), np.int32))
    pad_table = readonly(np.zeros(1, tables[0].dtype if tables else np.uint16))
    while len(ix) < MAX_STREETS:
        ix.append(pad_ix)
    while len(tables) < MAX_STREETS:
        tables.append(pad_table)
    while len(pairs) < MAX_STREETS:
        pairs.append(np.zeros((1, 1), np.int32))
    return KCards(
        dealt=1,
        deck=np.asarray(deck_cards(game.num_ranks, game.num_suits), np.int64),
        hole=int(game.num_hole_cards),
        n_board=int(sum(game.num_board_cards)),
        ix=tuple(ix),
        ix_round=rounds,
        has_table=has_table,
        table=tuple(tables),
        pairs=tuple(pairs),
        history=history,
        tabled=int(succ is not None),
        succ=succ if succ is not None else no_index_tables(),
    )


#: Without bucket tables, each street's table is computed from the abstraction's model
#: (features and centroids) over every canonical hand, up to this many hands per street
#: (20-card hold'em: at most 86,320; full hold'em's river: 123,156,254, which
#: ``pokerbot abstract`` computes far faster with its batched E[HS] pass).
MODEL_TABLE_MAX_HANDS = 2_000_000


def _own_table(abstraction: CardAbstraction, street: int) -> np.ndarray:
    """Street ``street``'s own-bucket table: the attached one (as loaded), or computed
    from the model (features and nearest centroid, per canonical hand) when no tables
    are attached and the street has at most :data:`MODEL_TABLE_MAX_HANDS` hands."""
    if abstraction.tables_used:
        return abstraction.table(street)
    indexer = abstraction.indexer(street)
    n = indexer.count()
    if n > MODEL_TABLE_MAX_HANDS:
        raise ValueError(
            f"the card abstraction has no bucket tables and street {street} has {n:,} canonical "
            f"hands (at most {MODEL_TABLE_MAX_HANDS:,} are computed from the model here): build "
            f"its tables with pokerbot abstract, or attach them"
        )
    hands = indexer.unindex_batch(np.arange(n, dtype=np.int64))
    own = abstraction.own_buckets(hands, street)
    # the dtype the build writes (uint16 where it fits): the kernel compiled for it serves
    return own.astype(np.uint16) if own.size == 0 or int(own.max()) <= 0xFFFF else own


def _empty_chance(game: Game, counts: tuple[int, ...], lossless: bool) -> Chance:
    """A chance layer with bucket counts and nothing listed (what the sampled kernel and
    regret matching read of it)."""
    n_s = game.num_rounds
    k = game.num_hole_cards
    i4 = np.int32
    kernel = KChance(
        hand_cards=np.zeros((0, k), i4),
        bs_child=np.zeros(0, i4),
        bs_n_child=np.zeros(0, i4),
        root_states=np.zeros(0, i4),
        bucket=np.zeros((0, 0), i4),
        n_buckets=np.asarray(counts, np.int64),
        sd_first=0,
        sd_order=np.zeros((0, 0), i4),
        sd_key=np.zeros((0, 0), np.int64),
        sd_len=np.zeros(0, i4),
        n_cards=int(game.deck_size),
        weight=np.array([1.0 / num_deals(game, s) for s in range(n_s)]),
    )
    return Chance(
        game=game,
        deck=tuple(deck_cards(game.num_ranks, game.num_suits)),
        hands=np.zeros((0, k), i4),
        board_street=np.zeros(0, np.int8),
        board_cards=np.zeros((0, max(1, sum(game.num_board_cards))), i4),
        n_buckets=counts,
        lossless=lossless,
        kernel=kernel,
    )


def make_dealt_problem(
    game: Game | str | Path,
    betting: BettingAbstraction | str | None = None,
    *,
    abstraction: CardAbstraction | None = None,
    index_tables: bool = True,
) -> Problem:
    """The problem of ``game`` (with ``betting`` and lossless canonical buckets or
    ``abstraction``'s) for the sampled algorithms, without a chance layer
    (``index_tables``: as :func:`build_cards`).

    Its tree, bucket counts, offsets and size are those :func:`solver.problem.make_problem`
    gives for the same arguments; ``problem.cards`` is the dealing bundle.
    """
    g = as_game(game)
    tree = build_tree(g, betting)
    if abstraction is not None:
        check_card_abstraction(g, abstraction)
        counts = tuple(int(c) for c in abstraction.bucket_counts)
    else:
        counts = tuple(int(c) for c in lossless_bucket_counts(g))
    cards = build_cards(g, abstraction, index_tables)
    offset, size = table_offsets(tree, counts)
    return Problem(
        tree=tree,
        chance=_empty_chance(g, counts, abstraction is None),
        offset=offset,
        size=size,
        ktree=tree.kernel(offset),
        abstraction=abstraction,
        cards=cards,
    )


def uses_dealing(game: Game, algorithm: str) -> bool:
    """Whether a training run of ``algorithm`` on ``game`` deals from the deck: a sampled
    algorithm on a game whose deals are too many to list (small games keep the chance
    layer, whose deals the sampled kernel draws without replacement: less variance)."""
    return algorithm in SAMPLED_ALGORITHMS and num_deals(game) > LIST_DEALS_UP_TO


def make_training_problem(
    game: Game | str | Path,
    betting: BettingAbstraction | str | None,
    algorithm: str,
    *,
    abstraction: CardAbstraction | None = None,
    deal: bool | None = None,
) -> Problem:
    """The problem a training run of ``algorithm`` uses: dealt (:func:`make_dealt_problem`)
    when ``deal`` is True, or by default when :func:`uses_dealing`; else listed."""
    g = as_game(game)
    if deal is None:
        deal = uses_dealing(g, algorithm)
    if deal:
        if algorithm not in SAMPLED_ALGORITHMS:
            raise ValueError(f"{algorithm} needs the chance layer; only {', '.join(SAMPLED_ALGORITHMS)} deal")
        return make_dealt_problem(g, betting, abstraction=abstraction)
    return make_problem(g, betting, abstraction=abstraction)
