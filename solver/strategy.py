"""The strategy profile a solver outputs: one probability per table entry of a :class:`Problem`.

Every algorithm returns its average strategy as a :class:`Strategy`, and
:mod:`solver.evaluation.best_response` and :mod:`solver.strategy_io` read it; this module imports
no algorithm, so each of them can import it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from poker.game import Game

from .problem import Problem

__all__ = ["Strategy"]


@dataclass(frozen=True, eq=False)
class Strategy:
    """A strategy profile over the abstract game: ``policy[entry]`` is the probability of
    an action at an information set, addressed by :meth:`Problem.entry`.

    ``iterations`` and ``algorithm`` record how it was made (``iterations`` = 0 and
    ``algorithm`` = '' when it did not come from a solver).
    """

    problem: Problem
    policy: np.ndarray  # float64[problem.size]
    iterations: int = 0
    algorithm: str = ""

    @property
    def game(self) -> Game:
        """The game."""
        return self.problem.game

    def probabilities(self, node: int, bucket: int) -> np.ndarray:
        """Action probabilities at decision ``node`` for ``bucket`` (a copy)."""
        n = int(self.problem.tree.n_child[node])
        o = self.problem.entry(node, bucket, 0)
        return self.policy[o : o + n].copy()
