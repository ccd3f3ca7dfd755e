"""The private-card layer of the real-game walks (:mod:`solver.evaluation.real_response`):
the boards of each street, the rows (board, hand) their vectors hold, one board per
class under the permutations of the suits where the player's buckets allow, dealing a
street's cards into the rows and summing values back, and the per-hand terminal sums."""

from __future__ import annotations

import math
import weakref
from collections import OrderedDict
from itertools import combinations, permutations
from typing import Any

import numpy as np

from poker.cards import deck_cards
from poker.game import Game
from poker.state import State

from ..play.policy import TranslatedPolicy
from ._terminal import HandValues

__all__ = ["CardLayer", "card_layer"]


class CardLayer:
    """The private-card layer, board by board (from the start of the hand, or with
    ``root = (street, board)`` from a state inside it: then only that board's street and
    the later ones, values weighted by the probability of the cards dealt since the root
    rather than per deal of the whole game): per street, the boards through it (every
    street's new cards in dealing order), the rows ``(board, hand)`` laid out as
    ``board * H + hand`` over every ``H`` hands of the deck (a hand that holds a board
    card is a row of zero reach), and the per-hand terminal sums
    (:class:`solver.evaluation._terminal.HandValues`).

    With ``symmetric`` the boards are one per class under the permutations of the suits
    (Waugh 2013's suit isomorphism, applied street by street): a board's children are its
    extensions by one new card set of each orbit of its own stabilizer, and summing a
    child's values back to its parent adds the child's vector once per board of its orbit
    with the hands' suits permuted. That is exact when the player's buckets do not depend
    on the suits' names (lossless suit classes and the card abstractions do; the walker
    checks), and cuts the 20-card river's 6,840 boards to a few hundred.

    ``through``: the last street laid out (a depth-limited walk's; None: every street).
    A later street has no boards, and terminal sums exist for folds only.

    ``fixed = (street, board)``: from the start of the hand, but with the board dealt
    through ``street`` given: each street up to it has the one board (its prefix of
    ``board``), every row of a hand that holds one of ``board``'s cards is dead from the
    first street on (the hands are dealt knowing it), the later streets are enumerated,
    and values are per deal of the rest (the hands and the later cards) given ``board``:
    the mean over every such board of the values is the game's (a sampled head-to-head's
    unit, :mod:`solver.resolve.h2h`)."""

    def __init__(self, game: Game, symmetric: bool = True, root: tuple[int, tuple[int, ...]] | None = None,
                 through: int | None = None, fixed: tuple[int, tuple[int, ...]] | None = None) -> None:
        if game.num_players != 2:
            raise ValueError(f"real best response is for 2 players, the game has {game.num_players}")
        if fixed is not None and (root is not None or through is not None):
            raise ValueError("a fixed board is for a walk of the whole hand")
        if fixed is not None and len(fixed[1]) != game.board_cards_through(fixed[0]):
            raise ValueError(f"board {fixed[1]} does not hold the {game.board_cards_through(fixed[0])} cards "
                             f"dealt through street {fixed[0]}")
        if root is not None or fixed is not None:
            symmetric = False  # one root board: nothing to merge before it
        deck = deck_cards(game.num_ranks, game.num_suits)
        k = game.num_hole_cards
        self.hands: list[tuple[int, ...]] = list(combinations(deck, k))
        held = np.array(self.hands, dtype=np.int64).reshape(len(self.hands), k)
        self.n_hands = len(self.hands)
        suits = sorted({c % 4 for c in deck})
        perms = [dict(zip(suits, q)) for q in permutations(suits)] if symmetric else [{x: x for x in suits}]
        card_perm = [{c: (c // 4) * 4 + g[c % 4] for c in deck} for g in perms]
        index = {tuple(sorted(h)): i for i, h in enumerate(self.hands)}
        hand_perm = [np.array([index[tuple(sorted(cp[c] for c in h))] for h in self.hands]) for cp in card_perm]
        inverse = [np.argsort(hp) for hp in hand_perm]  # inverse[g][h]: the hand g maps to h
        self.boards: list[list[tuple[int, ...]]] = []
        self.parent: list[np.ndarray] = []  # board of street s -> its board on street s - 1
        #: per board of street s >= 1: the hand permutations that carry its values to each
        #: board of its orbit among its parent's children (the identity first)
        self.orbits: list[list[np.ndarray]] = []
        self.live: list[np.ndarray] = []  # float64[B_s * H]: 1 where the hand misses the board
        self.mult: list[np.ndarray] = []  # boards each board stands for
        self.weight: list[float] = []  # chance weight of one (board, hand, hand) deal
        prev: list[tuple[int, ...]] = [()]
        prev_stab: list[list[int]] = [list(range(len(perms)))]
        total = 1
        for s in range(game.num_rounds):
            boards, parent, orbits, stabs = [], [], [], []
            if through is not None and s > through:  # past the walk's depth: no boards
                self.boards.append([])
                self.parent.append(np.zeros(0, dtype=np.int64))
                self.orbits.append([])
                self.live.append(np.zeros(0))
                self.mult.append(np.zeros(0))
                self.weight.append(0.0)
                continue
            if root is not None and s <= root[0]:
                # a walk from a state inside the hand: the streets before it are never
                # used, its own street has the one board it was dealt
                if s == root[0]:
                    boards, parent, orbits, stabs = [tuple(root[1])], [0], [[np.arange(self.n_hands)]], [[0]]
                self.boards.append(boards)
                self.parent.append(np.array(parent, dtype=np.int64))
                self.orbits.append(orbits)
                arr = np.array(boards, dtype=np.int64).reshape(len(boards), len(boards[0]) if boards else 0)
                live = ~(held[None, :, :, None] == arr[:, None, None, :]).any(axis=(2, 3))
                self.live.append(live.astype(np.float64).ravel())
                self.mult.append(np.ones(len(boards)))
                self.weight.append(1.0)
                prev, prev_stab = (boards, stabs) if boards else (prev, prev_stab)
                continue
            if fixed is not None and s <= fixed[0]:
                # the given board: one board a street, its hands dealt knowing all of it
                board = tuple(fixed[1][: game.board_cards_through(s)])
                arr = np.array(fixed[1], dtype=np.int64).reshape(1, -1)
                live = ~(held[None, :, :, None] == arr[:, None, None, :]).any(axis=(2, 3))
                left = len(deck) - arr.shape[1]
                self.boards.append([board])
                self.parent.append(np.zeros(1, dtype=np.int64))
                self.orbits.append([[np.arange(self.n_hands)]])
                self.live.append(live.astype(np.float64).ravel())
                self.mult.append(np.ones(1))
                self.weight.append(1.0 / (math.comb(left, k) * math.comb(left - k, k)))
                prev, prev_stab = [board], [[0]]
                continue
            for pi, b in enumerate(prev):
                done: set[tuple[int, ...]] = set()
                for new in combinations([c for c in deck if c not in b], game.num_board_cards[s]):
                    if tuple(sorted(new)) in done:
                        continue
                    images: dict[tuple[int, ...], int] = {}
                    for g in prev_stab[pi]:
                        images.setdefault(tuple(sorted(card_perm[g][c] for c in new)), g)
                    done.update(images)
                    boards.append(b + new)
                    parent.append(pi)
                    orbits.append([inverse[g] for g in images.values()])
                    stabs.append([g for g in prev_stab[pi]
                                  if tuple(sorted(card_perm[g][c] for c in new)) == tuple(sorted(new))])
            total *= math.comb(len(deck) - len(prev[0]), game.num_board_cards[s])
            came = math.comb(len(deck) - len(prev[0]) - 2 * k, game.num_board_cards[s])  # given both hands
            self.boards.append(boards)
            self.parent.append(np.array(parent, dtype=np.int64))
            self.orbits.append(orbits)
            arr = np.array(boards, dtype=np.int64).reshape(len(boards), -1)
            live = ~(held[None, :, :, None] == arr[:, None, None, :]).any(axis=(2, 3))
            self.live.append(live.astype(np.float64).ravel())
            self.mult.append(np.array([len(perms) // len(st) for st in stabs], dtype=np.float64))
            left = len(deck) - arr.shape[1]
            if root is None:  # per deal: one (board, hand, hand) deal of the whole game
                self.weight.append(1.0 / (total * math.comb(left, k) * math.comb(left - k, k)))
            else:  # from the root: the probability of the cards dealt since, both hands out
                self.weight.append(self.weight[-1] / came)
            prev, prev_stab = boards, stabs
        last = np.array(self.boards[-1], dtype=np.int64).reshape(len(self.boards[-1]), game.total_board_cards)
        self.values = [HandValues(held) for _ in range(game.num_rounds - 1)] + [
            HandValues(held, last if last.shape[0] else None)]
        self.symmetric = len(perms) > 1
        self._card_perm = card_perm

    def n_rows(self, street: int) -> int:
        """Rows of ``street``."""
        return len(self.boards[street]) * self.n_hands

    def expand(self, v: np.ndarray, street: int, to: int) -> np.ndarray:
        """A vector over ``street``'s rows carried to ``to``'s (the board dealt between)."""
        for s in range(street + 1, to + 1):
            v = v.reshape(-1, self.n_hands)[self.parent[s]].ravel() * self.live[s]
        return v

    def contract(self, v: np.ndarray, street: int, to: int) -> np.ndarray:
        """Values over ``street``'s rows summed back to the rows of the earlier ``to``
        (every board of each orbit, its hands' suits permuted)."""
        for s in range(street, to, -1):
            rows = v.reshape(-1, self.n_hands)
            out = np.zeros((len(self.boards[s - 1]), self.n_hands))
            for q, perms in enumerate(self.orbits[s]):
                acc = out[self.parent[s][q]]
                for perm in perms:
                    acc += rows[q][perm]
            v = out.ravel()
        return v

    def row_weights(self, street: int) -> np.ndarray:
        """Per row: the boards its board stands for (1 without symmetry)."""
        return np.repeat(self.mult[street], self.n_hands)

    def disjoint(self, street: int, reach: np.ndarray) -> np.ndarray:
        """Per row: the reach of the other player's hands that can be dealt with it."""
        return self.values[street].disjoint(reach.reshape(-1, self.n_hands)).ravel() * self.live[street]

    def showdown(self, reach: np.ndarray) -> np.ndarray:
        """Per row of the last street: showdowns won minus lost against ``reach``."""
        return self.values[-1].showdown(reach.reshape(-1, self.n_hands)).ravel() * self.live[-1]

    def hand_value(self, state: State, street: int, r0: np.ndarray, r1: np.ndarray) -> float:
        """Seat 0's value (chips per game) at the finished ``state`` when the two seats
        reach it with ``r0`` and ``r1`` over ``street``'s rows (each board counted for
        its whole class)."""
        w, spent = self.weight[street], state.spent
        r0 = r0 * self.row_weights(street)
        if state.folded[0]:
            return -spent[0] * w * float(r0 @ self.disjoint(street, r1))
        if state.folded[1]:
            return spent[1] * w * float(r0 @ self.disjoint(street, r1))
        return min(spent) * w * float(r0 @ self.showdown(r1))

    def row_cards(self, street: int) -> np.ndarray:
        """int64[rows, hole + board]: each row's hand, then its board (clashing rows too)."""
        hands = np.array(self.hands, dtype=np.int64)
        boards = np.array(self.boards[street], dtype=np.int64).reshape(len(self.boards[street]), -1)
        n_b, n_h = boards.shape[0], hands.shape[0]
        return np.concatenate([np.tile(hands, (n_b, 1)), np.repeat(boards, n_h, axis=0)], axis=1)

    def permuted_cards(self, cards: np.ndarray, g: int) -> np.ndarray:
        """``cards`` (int64[n, m]) with the suits permuted by the ``g``-th permutation."""
        table = np.arange(52)
        for c, d in self._card_perm[g].items():
            table[c] = d
        return table[cards]


def _suit_blind(policy: TranslatedPolicy, cards: CardLayer, buckets: list[np.ndarray], samples: int = 256) -> bool:
    """Whether the player's buckets stay the same when the suits of a hand and its board
    are permuted, on ``samples`` seeded rows of each street and every permutation (the
    condition for :class:`CardLayer`'s symmetry)."""
    rng = np.random.default_rng(0)
    k = len(cards.hands[0])
    for s, b in enumerate(buckets):
        live = np.flatnonzero(cards.live[s] > 0)
        pick = live[rng.choice(live.size, size=min(samples, live.size), replace=False)]
        rows = cards.row_cards(s)[pick]
        for g in range(1, len(cards._card_perm)):
            moved = cards.permuted_cards(rows, g)
            moved[:, :k].sort(axis=1)
            if policy.bucket_batch is not None:
                got = np.asarray(policy.bucket_batch(s, np.ascontiguousarray(moved)), dtype=np.int64)
            else:
                got = np.array([policy.bucket(s, r[:k], r[k:]) for r in moved.tolist()], dtype=np.int64)
            if not np.array_equal(got, b[pick]):
                return False
    return True


#: Layers from a root kept per policy (:func:`card_layer`), the least recently used
#: dropped first: a full-deck river layer is about 60 kB, a 20-card turn's with the river
#: enumerated about 0.5 MB.
ROOT_LAYERS_KEPT = 64
_ROOT_LAYERS: weakref.WeakKeyDictionary[TranslatedPolicy, OrderedDict[Any, tuple[CardLayer, list[np.ndarray]]]] = (
    weakref.WeakKeyDictionary())


def card_layer(
    policy: TranslatedPolicy, game: Game, symmetric: bool = True, root: tuple[int, tuple[int, ...]] | None = None,
    through: int | None = None,
) -> tuple[CardLayer, list[np.ndarray]]:
    """The card layer of a walk against ``policy`` (one board per suit class where its
    buckets allow, :func:`_suit_blind`, and ``symmetric`` asks; ``root`` and ``through``:
    see :class:`CardLayer`) and the player's bucket of every row, per street. A layer
    from a ``root`` is kept for the policy (the last :data:`ROOT_LAYERS_KEPT`): a
    re-solve's alternatives walk from its root, and the exact evaluations re-solve many
    histories on the same board (neither the layer nor the buckets are changed by a
    walk)."""
    if root is not None:
        kept = _ROOT_LAYERS.get(policy)
        if kept is None:
            kept = _ROOT_LAYERS[policy] = OrderedDict()
        key = (game, int(root[0]), tuple(int(c) for c in root[1]), through)
        got = kept.get(key)
        if got is not None:
            kept.move_to_end(key)
            return got
        cards = CardLayer(game, root=root, through=through)
        got = kept[key] = (cards, [_row_buckets(policy, cards, s) for s in range(game.num_rounds)])
        while len(kept) > ROOT_LAYERS_KEPT:
            kept.popitem(last=False)
        return got
    cards = CardLayer(game, symmetric=symmetric)
    buckets = [_row_buckets(policy, cards, s) for s in range(game.num_rounds)]
    if cards.symmetric and not _suit_blind(policy, cards, buckets):
        cards = CardLayer(game, symmetric=False)  # buckets that name suits: every board
        buckets = [_row_buckets(policy, cards, s) for s in range(game.num_rounds)]
    return cards, buckets


def _row_buckets(policy: TranslatedPolicy, cards: CardLayer, street: int) -> np.ndarray:
    """The player's bucket of every row of ``street`` (0 for rows whose hand holds a board
    card: their reach is zero)."""
    if not cards.boards[street]:
        return np.zeros(0, dtype=np.int64)
    rows = cards.row_cards(street)
    live = cards.live[street] > 0
    out = np.zeros(rows.shape[0], dtype=np.int64)
    k = len(cards.hands[0])
    if policy.bucket_batch is not None:
        out[live] = np.asarray(policy.bucket_batch(street, np.ascontiguousarray(rows[live])), dtype=np.int64)
    else:
        out[live] = [policy.bucket(street, r[:k], r[k:]) for r in rows[live].tolist()]
    return out
