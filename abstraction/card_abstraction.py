"""Card abstraction: per street a number of buckets and a deterministic function
cards -> bucket, built once (features -> k-means) and stored as centroids plus tables.

**The abstraction is a function, tables are a cache.** A street's bucket is computed
from the cards alone: the hand's feature (:mod:`abstraction.features`: river E[HS], or
the histogram of river E[HS] over the run-outs) and the nearest stored centroid
(:func:`abstraction.kmeans.nearest`). The build (:mod:`abstraction.build`) also writes,
per street, the bucket of every canonical hand (indexed by :mod:`abstraction.indexer`)
so that training looks buckets up instead of computing them;
:meth:`CardAbstraction.bucket` (from the cards) and :meth:`CardAbstraction.lookup` (from
the table) agree on every hand, which the tests check on 100,000 random hands per street.

Two families:

* **Imperfect recall** (default): each street is clustered on its own cards (Waugh et
  al., "A practical use of imperfect recall", SARA 2009; Johanson, Burch, Valenzano &
  Bowling, "Evaluating state-space abstractions in extensive-form games", AAMAS 2013):
  lossless where the bucket count equals the canonical count (preflop: 169 classes on
  the full deck), river by E[HS], earlier streets by the E[HS] histogram (L2 on the CDF
  as the earth mover's proxy, ``metric="emd"``) or by (E[HS], E[HS^2])
  (``metric="moments"``, Gilpin & Sandholm's and Johanson's features).
* **History-carrying** (``history=True``): street ``s``'s bucket is a function of the
  previous street's (history) bucket of the same hole cards on the earlier board and of
  the street's own bucket: ``h_s = pairs_s[h_{s-1}, own_s]``. The pair map clusters the
  (previous, own) pairs that occur, weighted by how many real deals produce each, on the
  feature ``(sqrt(w) * profile_{s-1}(previous), own centroid / sqrt(d_s))``, where a
  profile is a history centroid (so the chain carries every earlier street, each further
  one discounted by ``w = history_weight``). This is the hierarchical, perfect-recall
  flavour of Gilpin, Sandholm & Sorensen ("Potential-aware automated abstraction of
  sequential games", AAAI 2007) made cheap: only own-street tables are stored, and the
  chain is followed at lookup time.

This module holds the runtime lookup, :class:`CardAbstraction`: it opens a built
directory (:meth:`CardAbstraction.load`) or rebuilds the abstraction from its model alone
(:meth:`CardAbstraction.from_model`, for the model a strategy file carries), attaches a
table directory only if it was built from the same model
(:meth:`CardAbstraction.attach_tables`), and answers buckets from the cards
(:meth:`CardAbstraction.bucket`, :meth:`CardAbstraction.bucket_batch`) or from the
tables (:meth:`CardAbstraction.lookup`, :meth:`CardAbstraction.lookup_batch`). The rest
of the abstraction lives beside it: :mod:`abstraction.plan` (the parameters, and the
time and memory a build is predicted to take), :mod:`abstraction.build` (the staged
build that writes a directory, from scratch or from a model), :mod:`abstraction.model`
(the model's checks and hash, and a directory's metadata) and
:mod:`abstraction.table_cache` (tables kept per model hash).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numba
import numpy as np

from poker.cards import DECK_SIZE
from poker.game import Game

from . import features as F
from . import indexer as _indexer
from . import kmeans as _kmeans
from .indexer import HandIndexer
from .kmeans import nearest
from .model import META_FILE, _check_model, _files_hash, _load, _Model, _model_from_dir, _model_hash, _read_meta
from .plan import _METRICS, AbstractionParams

__all__ = ["CardAbstraction", "bucket_kernels"]


def bucket_kernels() -> tuple[Any, ...]:
    """The compiled kernels a bucket computed from the cards runs (the hand indexer, the
    features, the nearest centroid): for :func:`poker._compile.cold`, to tell a user that
    a player's first run compiles them."""
    return (_indexer._index_batch_kernel, F._direct, F._vectors, _kmeans._nearest_kernel)

_SERIAL_BELOW = 16  # on-the-fly batches up to this size run on the calling thread only
_MEMO_MAX = 1 << 14  # own-street buckets remembered per canonical hand (single-hand path)


class CardAbstraction:
    """A card abstraction: per street a bucket count and a function cards -> bucket.

    Open a built directory with :meth:`load`, or rebuild one from its model alone with
    :meth:`from_model`. :meth:`bucket` / :meth:`bucket_batch` compute buckets from the
    cards alone (features and the model's centroids and pair maps); :meth:`lookup` /
    :meth:`lookup_batch` use the per-street tables (the cache) when tables are attached
    and compute from the cards otherwise, with the same answers. Hands are ACPC cards,
    hole cards first, then the board in the order it was dealt (the order matters only
    with history-carrying buckets).

    ``directory`` is the directory whose tables are in use (None for a model without
    tables); ``tables_used`` says whether tables are attached and ``tables_note`` why not.
    """

    directory: Path | None
    meta: dict[str, Any]  # meta.json of the directory in use, else the model dict
    tables_note: str

    def __init__(self, directory: Path, meta: dict[str, Any], *, mmap: bool = True) -> None:
        d = Path(directory)
        self._set_model(_model_from_dir(d, meta))
        self._use_tables(d, meta, mmap)

    def _set_model(self, m: _Model) -> None:
        self.game: Game = m.game
        self.params: AbstractionParams = m.params
        self.space = F.CardSpace.from_game(self.game)
        self._model = m
        self._model_hash: str | None = None
        self._streets: list[dict[str, Any]] = m.meta["streets"]
        self._centroids = m.centroids
        self._pairs = m.pairs
        self._memo: dict[tuple[int, int], int] = {}
        self._tables: list[np.ndarray] | None = None
        self._dir_meta: dict[str, Any] | None = None
        self._content_hash: str | None = None
        self.directory = None
        self.meta = copy.deepcopy(m.meta)
        self.tables_note = "no tables given"

    def _use_tables(self, d: Path, meta: dict[str, Any], mmap: bool) -> None:
        """Attach directory ``d``'s tables (``meta`` its metadata), already known to match."""
        try:
            tables = [_load(d / st["files"]["table"], mmap) for st in meta["streets"]]
        except (KeyError, TypeError) as exc:
            raise ValueError(f"{d / META_FILE}: field {exc} is missing or malformed") from None
        for s, t in enumerate(tables):
            n = self._streets[s]["table_hands"]
            if t.shape != (n,) or t.dtype.kind not in "iu":
                raise ValueError(f"{d}: street {s}'s table has shape {t.shape} and dtype {t.dtype}, not ({n},) integers")
        self._tables = tables
        self._dir_meta = meta
        self._content_hash = str(meta["content_hash"])
        self.directory = d
        self.meta = meta
        self.tables_note = ""

    @classmethod
    def load(cls, directory: str | os.PathLike[str], *, mmap: bool = True, verify: bool = False) -> CardAbstraction:
        """Open a built abstraction; ``verify`` re-hashes the files against the metadata.

        A directory built before model hashes were recorded gets its :attr:`model_hash`
        from its files, like any other. Raises ``ValueError`` if the directory holds no
        finished abstraction, an unknown format, or (with ``verify``) files that do not
        match their content hash or model hash.
        """
        d = Path(directory)
        meta = _read_meta(d)
        ab = cls(d, meta, mmap=mmap)
        if verify and ab.compute_hash() != meta["content_hash"]:
            raise ValueError(f"{d}: files do not match the content hash in {META_FILE}")
        if verify and "model_hash" in meta and meta["model_hash"] != ab.model_hash:
            raise ValueError(f"{d}: files do not match the model hash in {META_FILE}")
        return ab

    @classmethod
    def from_model(
        cls,
        meta: dict[str, Any],
        arrays: dict[str, np.ndarray],
        tables: str | os.PathLike[str] | None = None,
        *,
        mmap: bool = True,
        verify: bool = False,
    ) -> CardAbstraction:
        """The abstraction a model computes (``meta, arrays`` as :meth:`model` returns them).

        It buckets from the cards alone; :meth:`lookup` / :meth:`lookup_batch` compute from
        the cards too unless tables are attached. ``tables``: a built directory whose tables
        are attached (:meth:`attach_tables`) only if its model hash equals this model's;
        otherwise they are ignored without error, ``tables_used`` is False and
        ``tables_note`` says why. ``meta`` may also carry ``model_hash`` (checked against
        the contents) and ``content_hash`` (the build it came from, reported by
        :attr:`content_hash` while no tables are attached); neither is part of the model.

        Raises ``ValueError`` (one line) on an unknown format, a missing, unexpected or
        misshapen array, bucket counts that do not match the centroids or pair maps, or
        figures the game and parameters do not give.
        """
        ab = cls.__new__(cls)
        ab._set_model(_check_model(meta, arrays))
        recorded = meta.get("model_hash")
        if recorded is not None and recorded != ab.model_hash:
            raise ValueError(f"model: its contents hash to {ab.model_hash}, not to its recorded {recorded}")
        if meta.get("content_hash") is not None:
            ab._content_hash = str(meta["content_hash"])
        if tables is not None:
            ab.attach_tables(tables, mmap=mmap, verify=verify)
        return ab

    def attach_tables(self, directory: str | os.PathLike[str], *, mmap: bool = True, verify: bool = False) -> bool:
        """Use ``directory``'s tables for lookups if it was built from this model.

        The directory's model hash is computed from its files (and must equal the one its
        ``meta.json`` records, if any) and compared with :attr:`model_hash`. Returns True
        if the tables are now in use. Otherwise nothing changes but ``tables_note``, which
        says why (no abstraction there, model hash differs, ...); no exception is raised.
        ``verify`` also re-hashes the directory's files against its content hash.
        """
        d = Path(directory)
        try:
            meta = _read_meta(d)
        except ValueError as exc:
            return self._refuse(str(exc))
        recorded = meta.get("model_hash")
        if recorded is not None and recorded != self.model_hash:
            return self._refuse(f"model hash differs ({d} has {str(recorded)[:19]})")
        try:
            other = _model_from_dir(d, meta)
        except (ValueError, OSError) as exc:
            return self._refuse(f"{d}: unreadable model ({str(exc).splitlines()[0] if str(exc) else exc!r})")
        h = _model_hash(other.meta, other.arrays)
        if recorded is not None and recorded != h:
            return self._refuse(f"{d}: files do not match the model hash in {META_FILE}")
        if h != self.model_hash:
            return self._refuse(f"model hash differs ({d} has {h[:19]})")
        if verify:
            try:
                ok = _files_hash(d, meta) == meta.get("content_hash")
            except (OSError, KeyError, TypeError):
                ok = False
            if not ok:
                return self._refuse(f"{d}: files do not match the content hash in {META_FILE}")
        try:
            self._use_tables(d, meta, mmap)
        except (ValueError, OSError) as exc:
            return self._refuse(f"{d}: unreadable tables ({str(exc).splitlines()[0] if str(exc) else exc!r})")
        return True

    def _refuse(self, why: str) -> bool:
        self.tables_note = why
        return False

    def compute_hash(self) -> str:
        """The content hash of the directory's files as they are now (see :attr:`content_hash`).

        Raises ``ValueError`` without a directory (a model alone has no files to hash).
        """
        if self.directory is None or self._dir_meta is None:
            raise ValueError("no table directory: a model alone has no content hash (compare model_hash)")
        return _files_hash(self.directory, self._dir_meta)

    # -- the model

    def model(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """The model: what computes a bucket from the cards, without tables or directories.

        Returns ``(meta, arrays)``. ``meta`` is a JSON/msgpack-able dict: ``format``
        (:data:`abstraction.model.MODEL_FORMAT`), ``kind``
        (:data:`abstraction.model.MODEL_KIND`), ``game`` (name and
        definition text), ``params``, ``scale`` and per street ``street``, ``name``,
        ``kind``, ``grouping``, ``table_grouping``, ``buckets``, ``own_buckets``,
        ``canonical_hands``, ``table_hands``. ``arrays``: ``centroids{s}`` (``float32[own
        buckets, dims]``, clustered streets) and ``pairs{s}`` (``[previous buckets, own
        buckets]``, the smallest unsigned dtype that holds the street's buckets; history
        streets after the first), read-only, little-endian. :meth:`from_model` is the inverse.
        """
        return copy.deepcopy(self._model.meta), dict(self._model.arrays)

    @property
    def model_hash(self) -> str:
        """``sha256:...`` of the model (:meth:`model`): sorted-key JSON of its dict, then each
        array's name, dtype, shape and little-endian bytes. Same on every machine."""
        if self._model_hash is None:
            self._model_hash = _model_hash(self._model.meta, self._model.arrays)
        return self._model_hash

    @property
    def tables_used(self) -> bool:
        """True if lookups read tables (else they compute from the cards, same answers)."""
        return self._tables is not None

    # -- description

    @property
    def content_hash(self) -> str:
        """``sha256:...`` of the game, the parameters and every file of the build in use.

        Without tables: the ``content_hash`` the model was given with, if any; else raises
        ``ValueError`` (a model alone is identified by :attr:`model_hash`).
        """
        if self._content_hash is None:
            raise ValueError("no content hash: a model without tables is identified by its model hash")
        return self._content_hash

    @property
    def num_streets(self) -> int:
        """Number of streets."""
        return self.space.num_streets

    @property
    def history(self) -> bool:
        """True for history-carrying buckets."""
        return self.params.history

    def num_buckets(self, street: int) -> int:
        """Number of buckets of ``street``."""
        return int(self._streets[self._street(street)]["buckets"])

    @property
    def bucket_counts(self) -> list[int]:
        """Buckets per street."""
        return [int(st["buckets"]) for st in self._streets]

    def bucket_fn(self, street: int, hole: Sequence[int], board: Sequence[int]) -> int:
        """The table bucket of one hand, with :mod:`solver.chance`'s ``bucket_fn`` signature."""
        return self.lookup(hole, board, street)

    def indexer(self, street: int) -> HandIndexer:
        """The indexer of ``street``'s own table (hole cards + board as a set)."""
        return self.space.indexer(self._street(street))

    def table(self, street: int) -> np.ndarray:
        """Own-street bucket of every canonical hand of ``street`` (indexed by :meth:`indexer`).

        Without history this is the street's bucket; with history, combine through
        :meth:`pair_map`. Raises ``ValueError`` if no tables are attached.
        """
        s = self._street(street)
        if self._tables is None:
            raise ValueError(f"no tables attached ({self.tables_note}); bucket_batch computes from the cards")
        return self._tables[s]

    def pair_map(self, street: int) -> np.ndarray | None:
        """History: ``pairs[previous history bucket, own bucket]`` -> bucket (None on street 0)."""
        return self._pairs[self._street(street)]

    # -- buckets

    def _street(self, street: int) -> int:
        if isinstance(street, bool) or not isinstance(street, (int, np.integer)) or not 0 <= street < self.num_streets:
            raise ValueError(f"street {street!r} is not in 0..{self.num_streets - 1}")
        return int(street)

    def _hands(self, hands: np.ndarray | Sequence[Sequence[int]], street: int | None) -> tuple[np.ndarray, int]:
        arr = np.asarray(hands)
        if arr.ndim != 2:
            raise ValueError(f"hands must be a 2-d array (hands x cards), got shape {arr.shape}")
        sp = self.space
        nb = arr.shape[1] - sp.hole
        if street is None:
            cands = [s for s in range(sp.num_streets) if sp.board_through[s] == nb]
            if len(cands) != 1:
                sizes = sorted(set(sp.board_through))
                raise ValueError(
                    f"{nb} board cards is not one street of {self.game.name or 'the game'} "
                    f"(board sizes {sizes}); pass street="
                )
            street = cands[0]
        s = self._street(street)
        if nb != sp.board_through[s]:
            raise ValueError(f"street {s} hands have {sp.hole + sp.board_through[s]} cards, got {arr.shape[1]}")
        if arr.size and (not np.issubdtype(arr.dtype, np.integer) or arr.min() < 0 or arr.max() >= DECK_SIZE):
            raise ValueError("cards must be integers in 0..51")
        arr = np.ascontiguousarray(arr, dtype=np.uint8)
        self.space.indexer(s).index_batch(arr)  # checks every card is in the deck, none repeats
        return arr, s

    def _own_cards(self, hands: np.ndarray, s: int, dedupe: bool = True) -> np.ndarray:
        """Own-street buckets from the cards: features, then the nearest centroid.

        Features do not change under a permutation of the suits, so with ``dedupe`` each
        suit-isomorphism class in the batch is computed once, on its first hand (the
        indexer only groups the hands; nothing is read from a table).
        """
        kind = self._streets[s]["kind"]
        ix = self.space.indexer(s)
        if kind == "lossless":
            return ix.index_batch(hands).astype(np.int32)
        inverse = None
        if dedupe and hands.shape[0] > 1:
            _, first, inverse = np.unique(ix.index_batch(hands), return_index=True, return_inverse=True)
            hands = hands[first]
        f = F.direct_features(self.space, hands, s, self.params.bins)
        metric = F.METRIC_EHS if kind == "ehs" else _METRICS[kind]
        x = F.feature_vectors(f.counts, f.s1, f.s2, self.space.scale, metric)
        centroids = self._centroids[s]
        assert centroids is not None  # a clustered street has centroids
        labels = nearest(x, centroids)
        return labels if inverse is None else labels[inverse.ravel()]

    def _own_memo(self, hands: np.ndarray, s: int) -> np.ndarray:
        """Own-street buckets of a few hands from the cards, remembered per canonical hand.

        An own-street bucket depends on the hand's suit-isomorphism class only, so a player
        that asks again (another decision on the street, or the next street of a history
        chain) gets it without computing the features again.
        """
        if self._streets[s]["kind"] == "lossless":
            return self._own_cards(hands, s)
        keys = self.space.indexer(s).index_batch(hands).tolist()
        memo = self._memo
        out = np.empty(len(keys), np.int32)
        todo: list[int] = []
        for i, k in enumerate(keys):
            v = memo.get((s, k))
            if v is None:
                todo.append(i)
            else:
                out[i] = v
        if todo:
            got = self._own_cards(np.ascontiguousarray(hands[todo]), s).tolist()
            if len(memo) + len(todo) > _MEMO_MAX:
                memo.clear()
            for i, v in zip(todo, got):
                out[i] = v
                memo[(s, keys[i])] = v
        return out

    def _own_table(self, hands: np.ndarray, s: int) -> np.ndarray:
        assert self._tables is not None
        return self._tables[s][self.space.indexer(s).index_batch(hands)].astype(np.int32)

    def _chain(self, hands: np.ndarray, s: int, own: Callable[[np.ndarray, int], np.ndarray]) -> np.ndarray:
        if not self.params.history:
            return own(hands, s)
        hole, bt = self.space.hole, self.space.board_through
        h = own(np.ascontiguousarray(hands[:, : hole + bt[0]]), 0)
        for t in range(1, s + 1):
            o = own(np.ascontiguousarray(hands[:, : hole + bt[t]]), t)
            pairs = self._pairs[t]
            assert pairs is not None  # history streets after the first have pair maps
            h = pairs[h, o]
        return h.astype(np.int32)

    def bucket_batch(self, hands: np.ndarray, street: int | None = None, *, dedupe: bool = True) -> np.ndarray:
        """Buckets of many hands computed from the cards alone (no table), ``int32[n]``.

        ``hands``: ``(n, hole + board)`` ACPC cards; ``street`` defaults to the street
        with that many board cards. ``dedupe=False`` computes every hand's features
        itself, even for suit-isomorphic repeats (same answers, more work; earlier
        streets of a history chain are still computed once per class). Raises
        ``ValueError`` on a card outside the deck, a repeated card, or a size that is not
        a street's.
        """
        arr, s = self._hands(hands, street)
        return self._computed(arr, s, dedupe)

    def _computed(self, arr: np.ndarray, s: int, dedupe: bool) -> np.ndarray:
        if arr.shape[0] > _SERIAL_BELOW:
            return self._chain(arr, s, lambda h, t: self._own_cards(h, t, dedupe or t < s))
        # a few hands (a player acting): own-street buckets are remembered per canonical
        # hand, and the work stays on this thread. Waking numba's other threads costs
        # nothing on an idle machine but up to a scheduler time slice (tens of ms) on a
        # busy one
        own: Callable[[np.ndarray, int], np.ndarray] = (
            lambda h, t: self._own_memo(h, t) if dedupe or t < s else self._own_cards(h, t, False)
        )
        threads = numba.get_num_threads()
        if threads == 1:
            return self._chain(arr, s, own)
        numba.set_num_threads(1)
        try:
            return self._chain(arr, s, own)
        finally:
            numba.set_num_threads(threads)

    def own_buckets(self, hands: np.ndarray, street: int) -> np.ndarray:
        """Own-street buckets of many hands computed from the cards (features, then the
        nearest centroid; the entries :meth:`table` holds for them), ``int32[n]``. With
        history, :meth:`pair_map` combines them with the previous street's bucket."""
        arr, s = self._hands(hands, street)
        return self._own_cards(arr, s).astype(np.int32)

    def lookup_batch(self, hands: np.ndarray, street: int | None = None) -> np.ndarray:
        """Buckets of many hands from the tables, ``int32[n]`` (same as :meth:`bucket_batch`);
        computed from the cards when no tables are attached."""
        arr, s = self._hands(hands, street)
        if self._tables is None:
            return self._computed(arr, s, True)
        return self._chain(arr, s, self._own_table)

    def bucket(self, hole: Sequence[int] | np.ndarray, board: Sequence[int] | np.ndarray = (),
               street: int | None = None) -> int:
        """Bucket of one hand from its cards alone (hole cards, board in dealing order)."""
        return int(self.bucket_batch(np.array([list(hole) + list(board)], np.int64), street)[0])

    def lookup(self, hole: Sequence[int] | np.ndarray, board: Sequence[int] | np.ndarray = (),
               street: int | None = None) -> int:
        """Bucket of one hand from the tables (from the cards when no tables are attached)."""
        return int(self.lookup_batch(np.array([list(hole) + list(board)], np.int64), street)[0])

    def __repr__(self) -> str:
        b = "/".join(str(st["buckets"]) for st in self._streets)
        where = f", tables {self.directory}" if self._tables is not None else ", no tables"
        return f"CardAbstraction({self.game.name or '?'}, buckets {b}{', history' if self.history else ''}{where})"
