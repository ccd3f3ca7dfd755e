"""Monte Carlo CFR: external and outcome sampling over the public tree x per-street buckets.

Lanctot, Waugh, Zinkevich and Bowling 2009, "Monte Carlo sampling for regret
minimization in extensive games" (NIPS), Section 3. Each iteration runs one traversal
per player i = 0, 1 (alternating updates); a traversal:

1. deals the whole hand up front (both private hands and every board card: chance is
   sampled on-policy, so its probability cancels from every estimate) and looks up each
   player's bucket on every street and the showdown result once;
2. walks the betting tree with those buckets; at an information set
   I = (decision node, bucket) the current strategy is regret matching of the cumulative
   regrets (Zinkevich et al. 2007, Eq. 8);
3. updates i's regrets with sampled counterfactual values,
   r(I, a) += v~(I, a) - v~(I), where v~ is the paper's sampled counterfactual value
   (Section 3: the sum over sampled terminals z of pi_{-i}(z[I]) pi(z[I], z) u_i(z) / q(z)).

*External sampling* (:class:`ExternalSamplingSolver`): the opponent's actions are
sampled from its current strategy and every traverser action is explored, so q = pi_{-i}
and v~(I, a) is the value of the sampled subtree. Average strategy: the opponent's
average sums get sigma(I) at each of its information sets the traversal passes through
("simple" averaging; unbiased without rescaling, Gibson, Lanctot, Burch, Szafron and
Bowling 2012, "Generalized sampling and variance in counterfactual regret
minimization"). *Outcome sampling* (:class:`OutcomeSamplingSolver`): one trajectory; the
traverser samples epsilon-on-policy and the opponent's average sums get
pi_{-i} sigma(I) / q (stochastically weighted averaging, same Section 3).

*Average strategy sampling* (:class:`AverageStrategySamplingSolver`; Gibson, Burch,
Lanctot and Szafron 2012, "Efficient Monte Carlo counterfactual regret minimization in
games with many player actions", NIPS, Algorithm 1): external sampling at the opponent's
and chance's nodes, while at the traverser's each action a is explored on its own draw
with probability rho(a) = max(eps, (beta + tau s(I, a)) / (beta + sum_b s(I, b))) (capped
at 1), s the traverser's cumulative average strategy, and its value divided by rho(a);
an action left out is worth 0. Defaults are the paper's no-limit settings: eps = 0.05,
tau = 1000, beta = 10^6.

*Probing* (``probe``; Gibson, Lanctot, Burch, Szafron and Bowling 2012, AAAI, Section 5),
for outcome sampling and average strategy sampling: an action the scheme leaves out at a
traverser's node gets the payoff of one play-out of the current strategy from it (a
probe) instead of 0, and the explored ones are then not divided by their sampling
probability, so the estimate stays unbiased with less variance.

This module holds the two schemes, each a kernel configuration of the sampled core
(:mod:`solver.training.sampled`: deal tables, regret and average tables, RNG streams, Hogwild
threads), which Targeted CFR (:mod:`solver.training.tcfr`) extends too; the traversals are in
:mod:`solver.training._sampling_kernels`.
"""

from __future__ import annotations

from typing import Any

from . import _sampling_kernels as SK
from ..problem import Problem
from .sampled import SampledCFRSolver, SamplingOptions, make_config

__all__ = ["AverageStrategySamplingSolver", "ExternalSamplingSolver", "OutcomeSamplingSolver"]


class ExternalSamplingSolver(SampledCFRSolver):
    """External-sampling MCCFR (Lanctot et al. 2009, Section 3) with simple averaging.

    ``sampling``: the :class:`~solver.training.sampled.SamplingOptions` of the run."""

    algorithm = "es"

    def __init__(self, problem: Problem, sampling: SamplingOptions | None = None) -> None:
        super().__init__(problem, make_config(SK.ALG_TARGETED, problem.tree.n_streets), sampling)


class OutcomeSamplingSolver(SampledCFRSolver):
    """Outcome-sampling MCCFR (Lanctot et al. 2009, Section 3) with epsilon-on-policy
    exploration of the traverser's actions and stochastically weighted averaging.

    ``sampling``: the :class:`~solver.training.sampled.SamplingOptions` of the run;
    ``epsilon``: the exploration, in (0, 1]; ``probe``: probe the actions not sampled."""

    algorithm = "os"

    def __init__(
        self,
        problem: Problem,
        sampling: SamplingOptions | None = None,
        *,
        epsilon: float = 0.6,
        probe: bool = False,
    ) -> None:
        if not 0.0 < epsilon <= 1.0:
            raise ValueError(f"exploration epsilon {epsilon} must be in (0, 1]")
        self.epsilon = float(epsilon)
        self.probe = bool(probe)
        config = make_config(SK.ALG_OUTCOME, problem.tree.n_streets, epsilon=epsilon, probe=probe)
        super().__init__(problem, config, sampling)

    def options(self) -> dict[str, Any]:
        out = {**super().options(), "epsilon": self.epsilon}
        if self.probe:  # recorded only when set: older checkpoints read the same
            out["probe"] = True
        return out


#: Average strategy sampling's defaults (Gibson et al. 2012, NIPS, Section 5, no-limit).
AS_EPSILON, AS_BETA, AS_TAU = 0.05, 1e6, 1e3


class AverageStrategySamplingSolver(SampledCFRSolver):
    """Average strategy sampling MCCFR (Gibson et al. 2012, NIPS), optionally probing.

    ``sampling``: the :class:`~solver.training.sampled.SamplingOptions` of the run
    (pruning is refused: the scheme picks the explored actions itself); ``epsilon``,
    ``beta``, ``tau``: the exploration floor in (0, 1], beta >= 0 and tau >= 0;
    ``probe``: probe the actions left out."""

    algorithm = "as"

    def __init__(
        self,
        problem: Problem,
        sampling: SamplingOptions | None = None,
        *,
        epsilon: float = AS_EPSILON,
        beta: float = AS_BETA,
        tau: float = AS_TAU,
        probe: bool = False,
    ) -> None:
        if not 0.0 < epsilon <= 1.0:
            raise ValueError(f"exploration epsilon {epsilon} must be in (0, 1]")
        if beta < 0.0 or tau < 0.0 or beta + tau == 0.0:
            raise ValueError(f"beta {beta} and tau {tau} must not be negative, nor both 0")
        self.epsilon, self.beta, self.tau = float(epsilon), float(beta), float(tau)
        self.probe = bool(probe)
        config = make_config(
            SK.ALG_TARGETED,
            problem.tree.n_streets,
            as_epsilon=epsilon,
            as_beta=beta,
            as_tau=tau,
            probe=probe,
        )
        super().__init__(problem, config, sampling)

    def options(self) -> dict[str, Any]:
        out = {**super().options(), "epsilon": self.epsilon, "beta": self.beta, "tau": self.tau}
        if self.probe:
            out["probe"] = True
        return out
