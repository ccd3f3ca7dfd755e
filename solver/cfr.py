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

The kernels are in :mod:`solver._kernels`; :class:`CFRSolver` and
:class:`CFRPlusSolver` are named wrappers that fix the flags of one core.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import numpy as np

from abstraction.betting import BettingAbstraction
from poker.game import Game

from . import _kernels as K
from .chance import BucketFn, StrengthFn
from .problem import Problem, make_problem

__all__ = [
    "FORMS",
    "Algorithm",
    "CFRPlusSolver",
    "CFRSolver",
    "Strategy",
    "make_solver",
    "solve",
]


class Algorithm(Enum):
    """Which member of the CFR family a solver runs."""

    CFR = "cfr"
    CFR_PLUS = "cfr+"


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


class _CFRSolverBase:
    """Vector-form CFR over one :class:`Problem`; the flags choose the variant.

    ``plus``: regret-matching+ (floor cumulative regrets at 0 after each player's
    update); ``linear``: weight iteration t's average contribution by t; ``delay``:
    iterations 1..delay do not enter the average.
    """

    def __init__(
        self,
        problem: Problem,
        *,
        plus: bool,
        linear: bool,
        delay: int = 0,
    ) -> None:
        if delay < 0:
            raise ValueError(f"averaging delay {delay} must not be negative")
        self.problem = problem
        self.plus = bool(plus)
        self.linear = bool(linear)
        self.delay = int(delay)
        self.iterations = 0
        self.regrets = np.zeros(problem.size)
        self.avg_sums = np.zeros(problem.size)
        self._strat = np.zeros(problem.size)
        self._buf = problem.buffers()

    @property
    def algorithm(self) -> Algorithm:
        """The named variant."""
        return Algorithm.CFR_PLUS if self.plus else Algorithm.CFR

    def iterate(self, iterations: int = 1) -> None:
        """Run ``iterations`` more iterations (all inside one kernel call)."""
        if iterations < 0:
            raise ValueError(f"iterations {iterations} must not be negative")
        if iterations == 0:
            return
        p, b = self.problem, self._buf
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


class CFRSolver(_CFRSolverBase):
    """Vanilla CFR (Zinkevich et al. 2007) with alternating updates and uniform averaging."""

    def __init__(self, problem: Problem, *, delay: int = 0) -> None:
        super().__init__(problem, plus=False, linear=False, delay=delay)


class CFRPlusSolver(_CFRSolverBase):
    """CFR+ (Tammelin 2014): regret-matching+, alternating updates, linear averaging."""

    def __init__(self, problem: Problem, *, delay: int = 0) -> None:
        super().__init__(problem, plus=True, linear=True, delay=delay)


#: Forms of the solvers: "vector" (this module) or "history" (:mod:`solver.history_cfr`).
FORMS = ("vector", "history")


def make_solver(
    problem: Problem,
    algo: Algorithm | str = Algorithm.CFR_PLUS,
    *,
    delay: int = 0,
    form: str = "vector",
) -> _CFRSolverBase:
    """The solver for ``algo`` ('cfr' or 'cfr+') in ``form`` ('vector', the fast one, or
    'history', which repeats OpenSpiel's floating-point operations; small games only)."""
    algo = Algorithm(algo)
    if form not in FORMS:
        raise ValueError(f"form {form!r} is not one of {', '.join(FORMS)}")
    if form == "history":
        from .history_cfr import HistoryCFRSolver  # it builds on this module

        return HistoryCFRSolver(problem, plus=algo is Algorithm.CFR_PLUS, delay=delay)
    if algo is Algorithm.CFR_PLUS:
        return CFRPlusSolver(problem, delay=delay)
    return CFRSolver(problem, delay=delay)


#: ``callback(solver, elapsed_seconds)`` after each batch; return True to stop early.
Callback = Callable[[_CFRSolverBase, float], "bool | None"]


def solve(
    game: Game | str | Path,
    algo: Algorithm | str = Algorithm.CFR_PLUS,
    *,
    iterations: int | None = None,
    seconds: float | None = None,
    betting: BettingAbstraction | str | None = None,
    delay: int = 0,
    callback: Callback | None = None,
    batch: int | None = None,
    bucket_fn: BucketFn | None = None,
    bucket_counts: Sequence[int] | None = None,
    strength: StrengthFn | None = None,
) -> Strategy:
    """Solve ``game`` with CFR or CFR+ and return the average strategy.

    Stop after ``iterations`` iterations, or after ``seconds`` of solving (time spent
    building the tree and compiling kernels is not counted), whichever comes first
    (at least one must be given). ``betting`` is required for no-limit games. Iterations
    run in batches of ``batch`` (default: about 0.1 s each) and ``callback(solver,
    elapsed)`` is called after each; returning True stops.

    >>> solve("kuhn.limit.2p", "cfr+", iterations=10).iterations
    10
    """
    if iterations is None and seconds is None:
        raise ValueError("give iterations=N or seconds=T (or both)")
    if iterations is not None and iterations < 0:
        raise ValueError(f"iterations {iterations} must not be negative")
    if seconds is not None and seconds < 0:
        raise ValueError(f"seconds {seconds} must not be negative")
    problem = make_problem(
        game, betting, bucket_fn=bucket_fn, bucket_counts=bucket_counts, strength=strength
    )
    solver = make_solver(problem, algo, delay=delay)
    from .mccfr import train, warm_up  # the one training loop (mccfr builds on this module)

    warm_up(Algorithm(algo).value)
    res = train(
        solver,
        iterations=iterations,
        seconds=seconds,
        callback=None if callback is None else (lambda s, r: callback(s, r.seconds)),
        batch=batch,
    )
    if res.interrupted:
        raise KeyboardInterrupt
    return solver.average_strategy()


