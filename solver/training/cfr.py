"""Counterfactual regret minimisation (CFR) and CFR+ in vector form over all private hands.

CFR: Zinkevich, Johanson, Bowling and Piccione 2007, "Regret minimization in games with
incomplete information". CFR+: Tammelin 2014, "Solving large imperfect information games
using CFR+" (regret-matching+, alternating updates, linear averaging), and Tammelin,
Burch, Johanson and Bowling 2015, "Solving heads-up limit Texas hold'em", Section 3.

One iteration t (1-based), for player i = 0 then 1 (alternating updates):

1. current strategy sigma^t(I) by regret matching of the cumulative regrets
   (Zinkevich et al. 2007, Eq. 8); player 1 already sees player 0's update of step 3;
2. walk the public tree once, with one reach vector per player over private hands,
   enumerating board cards at chance nodes; at i's information sets
   I = (decision node, bucket) accumulate the counterfactual regrets
   r(I, a) += v_i(I, a) - v_i(I) (Eq. 7) and the average-strategy sums
   s(I, a) += w_t * pi_i(I) * sigma^t(I, a) (Eq. 4, weighted);
3. CFR+ only: R(I, a) = max(R(I, a), 0) for i's information sets (regret-matching+).

The average weight is w_t = 1 (CFR) or w_t = t (CFR+, linear averaging), and 0 for the
first ``delay`` iterations (with a delay d, CFR+ uses w_t = t - d). The output is the
normalised average strategy.

Linear CFR (Brown & Sandholm 2019, "Solving imperfect-information games via discounted
regret minimization", AAAI, the section "Regret discounting for CFR and its variants"):
iteration t's regrets and its average contribution both weigh t; after player i's walk
of iteration t its cumulative regrets are multiplied by t / (t + 1), which leaves every
iteration's regret weighted in proportion to its number (DCFR with alpha = beta = gamma
= 1), and the average weight is w_t = t. Regrets are not floored (that would be DCFR's
beta = -infinity, CFR+'s).

Discounted CFR, DCFR_{alpha, beta, gamma} (Brown & Sandholm 2019, the same section;
OpenSpiel's ``python/algorithms/discounted_cfr.py`` implements the same rule): on each
iteration t, after player i's walk of step 2 its positive cumulative regrets are
multiplied by t^alpha / (t^alpha + 1) and its negative ones by t^beta / (t^beta + 1),
and the contributions to the average strategy by (t / (t + 1))^gamma. The last leaves
iteration t's contribution weighted in proportion to t^gamma, so the kernel uses
w_t = t^gamma (the normalised average is the same). Regrets are not floored; regret
matching uses their positive parts. The paper recommends alpha = 3/2, beta = 0,
gamma = 2 (negative regrets halved every iteration), the defaults of
:class:`DiscountedCFRSolver`. Like OpenSpiel's, this one updates the players
alternately and walks the whole tree every iteration.

The kernels are in :mod:`solver._kernels`; :class:`CFRSolver`, :class:`CFRPlusSolver`,
:class:`LinearCFRSolver` and :class:`DiscountedCFRSolver` are named wrappers that fix the
flags of one core, :class:`solver.training.vector_cfr.VectorCFRSolver`.
:mod:`solver.training.algorithms` chooses between them (and the history form) by name.
"""

from __future__ import annotations

from ..problem import Problem
from ..strategy import Strategy
from .vector_cfr import Algorithm, VectorCFRSolver

__all__ = [
    "Algorithm",  # re-exported: it lives in solver.training.vector_cfr
    "CFRPlusSolver",
    "CFRSolver",
    "DiscountedCFRSolver",
    "LinearCFRSolver",
    "Strategy",  # re-exported for convenience: it lives in solver.strategy
]


class CFRSolver(VectorCFRSolver):
    """Vanilla CFR (Zinkevich et al. 2007) with alternating updates and uniform averaging."""

    def __init__(self, problem: Problem, *, delay: int = 0) -> None:
        super().__init__(problem, plus=False, linear=False, delay=delay)


class CFRPlusSolver(VectorCFRSolver):
    """CFR+ (Tammelin 2014): regret-matching+, alternating updates, linear averaging."""

    def __init__(self, problem: Problem, *, delay: int = 0) -> None:
        super().__init__(problem, plus=True, linear=True, delay=delay)


class LinearCFRSolver(VectorCFRSolver):
    """Linear CFR (Brown & Sandholm 2019): iteration t's regrets and average contribution
    weighted by t, alternating updates, regret matching without a floor."""

    def __init__(self, problem: Problem, *, delay: int = 0) -> None:
        super().__init__(problem, plus=False, linear=True, delay=delay, discount=True)


class DiscountedCFRSolver(VectorCFRSolver):
    """Discounted CFR (Brown & Sandholm 2019), full traversals and alternating updates:
    after each player's walk of iteration t its positive regrets are multiplied by
    t^alpha / (t^alpha + 1) and its negative ones by t^beta / (t^beta + 1); iteration t's
    average contribution weighs t^gamma. Defaults: the paper's alpha = 3/2, beta = 0,
    gamma = 2."""

    def __init__(
        self,
        problem: Problem,
        *,
        alpha: float = 1.5,
        beta: float = 0.0,
        gamma: float = 2.0,
        delay: int = 0,
    ) -> None:
        super().__init__(problem, plus=False, linear=True, delay=delay, dcfr=(alpha, beta, gamma))
