"""A game ready for vector-form solving: public tree x chance layer x table layout.

One :class:`Problem` is shared by CFR, best response and the strategy file, so the
addressing ``offset[node] + bucket * n_actions[node] + action`` has one definition
(:func:`solver.tree.table_offsets`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from abstraction.betting import BettingAbstraction
from poker.game import Game, load_game

from ._kernels import KChance, KTree
from .chance import BucketFn, Chance, StrengthFn, build_chance
from .tree import Tree, build_tree, table_offsets

__all__ = ["Buffers", "Problem", "as_game", "make_problem"]


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
    """Tree, chance layer and table layout of one (abstract) game."""

    tree: Tree
    chance: Chance
    offset: np.ndarray  # int64[n_nodes]
    size: int  # entries of one table (regrets, average sums or a policy)
    ktree: KTree

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


def make_problem(
    game: Game | str | Path,
    betting: BettingAbstraction | str | None = None,
    *,
    bucket_fn: BucketFn | None = None,
    bucket_counts: Sequence[int] | None = None,
    strength: StrengthFn | None = None,
) -> Problem:
    """Build tree, chance layer and layout (lossless buckets unless a map is given)."""
    g = as_game(game)
    tree = build_tree(g, betting)
    chance = build_chance(g, bucket_fn=bucket_fn, bucket_counts=bucket_counts, strength=strength)
    offset, size = table_offsets(tree, chance.n_buckets)
    return Problem(tree=tree, chance=chance, offset=offset, size=size, ktree=tree.kernel(offset))
