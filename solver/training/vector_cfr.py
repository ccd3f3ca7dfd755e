"""The vector-form CFR core: one walk of the public tree per player and iteration, with
one reach vector per player over all private hands.

:class:`VectorCFRSolver` holds the tables (cumulative regrets and average-strategy sums in
the :class:`solver.problem.Problem` layout) and runs the kernels of :mod:`solver._kernels`;
its flags choose the variant. :class:`solver.training.cfr.CFRSolver`,
:class:`solver.training.cfr.CFRPlusSolver` and the discounted ones fix the flags (the
iteration, its papers and equations are in :mod:`solver.training.cfr`), and
:class:`solver.training.history_cfr.HistoryCFRSolver` keeps its tables and policies but
replaces :meth:`VectorCFRSolver.iterate` with one scalar walk per deal.
"""

from __future__ import annotations

from enum import Enum

import numpy as np

from .. import _kernels as K
from ..problem import Problem
from ..strategy import Strategy

__all__ = ["Algorithm", "VectorCFRSolver"]


class Algorithm(Enum):
    """Which member of the CFR family a solver runs."""

    CFR = "cfr"
    CFR_PLUS = "cfr+"
    LINEAR_CFR = "lcfr"
    DISCOUNTED_CFR = "dcfr"
    PUBLIC_CHANCE_SAMPLING = "pcs"
    CHANCE_SAMPLING = "cs"


class VectorCFRSolver:
    """Vector-form CFR over one :class:`Problem`; the flags choose the variant.

    ``plus``: regret-matching+ (floor cumulative regrets at 0 after each player's
    update); ``linear``: weight iteration t's average contribution by t; ``delay``:
    iterations 1..delay do not enter the average; ``discount``: weight iteration t's
    regrets by t too (Linear CFR); ``dcfr``: Discounted CFR's (alpha, beta, gamma)
    instead (its regret discount, and ``linear``'s average weights raised to gamma).
    """

    def __init__(
        self,
        problem: Problem,
        *,
        plus: bool,
        linear: bool,
        delay: int = 0,
        discount: bool = False,
        dcfr: tuple[float, float, float] | None = None,
    ) -> None:
        if delay < 0:
            raise ValueError(f"averaging delay {delay} must not be negative")
        if dcfr is not None:
            if plus or discount or not linear:
                raise ValueError("Discounted CFR takes linear averaging, and neither plus nor discount")
            dcfr = tuple(float(x) for x in dcfr)
            if len(dcfr) != 3 or not all(np.isfinite(dcfr)):
                raise ValueError(f"Discounted CFR takes three finite numbers, alpha, beta and gamma, not {dcfr}")
        self.dcfr = dcfr
        self.problem = problem
        self.plus = bool(plus)
        self.linear = bool(linear)
        self.delay = int(delay)
        self.discount = bool(discount)
        self.iterations = 0
        self.regrets = np.zeros(problem.size)
        self.avg_sums = np.zeros(problem.size)
        self._strat = np.zeros(problem.size)
        self._buf = problem.buffers()

    @property
    def algorithm(self) -> Algorithm:
        """The named variant."""
        if self.dcfr is not None:
            return Algorithm.DISCOUNTED_CFR
        if self.discount:
            return Algorithm.LINEAR_CFR
        return Algorithm.CFR_PLUS if self.plus else Algorithm.CFR

    def iterate(self, iterations: int = 1) -> None:
        """Run ``iterations`` more iterations (all inside one kernel call)."""
        if iterations < 0:
            raise ValueError(f"iterations {iterations} must not be negative")
        if iterations == 0:
            return
        p, b = self.problem, self._buf
        alpha, beta, gamma = self.dcfr if self.dcfr is not None else (1.0, 1.0, 1.0)
        if self.dcfr is not None:
            discount = K.DISCOUNT_DCFR
        else:
            discount = K.DISCOUNT_LINEAR if self.discount else K.DISCOUNT_NONE
        K.cfr_iterations(
            p.ktree,
            p.kchance,
            self.regrets,
            self.avg_sums,
            self._strat,
            b.vals,
            b.rbuf,
            b.cs,
            b.frames,
            self.iterations,
            int(iterations),
            int(self.plus),
            K.AVG_LINEAR if self.linear else K.AVG_UNIFORM,
            self.delay,
            discount,
            alpha,
            beta,
            gamma,
        )
        self.iterations += int(iterations)

    def current_policy(self) -> np.ndarray:
        """The current strategy sigma^{t+1} (regret matching of the cumulative regrets)."""
        out = np.zeros(self.problem.size)
        K.regret_match(self.problem.ktree, self.problem.kchance, self.regrets, out, -1)
        return out

    def average_policy(self) -> np.ndarray:
        """The normalised average strategy (uniform where nothing was accumulated)."""
        out = np.zeros(self.problem.size)
        K.regret_match(self.problem.ktree, self.problem.kchance, self.avg_sums, out, -1)
        return out

    def average_strategy(self) -> Strategy:
        """The average strategy as a :class:`Strategy`."""
        return Strategy(self.problem, self.average_policy(), self.iterations, self.algorithm.value)
