"""A game ready for vector-form solving: public tree x chance layer x table layout.

One :class:`Problem` is shared by CFR, best response and the strategy file, so the
addressing ``offset[node] + bucket * n_actions[node] + action`` has one definition
(:func:`solver.tree.table_offsets`). With a card abstraction
(:class:`abstraction.card_abstraction.CardAbstraction`) the buckets are the
abstraction's, looked up once per (board state, hand) into the chance layer's table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from abstraction.betting import BettingAbstraction
from poker.game import Game, load_game

from ._kernels import KChance, KTree
from .chance import BucketFn, Chance, StrengthFn, build_chance
from .tree import Tree, build_tree, table_offsets

if TYPE_CHECKING:  # imported for types only: loading it pulls in the evaluator and features
    from abstraction.card_abstraction import CardAbstraction

    from .training._sampling_kernels import KCards

__all__ = [
    "Buffers",
    "Problem",
    "as_game",
    "card_layout",
    "check_card_abstraction",
    "make_problem",
]


def as_game(game: Game | str | Path) -> Game:
    """A :class:`Game`, loading it by name or path when given text."""
    return game if isinstance(game, Game) else load_game(game)


@dataclass(frozen=True)
class Buffers:
    """Scratch space for one walk: child values per depth and action, reach and value
    vectors per depth, per-card sums, and the explicit stack of frames."""

    vals: np.ndarray
    rbuf: np.ndarray
    cs: np.ndarray
    frames: np.ndarray


@dataclass(frozen=True, eq=False)
class Problem:
    """Tree, chance layer and table layout of one (abstract) game.

    ``abstraction``: the card abstraction whose buckets the chance layer holds (None for
    lossless buckets or a bucket function given directly).
    """

    tree: Tree
    chance: Chance
    offset: np.ndarray  # int64[n_nodes]
    size: int  # entries of one table (regrets, average sums or a policy)
    ktree: KTree
    abstraction: CardAbstraction | None = None
    #: Dealing from the deck (:mod:`solver.training.dealt`) instead of a listed chance layer:
    #: the chance layer is then empty and only the sampled algorithms run.
    cards: KCards | None = None

    @property
    def game(self) -> Game:
        """The game."""
        return self.tree.game

    @property
    def kchance(self) -> KChance:
        """The chance bundle the kernels take."""
        return self.chance.kernel

    def buffers(self) -> Buffers:
        """Freshly allocated scratch space for the kernels."""
        h = self.chance.n_hands
        d = self.tree.max_depth + 2
        return Buffers(
            vals=np.zeros((d, self.tree.max_actions, h)),
            rbuf=np.zeros((d, 3, h)),
            cs=np.zeros(self.chance.kernel.n_cards),
            frames=np.zeros((d, 3), dtype=np.int64),
        )

    def entry(self, node: int, bucket: int, action: int) -> int:
        """Table index of (node, bucket, action)."""
        return int(self.offset[node]) + bucket * int(self.tree.n_child[node]) + action


def card_layout(game: Game) -> str:
    """The card structure a card abstraction depends on, as text: deck, hole cards and
    board cards per street (the number of streets is the length of that list).

    >>> card_layout(load_game("leduc.limit.2p"))
    '6-card deck (3 ranks x 2 suits), 1 hole card, board 0+1'
    """

    def n(count: int, what: str) -> str:
        return f"{count} {what}{'s' if count != 1 else ''}"

    board = "+".join(str(b) for b in game.num_board_cards)
    return (
        f"{game.deck_size}-card deck ({n(game.num_ranks, 'rank')} x {n(game.num_suits, 'suit')}), "
        f"{n(game.num_hole_cards, 'hole card')}, board {board}"
    )


def check_card_abstraction(game: Game, abstraction: CardAbstraction) -> None:
    """Raise ``ValueError`` (one line) unless ``abstraction`` was built for ``game``'s
    cards: the same deck, hole cards, and board cards on each of the same number of
    streets. Betting may differ (an abstraction of leduc.limit.2p serves leduc.nolimit.2p)."""
    built = abstraction.game
    if card_layout(built) != card_layout(game):
        raise ValueError(
            f"card abstraction {abstraction.directory} was built for "
            f"{built.name or 'another game'} ({card_layout(built)}), not for "
            f"{game.name or 'this game'} ({card_layout(game)})"
        )


def make_problem(
    game: Game | str | Path,
    betting: BettingAbstraction | str | None = None,
    *,
    bucket_fn: BucketFn | None = None,
    bucket_counts: Sequence[int] | None = None,
    strength: StrengthFn | None = None,
    abstraction: CardAbstraction | None = None,
) -> Problem:
    """Build tree, chance layer and layout: lossless buckets unless a bucket map
    (``bucket_fn`` with ``bucket_counts``) or a card ``abstraction`` is given.

    The abstraction must have been built for ``game``'s cards
    (:func:`check_card_abstraction`); its buckets come from its tables
    (:meth:`CardAbstraction.lookup_batch`), which equal the buckets computed from the cards.
    """
    g = as_game(game)
    tree = build_tree(g, betting)
    if abstraction is not None:
        if bucket_fn is not None or bucket_counts is not None:
            raise ValueError("give a card abstraction or bucket_fn/bucket_counts, not both")
        check_card_abstraction(g, abstraction)
        chance = build_chance(
            g,
            bucket_counts=abstraction.bucket_counts,
            bucket_batch=lambda street, cards: abstraction.lookup_batch(cards, street),
            strength=strength,
        )
    else:
        chance = build_chance(
            g, bucket_fn=bucket_fn, bucket_counts=bucket_counts, strength=strength
        )
    offset, size = table_offsets(tree, chance.n_buckets)
    return Problem(
        tree=tree,
        chance=chance,
        offset=offset,
        size=size,
        ktree=tree.kernel(offset),
        abstraction=abstraction,
    )
