"""A whole training run as one library call: :func:`run_training` does what ``pokerbot
train`` does, for the command line, the benchmarks and any other driver alike.

Given a :class:`~solver.training.config.TrainingConfig`, it:

1. checks the output folders, loads the game and the card abstraction (its files checked
   against its content hash; where the configuration says how to build it and its
   folder holds no finished one, builds it first, :func:`abstraction.build.build_abstraction`)
   and the checkpoint to resume;
2. refuses, before allocating anything, a run whose memory estimate
   (:mod:`solver.training.memory`) exceeds what the machine has available;
3. builds the problem (dealt from the deck where the chance layer is too big to list:
   :mod:`solver.training.dealt`) and the solver (:mod:`solver.training.algorithms`),
   restores the checkpoint and compiles the kernels outside the timed loop; when asked,
   it then makes the run's :class:`~solver.training.plan.TrainingPlan` (its predicted time
   and memory; an iterations budget is timed by a short pilot on a throwaway solver) and
   reports it with the loop's start (:func:`plan_training` makes the plan alone, for a dry
   run: it allocates no tables unless an iterations budget needs the pilot);
4. trains in timed batches (:func:`solver.training.loop.train`) until the budget, a
   total over a resumed run; SIGINT and SIGTERM (:func:`solver.training.loop.stop_on_signals`)
   or the caller's :class:`~solver.training.loop.StopRequest` only end the loop between
   batches, so the tables never hold a batch the iteration count leaves out. After each
   batch: the exploitability every ``eval_every`` seconds of solving (an exact best
   response, :mod:`solver.evaluation.best_response`, on games whose lossless table has
   at most :data:`EVAL_MAX_ENTRIES` entries; a signal stops its walks within a second and
   ends the loop there), a checkpoint every ``checkpoint.every``
   seconds, a metrics line when one is due, and a :class:`TrainingProgress` report;
5. at the end writes the checkpoint (on a stop, or when asked for), evaluates the
   average strategy (and the policy as stored, one byte per probability; SIGINT or
   SIGTERM stops the walks within a second and the file goes out without figures), appends the
   last metrics line and writes the strategy file with its training and evaluation
   records (:func:`solver.strategy_io.save_strategy`), and returns a :class:`TrainingRun`.
"""

from __future__ import annotations

import functools
import json
import signal
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from poker._compile import cold
from poker._stop import Interrupted
from poker._sysinfo import available_memory_gib, rss_gib
from poker.game import Game, load_game

from ..chance import lossless_bucket_counts
from ..evaluation.best_response import (
    NodeProgress,
    Result,
    abstract_and_real_exploitability,
    abstract_exploitability,
    exploitability,
    walks_cold,
)
from ..problem import Problem, check_card_abstraction, make_problem
from ..strategy import Strategy
from ..strategy_io import cards_record, dequantize, quantize, save_strategy
from ..tree import Tree, build_tree, table_offsets
from .algorithms import VECTOR_ALGORITHMS, make_training_solver, warm_up
from .checkpoint import Checkpoint, load_checkpoint, restore_checkpoint, save_checkpoint
from .cluster import ClusterError, ClusterLost, ClusterRunner, check_head, start_cluster
from .config import ABSTRACT_DEFAULTS, SEEDED, ConfigError, TrainingConfig
from .dealt import load_training_abstraction, make_training_problem
from .loop import StopRequest, TrainResult, stop_on_signals, table_stats, train, until_signalled
from .memory import MemoryEstimate, check_fits, estimate_training_memory
from .plan import (
    COMPILE_SECONDS,
    DEFAULT_COMPILE_SECONDS,
    EVALUATION_COMPILE_SECONDS,
    PILOT_SECONDS,
    Pilot,
    TrainingPlan,
    pilot_rate,
    predict,
)

if TYPE_CHECKING:
    from abstraction.build import ProgressFn
    from abstraction.card_abstraction import CardAbstraction
    from abstraction.plan import AbstractionParams, BuildPlan

__all__ = [
    "EVAL_MAX_ENTRIES",
    "METRICS_MAX_GAP",
    "METRICS_MIN_GAP",
    "TABLE_STATS_ENTRIES",
    "TABLE_STATS_GAP",
    "EvaluationProgress",
    "ProgressCallback",
    "TrainingPlan",
    "TrainingProgress",
    "TrainingRun",
    "load_abstraction",
    "plan_training",
    "run_training",
]

#: Exploitability is computed during training only for games whose lossless table has
#: up to this many entries (an exact best response walks every board and hand, whatever
#: the card abstraction; larger games take minutes).
EVAL_MAX_ENTRIES = 20_000_000
#: The metrics file gets at most one line per this many seconds (an evaluation's line
#: included), and at least one per ``eval_every`` seconds, capped at METRICS_MAX_GAP.
METRICS_MIN_GAP = 0.5
METRICS_MAX_GAP = 5.0
#: The first round of a cluster run aimed at seconds: this many iterations a worker (it
#: times the workers; later rounds grow at most four times each, up to the sync seconds).
FIRST_ROUND = 1000
#: Metrics lines measure the regret table (:func:`solver.training.loop.table_stats`: two
#: passes over it, ~0.1 s per 10M float32 entries) on every line for tables up to
#: TABLE_STATS_ENTRIES entries; above, at most once per TABLE_STATS_GAP seconds (and on
#: the final line), so the passes cost at most a few percent of the run.
TABLE_STATS_ENTRIES = 10_000_000
TABLE_STATS_GAP = 30.0


@dataclass(frozen=True)
class EvaluationProgress:
    """Where an exact evaluation at the end of a run is (:attr:`TrainingProgress.evaluation`):
    ``done`` of ``total`` units of its walks, (public node, board state) pairs entered
    (:func:`solver.evaluation.best_response.walk_units`), known before the walks start;
    ``what`` the strategy evaluated ('average strategy', or 'as stored': one byte per
    probability); ``compiling``: the walk kernel is compiling first (numba's cache was
    cold) and no unit is done yet."""

    what: str
    done: int
    total: int
    compiling: bool = False


@dataclass(frozen=True)
class TrainingProgress:
    """What :func:`run_training` tells its ``progress`` callback: once as the timed loop
    starts (``stage`` 'start'), after every batch ('batch'), as the final evaluation
    begins and about ten times a second while its walks run ('evaluate', with
    ``evaluation``: the units of its walks done of those in all, and ``fields`` holding
    ``evaluating``, the same as text) and once at the end ('end', after the final
    evaluation).

    ``iterations`` and ``seconds`` (of solving) are this run's; ``iterations_budget`` and
    ``seconds_budget`` what this run may do (None: no such limit); ``unit`` is ' deals'
    for the sampled algorithms (one deal an iteration), ' it' for cfr and cfr+;
    ``fields`` are display figures, by name (elapsed solving time, nodes/s, the last
    exploitability, resident memory); ``plan`` is the run's plan on the 'start' report of
    a run that made one (None otherwise).
    """

    stage: str
    algorithm: str
    unit: str
    iterations: int
    seconds: float
    iterations_budget: int | None
    seconds_budget: float | None
    fields: Mapping[str, str] = field(default_factory=dict)
    plan: TrainingPlan | None = None
    evaluation: EvaluationProgress | None = None


#: The ``progress`` argument of :func:`run_training`.
ProgressCallback = Callable[[TrainingProgress], None]


@dataclass
class TrainingRun:
    """What :func:`run_training` did.

    ``strategy`` is the average strategy (over the listed problem where it was
    evaluated; a sampled run that evaluated nothing and stores one byte per probability
    makes it when first asked for: its file was written without it); ``training`` and
    ``evaluation`` are the strategy file's records (the latter {} when nothing was
    evaluated); ``final`` and ``real`` the exploitability at
    the end in the abstract and the real game, ``stored`` and ``stored_real`` that of the
    policy as the file stores it (None where not measured); ``checkpoint`` the file
    written at the end, if any; ``interrupted`` and ``signal`` say whether a signal or
    the caller's stop request ended the loop; ``evaluation_stopped`` the signal
    (SIGINT or SIGTERM) that cut the final evaluation short, if one did: the strategy
    file is then written without the figures; ``plan`` what the run predicted of itself
    before its loop (None unless asked for).
    """

    config: TrainingConfig
    game: Game
    problem: Problem
    make_strategy: Callable[[], Strategy] = field(repr=False)
    options: dict[str, Any]
    sampled: bool
    iterations: int
    iterations_this_run: int
    seconds: float
    seconds_total: float
    nodes: int
    training: dict[str, Any]
    evaluation: dict[str, Any]
    final: Result | None
    real: Result | None
    stored: Result | None
    stored_real: Result | None
    checkpoint: Path | None
    interrupted: bool
    signal: int | None
    plan: TrainingPlan | None = None
    cluster: dict[str, Any] | None = None  # a cluster run's rounds: ClusterStats.to_dict()
    evaluation_stopped: int | None = None

    @functools.cached_property
    def strategy(self) -> Strategy:
        """The average strategy (see above)."""
        return self.make_strategy()

    @property
    def iterations_per_s(self) -> float | None:
        """This run's iterations per second of solving."""
        return self.iterations_this_run / self.seconds if self.seconds > 0 else None

    @property
    def nodes_per_s(self) -> float | None:
        """This run's nodes touched per second of solving (sampled algorithms)."""
        return self.nodes / self.seconds if self.sampled and self.seconds > 0 else None

    def listed_strategy(self) -> Strategy:
        """:attr:`strategy` over the listed problem (built here if the run dealt from the
        deck and did not evaluate), which exact evaluation needs."""
        p = self.strategy.problem
        if p.cards is None:
            return self.strategy
        listed = make_problem(self.game, self.config.betting, abstraction=p.abstraction)
        s = self.strategy
        return Strategy(listed, s.policy, s.iterations, s.algorithm)

    @property
    def cards(self) -> dict[str, Any] | None:
        """The card abstraction as the strategy file records it (None: lossless)."""
        return cards_record(self.problem) if self.config.abstraction is not None else None

    @property
    def signal_name(self) -> str | None:
        """'SIGINT', 'SIGTERM' or None."""
        return signal.Signals(self.signal).name if self.signal is not None else None


def load_abstraction(directory: str | Path | None) -> CardAbstraction | None:
    """The card abstraction in ``directory`` (None: lossless), its files checked against
    its content hash so the hash a strategy records is that of the buckets it used."""
    if directory is None:
        return None
    return load_training_abstraction(directory)


def _load_resume(path: Path | None) -> Checkpoint | None:
    """The checkpoint to resume; a missing file is a :class:`ConfigError` saying what to do."""
    if path is None:
        return None
    if not path.exists():
        raise ConfigError(
            f"--resume {path}: cannot read (no such file); a run stopped before its first "
            "checkpoint has nothing to resume: run the command without --resume to start over"
        )
    return load_checkpoint(path)


def _metrics_gap(every: float) -> float:
    """Seconds between metrics lines when no evaluation comes sooner (``every``: the
    seconds between evaluations, 0 for none)."""
    return min(max(every, METRICS_MIN_GAP), METRICS_MAX_GAP) if every > 0 else METRICS_MAX_GAP


def _stats_gap(entries: int) -> float:
    """Seconds between the metrics' passes over a table of ``entries`` (0: every line)."""
    return 0.0 if entries <= TABLE_STATS_ENTRIES else TABLE_STATS_GAP


def _quantized_file(sampled: bool, config: TrainingConfig, evaluated: bool) -> bool:
    """Whether the run makes its strategy file's bytes node by node, without the float
    policy: a sampled run storing one byte per probability that evaluates nothing."""
    return sampled and config.precision == "u8" and not evaluated


def _can_eval(config: TrainingConfig, game: Game, tree: Tree) -> bool:
    """Whether the run evaluates exactly during and at the end of its loop: small games."""
    lossless = table_offsets(tree, lossless_bucket_counts(game))[1]
    return config.evaluation.enabled and lossless <= EVAL_MAX_ENTRIES


class _Metrics:
    """The metrics file: JSON Lines appended and flushed one at a time, rate-limited."""

    def __init__(self, path: Path | None, every: float) -> None:
        self.file: IO[str] | None = None
        if path is not None:
            self.file = open(path, "a", encoding="utf-8")
        self.gap = _metrics_gap(every)
        self.last = -float("inf")

    def due(self, t: float, evaluated: bool) -> bool:
        """Whether a line is due at ``t`` seconds (an evaluation just happened)."""
        gap = t - self.last
        return self.file is not None and gap >= METRICS_MIN_GAP and (evaluated or gap >= self.gap)

    def write(self, t: float, line: dict[str, Any]) -> None:
        if self.file is None:
            return
        self.last = t
        self.file.write(json.dumps(line) + "\n")
        self.file.flush()

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None


def _figures(prefix: str, result: Result | None) -> dict[str, float | None]:
    return {
        f"{prefix}exploitability": result.exploitability if result is not None else None,
        f"{prefix}mbb_per_game": result.mbb_per_game if result is not None else None,
    }


@dataclass
class _Prepared:
    """A run checked and loaded, nothing allocated: steps 1 and 2 of the module docstring."""

    config: TrainingConfig
    game: Game
    abstraction: CardAbstraction | None
    tree: Tree  # the betting tree, as the problem will build it
    resumed: Checkpoint | None
    sampling: Any  # the SamplingOptions of es/os/as/tcfr, None for cfr/cfr+
    estimate: MemoryEstimate
    started: float  # time.perf_counter() when the run started (after building its abstraction)
    build: BuildPlan | None = None  # the card abstraction a dry run would build first

    @property
    def iterations_left(self) -> int | None:
        """The iterations the budget leaves after the checkpoint resumed (None: no such budget)."""
        n = self.config.budget.iterations
        done = self.resumed.iterations if self.resumed is not None else 0
        return None if n is None else max(0, n - done)

    @property
    def seconds_left(self) -> float | None:
        """The seconds of solving the budget leaves after the checkpoint resumed."""
        t = self.config.budget.seconds
        done = self.resumed.seconds if self.resumed is not None else 0.0
        return None if t is None else max(0.0, t - done)


@dataclass
class _Setup:
    """A run once allocated: steps 1 to 3 of the module docstring."""

    config: TrainingConfig
    game: Game
    abstraction: CardAbstraction | None
    problem: Problem
    solver: Any
    sampled: bool
    done_seconds: float  # the solving seconds of the checkpoint resumed
    plan: TrainingPlan | None = None
    runner: ClusterRunner | None = None  # the workers of a cluster run


def _pending_build(config: TrainingConfig, game: Game) -> BuildPlan | None:
    """The build of ``config.abstraction`` still to do (None: none asked for, or done):
    its plan where ``config.abstract`` says how to build it and the folder holds no
    finished abstraction; :class:`ConfigError` where the parameters do not fit the game."""
    if config.abstract is None:
        return None
    from abstraction.model import META_FILE
    from abstraction.plan import plan_build

    assert config.abstraction is not None, "TrainingConfig checks that abstract has a folder"
    if (config.abstraction / META_FILE).exists():
        return None
    try:
        return plan_build(game, config.abstract)
    except ValueError as exc:
        raise ConfigError(f"--abstract-buckets: {exc}") from None


def _check_built_as_asked(config: TrainingConfig, abstraction: CardAbstraction) -> None:
    """:class:`ConfigError` if ``abstraction`` was not built with ``config.abstract``."""
    asked = config.abstract
    if asked is None or abstraction.params == asked:
        return

    def describe(p: AbstractionParams) -> str:
        other = [
            f"{k} {v}" for k, v in p.to_json().items() if k != "buckets" and v != getattr(ABSTRACT_DEFAULTS, k)
        ]
        return ",".join(map(str, p.buckets)) + " buckets" + "".join(f", {o}" for o in other)

    raise ConfigError(
        f"--abstraction {config.abstraction} holds an abstraction of {describe(abstraction.params)}, "
        f"not the {describe(asked)} that --abstract-* ask for: name another folder, or remove "
        "this one to rebuild it"
    )


def _prepare(
    config: TrainingConfig, *, dry_run: bool = False, build_progress: ProgressFn | None = None,
    say: Callable[[str], None] | None = None,
) -> _Prepared:
    """Check, load (building the card abstraction first where it is asked for and not
    built yet, unless ``dry_run``) and refuse what cannot fit (steps 1 and 2)."""
    started = time.perf_counter()
    algo = config.algorithm.name
    game = load_game(config.game)
    build = _pending_build(config, game)
    config.check_paths(creates=config.abstraction if build is not None else None)
    if build is not None and not dry_run:
        from abstraction.build import build_abstraction

        assert config.abstraction is not None and config.abstract is not None
        report = build_abstraction(game, config.abstract, config.abstraction, progress=build_progress)
        if say is not None:
            say(f"built the card abstraction {config.abstraction} in {report.seconds:.0f} s")
        build, started = None, time.perf_counter()
    abstraction = None if build is not None else load_abstraction(config.abstraction)
    if abstraction is not None:
        check_card_abstraction(game, abstraction)  # before the memory estimate reads it
        _check_built_as_asked(config, abstraction)
    resumed = _load_resume(config.checkpoint.resume)
    sampling = config.sampling_options(resumed)
    tree = build_tree(game, config.betting)
    estimate = estimate_training_memory(
        game,
        config.betting,
        abstraction_dir=config.abstraction if build is None else None,
        buckets=build.params.buckets if build is not None else None,
        algorithm=algo,
        dtype=config.table_dtype(resumed),
        threads=config.threads,
        tree=tree,
        deep_memory=config.algorithm.deep_options(config.seed).memory if algo == "deep" else 0,
    )
    refusal = check_fits(estimate)
    if refusal is not None:
        raise ConfigError(refusal)
    return _Prepared(config, game, abstraction, tree, resumed, sampling, estimate, started, build)


def _problem(prep: _Prepared) -> Problem:
    """The run's problem, its kernels compiled."""
    c = prep.config
    # The sampled algorithms deal from the deck where the chance layer is too big to list
    # (solver.training.dealt); exact evaluation then builds the listed problem when it first runs.
    problem = make_training_problem(
        prep.game, c.betting, c.algorithm.name, abstraction=prep.abstraction
    )
    warm_up(c.algorithm.name, prep.sampling, c.algorithm.form)
    return problem


def _solver(prep: _Prepared, problem: Problem) -> Any:
    """A solver of the run, restored from the checkpoint resumed."""
    c = prep.config
    solver = make_training_solver(problem, c.algorithm.name, prep.sampling, **c.solver_options())
    if prep.resumed is not None:
        restore_checkpoint(solver, prep.resumed)
    if c.algorithm.name == "deep":  # its networks compile per game: not in the solving time
        solver.compile()
    return solver


def _pilot(
    prep: _Prepared, problem: Callable[[], Problem], seconds: float
) -> tuple[Pilot | None, str | None]:
    """The pilot an iterations budget needs (see :mod:`solver.training.plan`), run on a
    solver of its own over ``problem()``, or why not: (None, None) when none is needed."""
    left = prep.iterations_left
    if not left:
        return None, None
    if prep.config.algorithm.name == "deep":
        return None, "deep trains networks of its own size: its rate shows after the first iteration"
    if prep.config.cluster is not None:
        return None, "a cluster's rate shows after its first rounds"
    if prep.build is not None:
        return None, "a pilot needs the card abstraction, which is not built yet"
    # the pilot's tables and the run's (or the checkpoint resumed) may live at once
    if check_fits(prep.estimate, available_memory_gib() / 2) is not None:
        return None, "a pilot would need twice the memory estimate: unknown until the first batches"
    return pilot_rate(_solver(prep, problem()), left, seconds), None


def _training_kernels(algorithm: str, form: str) -> tuple[Any, ...]:
    """The compiled kernels :func:`~solver.training.algorithms.warm_up` compiles for
    ``algorithm`` (``form``: that of cfr and cfr+), those it calls first."""
    from .. import _kernels as K

    if algorithm == "deep":
        return (K.deep_traversals,)
    if algorithm in VECTOR_ALGORITHMS:
        if form == "history":
            from .history_cfr import _iterations

            return (_iterations, K.regret_match)
        entry = {"pcs": K.pcs_iterations, "cs": K.cs_iterations}.get(algorithm, K.cfr_iterations)
        return (entry, K.regret_match)
    from . import _sampling_kernels as SK

    return (SK.run_iterations, K.regret_match)


def _compile_seconds(config: TrainingConfig, evaluates: bool) -> float:
    """The compiling a run has still to do where numba's cache is cold: its training
    kernels' (compiled before the loop: only a dry run's plan has them still to come) and,
    where it ``evaluates`` exactly, the walk kernel's (measured: see
    :data:`~solver.training.plan.COMPILE_SECONDS`)."""
    seconds = 0.0
    algo = config.algorithm.name
    if cold(*_training_kernels(algo, config.algorithm.form)):
        seconds += COMPILE_SECONDS.get(algo, DEFAULT_COMPILE_SECONDS)
    if evaluates and walks_cold():
        seconds += EVALUATION_COMPILE_SECONDS
    return seconds


def _plan(prep: _Prepared, *, dry_run: bool, pilot: Pilot | None, unknown: str | None) -> TrainingPlan:
    """The plan of a prepared run, its setup timed up to now."""
    c = prep.config
    path = c.checkpoint_path
    evaluates = _can_eval(c, prep.game, prep.tree)
    every = c.eval_every
    return predict(
        algorithm=c.algorithm.name,
        memory=prep.estimate,
        setup_seconds=time.perf_counter() - prep.started,
        dry_run=dry_run,
        iterations_left=prep.iterations_left,
        seconds_left=prep.seconds_left,
        pilot=pilot,
        unknown=unknown,
        checkpoint_every=c.checkpoint.every if path is not None else None,
        checkpoint_at_end=path is not None and bool(c.checkpoint.file is not None or c.checkpoint.every),
        metrics=c.metrics is not None,
        metrics_gap=_metrics_gap(every),
        stats_gap=_stats_gap(prep.estimate.entries),
        eval_every=every if evaluates and every > 0 else None,
        final_evaluation=evaluates or c.evaluation.final,
        build=prep.build,
        quantized=_quantized_file(prep.sampling is not None, c, evaluates or c.evaluation.final),
        compile_seconds=_compile_seconds(c, evaluates or c.evaluation.final),
    )


def _setup(
    config: TrainingConfig,
    pilot_seconds: float | None = None,
    say: Callable[[str], None] | None = None,
    build_progress: ProgressFn | None = None,
) -> _Setup:
    """Check, load (building the card abstraction where asked, ``build_progress``
    getting its stages), refuse what cannot fit, allocate, restore and compile; with
    ``pilot_seconds``, also plan (the pilot first, so its tables are gone before the run's);
    on a cluster, start the workers (``say`` gets their lines)."""
    if config.cluster is not None:
        check_head(config.cluster)  # an address that cannot work is refused at once
    prep = _prepare(config, build_progress=build_progress, say=say)
    problem = _problem(prep)
    pilot, unknown = None, None
    if pilot_seconds is not None:
        pilot, unknown = _pilot(prep, lambda: problem, pilot_seconds)
    solver = _solver(prep, problem)
    runner = None
    if config.cluster is not None:
        runner = start_cluster(
            config.cluster, solver, config.algorithm.name, config.solver_options(),
            threads=config.threads, abstraction_dir=config.abstraction, say=say,
        )  # fmt: skip
    plan = None
    if pilot_seconds is not None:
        plan = _plan(prep, dry_run=False, pilot=pilot, unknown=unknown)
    done_seconds = prep.resumed.seconds if prep.resumed is not None else 0.0
    return _Setup(
        config, prep.game, prep.abstraction, problem, solver, prep.sampling is not None,
        done_seconds, plan, runner,
    )  # fmt: skip


def plan_training(config: TrainingConfig, *, pilot_seconds: float = PILOT_SECONDS) -> TrainingPlan:
    """The plan of ``config`` without running it (``pokerbot train --dry-run``): the
    checks of :func:`run_training` (paths, game, card abstraction, checkpoint, memory) and
    the :class:`~solver.training.plan.TrainingPlan`, writing nothing. A seconds budget
    allocates no table; an iterations budget runs the pilot (``pilot_seconds`` of
    iterations) where twice the memory estimate fits. A card abstraction the configuration
    would build first is not built: the plan predicts its build too (then with no pilot).
    Errors as :func:`run_training`'s."""
    prep = _prepare(config, dry_run=True)
    pilot, unknown = _pilot(prep, lambda: _problem(prep), pilot_seconds)
    return _plan(prep, dry_run=True, pilot=pilot, unknown=unknown)


#: How a run's strategy is evaluated at the end: (abstract game or None, real game).
#: Its threads are the run's, idle while it evaluates; the progress of its walks.
Evaluate = Callable[[Strategy, int, "NodeProgress | None"], "tuple[Result | None, Result]"]


def _real_only(
    strategy: Strategy, threads: int, progress: NodeProgress | None = None
) -> tuple[Result | None, Result]:
    """Past the size limit a final evaluation measures the real game only: the abstract
    responder of a card abstraction walks the tree once per level of its decisions."""
    return None, exploitability(None, strategy, threads=threads, progress=progress)


def _abstract_and_real(
    strategy: Strategy, threads: int, progress: NodeProgress | None = None
) -> tuple[Result | None, Result]:
    """Both games, on small games (exact evaluation within :data:`EVAL_MAX_ENTRIES`)."""
    return abstract_and_real_exploitability(strategy, threads=threads, progress=progress)


@dataclass
class _Ending:
    """How the loop ended, once checkpointed and evaluated."""

    checkpoint: Path | None  # written at the end
    strategy: Strategy | None  # None: not evaluated, so not made yet (see run_training)
    evaluate: Evaluate | None  # how it was evaluated (None: not)
    final: Result | None  # abstract game
    real: Result | None
    stopped: int | None = None  # the signal that cut the evaluation short


def _stoppable(
    evaluate: Evaluate, strategy: Strategy, threads: int, what: str,
    report: Callable[[EvaluationProgress], None],
) -> tuple[Result | None, Result | None, int | None]:
    """``evaluate(strategy)``, SIGINT and SIGTERM ending it within a second, its walks
    stopped at their next node (the solving is over: its tables are what matter): the two
    results and ``None``, or ``(None, None, signum)``. ``report`` hears the walks'
    progress (``what`` names the strategy evaluated) as it starts and about ten times a
    second."""
    compiling = walks_cold()

    def work(check: Callable[[], None]) -> tuple[Result | None, Result]:
        def walked(done: int, total: int) -> None:
            # a signal before the walks' stop flag was registered is seen here
            check()
            report(EvaluationProgress(what, done, total, compiling and done == 0))

        return evaluate(strategy, threads, walked)

    got, signum = until_signalled(work)
    return (None, None, signum) if got is None else (*got, None)


class _Session:
    """The timed loop of a run (step 4) and its end (step 5)."""

    def __init__(self, setup: _Setup, progress: ProgressCallback | None) -> None:
        self.setup = setup
        c = self.config = setup.config
        self.solver = setup.solver
        self.progress = progress
        self._listed: Problem | None = None
        self.can_eval = _can_eval(c, setup.game, setup.problem.tree)
        self.final_eval = c.evaluation.final
        done = self.solver.iterations
        self.left = None if c.budget.iterations is None else max(0, c.budget.iterations - done)
        # like the iterations, the seconds are the run's total: a resumed run ends where
        # the uninterrupted one would have, not a whole budget later
        seconds = c.budget.seconds
        self.seconds_left = None if seconds is None else max(0.0, seconds - setup.done_seconds)
        self.checkpoint_path = c.checkpoint_path
        # the exploitability every eval_every seconds of solving: when, and the last figure
        self.last_eval = 0.0
        self.result: Result | None = None
        self.metrics = _Metrics(c.metrics, c.eval_every)
        self.stats_gap = _stats_gap(setup.problem.size)
        self.last_stats = -float("inf")
        self.last_ckpt = 0.0
        self.request: StopRequest | None = None  # the loop's, while it runs

    def _average_strategy(self) -> Strategy:
        """The solver's average strategy; a sampled run's unaveraged rows play
        ``config.unaveraged``."""
        if self.setup.sampled:
            return self.solver.average_strategy(self.config.unaveraged)
        return self.solver.average_strategy()

    def average(self) -> Strategy:
        """The average strategy, on the listed problem (built once) if the run deals."""
        s = self._average_strategy()
        su = self.setup
        if su.problem.cards is None:
            return s
        if self._listed is None:
            self._listed = make_problem(su.game, self.config.betting, abstraction=su.abstraction)
        return Strategy(self._listed, s.policy, s.iterations, s.algorithm)

    def maybe_evaluate(self, seconds: float) -> bool:
        """Evaluate if ``eval_every`` seconds have passed since the last; whether it did."""
        every = self.config.eval_every
        if self.can_eval and every > 0 and seconds - self.last_eval >= every:
            self.last_eval = seconds
            # between batches the run's threads are idle: the walks use them
            try:
                self.result = abstract_exploitability(None, self.average(), threads=self.config.threads)
            except Interrupted as exc:
                # a signal stopped the walks (within a second): the loop ends before its
                # next batch with that signal, as between any two batches
                if self.request is not None:
                    self.request.set(exc.signum)
                return False
            return True
        return False

    def report(
        self, stage: str, res: TrainResult, fields: dict[str, str], evaluation: EvaluationProgress | None = None
    ) -> None:
        if self.progress is not None:
            plan = self.setup.plan if stage == "start" else None
            unit = " deals" if self.setup.sampled else " it"
            self.progress(
                TrainingProgress(
                    stage,
                    self.config.algorithm.name,
                    unit,
                    res.iterations,
                    res.seconds,
                    self.left,
                    self.seconds_left,
                    fields,
                    plan,
                    evaluation,
                )
            )

    def evaluating(self, res: TrainResult) -> Callable[[EvaluationProgress], None]:
        """What reports an evaluation's progress after the loop ``res``."""

        def report(e: EvaluationProgress) -> None:
            text = f"{e.what}, {e.done:,}/{e.total:,} nodes"
            self.report("evaluate", res, {"evaluating": text}, e)

        return report

    def measures(self, res: TrainResult, rss: float, final: bool = False) -> dict[str, Any]:
        """A metrics line: time, counts, speeds, memory and (when due) the table's figures."""
        per_s = res.iterations / res.seconds if res.seconds > 0 else None
        line: dict[str, Any] = {
            "t": round(self.setup.done_seconds + res.seconds, 3),
            "iterations": int(self.solver.iterations),
            "iterations_per_s": per_s,
        }
        if self.setup.sampled:
            line["deals"] = int(self.solver.iterations)
            line["deals_per_s"] = per_s
            line["nodes"] = int(res.nodes)
            line["nodes_per_deal"] = res.nodes / res.iterations if res.iterations > 0 else None
            if self.solver.sampling.discount is not None:
                line["discounts"] = self.solver.discounts
            line["nodes_per_s"] = res.nodes / res.seconds if res.seconds > 0 else None
        line["rss_gib"] = round(rss, 4)
        due = final or line["t"] - self.last_stats >= self.stats_gap
        if self.metrics.file is not None and due:
            self.last_stats = line["t"]
            st = table_stats(self.solver)
            line["infosets_visited_share"] = round(st.infosets_visited_share, 6)
            line["regret_max"] = st.regret_max
            line["regret_mean_positive"] = st.regret_mean_positive
        return line

    def after_batch(self, solver: Any, res: TrainResult) -> bool:
        """:func:`~solver.training.loop.train`'s callback: evaluation, checkpoint,
        progress and metrics when each is due; never asks to stop."""
        fields: dict[str, str] = {"t": f"{res.seconds:.1f}s"}
        if self.setup.sampled and res.seconds > 0:
            fields["nodes/s"] = f"{res.nodes / res.seconds:,.0f}"
        evaluated = self.maybe_evaluate(res.seconds)
        if self.result is not None:
            fields["expl"] = f"{self.result.mbb_per_game:.3f} mbb/g"
        rss = rss_gib()
        fields["rss"] = f"{rss:.2f} GiB"
        t = self.setup.done_seconds + res.seconds
        every = self.config.checkpoint.every
        if every and self.checkpoint_path is not None and res.seconds - self.last_ckpt >= every:
            self.last_ckpt = res.seconds
            save_checkpoint(self.checkpoint_path, solver, seconds=t)
        self.report("batch", res, fields)
        if self.metrics.due(t, evaluated):
            line = self.measures(res, rss)
            if evaluated and self.result is not None:
                line.update(_figures("", self.result))
            self.metrics.write(t, line)
        return False

    def loop(self, stop: StopRequest | None) -> TrainResult:
        """Train to the budget; signals and ``stop`` end it between batches."""
        self.report("start", TrainResult(), {})
        left, seconds_left = self.left, self.seconds_left
        if (left is not None and left <= 0) or (seconds_left is not None and seconds_left <= 0):
            return TrainResult()
        # SIGINT and SIGTERM only ask the loop to stop after the batch under way, so the
        # tables never hold a batch the iteration count leaves out
        with stop_on_signals(request=stop) as request:
            self.request = request
            return train(
                self.solver,
                iterations=left,
                seconds=seconds_left,
                callback=self.after_batch,
                stop=request,
                **self._batches(),
            )

    def _batches(self) -> dict[str, Any]:
        """How :func:`~solver.training.loop.train` sizes its batches: on a cluster a batch
        is a round (fixed, or aimed at the sync seconds from a short first round)."""
        k = self.config.cluster
        if k is None:
            return {}
        if k.sync_iterations is not None:
            return {"batch": k.sync_iterations * k.workers}
        return {"batch_seconds": k.sync_seconds, "first_batch": FIRST_ROUND * k.workers}

    def conclude(self, res: TrainResult) -> _Ending:
        """The last checkpoint, the average strategy, its evaluation and the last metrics
        line."""
        wrote = None
        c = self.config
        if self.checkpoint_path is not None and (
            res.interrupted or c.checkpoint.file is not None or c.checkpoint.every
        ):
            # first what a resumed run needs, then the evaluation (which may be long)
            t = self.setup.done_seconds + res.seconds
            save_checkpoint(self.checkpoint_path, self.solver, seconds=t)
            wrote = self.checkpoint_path
        evaluated = self.can_eval or self.final_eval
        strategy = None  # run_training writes the file without it
        if evaluated:
            strategy = self.average()
        elif not _quantized_file(self.setup.sampled, c, evaluated):
            strategy = self._average_strategy()
        evaluate: Evaluate | None = None
        if self.can_eval:
            evaluate = _abstract_and_real
        elif self.final_eval:
            evaluate = _real_only
        final, real, stopped = None, None, None
        if evaluate is not None:

            final, real, stopped = _stoppable(
                evaluate, strategy, self.config.threads, "average strategy", self.evaluating(res)
            )
            if stopped is not None:
                evaluate = None  # nothing measured: the file goes out without figures
        last = self.measures(res, rss_gib(), final=True)
        last.update(
            **_figures("", final),
            **_figures("real_", real),
            interrupted=res.interrupted,
            signal=signal.Signals(res.signal).name if res.signal is not None else None,
            evaluation_stopped=signal.Signals(stopped).name if stopped is not None else None,
            final=True,
        )
        self.metrics.write(last["t"], last)
        return _Ending(wrote, strategy, evaluate, final, real, stopped)


def _cluster_lost(setup: _Setup, exc: ClusterLost) -> ClusterError:
    """A cluster run whose head stopped answering: write the checkpoint of the rounds
    merged whole (the solver counts exactly those) and say, in one line, where it is."""
    solver, path = setup.solver, setup.config.checkpoint_path
    runner = setup.runner
    assert runner is not None
    if path is None:
        return ClusterError(f"{exc}; the run had no checkpoint file to keep its rounds in")
    if solver.iterations == 0:
        return ClusterError(f"{exc}; no round had ended, so there was nothing to checkpoint")
    # the seconds of solving are those of the rounds merged, as a batch's would be
    save_checkpoint(path, solver, seconds=setup.done_seconds + runner.stats.round_seconds)
    return ClusterError(
        f"{exc}; the checkpoint {path} holds its last whole round ({solver.iterations:,} "
        f"iterations): start the cluster again and run the same command with --resume {path}"
    )


def run_training(
    config: TrainingConfig,
    *,
    progress: ProgressCallback | None = None,
    stop: StopRequest | None = None,
    plan: bool = False,
    pilot_seconds: float = PILOT_SECONDS,
    say: Callable[[str], None] | None = None,
    build_progress: ProgressFn | None = None,
) -> TrainingRun:
    """Run ``config`` (see the module docstring) and return what it did.

    Where ``config.abstract`` asks for a card abstraction that is not built yet, the run
    builds it first (``build_progress`` gets ``(stage, done, total)`` as ``pokerbot
    abstract``'s bars do, ``say`` a line when it is done).

    ``progress`` gets a :class:`TrainingProgress` as the loop starts, after every batch
    and at the end. ``stop``: a request the caller may set (from the callback or another
    thread) to end the loop between batches, as SIGINT and SIGTERM do while the loop
    runs in the main thread; the run then checkpoints, writes the strategy and returns
    with ``interrupted`` set (and ``signal`` the request's). Errors of the configuration
    or the machine (missing folders or checkpoint, not enough memory, a checkpoint of
    another run) raise ``ValueError`` (:class:`~solver.training.config.ConfigError`,
    :class:`~solver.training.checkpoint.CheckpointError`, ...) with a one-line message.

    With ``plan`` the run makes its :class:`~solver.training.plan.TrainingPlan` after its
    setup (an iterations budget first runs a pilot of ``pilot_seconds`` on a solver of
    its own: the run's tables and results are those of a run without a plan), gives it
    to ``progress`` with the 'start' report and returns it as :attr:`TrainingRun.plan`.

    With ``config.cluster`` the run starts its Ray workers after the setup (a refusal
    raises :class:`~solver.training.cluster.ClusterError`, one line), each batch is a
    round on them, ``say`` gets a line for each worker that joins, receives the card
    abstraction, or dies and is replaced, and :attr:`TrainingRun.cluster` holds what
    the rounds moved.
    """
    setup = _setup(config, pilot_seconds if plan else None, say, build_progress)
    try:
        session = _Session(setup, progress)
        try:
            try:
                res = session.loop(stop)
            except ClusterLost as exc:
                raise _cluster_lost(setup, exc) from None
            end = session.conclude(res)
        finally:
            session.metrics.close()
    finally:
        if setup.runner is not None:
            setup.runner.close()
    final, real = end.final, end.real
    problem, solver = setup.problem, setup.solver
    strategy = end.strategy
    stored, stored_real = final, real
    stopped = end.stopped
    if end.evaluate is not None and config.precision == "u8":
        # the figures the file can claim are those of the policy it stores; on the
        # strategy's own problem (a dealt run's evaluated strategy is on the listed one,
        # whose chance layer the best response walks)
        sp = strategy.problem
        q = dequantize(quantize(strategy.policy, sp.tree, sp.offset, list(sp.chance.n_buckets)))
        as_stored = Strategy(sp, q, strategy.iterations, strategy.algorithm)

        stored, stored_real, stopped = _stoppable(
            end.evaluate, as_stored, config.threads, "as stored", session.evaluating(res)
        )
    session.report("end", res, {"expl": f"{final.mbb_per_game:.3f} mbb/g"} if final else {})
    options = solver.options() if setup.sampled or config.algorithm.name == "deep" else config.solver_options()
    training: dict[str, Any] = {
        "algorithm": config.algorithm.name,
        "iterations": int(solver.iterations),
        "seconds": round(setup.done_seconds + res.seconds, 3),
        "seed": config.seed if setup.sampled or config.algorithm.name in SEEDED else None,
        "threads": config.threads,
        "options": options,
        "recipe": config.recipe_text(),
    }
    if config.algorithm.name == "deep":
        training["deep"] = solver.record()
    if setup.sampled:
        training["unaveraged_rows"] = {**solver.unaveraged_rows(), "plays": config.unaveraged}
    if config.config_record is not None:
        training["config"] = dict(config.config_record)
    if setup.runner is not None:
        training["cluster"] = {**config.cluster.record(), **setup.runner.stats.summary()}
    evaluation: dict[str, Any] = {}
    if stored_real is not None:
        evaluation = {
            "precision": config.precision,
            **_figures("", stored),
            **_figures("real_", stored_real),
        }
    if config.out is not None:
        written = strategy
        if written is None:
            # Not evaluated, so the float policy serves no one: the file's bytes are made
            # node by node, and the average strategy only if the caller asks for it.
            table = solver.quantized_average(config.unaveraged)
            written = Strategy(problem, table, solver.iterations, solver.algorithm)
        save_strategy(config.out, written, config.precision, training=training, evaluation=evaluation)
    return TrainingRun(
        config=config,
        game=setup.game,
        problem=problem,
        make_strategy=(lambda: strategy) if strategy is not None else session._average_strategy,
        options=options,
        sampled=setup.sampled,
        iterations=int(solver.iterations),
        iterations_this_run=res.iterations,
        seconds=res.seconds,
        seconds_total=setup.done_seconds + res.seconds,
        nodes=res.nodes,
        training=training,
        evaluation=evaluation,
        final=final,
        real=real,
        stored=stored,
        stored_real=stored_real,
        checkpoint=end.checkpoint,
        interrupted=res.interrupted,
        signal=res.signal,
        evaluation_stopped=stopped,
        plan=setup.plan,
        cluster=setup.runner.stats.to_dict() if setup.runner is not None else None,
    )
