"""The chance layer of vector-form traversal: private hands, board states, bucket maps.

A *private hand* is a set of ``num_hole_cards`` cards of the (reduced) deck; hands are
numbered in lexicographic order of their deck indices (deck index ``i`` is
``poker.cards.deck_cards(...)[i]``). A *board state* is the public board on one street
(the board cards dealt so far, street by street); the board states of street ``s + 1``
that follow one of street ``s`` are numbered contiguously, so a chance node walks a range.

Every deal of both players' hands and the board through street ``s`` has the same
probability, ``weight[s] = 1 / num_deals(game, s)``, which is what lets the kernels
enumerate hands and boards without weights and multiply once at the leaves.

An information set is (decision node, bucket) where the bucket of a hand on a board state
comes from a per-street *bucket map*. The default map is lossless (no card abstraction):
the bucket is the suit-isomorphism class of the hand and the board, the index of the
project's hand indexer (:class:`abstraction.indexer.HandIndexer`, Waugh 2013) with the
hole cards and each street's new board cards a group of their own
(:func:`lossless_indexer`), so suit-isomorphic (board, hand) pairs share one bucket and
lose nothing (suit isomorphism preserves every value). Strategies written before
canonical classes numbered every (board state, hand) pair on its own (the *raw*
numbering, :func:`raw_lossless_bucket`); ``build_chance(..., numbering="raw")`` still
builds that map, to read them. A card abstraction plugs in by supplying the
bucket count per street and either ``bucket_fn(street, hole_cards, board_cards) ->
bucket`` (one call per pair) or ``bucket_batch(street, cards) -> buckets`` (one call per
street and block of pairs, ``cards[i]`` = hole cards then the board in dealing order, as
:meth:`abstraction.card_abstraction.CardAbstraction.lookup_batch` takes them); cards are
in ACPC encoding. Either way the map is computed once, here, into the flat table
``bucket[board state, hand]`` the kernels read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations
from math import comb
from typing import TYPE_CHECKING

import numpy as np

from poker.cards import deck_cards
from poker.game import Game, load_game

from ._kernels import KChance

if TYPE_CHECKING:  # the indexer module compiles numba kernels: imported where used
    from abstraction.indexer import HandIndexer

BucketFn = Callable[[int, tuple[int, ...], tuple[int, ...]], int]
#: ``bucket_batch(street, cards)``: ``cards`` is ``uint8[n, hole + board]`` (ACPC cards,
#: hole cards first, then the board in dealing order); returns ``n`` integer buckets.
BucketBatchFn = Callable[[int, np.ndarray], np.ndarray]
StrengthFn = Callable[[Sequence[int]], int]

__all__ = [
    "NUMBERINGS",
    "BucketBatchFn",
    "BucketFn",
    "Chance",
    "build_chance",
    "lossless_bucket",
    "lossless_bucket_counts",
    "lossless_indexer",
    "raw_lossless_bucket",
    "raw_lossless_bucket_counts",
]

#: Numberings of the lossless map: suit-isomorphism classes (what training uses), and the
#: raw (board state, hand) pairs of files written before them (read only).
NUMBERINGS = ("canonical", "raw")


@dataclass(frozen=True)
class Chance:
    """Hands, board states and bucket map of one game (see the module docstring).

    ``hands``: int32[H, k] deck indices; ``deck``: ACPC card of each deck index;
    ``board_street``/``board_cards``: per board state its street and its cards (deck
    indices, -1 padded); ``kernel``: the same as a :class:`KChance` bundle.
    ``lossless``: no card abstraction; its buckets are then numbered ``numbering``
    (:data:`NUMBERINGS`: ``"canonical"``, or ``"raw"`` for files older than canonical
    classes).
    """

    game: Game
    deck: tuple[int, ...]
    hands: np.ndarray
    board_street: np.ndarray
    board_cards: np.ndarray
    n_buckets: tuple[int, ...]
    lossless: bool
    kernel: KChance
    numbering: str = "canonical"

    @property
    def n_hands(self) -> int:
        """Number of private hands of one player."""
        return int(self.hands.shape[0])

    @property
    def n_board_states(self) -> int:
        """Board states over all streets."""
        return int(self.board_street.shape[0])

    def hand_text(self, h: int) -> str:
        """ACPC text of hand ``h`` (e.g. ``Ks``)."""
        from poker.cards import format_cards

        return format_cards(self.deck[i] for i in self.hands[h])


def num_deals(game: Game, street: int | None = None) -> int:
    """Number of deals of both players' hands and the board through ``street`` (default: the last)."""
    last = game.num_rounds - 1 if street is None else street
    d = game.deck_size
    k = game.num_hole_cards
    total = comb(d, k) * comb(d - k, k)
    left = d - 2 * k
    for nb in game.num_board_cards[: last + 1]:
        total *= comb(left, nb)
        left -= nb
    return total


def lossless_rounds(game: Game) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The card groups of the lossless indexer and the group holding each street's last
    new cards: ``([hole, new board cards of each street that deals some], r)``.

    >>> lossless_rounds(load_game("holdem.nolimit.2p.short20"))
    ((2, 1, 1, 1), (0, 1, 2, 3))
    >>> lossless_rounds(load_game("leduc.limit.2p"))
    ((1, 1), (0, 1))
    """
    if game.num_hole_cards < 1:
        raise ValueError(f"{game.name or 'the game'} deals no hole cards: nothing to index")
    rounds = [game.num_hole_cards]
    per_street = []
    for nb in game.num_board_cards:
        if nb > 0:
            rounds.append(nb)
        per_street.append(len(rounds) - 1)
    return tuple(rounds), tuple(per_street)


@lru_cache(maxsize=16)
def _indexer(
    rounds: tuple[int, ...], num_ranks: int, num_suits: int
) -> HandIndexer:
    from abstraction.indexer import HandIndexer

    return HandIndexer(rounds=rounds, num_ranks=num_ranks, num_suits=num_suits)


def lossless_indexer(game: Game) -> tuple[HandIndexer, tuple[int, ...]]:
    """The hand indexer of the lossless buckets and, per street ``s``, the round ``r(s)``
    whose index is the bucket (see :func:`lossless_bucket`). Hands are the hole cards,
    then the board cards in dealing order; one indexer per card layout (cached).

    >>> ix, r = lossless_indexer(load_game("leduc.limit.2p"))
    >>> ix.rounds, r, [ix.count(x) for x in r]
    ((1, 1), (0, 1), [3, 15])
    """
    rounds, per_street = lossless_rounds(game)
    return _indexer(rounds, int(game.num_ranks), int(game.num_suits)), per_street


def lossless_bucket_counts(game: Game) -> tuple[int, ...]:
    """Buckets per street of the lossless map: the canonical classes of (hole cards,
    board through the street), ``indexer.count(r(s))`` (no enumeration).

    >>> lossless_bucket_counts(load_game("leduc.limit.2p"))
    (3, 15)
    """
    indexer, per_street = lossless_indexer(game)
    return tuple(int(indexer.count(r)) for r in per_street)


def raw_lossless_bucket_counts(game: Game) -> tuple[int, ...]:
    """Buckets per street of the raw lossless numbering (files older than canonical
    classes): board states of the street times the hands that miss the board.

    >>> raw_lossless_bucket_counts(load_game("leduc.limit.2p"))
    (6, 30)
    """
    d, k = game.deck_size, game.num_hole_cards
    out = []
    boards, seen = 1, 0
    for nb in game.num_board_cards:
        boards *= comb(d - seen, nb)
        seen += nb
        out.append(boards * comb(d - seen, k))
    return tuple(out)


def _lex_rank(chosen: Sequence[int], m: int) -> int:
    """Rank of the sorted ``chosen`` positions among all subsets of ``range(m)`` of that
    size, in the lexicographic order of :func:`itertools.combinations`."""
    k = len(chosen)
    rank, prev = 0, -1
    for i, c in enumerate(chosen):
        for j in range(prev + 1, c):
            rank += comb(m - 1 - j, k - 1 - i)
        prev = c
    return rank


def _deck_positions(
    game: Game, street: int, hole: Sequence[int], board: Sequence[int]
) -> tuple[list[int], list[int], int]:
    """Deck indices of ``hole`` (sorted) and ``board``, and the deck size, after checking
    the cards (``ValueError`` names what is wrong)."""
    deck = deck_cards(game.num_ranks, game.num_suits)
    where = {c: i for i, c in enumerate(deck)}
    try:
        h_idx = sorted(where[c] for c in hole)
        b_idx = [where[c] for c in board]
    except (KeyError, TypeError) as exc:
        raise ValueError(f"card {exc.args[0]} is not in {game.name or 'the game'}'s deck") from None
    k = game.num_hole_cards
    if len(h_idx) != k or len(set(h_idx) | set(b_idx)) != k + len(b_idx):
        raise ValueError("hole and board cards must be distinct, with the game's hole-card count")
    if not 0 <= street < game.num_rounds:
        raise ValueError(f"street {street} is out of range 0..{game.num_rounds - 1}")
    if len(b_idx) != sum(game.num_board_cards[: street + 1]):
        raise ValueError(f"street {street} has {sum(game.num_board_cards[: street + 1])} board cards")
    return h_idx, b_idx, len(deck)


def lossless_bucket(game: Game, street: int, hole: Sequence[int], board: Sequence[int]) -> int:
    """The lossless bucket of ``hole`` (ACPC cards, in any order) on ``board`` (the board
    cards dealt through ``street``, in dealing order): the suit-isomorphism class of the
    hand, the index after round ``r(street)`` of :func:`lossless_indexer`, as
    :func:`build_chance` numbers it. The order of the cards within a street does not
    matter; which street dealt a card does.
    """
    _deck_positions(game, street, hole, board)
    indexer, per_street = lossless_indexer(game)
    return indexer.index([*hole, *board], per_street[street])


def raw_lossless_bucket(game: Game, street: int, hole: Sequence[int], board: Sequence[int]) -> int:
    """The raw lossless bucket of ``hole`` on ``board`` (every (board state, hand) pair its
    own bucket): the numbering of strategy files older than canonical classes, and of
    ``build_chance(..., numbering="raw")``.

    Board states of a street are numbered parent by parent, each street's new cards in
    the lexicographic order of the deck indices left; a hand's bucket is its board
    state's number times the hands that miss the board, plus its lexicographic rank
    among them.
    """
    h_idx, b_idx, n = _deck_positions(game, street, hole, board)
    k = game.num_hole_cards
    state, used, pos = 0, [], 0
    for s in range(street + 1):
        nb = game.num_board_cards[s]
        rest = [x for x in range(n) if x not in used]
        new = sorted(rest.index(x) for x in b_idx[pos : pos + nb])
        state = state * comb(len(rest), nb) + _lex_rank(new, len(rest))
        used += b_idx[pos : pos + nb]
        pos += nb
    rest = [x for x in range(n) if x not in used]
    return state * comb(len(rest), k) + _lex_rank([rest.index(x) for x in h_idx], len(rest))


#: Above this many showdowns, the default evaluator runs in batches (see build_chance).
_BATCH_SHOWDOWNS = 50_000


def _default_strength() -> StrengthFn:
    from poker.evaluator import evaluate  # imported late: only showdowns need it

    return evaluate


def build_chance(
    game: Game,
    *,
    bucket_fn: BucketFn | None = None,
    bucket_counts: Sequence[int] | None = None,
    strength: StrengthFn | None = None,
    bucket_batch: BucketBatchFn | None = None,
    numbering: str = "canonical",
) -> Chance:
    """Enumerate hands and board states of ``game`` and bucket every (board state, hand).

    ``bucket_counts`` with ``bucket_fn`` or ``bucket_batch`` (one of them): a card
    abstraction; with none of the three the map is lossless, numbered ``numbering``
    (:data:`NUMBERINGS`: canonical classes, :func:`lossless_bucket`, or the raw pairs of
    older files, :func:`raw_lossless_bucket`). ``strength``: hand
    evaluator over ACPC cards (default :func:`poker.evaluator.evaluate`), called once per
    (final board, hand). Only two-player games with one or two hole cards are supported.
    Raises ``ValueError`` if a bucket falls outside ``0 .. bucket_counts[street] - 1``.
    """
    if game.num_players != 2:
        raise ValueError(f"vector-form solving needs 2 players, game has {game.num_players}")
    if game.num_hole_cards > 2:
        raise ValueError(
            f"card removal is implemented for 1 or 2 hole cards, not {game.num_hole_cards}"
        )
    if bucket_fn is not None and bucket_batch is not None:
        raise ValueError("give bucket_fn or bucket_batch, not both")
    mapped = bucket_fn is not None or bucket_batch is not None
    if mapped != (bucket_counts is not None):
        raise ValueError(
            "give bucket_counts with bucket_fn or bucket_batch, or none of them (lossless)"
        )
    if numbering not in NUMBERINGS:
        raise ValueError(f"numbering {numbering!r} is not one of {', '.join(NUMBERINGS)}")
    if mapped and numbering != "canonical":
        raise ValueError("a numbering is for lossless buckets, not with a bucket map")
    deck = tuple(deck_cards(game.num_ranks, game.num_suits))
    n_cards = len(deck)
    k = game.num_hole_cards
    hands = np.array(list(combinations(range(n_cards), k)), dtype=np.int32).reshape(-1, k)
    n_h = hands.shape[0]
    hand_masks = [sum(1 << int(x) for x in row) for row in hands]

    # Board states street by street; children of a state are contiguous.
    streets = game.num_rounds
    states: list[tuple[int, ...]] = []
    st_street: list[int] = []
    child = []
    n_child = []
    level = [tuple(b) for b in combinations(range(n_cards), game.num_board_cards[0])]
    root_states = list(range(len(level)))
    states.extend(level)
    st_street.extend([0] * len(level))
    for s in range(1, streets):
        nxt: list[tuple[int, ...]] = []
        for b in level:
            rest = [x for x in range(n_cards) if x not in b]
            kids = [b + tuple(x) for x in combinations(rest, game.num_board_cards[s])]
            child.append(len(states) + len(nxt))
            n_child.append(len(kids))
            nxt.extend(kids)
        states.extend(nxt)
        st_street.extend([s] * len(nxt))
        level = nxt
    child.extend([-1] * len(level))
    n_child.extend([0] * len(level))
    n_bs = len(states)
    sd_first = n_bs - len(level)

    valid = np.zeros((n_bs, n_h), dtype=bool)
    for i, b in enumerate(states):
        bm = sum(1 << x for x in b)
        valid[i] = [(m & bm) == 0 for m in hand_masks]

    bucket = np.full((n_bs, n_h), -1, dtype=np.int32)
    if not mapped and numbering == "canonical":
        indexer, per_street = lossless_indexer(game)
        counts = [int(indexer.count(r)) for r in per_street]
        _fill_batched(
            bucket, valid, states, st_street, deck, hands, counts,
            lambda s, cards: indexer.index_batch(cards, per_street[s]),
        )
    elif not mapped:
        counts = [0] * streets
        for i in range(n_bs):
            s = st_street[i]
            idx = np.flatnonzero(valid[i])
            bucket[i, idx] = np.arange(counts[s], counts[s] + idx.size, dtype=np.int32)
            counts[s] += idx.size
    else:
        assert bucket_counts is not None
        counts = [int(x) for x in bucket_counts]
        if len(counts) != streets:
            raise ValueError(f"bucket_counts has {len(counts)} entries, game has {streets} streets")
        if bucket_fn is not None:
            for i, b in enumerate(states):
                s = st_street[i]
                board = tuple(deck[x] for x in b)
                for h in np.flatnonzero(valid[i]):
                    v = int(bucket_fn(s, tuple(deck[x] for x in hands[h]), board))
                    if not 0 <= v < counts[s]:
                        raise ValueError(
                            f"bucket {v} on street {s} is outside 0..{counts[s] - 1}"
                        )
                    bucket[i, h] = v
        else:
            assert bucket_batch is not None
            _fill_batched(bucket, valid, states, st_street, deck, hands, counts, bucket_batch)

    evaluate = strength or _default_strength()
    # the default evaluator, on many showdowns, ranks each final board's hands in one
    # numba call (the same ranks as poker.evaluator.evaluate): 20-card hold'em's 930,240
    # showdowns took 7 s one by one
    batch = None
    if strength is None and int(valid[sd_first:].sum()) > _BATCH_SHOWDOWNS:
        from poker.evaluator import evaluate_batch as batch
    cards = np.asarray(deck, dtype=np.uint8)
    sd_order = np.zeros((len(level), n_h), dtype=np.int32)
    sd_key = np.zeros((len(level), n_h), dtype=np.int64)
    sd_len = np.zeros(len(level), dtype=np.int32)
    for j, b in enumerate(level):
        final = [deck[x] for x in b]
        idx = np.flatnonzero(valid[sd_first + j])
        if batch is not None:
            rows = np.empty((idx.size, k + len(b)), np.uint8)
            rows[:, :k] = cards[hands[idx]]
            rows[:, k:] = final
            keys = batch(rows).astype(np.int64)
        else:
            keys = np.array(
                [evaluate([deck[x] for x in hands[h]] + final) for h in idx], dtype=np.int64
            )
        order = np.argsort(keys, kind="stable")
        sd_len[j] = idx.size
        sd_order[j, : idx.size] = idx[order]
        sd_key[j, : idx.size] = keys[order]

    width = max(1, max(len(b) for b in states))
    board_cards = np.full((n_bs, width), -1, dtype=np.int32)
    for i, b in enumerate(states):
        board_cards[i, : len(b)] = b
    kernel = KChance(
        hand_cards=hands,
        bs_child=np.asarray(child, dtype=np.int32),
        bs_n_child=np.asarray(n_child, dtype=np.int32),
        root_states=np.asarray(root_states, dtype=np.int32),
        bucket=bucket,
        n_buckets=np.asarray(counts, dtype=np.int64),
        sd_first=int(sd_first),
        sd_order=sd_order,
        sd_key=sd_key,
        sd_len=sd_len,
        n_cards=int(n_cards),
        weight=np.array([1.0 / num_deals(game, s) for s in range(streets)]),
    )
    return Chance(
        game=game,
        deck=deck,
        hands=hands,
        board_street=np.asarray(st_street, dtype=np.int8),
        board_cards=board_cards,
        n_buckets=tuple(counts),
        lossless=not mapped,
        kernel=kernel,
        numbering=numbering,
    )


#: (board state, hand) pairs per ``bucket_batch`` call: bounds the card arrays' memory.
BATCH_ROWS = 1 << 20


def _fill_batched(
    bucket: np.ndarray,
    valid: np.ndarray,
    states: Sequence[tuple[int, ...]],
    st_street: Sequence[int],
    deck: tuple[int, ...],
    hands: np.ndarray,
    counts: Sequence[int],
    bucket_batch: BucketBatchFn,
) -> None:
    """``bucket[i, h] = bucket_batch(street, cards of hand h + board state i)`` for every
    valid pair, street by street in blocks of at most :data:`BATCH_ROWS` pairs."""
    deck_arr = np.asarray(deck, dtype=np.uint8)
    street_of = np.asarray(st_street, dtype=np.int64)
    for s in range(len(counts)):
        ids = np.flatnonzero(street_of == s)
        if ids.size == 0:
            continue
        n_board = len(states[int(ids[0])])
        boards = np.array([states[int(i)] for i in ids], dtype=np.int64)
        boards = boards.reshape(ids.size, n_board)
        rows_i, rows_h = np.nonzero(valid[ids])
        for lo in range(0, rows_i.size, BATCH_ROWS):
            bi = rows_i[lo : lo + BATCH_ROWS]
            hi = rows_h[lo : lo + BATCH_ROWS]
            cards = np.ascontiguousarray(
                np.concatenate([deck_arr[hands[hi]], deck_arr[boards[bi]]], axis=1)
            )
            got = np.asarray(bucket_batch(s, cards))
            if got.shape != (bi.size,):
                raise ValueError(
                    f"bucket_batch gave {got.shape} buckets for {bi.size} hands on street {s}"
                )
            if got.size and (got.min() < 0 or got.max() >= counts[s]):
                bad = int(got.min() if got.min() < 0 else got.max())
                raise ValueError(f"bucket {bad} on street {s} is outside 0..{counts[s] - 1}")
            bucket[ids[bi], hi] = got.astype(np.int32)
