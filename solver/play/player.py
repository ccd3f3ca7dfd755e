"""A strategy file made playable: bucket tables attached, bucket functions, the translated policy.

:mod:`solver.strategy_io` reads and checks the file format; this module turns an opened
:class:`~solver.strategy_io.StrategyFile` into what plays the real game:

* :func:`attach_tables`: where the card abstraction's bucket tables come from. Tables
  only speed bucketing up (every bucket is the same without them): none, a directory
  built by ``pokerbot abstract`` (used only where its model hash is the file's), or the
  per-user cache of tables built from the file's model (:mod:`abstraction.table_cache`:
  :data:`TABLES_AUTO` builds them there once where the model needs them,
  :data:`TABLES_CACHED` uses them if they are there);
* :func:`bucket_fn` / :func:`bucket_batch_fn`: the bucket of one hand or of many at
  once, from the cards (the lossless numbering, or the card abstraction: its tables
  where attached, else computed from the model);
* :func:`translated`: the policy played in the real game
  (:class:`solver.play.policy.TranslatedPolicy`);
* :func:`open_playable`: a file opened and its tables attached, in one call.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

# What opens and plays a file (the format, the chance layer's numbering, the policy; with
# them numba) is imported by the functions that need it: reading the table modes of a
# player spec (agent.players) must not load the solver's kernels.
if TYPE_CHECKING:
    from abstraction.build import ProgressFn
    from poker.game import Game

    from ..chance import BucketBatchFn
    from ..strategy_io import StrategyFile
    from .policy import BucketFn, TranslatedPolicy

__all__ = [
    "TABLES_AUTO",
    "TABLES_CACHED",
    "TABLE_MODES",
    "Tables",
    "attach_tables",
    "bucket_batch_fn",
    "bucket_fn",
    "open_playable",
    "translated",
]

#: ``tables``: the cached tables of the file's model, built (once, into the cache) when the
#: model needs them (:func:`abstraction.table_cache.needs_tables`).
TABLES_AUTO = "auto"
#: ``tables``: the cached tables of the file's model if they are there; never builds.
TABLES_CACHED = "cached"
#: The cache modes; any other text (or a :class:`~pathlib.Path`) names a directory.
TABLE_MODES = (TABLES_AUTO, TABLES_CACHED)
#: Where bucket tables come from: None (computed from the model), a mode, or a directory.
Tables = str | Path | None


def attach_tables(sf: StrategyFile, tables: Tables, *, progress: ProgressFn | None = None) -> None:
    """Attach bucket tables to ``sf``'s card abstraction (nothing to do for lossless
    buckets, or with ``tables`` None).

    * a directory (a :class:`~pathlib.Path`, or text other than a mode): its tables, used
      only where its model hash is the file's (else ignored; ``abstraction.tables_note``
      says why);
    * :data:`TABLES_AUTO`: the per-user cache of tables built from the file's model; built
      there first, with ``progress(stage, done, total)`` per stage, if they are missing
      and the model needs them (the full deck: 3 to 8 minutes on two cores, 2.3 GiB of
      memory, 265 MiB kept); a model that does not need them computes;
    * :data:`TABLES_CACHED`: the cached tables if they are there; never builds.

    Raises ``ValueError`` (one line) if :data:`TABLES_AUTO` must build tables and cannot
    (cache not writable, disk or memory).
    """
    ab = sf.abstraction
    if ab is None or tables is None:
        return
    if isinstance(tables, str) and tables in TABLE_MODES:
        from abstraction.table_cache import attach_cached_tables, needs_tables  # only when asked

        attach_cached_tables(ab, build=tables == TABLES_AUTO and needs_tables(ab), progress=progress)
    else:
        ab.attach_tables(tables)


def open_playable(
    path: str | Path,
    *,
    game: Game | None = None,
    tables: Tables = None,
    progress: ProgressFn | None = None,
) -> StrategyFile:
    """Open the strategy file at ``path`` (:func:`solver.strategy_io.open_strategy`;
    ``game``: refuse a file for another game) and attach its bucket tables
    (:func:`attach_tables`). Raises :class:`solver.strategy_io.StrategyFileError` on a bad
    file and ``ValueError`` on a table build that cannot run, each one line."""
    from ..strategy_io import open_strategy

    sf = open_strategy(path, game=game)
    attach_tables(sf, tables, progress=progress)
    return sf


def bucket_fn(sf: StrategyFile) -> BucketFn:
    """``bucket(street, hole, board)`` from the cards: the lossless numbering (canonical
    classes, or an older file's raw pairs), or the card abstraction (its tables where
    attached, else computed from the model)."""
    from ..chance import lossless_bucket, raw_lossless_bucket

    ab = sf.abstraction
    if ab is None:
        game = sf.game
        if sf.numbering == "raw":
            return lambda street, hole, board: raw_lossless_bucket(game, street, hole, board)
        return lambda street, hole, board: lossless_bucket(game, street, hole, board)
    if getattr(ab, "tables_used", True):
        return lambda street, hole, board: ab.lookup(hole, board, street)
    return lambda street, hole, board: ab.bucket(hole, board, street)


def bucket_batch_fn(sf: StrategyFile) -> BucketBatchFn:
    """``bucket_batch(street, cards)`` for many hands at once (``cards[i]``: hole cards,
    then the board in dealing order): the card abstraction's batch lookup (tables where
    attached, else computed from the model, each suit-isomorphism class once), or the
    lossless numbering (the hand indexer on the whole batch; an older file's raw
    numbering hand by hand)."""
    from ..chance import lossless_indexer, raw_lossless_bucket

    ab = sf.abstraction
    if ab is not None:
        return lambda street, cards: ab.lookup_batch(cards, street)
    game, k = sf.game, sf.game.num_hole_cards
    if sf.numbering == "raw":

        def raw(street: int, cards: np.ndarray) -> np.ndarray:
            rows = cards.tolist()
            return np.array([raw_lossless_bucket(game, street, r[:k], r[k:]) for r in rows], dtype=np.int64)

        return raw
    indexer, per_street = lossless_indexer(game)
    return lambda street, cards: indexer.index_batch(cards, per_street[street])


def translated(sf: StrategyFile, mapping: str = "pseudo_harmonic", purify: float = 0.0) -> TranslatedPolicy:
    """The policy of ``sf`` played in the real game (:class:`TranslatedPolicy`): the file's
    tree and table, :func:`bucket_fn` and :func:`bucket_batch_fn`; ``mapping``: the action
    translation (:data:`abstraction.translation.MAPPINGS`); ``purify``: drop actions below
    this probability and renormalize."""
    from .policy import TranslatedPolicy

    return TranslatedPolicy(sf.tree, sf.offset, sf.table, bucket_fn(sf), mapping=mapping, purify=purify,
                            bucket_batch=bucket_batch_fn(sf))
