"""The typed configuration of a training run, validated in one place.

:class:`TrainingConfig` is what :func:`solver.training.run.run_training` runs: the game,
its betting and card abstraction, the algorithm and its options
(:class:`AlgorithmConfig`), the budget (:class:`Budget`: seconds of solving and/or
iterations, both totals over a resumed run), threads, seed, the table dtype, the stored
policy's precision, checkpointing (:class:`CheckpointConfig`), the metrics file and the
evaluation (:class:`EvaluationConfig`), and how to build the card abstraction where it is
not built yet (:class:`~abstraction.plan.AbstractionParams`). Each is a frozen dataclass checked on
construction: a bad value raises :class:`ConfigError`, a ``ValueError`` whose one-line
message names the option as ``pokerbot train`` spells it (``--seed``; a ``--config``
file's key is the same name with ``_`` for ``-``), which the command line prints as its
error. What depends on the machine (folders that must exist, the memory a run needs)
is checked when the run starts.

:meth:`TrainingConfig.sampling_options` and :meth:`TrainingConfig.solver_options` turn a
configuration into the solver's constructor arguments (:mod:`solver.training.algorithms`);
:meth:`TrainingConfig.command` is the ``pokerbot train`` command that runs it.
"""

from __future__ import annotations

import operator
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from abstraction.plan import AbstractionParams

from .algorithms import ALGORITHMS, FORMS
from .cluster import CLUSTER_ALGORITHMS, SYNC_SECONDS, ClusterOptions
from .dealt import SAMPLED_ALGORITHMS as SAMPLED
from .deep_cfr import DeepCFROptions
from .sampled import FALLBACKS, Averaging, SamplingOptions
from .schedules import DISCOUNTS, Discounting, Pruning

if TYPE_CHECKING:
    from .checkpoint import Checkpoint

__all__ = [
    "AVERAGING",
    "DISCOUNTS",
    "DTYPES",
    "FALLBACKS",
    "PRECISIONS",
    "AlgorithmConfig",
    "Budget",
    "CheckpointConfig",
    "ConfigError",
    "EvaluationConfig",
    "TrainingConfig",
]

#: Table dtypes: 'auto' is float32 for a new sampled run, a resumed run's own otherwise.
DTYPES = ("auto", "float64", "float32")
#: How the strategy file stores the policy: one byte per probability, or float32.
PRECISIONS = ("u8", "f32")
#: Average-strategy weights of the sampled algorithms (:class:`~solver.training.sampled.Averaging`).
AVERAGING = tuple(a.value for a in Averaging)
_CFR = ("cfr", "cfr+")
#: The vector algorithms that draw chance, from ``--seed`` (chance and public chance sampling).
DRAWS_CHANCE = ("cs", "pcs")
#: Deep CFR's options: the option name -> its :class:`DeepCFROptions` field.
_DEEP_FIELDS = {
    "traversals": "traversals",
    "memory_size": "memory",
    "net_width": "hidden",
    "net_layers": "layers",
    "sgd_steps": "sgd_steps",
    "batch_size": "batch",
    "policy_steps": "policy_steps",
}
DEEP_KEYS = tuple(_DEEP_FIELDS)
#: The unsampled algorithms that still draw, and so record their seed.
SEEDED = (*DRAWS_CHANCE, "deep")


class ConfigError(ValueError):
    """A training configuration that cannot run; the message is one line naming the
    option (as ``pokerbot train`` spells it) and what is wrong with it."""


def _whole(flag: str, value: Any, optional: bool = True) -> int | None:
    """``value`` as an int (numpy integers too; None where ``optional``)."""
    if value is None and optional:
        return None
    try:
        if isinstance(value, bool):
            raise TypeError
        return operator.index(value)
    except TypeError:
        raise ConfigError(f"{flag} must be a whole number, not {value!r}") from None


def _number(flag: str, value: Any) -> float | None:
    """``value`` as a float (None stays None)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{flag} must be a number, not {value!r}")
    return float(value)


def _choice(flag: str, value: Any, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ConfigError(f"{flag} must be one of {', '.join(choices)}, not {value!r}")


def _path(value: Any) -> Path | None:
    return None if value is None else Path(value)


def _set(obj: Any, name: str, value: Any) -> None:
    object.__setattr__(obj, name, value)  # frozen dataclasses normalise in __post_init__


#: ``pokerbot abstract``'s defaults, which the ``--abstract-*`` options share.
ABSTRACT_DEFAULTS = AbstractionParams(buckets=(1,))


def _check_abstract(params: AbstractionParams, folder: Path | None) -> None:
    """:class:`ConfigError` unless ``params`` may build an abstraction into ``folder``;
    the rest (counts per street, bins, metric) is checked against the game when the run
    starts (:func:`abstraction.plan.plan_build`)."""
    if not isinstance(params, AbstractionParams):
        raise ConfigError(f"abstract must be an AbstractionParams, not {params!r}")
    if folder is None:
        raise ConfigError("--abstract-buckets needs --abstraction DIR: the folder to build it in")
    if not params.buckets or any(_whole("--abstract-buckets", b) < 1 for b in params.buckets):
        raise ConfigError(f"--abstract-buckets must be counts of at least 1, not {list(params.buckets)}")
    if _whole("--abstract-seed", params.seed) < 0:
        raise ConfigError(f"--abstract-seed must not be negative, not {params.seed}")


@dataclass(frozen=True)
class Budget:
    """When the run ends: after ``seconds`` of solving or ``iterations`` iterations in
    total (a resumed run counts what its checkpoint did), whichever comes first; at
    least one must be given."""

    seconds: float | None = None
    iterations: int | None = None

    def __post_init__(self) -> None:
        _set(self, "seconds", _number("--seconds", self.seconds))
        _set(self, "iterations", _whole("--iterations", self.iterations))
        if self.seconds is None and self.iterations is None:
            raise ConfigError("give --seconds T and/or --iterations N")
        if self.seconds is not None and self.seconds < 0:
            raise ConfigError(f"--seconds must not be negative, not {self.seconds}")
        if self.iterations is not None and self.iterations < 0:
            raise ConfigError(f"--iterations must not be negative, not {self.iterations}")


@dataclass(frozen=True)
class AlgorithmConfig:
    """The algorithm (one of :data:`solver.training.algorithms.ALGORITHMS`) and its own
    options: ``form`` for cfr/cfr+ ('vector' or 'history'; lcfr, cs and pcs are vector); ``averaging``,
    ``regret_floor`` and the discount (``discount``: 'linear' or 'dcfr', after every
    ``discount_every`` iterations up to ``discount_until``, DCFR's ``dcfr_alpha``,
    ``dcfr_beta``, ``dcfr_gamma``: :class:`~solver.training.schedules.Discounting`)
    for es/os/as/tcfr; pruning for es/tcfr (``prune_threshold`` turns it on, with
    ``prune_after``, ``prune_share`` and ``prune_floor``:
    :class:`~solver.training.schedules.Pruning`); ``epsilon`` for os and as (None: the
    solver's default), ``probe`` for os and as, ``as_beta`` and ``as_tau`` for as; ``targeting``, ``importance``, ``close_threshold`` (None: 0) and ``pure``
    for tcfr. An option set for an algorithm that does not take it is an error. Their
    values are checked by the solvers (:mod:`solver.training.mccfr`,
    :mod:`solver.training.tcfr`) and the schedules."""

    name: str
    form: str = "vector"
    averaging: str = "uniform"
    regret_floor: bool = False
    epsilon: float | None = None
    targeting: str | None = None
    importance: bool = False
    close_threshold: float | None = None
    pure: bool = False
    discount: str | None = None
    discount_every: int | None = None
    discount_until: int | None = None
    dcfr_alpha: float | None = None
    dcfr_beta: float | None = None
    dcfr_gamma: float | None = None
    prune_threshold: float | None = None
    prune_after: int | None = None
    prune_share: float | None = None
    prune_floor: float | None = None
    probe: bool = False
    as_beta: float | None = None
    as_tau: float | None = None
    traversals: int | None = None
    memory_size: int | None = None
    net_width: int | None = None
    net_layers: int | None = None
    sgd_steps: int | None = None
    batch_size: int | None = None
    policy_steps: int | None = None

    def __post_init__(self) -> None:
        _choice("--algo", self.name, ALGORITHMS)
        _choice("--form", self.form, FORMS)
        if isinstance(self.averaging, Averaging):
            _set(self, "averaging", self.averaging.value)
        _choice("--averaging", self.averaging, AVERAGING)
        _set(self, "epsilon", _number("--epsilon", self.epsilon))
        _set(self, "close_threshold", _number("--close-threshold", self.close_threshold))
        for flag in ("regret_floor", "importance", "pure", "probe"):
            _set(self, flag, bool(getattr(self, flag)))
        if self.discount is not None:
            _choice("--discount", self.discount, DISCOUNTS)
        for name in ("discount_every", "discount_until", "prune_after", *DEEP_KEYS):
            _set(self, name, _whole("--" + name.replace("_", "-"), getattr(self, name)))
        for name in (
            "dcfr_alpha", "dcfr_beta", "dcfr_gamma", "prune_threshold", "prune_share", "prune_floor",
            "as_beta", "as_tau",
        ):  # fmt: skip
            _set(self, name, _number("--" + name.replace("_", "-"), getattr(self, name)))
        discounted = self.discount is not None
        dcfr = self.discount == "dcfr"
        pruned = self.prune_threshold is not None
        for flag, given, needs, on in (
            ("--discount-every", self.discount_every, "--discount", discounted),
            ("--discount-until", self.discount_until, "--discount", discounted),
            ("--dcfr-alpha", self.dcfr_alpha, "--discount dcfr", dcfr),
            ("--dcfr-beta", self.dcfr_beta, "--discount dcfr", dcfr),
            ("--dcfr-gamma", self.dcfr_gamma, "--discount dcfr", dcfr),
            ("--prune-after", self.prune_after, "--prune-threshold", pruned),
            ("--prune-share", self.prune_share, "--prune-threshold", pruned),
            ("--prune-floor", self.prune_floor, "--prune-threshold", pruned),
        ):
            if given is not None and not on:
                raise ConfigError(f"{flag} needs {needs}")
        if discounted and self.averaging != "uniform":
            raise ConfigError("--discount weights the average itself: leave --averaging uniform")
        if pruned and self.regret_floor:
            raise ConfigError("--prune-threshold needs negative regrets: it cannot run with --regret-floor")
        try:
            self.discounting()
        except ValueError as exc:
            raise ConfigError(f"--discount: {exc}") from None
        try:
            self.pruning()
        except ValueError as exc:
            raise ConfigError(f"--prune-threshold: {exc}") from None
        self.check_applies(
            {
                "--epsilon": (self.epsilon is not None, ("os", "as")),
                "--probe": (self.probe, ("os", "as")),
                "--as-beta": (self.as_beta is not None, ("as",)),
                "--as-tau": (self.as_tau is not None, ("as",)),
                "--targeting": (self.targeting is not None, ("tcfr",)),
                "--importance": (self.importance, ("tcfr",)),
                "--close-threshold": (self.close_threshold is not None, ("tcfr",)),
                "--pure": (self.pure, ("tcfr",)),
                "--averaging": (self.averaging != "uniform", SAMPLED),
                "--regret-floor": (self.regret_floor, SAMPLED),
                "--discount": (discounted, SAMPLED),
                "--prune-threshold": (pruned, ("es", "tcfr")),
                "--form": (self.form != "vector", _CFR),
                **{"--" + k.replace("_", "-"): (getattr(self, k) is not None, ("deep",)) for k in DEEP_KEYS},
            }
        )
        try:
            self.deep_options(0)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None

    def deep_options(self, seed: int) -> DeepCFROptions:
        """Deep CFR's options these ask for (the defaults where not given)."""
        given = {_DEEP_FIELDS[k]: getattr(self, k) for k in DEEP_KEYS if getattr(self, k) is not None}
        return DeepCFROptions(**given, seed=seed)

    @property
    def sampled(self) -> bool:
        """Whether the algorithm samples (es, os, as, tcfr)."""
        return self.name in SAMPLED

    def discounting(self) -> Discounting | None:
        """The discount schedule these options ask for (None: none)."""
        if self.discount is None:
            return None
        given = {
            "every": self.discount_every,
            "until": self.discount_until,
            "alpha": self.dcfr_alpha,
            "beta": self.dcfr_beta,
            "gamma": self.dcfr_gamma,
        }
        return Discounting(self.discount, **{k: v for k, v in given.items() if v is not None})

    def pruning(self) -> Pruning | None:
        """The pruning these options ask for (None: none)."""
        if self.prune_threshold is None:
            return None
        given = {"after": self.prune_after, "share": self.prune_share, "floor": self.prune_floor}
        return Pruning(self.prune_threshold, **{k: v for k, v in given.items() if v is not None})

    def check_applies(self, given: Mapping[str, tuple[bool, tuple[str, ...]]]) -> None:
        """Refuse each ``flag: (set, algorithms it applies to)`` set for another algorithm."""
        for flag, (used, algos) in given.items():
            if used and self.name not in algos:
                raise ConfigError(f"{flag} applies to --algo {' / '.join(algos)}, not {self.name}")


@dataclass(frozen=True)
class CheckpointConfig:
    """Checkpoints: ``file`` (default OUT.ckpt, written on a stop; given, also at the
    end), ``every`` seconds of solving (bounds the work a killed run loses), and
    ``resume``: the checkpoint of the run to continue."""

    file: Path | None = None
    every: float | None = None
    resume: Path | None = None

    def __post_init__(self) -> None:
        _set(self, "file", _path(self.file))
        _set(self, "resume", _path(self.resume))
        _set(self, "every", _number("--checkpoint-every", self.every))
        if self.every is not None and self.every < 0:
            raise ConfigError(f"--checkpoint-every must not be negative, not {self.every}")


@dataclass(frozen=True)
class EvaluationConfig:
    """Exploitability during the run every ``every`` seconds of solving (None: a tenth
    of the time budget, at least 1 s, or 5 s; 0: only at the end), on games small enough
    for an exact best response; ``final``: measure the real game at the end even past
    that size. ``enabled`` False (not a command-line option) measures nothing, for a
    caller that evaluates the strategy its own way."""

    every: float | None = None
    final: bool = False
    enabled: bool = True

    def __post_init__(self) -> None:
        _set(self, "every", _number("--eval-every", self.every))
        _set(self, "final", bool(self.final))
        _set(self, "enabled", bool(self.enabled))
        if self.every is not None and self.every < 0:
            raise ConfigError(f"--eval-every must not be negative, not {self.every}")
        if self.final and not self.enabled:
            raise ConfigError("--final-eval asks for an evaluation the configuration turns off")


@dataclass(frozen=True)
class TrainingConfig:
    """One training run (see the module docstring). ``game``: a shipped name or a
    ``.game`` path; ``betting``: the bet-size abstraction (no-limit games);
    ``abstraction``: a card abstraction's folder (None: lossless buckets); ``out``: the
    strategy file to write (None: none is written); ``metrics``: a JSON Lines file to
    append progress to; ``dtype``: :data:`DTYPES`; ``precision``: :data:`PRECISIONS`;
    ``unaveraged``: what the written strategy plays in an information set whose average
    was never updated (es/os/as/tcfr; :data:`FALLBACKS`, see
    :meth:`~solver.training.sampled.SampledCFRSolver.average_policy`).

    ``recipe`` is recorded in the strategy file as the command that rebuilds it (None:
    :meth:`command`); ``config_record``, if given, as its ``config`` (the command line
    records a ``--config`` file and its settings there). ``cluster``: train on a Ray
    cluster (:mod:`solver.training.cluster`; the sampled algorithms), ``threads`` then
    being each worker's. ``abstract``: how the card abstraction in ``abstraction`` was
    built (``pokerbot abstract``'s parameters): where that folder holds no finished
    abstraction the run builds it first (a build interrupted goes on from its stage),
    and where it holds one built otherwise the run refuses to start, so that a recipe
    rebuilds its strategy from nothing with one command.
    """

    game: str
    algorithm: AlgorithmConfig
    budget: Budget
    out: Path | None = None
    betting: str | None = None
    abstraction: Path | None = None
    threads: int = 1
    seed: int = 0
    dtype: str = "auto"
    precision: str = "u8"
    unaveraged: str = "current"
    checkpoint: CheckpointConfig = field(default_factory=CheckpointConfig)
    metrics: Path | None = None
    evaluation: EvaluationConfig = field(default_factory=EvaluationConfig)
    recipe: str | None = None
    config_record: Mapping[str, Any] | None = None
    cluster: ClusterOptions | None = None
    abstract: AbstractionParams | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.algorithm, AlgorithmConfig):
            raise ConfigError(f"algorithm must be an AlgorithmConfig, not {self.algorithm!r}")
        if not isinstance(self.budget, Budget):
            raise ConfigError(f"budget must be a Budget, not {self.budget!r}")
        _set(self, "game", str(self.game))
        for name in ("out", "abstraction", "metrics"):
            _set(self, name, _path(getattr(self, name)))
        _set(self, "seed", _whole("--seed", self.seed, optional=False))
        _set(self, "threads", _whole("--threads", self.threads, optional=False))
        if self.seed < 0:
            raise ConfigError(f"--seed must not be negative, not {self.seed}")
        _choice("--dtype", self.dtype, DTYPES)
        _choice("--precision", self.precision, PRECISIONS)
        _choice("--unaveraged", self.unaveraged, FALLBACKS)
        self.algorithm.check_applies(
            {
                "--threads": (self.threads != 1, SAMPLED),
                "--dtype": (self.dtype != "auto", SAMPLED),
                "--unaveraged": (self.unaveraged != "current", SAMPLED),
                "--cluster": (self.cluster is not None, CLUSTER_ALGORITHMS),
            }
        )
        if self.cluster is not None and not isinstance(self.cluster, ClusterOptions):
            raise ConfigError(f"cluster must be a ClusterOptions, not {self.cluster!r}")
        if self.threads < 1:
            raise ConfigError(f"--threads must be at least 1, not {self.threads}")
        if self.abstract is not None:
            _check_abstract(self.abstract, self.abstraction)

    @property
    def sampled(self) -> bool:
        """Whether the algorithm samples (es, os, as, tcfr)."""
        return self.algorithm.sampled

    @property
    def eval_every(self) -> float:
        """Seconds of solving between evaluations (0: only at the end)."""
        if self.evaluation.every is not None:
            return self.evaluation.every
        seconds = self.budget.seconds
        return max(1.0, seconds / 10) if seconds else 5.0

    @property
    def checkpoint_path(self) -> Path | None:
        """Where checkpoints go: ``checkpoint.file``, else OUT.ckpt (None without either)."""
        if self.checkpoint.file is not None:
            return self.checkpoint.file
        return None if self.out is None else self.out.with_name(self.out.name + ".ckpt")

    def check_paths(self, creates: Path | None = None) -> None:
        """:class:`ConfigError` if the folder of ``out``, of ``metrics`` or of the
        checkpoints does not exist, unless it is ``creates`` or a folder above it (the
        card abstraction's folder, which the run builds first)."""
        made = set() if creates is None else {creates, *creates.parents}
        paths = (("--out", self.out), ("--metrics", self.metrics), ("--checkpoint", self.checkpoint_path))
        for flag, path in paths:
            if path is not None and not path.parent.is_dir() and path.parent not in made:
                raise ConfigError(f"{flag} {path}: folder {path.parent} does not exist")

    def table_dtype(self, resumed: Checkpoint | None = None) -> str:
        """The tables' dtype: vector CFR's are float64; 'auto' is float32 for the sampled
        algorithms, or the dtype of the run ``resumed`` continues (checkpoints of float64
        runs resume as such)."""
        if not self.sampled:
            return "float64"
        if self.dtype != "auto":
            return self.dtype
        if resumed is not None and resumed.options.get("dtype") in ("float32", "float64"):
            return str(resumed.options["dtype"])
        return "float32"

    def sampling_options(self, resumed: Checkpoint | None = None) -> SamplingOptions | None:
        """The sampled solver's :class:`~solver.training.sampled.SamplingOptions` (None
        for cfr and cfr+), 'auto' dtype resolved by :meth:`table_dtype`."""
        if not self.sampled:
            return None
        return SamplingOptions(
            seed=self.seed,
            # on a cluster the threads are each worker's; the driver's tables run none
            threads=1 if self.cluster is not None else self.threads,
            dtype=self.table_dtype(resumed),
            averaging=Averaging(self.algorithm.averaging),
            floor=self.algorithm.regret_floor,
            discount=self.algorithm.discounting(),
            pruning=self.algorithm.pruning(),
        )

    def solver_options(self) -> dict[str, Any]:
        """The algorithm's own constructor options (beside the sampling options)."""
        a = self.algorithm
        if a.name == "deep":
            return {"options": a.deep_options(self.seed)}
        if not self.sampled:
            options: dict[str, Any] = {"form": a.form} if a.form != "vector" else {}
            if a.name in DRAWS_CHANCE:
                options["seed"] = self.seed
            return options
        if a.name in ("os", "as"):
            given = {"epsilon": a.epsilon, "beta": a.as_beta, "tau": a.as_tau}
            options = {k: v for k, v in given.items() if v is not None}
            return {**options, "probe": True} if a.probe else options
        if a.name == "tcfr":
            return {
                "targeting": a.targeting,
                "importance": a.importance,
                "close_threshold": a.close_threshold or 0.0,
                "pure": a.pure,
            }
        return {}

    def command(self) -> list[str]:
        """The ``pokerbot train`` arguments that run this configuration (defaults left out)."""
        a, b, c, e = self.algorithm, self.budget, self.checkpoint, self.evaluation
        words = ["train", self.game]
        valued: list[tuple[str, Any, Any]] = [  # (flag, value, default)
            ("--betting", self.betting, None),
            ("--abstraction", self.abstraction, None),
            ("--algo", a.name, None),
            ("--seconds", b.seconds, None),
            ("--iterations", b.iterations, None),
            ("--seed", self.seed, 0),
            ("--threads", self.threads, 1),
            ("--dtype", self.dtype, "auto"),
            ("--precision", self.precision, "u8"),
            ("--unaveraged", self.unaveraged, "current"),
            ("--averaging", a.averaging, "uniform"),
            ("--form", a.form, "vector"),
            ("--epsilon", a.epsilon, None),
            ("--as-beta", a.as_beta, None),
            ("--as-tau", a.as_tau, None),
            *(("--" + k.replace("_", "-"), getattr(a, k), None) for k in DEEP_KEYS),
            ("--targeting", a.targeting, None),
            ("--close-threshold", a.close_threshold, None),
            ("--discount", a.discount, None),
            ("--discount-every", a.discount_every, None),
            ("--discount-until", a.discount_until, None),
            ("--dcfr-alpha", a.dcfr_alpha, None),
            ("--dcfr-beta", a.dcfr_beta, None),
            ("--dcfr-gamma", a.dcfr_gamma, None),
            ("--prune-threshold", a.prune_threshold, None),
            ("--prune-after", a.prune_after, None),
            ("--prune-share", a.prune_share, None),
            ("--prune-floor", a.prune_floor, None),
            ("--checkpoint", c.file, None),
            ("--checkpoint-every", c.every, None),
            ("--resume", c.resume, None),
            ("--eval-every", e.every, None),
            ("--metrics", self.metrics, None),
            ("--out", self.out, None),
        ]
        if self.cluster is not None:
            k = self.cluster
            valued += [
                ("--cluster", k.address, None),
                ("--workers", k.workers, None),
                ("--sync-iterations", k.sync_iterations, None),
            ]
            if k.sync_iterations is None:
                valued.append(("--sync-seconds", k.sync_seconds, SYNC_SECONDS))
            valued.append(("--hot-syncs", k.hot_syncs, 0))
        if self.abstract is not None:
            p = self.abstract
            valued += [
                ("--abstract-buckets", ",".join(map(str, p.buckets)), None),
                ("--abstract-seed", p.seed, 0),
                ("--abstract-bins", p.bins, ABSTRACT_DEFAULTS.bins),
                ("--abstract-metric", p.metric, ABSTRACT_DEFAULTS.metric),
                ("--abstract-history-weight", p.history_weight, ABSTRACT_DEFAULTS.history_weight),
                ("--abstract-max-iter", p.max_iter, ABSTRACT_DEFAULTS.max_iter),
            ]
        for flag, value, default in valued:
            if value != default:
                words += [flag, str(value)]
        for flag, on in (
            ("--regret-floor", a.regret_floor),
            ("--importance", a.importance),
            ("--pure", a.pure),
            ("--probe", a.probe),
            ("--final-eval", e.final),
            ("--hot-async", self.cluster is not None and self.cluster.hot_async),
            ("--abstract-history", self.abstract is not None and self.abstract.history),
        ):
            if on:
                words.append(flag)
        return words

    def recipe_text(self) -> str:
        """What the strategy file records as its recipe: ``recipe``, else the command."""
        if self.recipe is not None:
            return self.recipe
        return "pokerbot " + " ".join(shlex.quote(w) for w in self.command())
