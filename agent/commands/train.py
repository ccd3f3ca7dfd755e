"""``pokerbot train``: solve the abstract game with a CFR-family algorithm and write the
average strategy (solver.strategy_io), with checkpoints to stop and resume. With
``--abstraction DIR`` the information sets are (decision node, card bucket) of a card
abstraction built by ``pokerbot abstract``; the strategy file and checkpoints record it."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import sys
import textwrap
import tomllib
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

from poker._sysinfo import rss_gib
from poker.game import load_game
from solver.evaluation.best_response import (
    Result,
    abstract_and_real_exploitability,
    abstract_exploitability,
    exploitability,
)
from solver.training.algorithms import ALGORITHMS, FORMS, make_training_solver, warm_up
from solver.chance import lossless_bucket_counts
from solver.training.checkpoint import Checkpoint, load_checkpoint, restore_checkpoint, save_checkpoint
from solver.training.dealt import make_training_problem
from solver.training.memory import check_fits, estimate_training_memory
from solver.problem import Problem, check_card_abstraction, make_problem
from solver.training.sampled import SampledCFRSolver
from solver.strategy import Strategy
from solver.strategy_io import cards_record, dequantize, quantize, save_strategy
from solver.training.loop import TrainResult, stop_on_signals, table_stats, train
from solver.tree import table_offsets

from .options import UserError
from ..progress import Progress

if TYPE_CHECKING:
    from abstraction.card_abstraction import CardAbstraction

#: Exploitability is computed during training only for games whose lossless table has
#: up to this many entries (an exact best response walks every board and hand, whatever
#: the card abstraction; larger games take minutes).
EVAL_MAX_ENTRIES = 20_000_000
_SAMPLED = ("es", "os", "tcfr")
#: ``--metrics`` writes at most one line per this many seconds (an evaluation's line
#: included), and at least one per ``--eval-every`` seconds, capped at METRICS_MAX_GAP.
METRICS_MIN_GAP = 0.5
METRICS_MAX_GAP = 5.0
#: ``--metrics`` lines measure the regret table (:func:`solver.training.loop.table_stats`: two
#: passes over it, ~0.1 s per 10M float32 entries) on every line for tables up to
#: TABLE_STATS_ENTRIES entries; above, at most once per TABLE_STATS_GAP seconds (and on
#: the final line), so the passes cost at most a few percent of the run.
TABLE_STATS_ENTRIES = 10_000_000
TABLE_STATS_GAP = 30.0

#: Keys a ``--config`` TOML file may set: key -> (kind, choices or None). Each is the
#: command-line option of the same name (``_`` for ``-``); ``game`` is the positional.
#: Kinds: "str", "path" (a string, relative to the current directory), "int", "float"
#: (an integer is accepted), "bool".
CONFIG_KEYS: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "game": ("str", None),
    "betting": ("str", None),
    "abstraction": ("path", None),
    "algo": ("str", ALGORITHMS),
    "seconds": ("float", None),
    "iterations": ("int", None),
    "threads": ("int", None),
    "seed": ("int", None),
    "dtype": ("str", ("auto", "float64", "float32")),
    "precision": ("str", ("u8", "f32")),
    "averaging": ("str", ("uniform", "linear")),
    "form": ("str", FORMS),
    "targeting": ("str", None),
    "epsilon": ("float", None),
    "importance": ("bool", None),
    "regret_floor": ("bool", None),
    "close_threshold": ("float", None),
    "pure": ("bool", None),
    "checkpoint": ("path", None),
    "checkpoint_every": ("float", None),
    "eval_every": ("float", None),
    "final_eval": ("bool", None),
    "out": ("path", None),
    "metrics": ("path", None),
}
#: Values of the keys above when neither the command line nor the config gives them.
DEFAULTS: dict[str, Any] = {
    "seed": 0,
    "threads": 1,
    "dtype": "auto",
    "precision": "u8",
    "averaging": "uniform",
    "form": "vector",
    "importance": False,
    "regret_floor": False,
    "pure": False,
    "final_eval": False,
}
#: What a run cannot do without (after merging the config and the command line).
_REQUIRED = (("game", "GAME"), ("algo", "--algo"), ("out", "--out"))


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``train`` subcommand."""
    p = sub.add_parser(
        "train",
        help="solve the abstract game (cfr, cfr+, es, os, tcfr) and write the average strategy",
        description="\n\n".join(textwrap.fill(par, 88) for par in (
            "Train a strategy for GAME with vector-form CFR or CFR+ (exact traversal over all "
            "hands), external- or outcome-sampling MCCFR, or Targeted CFR, until --seconds of "
            "solving and/or --iterations in total (a resumed run counts what its checkpoint did), and write the average strategy to "
            "--out. Information sets are (betting node, bucket of the actor's cards on that "
            "street): lossless buckets (every hand on every board) unless --abstraction DIR "
            "names a card abstraction built for this game by 'pokerbot abstract'. A progress "
            "bar shows deals/s (es/os/tcfr: one iteration deals one hand) or iterations/s "
            "(cfr, cfr+), the elapsed time and the time left (to the end of the --iterations "
            "or the --seconds budget, whichever comes first), nodes/s, resident memory and, "
            "where the game is small enough, the exploitability (mbb/g) in the abstract "
            "game; the final report adds the exploitability in the real card game.",
            "Stopping and resuming: Ctrl-C (SIGINT) or SIGTERM ends the run at the end of "
            "the current batch of iterations (about 0.1 s): the strategy and a checkpoint "
            "(OUT.ckpt unless --checkpoint) are written and the exit status is 130 (SIGINT) "
            "or 143 (SIGTERM); run the same command with --resume CHECKPOINT to continue "
            "(the same game, --betting, --abstraction, --algo and its options; another "
            "run's checkpoint is refused). Checkpoints are written only between batches, "
            "atomically (at the end, on a stop and every --checkpoint-every seconds of "
            "solving), so a run with one thread and an --iterations budget that is stopped "
            "or even killed (SIGKILL, a crash, a lost machine) and resumed from its latest "
            "checkpoint, as often as need be, ends with exactly the tables of the run never "
            "stopped: only the work since that checkpoint is done again. A run killed "
            "before its first checkpoint has nothing to resume: run the command without "
            "--resume to start over. Resuming a checkpoint that has reached --iterations "
            "or --seconds only writes the strategy again.",
            "--config FILE.toml gives any of the options below as TOML keys (the option's "
            "name with '_' for '-'; 'game' for GAME; flags such as importance = true): "
            "game, betting, abstraction, algo, seconds, iterations, threads, seed, dtype, "
            "precision, averaging, regret_floor, form, targeting, epsilon, importance, close_threshold, "
            "pure, checkpoint, checkpoint_every, eval_every, final_eval, out, metrics. "
            "Options on the command line override the file. Relative paths in the file "
            "(abstraction, out, checkpoint, metrics) are relative to the current directory, "
            "as on the command line, not to the file's folder. Unknown keys and values of the "
            "wrong type are errors. The strategy file's recipe is the command as given "
            "('pokerbot train --config FILE' and any overriding options) and its training "
            "record keeps the file's settings.",
            "--metrics FILE appends one JSON object per line (flushed per line; a resumed run "
            "continues the file) at most twice a second, at least every --eval-every seconds "
            f"(at most {METRICS_MAX_GAP:g} s apart) and after each evaluation: t (seconds of "
            "solving, resumed runs included), iterations (in total), iterations_per_s (this "
            "run); for es/os/tcfr deals (= iterations: one deal each) and deals_per_s, nodes "
            "(touched in this run) and nodes_per_s; rss_gib (current resident memory from "
            "/proc/self/statm; the peak from getrusage where /proc is missing); "
            "infosets_visited_share (the share of information sets, rows (decision node, "
            "bucket) of the regret table, with any nonzero regret), regret_max (the largest "
            "cumulative regret) and regret_mean_positive (the mean of max(regret, 0) over "
            "every entry), measured on every line for tables of up to "
            f"{TABLE_STATS_ENTRIES:,} entries and, above, at most every {TABLE_STATS_GAP:g} s "
            "and on the last line (two passes over the table: about 0.1 s per 10M entries); "
            "and exploitability / mbb_per_game (abstract game) when an evaluation happened "
            "then. The last line has \"final\": true, the final evaluation, \"interrupted\" "
            "and \"signal\" (SIGINT, SIGTERM or null).",
        )),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            "  pokerbot train kuhn.limit.2p --algo cfr+ --iterations 1000 --out kuhn.strategy\n"
            "  pokerbot train leduc.limit.2p --algo es --seconds 10 --out leduc.strategy --seed 1\n"
            "  pokerbot train leduc.limit.2p --algo tcfr --targeting 01:0.2,1:0.8 --iterations 2000000 --out l.strategy\n"
            "  pokerbot train holdem.nolimit.2p.short20 --betting 1p,cap1 --algo tcfr --threads 2 \\\n"
            "      --seconds 600 --out short20.strategy --checkpoint short20.ckpt --checkpoint-every 120\n"
            "  pokerbot train leduc.limit.2p --algo es --iterations 8000000 --out l.strategy --resume l.strategy.ckpt\n"
            "  pokerbot abstract leduc.limit.2p --buckets 3,3 --out abs/leduc\n"
            "  pokerbot train leduc.limit.2p --algo cfr+ --abstraction abs/leduc --iterations 1000 --out l3.strategy\n"
            "  pokerbot train --config strategies/leduc.limit.2p.toml --out mine.strategy --metrics m.jsonl\n"
            "\n"
            "a config (run.toml; 'pokerbot train --config run.toml --seed 2' overrides the seed):\n"
            "  game = \"leduc.limit.2p\"\n"
            "  algo = \"es\"\n"
            "  abstraction = \"abs/leduc\"   # relative to the current directory\n"
            "  seconds = 600\n"
            "  seed = 1\n"
            "  checkpoint = \"leduc.ckpt\"\n"
            "  checkpoint_every = 120\n"
            "  out = \"leduc.strategy\""
        ),
    )
    p.add_argument(
        "game", nargs="?", help="a shipped game name or a .game file (or 'game' in --config)"
    )
    p.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="TOML file of options (see above); options given here override it",
    )
    p.add_argument("--algo", choices=ALGORITHMS, help="the algorithm (required here or in --config)")
    p.add_argument(
        "--betting", metavar="SPEC", help="bet-size abstraction (no-limit games only), e.g. '1p,a'"
    )
    p.add_argument(
        "--abstraction",
        type=Path,
        metavar="DIR",
        help="card abstraction built for this game's cards by 'pokerbot abstract' "
        "(default: lossless buckets)",
    )
    p.add_argument(
        "--seconds",
        type=float,
        metavar="T",
        help="stop once T seconds of solving are done in total (a resumed run counts the "
        "solving its checkpoint records)",
    )
    p.add_argument(
        "--iterations", type=int, metavar="N", help="stop once N iterations are done in total"
    )
    p.add_argument(
        "--out", type=Path, metavar="FILE", help="strategy file to write (required here or in --config)"
    )
    p.add_argument(
        "--seed",
        type=int,
        metavar="S",
        help="seed of the sampled algorithms (default 0)",
    )
    p.add_argument(
        "--threads", type=int, metavar="K", help="Hogwild threads (es, os, tcfr)"
    )
    p.add_argument(
        "--dtype",
        choices=("auto", "float64", "float32"),
        help="table precision of es/os/tcfr (auto: float32, or a resumed checkpoint's; "
        "cfr and cfr+ always use float64)",
    )
    p.add_argument(
        "--precision",
        choices=("u8", "f32"),
        help="stored policy: u8, one byte per probability, rows summing to 255 (default), or f32",
    )
    p.add_argument(
        "--averaging",
        choices=("uniform", "linear"),
        help="average-strategy weights of es/os/tcfr (default uniform)",
    )
    p.add_argument(
        "--regret-floor",
        action="store_true",
        default=None,
        help="es/os/tcfr: keep cumulative regrets at or above 0 (as regret-matching+ does)",
    )
    p.add_argument(
        "--form",
        choices=FORMS,
        help="cfr/cfr+: vector (default) or history: one walk per deal, repeating "
        "OpenSpiel's CFRSolver operation by operation (small games only)",
    )
    p.add_argument("--epsilon", type=float, metavar="E", help="os: exploration (default 0.6)")
    p.add_argument(
        "--targeting",
        metavar="SPEC",
        help="tcfr: tau, e.g. mod40, game1, game2, full, '0123:0.2,23:0.8' or "
        "'mod40:03@38-39;13@31-37;23@1-30' (default: mod40 for 4 streets, else 1 iteration in 10 full)",
    )
    p.add_argument(
        "--importance", action="store_true", default=None, help="tcfr: scale regret updates by 1/q"
    )
    p.add_argument(
        "--close-threshold",
        type=float,
        metavar="X",
        help="tcfr: also explore decisions whose top two regrets differ by less than X chips",
    )
    p.add_argument(
        "--pure",
        action="store_true",
        default=None,
        help="tcfr: play the highest-regret action (no regret matching)",
    )
    p.add_argument(
        "--checkpoint",
        type=Path,
        metavar="FILE",
        help="checkpoint file, written at the end, on SIGINT/SIGTERM and every "
        "--checkpoint-every seconds (default on a stop: OUT.ckpt)",
    )
    p.add_argument(
        "--checkpoint-every",
        type=float,
        metavar="T",
        help="seconds of solving between checkpoints (bounds the work a killed run loses)",
    )
    p.add_argument(
        "--resume",
        type=Path,
        metavar="FILE",
        help="continue the run saved in this checkpoint (give the rest of the command as before)",
    )
    p.add_argument(
        "--eval-every",
        type=float,
        metavar="T",
        help="seconds between exploitability evaluations (0: only at the end; "
        f"skipped for games whose lossless table has over {EVAL_MAX_ENTRIES:,} entries)",
    )
    p.add_argument(
        "--final-eval",
        action="store_true",
        default=None,
        help="compute the real-game exploitability at the end even where the game is over that "
        "size (an exact best response over every board and hand: minutes on 20-card hold'em)",
    )
    p.add_argument(
        "--metrics",
        type=Path,
        metavar="FILE",
        help="append JSON Lines of progress (time, deals, rates, memory, table coverage, "
        "regrets, exploitability; keys above)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def _table_dtype(args: argparse.Namespace, resumed: Checkpoint | None = None) -> str:
    """The tables' dtype: vector CFR's are float64; ``--dtype auto`` is float32 for the
    sampled algorithms, or the dtype of the run ``resumed`` continues."""
    if args.algo not in _SAMPLED:
        return "float64"
    if args.dtype != "auto":
        return str(args.dtype)
    if resumed is not None and resumed.options.get("dtype") in ("float32", "float64"):
        return str(resumed.options["dtype"])
    return "float32"


def _options(args: argparse.Namespace, resumed: Checkpoint | None = None) -> dict[str, Any]:
    """Constructor options of the chosen algorithm; options of other algorithms are errors.
    ``--dtype auto`` is float32 for the sampled algorithms, or the dtype of the run
    ``resumed`` continues (checkpoints of float64 runs resume as such)."""
    algo = args.algo
    given = {
        "--epsilon": (args.epsilon is not None, ("os",)),
        "--targeting": (args.targeting is not None, ("tcfr",)),
        "--importance": (args.importance, ("tcfr",)),
        "--close-threshold": (args.close_threshold is not None, ("tcfr",)),
        "--pure": (args.pure, ("tcfr",)),
        "--threads": (args.threads != 1, _SAMPLED),
        "--dtype": (args.dtype != "auto", _SAMPLED),
        "--averaging": (args.averaging != "uniform", _SAMPLED),
        "--regret-floor": (args.regret_floor, _SAMPLED),
        "--form": (args.form != "vector", ("cfr", "cfr+")),
    }
    for flag, (used, algos) in given.items():
        if used and algo not in algos:
            raise UserError(f"{flag} applies to --algo {' / '.join(algos)}, not {algo}")
    if algo not in _SAMPLED:
        return {"form": args.form} if args.form != "vector" else {}
    if args.threads < 1:
        raise UserError(f"--threads must be at least 1, not {args.threads}")
    opts: dict[str, Any] = {
        "seed": args.seed,
        "threads": args.threads,
        "dtype": _table_dtype(args, resumed),
        "averaging": args.averaging,
    }
    if args.regret_floor:
        opts["floor"] = True
    if algo == "os" and args.epsilon is not None:
        opts["epsilon"] = args.epsilon
    if algo == "tcfr":
        opts.update(
            targeting=args.targeting,
            importance=args.importance,
            close_threshold=args.close_threshold or 0.0,
            pure=args.pure,
        )
    return opts


@dataclass
class _Monitor:
    """Exploitability of the average strategy at intervals of solving time."""

    average: Callable[[], Strategy]  # the average strategy, on a problem with a chance layer
    enabled: bool
    every: float
    last_eval: float = 0.0
    last_ckpt: float = 0.0
    result: Result | None = None

    def evaluate(self) -> Result:
        self.result = abstract_exploitability(None, self.average())
        return self.result

    def maybe_evaluate(self, seconds: float) -> bool:
        """Evaluate if ``every`` seconds have passed since the last; whether it did."""
        if self.enabled and self.every > 0 and seconds - self.last_eval >= self.every:
            self.last_eval = seconds
            self.evaluate()
            return True
        return False


def _kind_ok(kind: str, value: Any) -> bool:
    if kind in ("str", "path"):
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, (int, float)) and not isinstance(value, bool)  # float


_KIND_NAMES = {"str": "a string", "path": "a path string", "int": "an integer",
               "float": "a number", "bool": "true or false"}


def load_config(path: str | Path) -> dict[str, Any]:
    """The options of the TOML file ``path`` for ``pokerbot train --config``, keyed by
    :data:`CONFIG_KEYS` names: paths as :class:`Path` (relative to the current directory),
    numbers of float keys as float. A missing or unreadable file, bad TOML, an unknown
    key, a value of the wrong type or outside its choices raise :class:`UserError` (one line)."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except FileNotFoundError:
        raise UserError(f"--config {path}: no such file") from None
    except OSError as exc:
        raise UserError(f"--config {path}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"--config {path}: not valid TOML: {exc}") from None
    config: dict[str, Any] = {}
    for key, value in doc.items():
        if key not in CONFIG_KEYS:
            hint = key.replace("-", "_")
            also = f" (did you mean {hint}?)" if hint in CONFIG_KEYS else ""
            raise UserError(
                f"--config {path}: unknown key {key!r}{also}; known: {', '.join(CONFIG_KEYS)}"
            )
        kind, choices = CONFIG_KEYS[key]
        if not _kind_ok(kind, value):
            raise UserError(
                f"--config {path}: {key} must be {_KIND_NAMES[kind]}, not {value!r}"
            )
        if choices is not None and value not in choices:
            raise UserError(
                f"--config {path}: {key} must be one of {', '.join(choices)}, not {value!r}"
            )
        if kind == "path":
            value = Path(value)
        elif kind == "float":
            value = float(value)
        config[key] = value
    return config


def merge_config(args: argparse.Namespace) -> argparse.Namespace:
    """The effective options of a run: each :data:`CONFIG_KEYS` option from the command
    line where given there, else from ``args.config`` (a TOML file, if any), else its
    default (:data:`DEFAULTS`, or None). Other attributes are copied; ``config_values``
    holds the file's settings ({} without a file). A missing game, --algo or --out is a
    :class:`UserError` naming every one missing. Merging a merged namespace changes nothing."""
    merged = argparse.Namespace(**vars(args))
    config_path = getattr(args, "config", None)
    config = load_config(config_path) if config_path is not None else {}
    merged.config_values = config
    for key in CONFIG_KEYS:
        if getattr(args, key, None) is None:
            setattr(merged, key, config.get(key, DEFAULTS.get(key)))
    missing = [flag for key, flag in _REQUIRED if getattr(merged, key) is None]
    if missing:
        where = f"on the command line or in --config {config_path}" if config_path else (
            "on the command line or in a --config file"
        )
        them = "it" if len(missing) == 1 else "them"
        raise UserError(f"missing {', '.join(missing)}: give {them} {where}")
    return merged


class _Metrics:
    """``--metrics``: JSON Lines appended and flushed one at a time, rate-limited."""

    def __init__(self, path: Path | None, every: float) -> None:
        self.file: IO[str] | None = None
        if path is not None:
            if not path.parent.is_dir():
                raise UserError(f"--metrics {path}: folder {path.parent} does not exist")
            self.file = open(path, "a", encoding="utf-8")
        self.gap = min(max(every, METRICS_MIN_GAP), METRICS_MAX_GAP) if every > 0 else METRICS_MAX_GAP
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


def load_abstraction(directory: str | Path | None) -> CardAbstraction | None:
    """The card abstraction in ``directory`` (None: lossless), its files checked against
    its content hash so the hash a strategy records is that of the buckets it used."""
    if directory is None:
        return None
    # Imported late: only this option needs the abstraction package's heavier modules.
    from abstraction.card_abstraction import CardAbstraction

    return CardAbstraction.load(directory, verify=True)


def run(args: argparse.Namespace) -> int:
    """Train, report, write the strategy (and checkpoints, and --metrics lines); ``args``
    as parsed (a --config file is merged here, see :func:`merge_config`)."""
    args = merge_config(args)
    if args.seconds is None and args.iterations is None:
        raise UserError("give --seconds T and/or --iterations N")
    if args.seconds is not None and args.seconds < 0:
        raise UserError(f"--seconds must not be negative, not {args.seconds}")
    if args.iterations is not None and args.iterations < 0:
        raise UserError(f"--iterations must not be negative, not {args.iterations}")
    if args.seed < 0:
        raise UserError(f"--seed must not be negative, not {args.seed}")
    for flag, value in (
        ("--checkpoint-every", args.checkpoint_every),
        ("--eval-every", args.eval_every),
    ):
        if value is not None and value < 0:
            raise UserError(f"{flag} must not be negative, not {value}")
    if not args.out.parent.is_dir():
        raise UserError(f"--out {args.out}: folder {args.out.parent} does not exist")
    if args.metrics is not None and not args.metrics.parent.is_dir():
        raise UserError(f"--metrics {args.metrics}: folder {args.metrics.parent} does not exist")
    game = load_game(args.game)
    abstraction = load_abstraction(args.abstraction)
    if abstraction is not None:
        check_card_abstraction(game, abstraction)  # before the memory estimate reads it
    ckpt = _load_resume(args.resume) if args.resume is not None else None
    options = _options(args, ckpt)
    refusal = check_fits(
        estimate_training_memory(
            game,
            args.betting,
            abstraction_dir=args.abstraction,
            algorithm=args.algo,
            dtype=options.get("dtype", "float64"),
            threads=args.threads,
        )
    )
    if refusal is not None:
        raise UserError(refusal)
    # The sampled algorithms deal from the deck where the chance layer is too big to list
    # (solver.training.dealt); exact evaluation then builds the listed problem when it first runs.
    problem = make_training_problem(game, args.betting, args.algo, abstraction=abstraction)
    listed: Problem | None = None

    def average() -> Strategy:
        nonlocal listed
        s = solver.average_strategy()
        if problem.cards is None:
            return s
        if listed is None:
            listed = make_problem(game, args.betting, abstraction=abstraction)
        return Strategy(listed, s.policy, s.iterations, s.algorithm)

    solver = make_training_solver(problem, args.algo, **options)
    done_seconds = 0.0
    if ckpt is not None:
        restore_checkpoint(solver, ckpt)
        done_seconds = ckpt.seconds
    checkpoint_path = args.checkpoint or args.out.with_name(args.out.name + ".ckpt")
    sampled = isinstance(solver, SampledCFRSolver)
    warm_up(
        args.algo, options.get("dtype", "float64"), options.get("threads", 1), options.get("form", "vector")
    )

    can_eval = table_offsets(problem.tree, lossless_bucket_counts(game))[1] <= EVAL_MAX_ENTRIES
    eval_every = args.eval_every
    if eval_every is None:
        eval_every = max(1.0, args.seconds / 10) if args.seconds else 5.0
    left = None if args.iterations is None else max(0, args.iterations - solver.iterations)
    # like --iterations, --seconds is the run's total: a resumed recipe ends where the
    # uninterrupted one would have, not a whole budget later
    seconds_left = None if args.seconds is None else max(0.0, args.seconds - done_seconds)
    progress = Progress(
        left,
        f"train {args.algo}",
        unit=" deals" if sampled else " it",
        enabled=not args.quiet,
        seconds=seconds_left,
    )
    monitor = _Monitor(average, can_eval, eval_every)

    metrics = _Metrics(args.metrics, eval_every)
    stats_gap = 0.0 if problem.size <= TABLE_STATS_ENTRIES else TABLE_STATS_GAP
    last_stats = -float("inf")

    def measures(res: TrainResult, rss: float, final: bool = False) -> dict[str, Any]:
        nonlocal last_stats
        per_s = res.iterations / res.seconds if res.seconds > 0 else None
        line: dict[str, Any] = {
            "t": round(done_seconds + res.seconds, 3),
            "iterations": int(solver.iterations),
            "iterations_per_s": per_s,
        }
        if sampled:
            line["deals"] = int(solver.iterations)
            line["deals_per_s"] = per_s
            line["nodes"] = int(res.nodes)
            line["nodes_per_s"] = res.nodes / res.seconds if res.seconds > 0 else None
        line["rss_gib"] = round(rss, 4)
        if metrics.file is not None and (final or line["t"] - last_stats >= stats_gap):
            last_stats = line["t"]
            st = table_stats(solver)
            line["infosets_visited_share"] = round(st.infosets_visited_share, 6)
            line["regret_max"] = st.regret_max
            line["regret_mean_positive"] = st.regret_mean_positive
        return line

    def callback(s: Any, res: TrainResult) -> bool:
        extra: dict[str, Any] = {"t": f"{res.seconds:.1f}s"}
        if sampled and res.seconds > 0:
            extra["nodes/s"] = f"{res.nodes / res.seconds:,.0f}"
        evaluated = monitor.maybe_evaluate(res.seconds)
        if monitor.result is not None:
            extra["expl"] = f"{monitor.result.mbb_per_game:.3f} mbb/g"
        rss = rss_gib()
        extra["rss"] = f"{rss:.2f} GiB"
        if args.checkpoint_every and res.seconds - monitor.last_ckpt >= args.checkpoint_every:
            monitor.last_ckpt = res.seconds
            save_checkpoint(checkpoint_path, s, seconds=done_seconds + res.seconds)
        progress.update(res.iterations, spent=res.seconds, **extra)
        t = done_seconds + res.seconds
        if metrics.due(t, evaluated):
            line = measures(res, rss)
            if evaluated and monitor.result is not None:
                line["exploitability"] = monitor.result.exploitability
                line["mbb_per_game"] = monitor.result.mbb_per_game
            metrics.write(t, line)
        return False

    try:
        res = TrainResult()
        if (left is None or left > 0) and (seconds_left is None or seconds_left > 0):
            # SIGINT and SIGTERM only ask the loop to stop after the batch under way, so
            # the tables never hold a batch the iteration count leaves out
            with stop_on_signals() as stop:
                res = train(
                    solver, iterations=left, seconds=seconds_left, callback=callback, stop=stop
                )
        interrupted = res.interrupted
        wrote_ckpt = None
        if interrupted or args.checkpoint is not None or args.checkpoint_every:
            # first what a resumed run needs, then the evaluation (which may be long)
            save_checkpoint(checkpoint_path, solver, seconds=done_seconds + res.seconds)
            wrote_ckpt = str(checkpoint_path)
        strategy = average() if can_eval or args.final_eval else solver.average_strategy()
        # The abstract responder of a card abstraction walks the tree once per level of its
        # decisions: past the size limit --final-eval measures the real game only.
        evaluate: Callable[[Strategy], tuple[Result | None, Result]] | None = None
        if can_eval:
            evaluate = abstract_and_real_exploitability
        elif args.final_eval:
            evaluate = lambda s: (None, exploitability(None, s))  # noqa: E731
        final, real = evaluate(strategy) if evaluate is not None else (None, None)
        last = measures(res, rss_gib(), final=True)
        last.update(
            exploitability=final.exploitability if final is not None else None,
            mbb_per_game=final.mbb_per_game if final is not None else None,
            real_exploitability=real.exploitability if real is not None else None,
            real_mbb_per_game=real.mbb_per_game if real is not None else None,
            interrupted=interrupted,
            signal=signal.Signals(res.signal).name if res.signal is not None else None,
            final=True,
        )
        metrics.write(last["t"], last)
    finally:
        metrics.close()
    end: dict[str, Any] = {"expl": f"{final.mbb_per_game:.3f} mbb/g"} if final is not None else {}
    progress.update(res.iterations, spent=res.seconds, **end)
    progress.close()
    stored, stored_real = final, real
    if evaluate is not None and args.precision == "u8":
        # the figures the file can claim are those of the policy it stores
        q = dequantize(quantize(strategy.policy, problem.tree, problem.offset, list(problem.chance.n_buckets)))
        stored, stored_real = evaluate(Strategy(problem, q, strategy.iterations, strategy.algorithm))
    training = {
        "algorithm": args.algo,
        "iterations": int(solver.iterations),
        "seconds": round(done_seconds + res.seconds, 3),
        "seed": args.seed if sampled else None,
        "threads": options.get("threads", 1),
        "options": solver.options() if sampled else dict(options),
        "recipe": "pokerbot " + " ".join(_recipe_args(sys.argv[1:])),
    }
    if args.config is not None:
        # the recipe names the file; its settings are kept in case the file changes
        training["config"] = {
            "file": str(args.config),
            **{k: str(v) if isinstance(v, Path) else v for k, v in args.config_values.items()},
        }
    evaluation: dict[str, Any] = {}
    if stored_real is not None:
        evaluation = {
            "precision": args.precision,
            "exploitability": stored.exploitability if stored is not None else None,
            "mbb_per_game": stored.mbb_per_game if stored is not None else None,
            "real_exploitability": stored_real.exploitability,
            "real_mbb_per_game": stored_real.mbb_per_game,
        }
    save_strategy(args.out, strategy, args.precision, training=training, evaluation=evaluation)
    doc = {
        "game": game.name,
        "algorithm": args.algo,
        "betting": problem.tree.betting_spec,
        "options": solver.options() if sampled else dict(options),
        "iterations": solver.iterations,
        "iterations_this_run": res.iterations,
        "seconds": round(res.seconds, 6),
        "iterations_per_s": res.iterations / res.seconds if res.seconds > 0 else None,
        "nodes_per_s": res.nodes / res.seconds if sampled and res.seconds > 0 else None,
        "threads": options.get("threads", 1),
        "seed": args.seed if sampled else None,
        "table_entries": problem.size,
        "abstraction": cards_record(problem) if abstraction is not None else None,
        "exploitability": final.exploitability if final is not None else None,
        "mbb_per_game": final.mbb_per_game if final is not None else None,
        "real_exploitability": real.exploitability if real is not None else None,
        "real_mbb_per_game": real.mbb_per_game if real is not None else None,
        "precision": args.precision,
        "stored_exploitability": stored.exploitability if stored is not None else None,
        "stored_real_exploitability": stored_real.exploitability if stored_real is not None else None,
        "out": str(args.out),
        "checkpoint": wrote_ckpt,
        "interrupted": interrupted,
        "signal": signal.Signals(res.signal).name if res.signal is not None else None,
    }
    if args.json:
        print(json.dumps(doc))
    else:
        expl = ""
        if real is not None:
            expl = f", exploitability {final.mbb_per_game:.4f} mbb/g" if final is not None else ", exploitability"
            if abstraction is not None:
                expl += (" in the abstract game," if final is not None else "") + \
                    f" {real.mbb_per_game:.4f} mbb/g in the real game"
            if stored_real is not None and args.precision == "u8":
                expl += f" (as stored, one byte per probability: {stored_real.mbb_per_game:.4f} mbb/g)"
        print(
            f"{args.algo}: {solver.iterations:,} iterations{expl}; wrote {args.out}"
            + (f" and checkpoint {wrote_ckpt}" if wrote_ckpt else "")
        )
    if interrupted:
        signum = res.signal if res.signal is not None else int(signal.SIGINT)
        print(
            f"pokerbot train: stopped by {signal.Signals(signum).name} after "
            f"{solver.iterations:,} iterations; to continue, run the same command with "
            f"--resume {shlex.quote(str(checkpoint_path))}",
            file=sys.stderr,
        )
        return 128 + signum  # 130 for SIGINT, 143 for SIGTERM, as a shell reports them
    return 0


def _load_resume(path: Path) -> Checkpoint:
    """``--resume``'s checkpoint; a missing file is a :class:`UserError` saying what to do."""
    if not path.exists():
        raise UserError(
            f"--resume {path}: cannot read (no such file); a run stopped before its first "
            "checkpoint has nothing to resume: run the command without --resume to start over"
        )
    return load_checkpoint(path)


def _recipe_args(argv: list[str]) -> list[str]:
    """The command line as it was given, quoted where a word needs it (the file's recipe):
    with --config, 'train --config FILE' and the options that override it, as given."""
    return [shlex.quote(a) for a in argv]
