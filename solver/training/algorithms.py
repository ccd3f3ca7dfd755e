"""The one place that maps an algorithm's name to its solver.

:func:`make_solver` picks CFR or CFR+ (:mod:`solver.training.cfr`) in vector or history form
(:mod:`solver.training.history_cfr`), or Linear or Discounted CFR, or chance or public chance sampling
(:mod:`solver.training.chance_sampling`), which keep vector CFR's tables;
:func:`make_training_solver` any of :data:`ALGORITHMS`, adding external, outcome and average strategy sampling (:mod:`solver.training.mccfr`), Targeted CFR
(:mod:`solver.training.tcfr`) and Deep CFR (:mod:`solver.training.deep_cfr`), which take their shared options as one
:class:`~solver.training.sampled.SamplingOptions`; :func:`warm_up` compiles the kernels of
one by name, and :func:`solve` runs CFR or CFR+ on a game with the training loop of
:mod:`solver.training.loop`. The algorithm modules import none of this, so the solver's
imports form a tree. A whole training run (problem, checkpoints, evaluation, strategy
file) is :func:`solver.training.run.run_training`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from abstraction.betting import BettingAbstraction
from poker.game import Game

from .deep_cfr import DeepCFROptions, DeepCFRSolver, warm_traversals
from .cfr import CFRPlusSolver, CFRSolver, DiscountedCFRSolver, LinearCFRSolver
from .chance_sampling import ChanceSamplingSolver, PublicChanceSamplingSolver
from ..chance import BucketFn, StrengthFn
from .history_cfr import HistoryCFRSolver
from .mccfr import AverageStrategySamplingSolver, ExternalSamplingSolver, OutcomeSamplingSolver
from ..problem import Problem, make_problem
from .sampled import SampledCFRSolver, SamplingOptions
from ..strategy import Strategy
from .tcfr import TargetedCFRSolver
from .loop import check_budget, train
from .vector_cfr import Algorithm, VectorCFRSolver

__all__ = [
    "ALGORITHMS",
    "FORMS",
    "VECTOR_ALGORITHMS",
    "Callback",
    "make_solver",
    "make_training_solver",
    "solve",
    "warm_up",
]


#: Forms of the CFR solvers: "vector" (:mod:`solver.training.cfr`) or "history"
#: (:mod:`solver.training.history_cfr`).
FORMS = ("vector", "history")


#: Vector CFR's tables, one class each (the history form: 'cfr' and 'cfr+' only).
_VECTOR: dict[Algorithm, Callable[..., VectorCFRSolver]] = {
    Algorithm.CFR: CFRSolver,
    Algorithm.CFR_PLUS: CFRPlusSolver,
    Algorithm.LINEAR_CFR: LinearCFRSolver,
    Algorithm.DISCOUNTED_CFR: DiscountedCFRSolver,
    Algorithm.PUBLIC_CHANCE_SAMPLING: PublicChanceSamplingSolver,
    Algorithm.CHANCE_SAMPLING: ChanceSamplingSolver,
}
#: Those that draw chance, and so take a seed.
_SEEDED = (Algorithm.PUBLIC_CHANCE_SAMPLING, Algorithm.CHANCE_SAMPLING)


def make_solver(
    problem: Problem,
    algo: Algorithm | str = Algorithm.CFR_PLUS,
    *,
    delay: int = 0,
    form: str = "vector",
    seed: int | None = None,
) -> VectorCFRSolver:
    """The solver for ``algo`` (an :class:`Algorithm`: 'cfr', 'cfr+', 'lcfr', 'dcfr' (the
    paper's alpha = 3/2, beta = 0, gamma = 2), 'pcs' or 'cs') in ``form`` ('vector', the
    fast one, or 'history' for 'cfr' and 'cfr+', which repeats OpenSpiel's floating-point
    operations; small games only). ``seed``: the
    chance stream of 'pcs' and 'cs' (default 0); the others take none."""
    algo = Algorithm(algo)
    if form not in FORMS:
        raise ValueError(f"form {form!r} is not one of {', '.join(FORMS)}")
    if form == "history":
        if algo not in (Algorithm.CFR, Algorithm.CFR_PLUS):
            raise ValueError(f"the history form runs cfr and cfr+, not {algo.value}")
        return HistoryCFRSolver(problem, plus=algo is Algorithm.CFR_PLUS, delay=delay)
    if algo in _SEEDED:
        return _VECTOR[algo](problem, delay=delay, seed=0 if seed is None else seed)
    if seed is not None:
        raise ValueError(f"{algo.value} draws nothing: it takes no seed")
    return _VECTOR[algo](problem, delay=delay)


#: ``callback(solver, elapsed_seconds)`` after each batch; return True to stop early.
Callback = Callable[[VectorCFRSolver, float], "bool | None"]


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
    check_budget(iterations, seconds)
    problem = make_problem(
        game, betting, bucket_fn=bucket_fn, bucket_counts=bucket_counts, strength=strength
    )
    solver = make_solver(problem, algo, delay=delay)
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


#: The algorithms :func:`make_training_solver` builds, by name.
ALGORITHMS = ("cfr", "cfr+", "lcfr", "cs", "pcs", "es", "os", "as", "tcfr", "deep")
#: Those whose tables are vector CFR's (:func:`make_solver`).
VECTOR_ALGORITHMS = tuple(a.value for a in _VECTOR)
#: The sampled ones, which take :class:`~solver.training.sampled.SamplingOptions`.
_SAMPLED: dict[str, Callable[..., SampledCFRSolver]] = {
    "es": ExternalSamplingSolver,
    "os": OutcomeSamplingSolver,
    "as": AverageStrategySamplingSolver,
    "tcfr": TargetedCFRSolver,
}


def make_training_solver(
    problem: Problem, algorithm: str, sampling: SamplingOptions | None = None, **options: Any
) -> Any:
    """The solver of ``algorithm`` (one of :data:`ALGORITHMS`) over ``problem``.

    ``sampling``: the :class:`~solver.training.sampled.SamplingOptions` of 'es', 'os', 'as'
    and 'tcfr' (None: the defaults); the vector ones (:data:`VECTOR_ALGORITHMS`) take none.
    ``options`` are the algorithm's own and go to its constructor: ``epsilon`` and
    ``probe`` for 'os'; ``epsilon``, ``beta``, ``tau`` and ``probe`` for 'as';
    ``targeting``, ``importance``, ``close_threshold``, ``pure`` for 'tcfr'; ``delay``,
    ``form`` and ``seed`` for the vector ones (:func:`make_solver`); ``options`` (a
    :class:`~solver.training.deep_cfr.DeepCFROptions`) for 'deep'. An option the
    algorithm does not take is an error.
    """
    if algorithm in VECTOR_ALGORITHMS:
        if sampling is not None:
            raise ValueError(f"{algorithm} takes no sampling options (seed, threads, dtype, ...)")
        return make_solver(problem, algorithm, **options)
    if algorithm in _SAMPLED:
        return _SAMPLED[algorithm](problem, sampling, **options)
    if algorithm == "deep":
        if sampling is not None:
            raise ValueError("deep takes its own options, not the sampled algorithms' (threads, dtype, ...)")
        deep = options.pop("options", None)
        if options:
            raise ValueError(f"deep takes options=DeepCFROptions(...), not {', '.join(options)}")
        return DeepCFRSolver(problem, deep if deep is not None else DeepCFROptions())
    raise ValueError(f"algorithm {algorithm!r} is not one of {', '.join(ALGORITHMS)}")


_warm: set[tuple[str, str, int, str]] = set()


def warm_up(algorithm: str, sampling: SamplingOptions | None = None, form: str = "vector") -> None:
    """Compile (or load from numba's cache) the kernels ``algorithm`` runs, on Kuhn, so no
    timed loop pays for it (the kernels' types do not depend on the game). For the
    sampled algorithms what ``sampling`` decides counts (its dtype, and its threads'
    pool); for 'tcfr' that is both kernel variants: its options decide which one runs;
    ``form`` is that of 'cfr'/'cfr+'."""
    dtype, threads = "float64", 1
    if sampling is not None:
        dtype, threads = sampling.dtype, sampling.threads
    key = (algorithm, dtype, threads, form)
    if key in _warm:
        return
    problem = make_problem("kuhn.limit.2p")
    if algorithm == "deep":  # its networks compile per game, when first trained
        warm_traversals(problem)
    elif algorithm in VECTOR_ALGORITHMS:
        make_training_solver(problem, algorithm, form=form).iterate(1)
    else:
        variants: list[dict[str, Any]] = [{}]
        if algorithm == "tcfr":
            variants.append({"importance": True})
        kuhn = SamplingOptions(dtype=dtype, threads=threads)
        for options in variants:
            s = make_training_solver(problem, algorithm, kuhn, **options)
            s.iterate(2 * threads)
            s.average_policy()
    _warm.add(key)
