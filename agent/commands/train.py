"""``pokerbot train``: solve the abstract game with a CFR-family algorithm and write the
average strategy (solver.strategy_io), with checkpoints to stop and resume. With
``--abstraction DIR`` the information sets are (decision node, card bucket) of a card
abstraction built by ``pokerbot abstract``; the strategy file and checkpoints record it.

This module is the command line only: argv and a ``--config`` TOML file merged into a
:class:`solver.training.config.TrainingConfig`, the run itself
(:func:`solver.training.run.run_training`) drawn as a progress bar after its plan (predicted
time and memory, :mod:`solver.training.plan`), and the report; ``--dry-run`` prints the
plan alone (:func:`solver.training.run.plan_training`)."""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import shlex
import signal
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path
from typing import Any

from abstraction.plan import METRICS as ABSTRACT_METRICS
from abstraction.plan import AbstractionParams
from solver.training.algorithms import ALGORITHMS, FORMS
from solver.training.cluster import HEAD_TIMEOUT, MAX_HEAD_TIMEOUT, SYNC_SECONDS, ClusterError, ClusterOptions
from solver.training.config import (
    AVERAGING,
    DEEP_KEYS,
    DISCOUNTS,
    DTYPES,
    FALLBACKS,
    PRECISIONS,
    AlgorithmConfig,
    Budget,
    CheckpointConfig,
    ConfigError,
    EvaluationConfig,
    TrainingConfig,
)
from poker._compile import COMPILING
from poker._sysinfo import GIB, available_memory_gib
from solver.training.checkpoint import load_checkpoint
from solver.training.memory import format_bytes
from solver.training.plan import PILOT_SECONDS, PILOT_SHARE
from solver.training.run import (
    EVAL_MAX_ENTRIES,
    METRICS_MAX_GAP,
    TABLE_STATS_ENTRIES,
    TABLE_STATS_GAP,
    EvaluationProgress,
    TrainingPlan,
    TrainingProgress,
    TrainingRun,
    plan_training,
    run_training,
)

from .options import UserError, parse_buckets
from ..progress import Progress, StageBars

#: Keys a ``--config`` TOML file may set: key -> (kind, choices or None). Each is the
#: command-line option of the same name (``_`` for ``-``); ``game`` is the positional.
#: Kinds: "str", "path" (a string, relative to the current directory), "int", "float"
#: (an integer is accepted), "bool".
CONFIG_KEYS: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "game": ("str", None),
    "betting": ("str", None),
    "abstraction": ("path", None),
    "abstract_buckets": ("str", None),
    "abstract_seed": ("int", None),
    "abstract_history": ("bool", None),
    "abstract_bins": ("int", None),
    "abstract_metric": ("str", ABSTRACT_METRICS),
    "abstract_history_weight": ("float", None),
    "abstract_max_iter": ("int", None),
    "algo": ("str", ALGORITHMS),
    "seconds": ("float", None),
    "iterations": ("int", None),
    "threads": ("int", None),
    "seed": ("int", None),
    "dtype": ("str", DTYPES),
    "precision": ("str", PRECISIONS),
    "unaveraged": ("str", FALLBACKS),
    "averaging": ("str", AVERAGING),
    "form": ("str", FORMS),
    "targeting": ("str", None),
    "epsilon": ("float", None),
    "probe": ("bool", None),
    "as_beta": ("float", None),
    "as_tau": ("float", None),
    **{k: ("int", None) for k in DEEP_KEYS},
    "importance": ("bool", None),
    "regret_floor": ("bool", None),
    "close_threshold": ("float", None),
    "pure": ("bool", None),
    "discount": ("str", DISCOUNTS),
    "discount_every": ("int", None),
    "discount_until": ("int", None),
    "dcfr_alpha": ("float", None),
    "dcfr_beta": ("float", None),
    "dcfr_gamma": ("float", None),
    "prune_threshold": ("float", None),
    "prune_after": ("int", None),
    "prune_share": ("float", None),
    "prune_floor": ("float", None),
    "checkpoint": ("path", None),
    "checkpoint_every": ("float", None),
    "eval_every": ("float", None),
    "final_eval": ("bool", None),
    "out": ("path", None),
    "metrics": ("path", None),
    "cluster": ("str", None),
    "workers": ("int", None),
    "sync_seconds": ("float", None),
    "sync_iterations": ("int", None),
    "hot_syncs": ("int", None),
    "hot_async": ("bool", None),
    "cluster_timeout": ("float", None),
}
#: The keys of a cluster run (each needs ``cluster``).
CLUSTER_KEYS = ("workers", "sync_seconds", "sync_iterations", "hot_syncs", "hot_async", "cluster_timeout")
#: The keys that say how to build the card abstraction (each needs ``abstract_buckets``):
#: the ``pokerbot abstract`` option of the same name without ``abstract_``.
ABSTRACT_KEYS = (
    "abstract_seed", "abstract_history", "abstract_bins", "abstract_metric",
    "abstract_history_weight", "abstract_max_iter",
)  # fmt: skip
#: The discount and pruning keys (each an AlgorithmConfig field of the same name).
SCHEDULE_KEYS = (
    "discount", "discount_every", "discount_until", "dcfr_alpha", "dcfr_beta", "dcfr_gamma",
    "prune_threshold", "prune_after", "prune_share", "prune_floor",
)  # fmt: skip
#: Values of the keys above when neither the command line nor the config gives them.
DEFAULTS: dict[str, Any] = {
    "seed": 0,
    "threads": 1,
    "dtype": "auto",
    "precision": "u8",
    "unaveraged": "current",
    "averaging": "uniform",
    "form": "vector",
    "importance": False,
    "regret_floor": False,
    "pure": False,
    "probe": False,
    "final_eval": False,
}
#: What a run cannot do without (after merging the config and the command line).
_REQUIRED = (("game", "GAME"), ("algo", "--algo"), ("out", "--out"))


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``train`` subcommand."""
    p = sub.add_parser(
        "train",
        help="solve the abstract game (cfr, cfr+, lcfr, cs, pcs, es, os, as, tcfr, deep) and write the average strategy",
        description="\n\n".join(textwrap.fill(par, 88) for par in (
            "Train a strategy for GAME with vector-form CFR, CFR+ or Linear CFR (lcfr; exact "
            "traversal over all hands), public chance sampling (pcs: one board an iteration, "
            "every hand as a vector), chance sampling (cs: one deal an iteration, every action), "
            "external-, outcome- or average-strategy-sampling MCCFR (as), or Targeted CFR, "
            "until --seconds of "
            "solving and/or --iterations in total (a resumed run counts what its checkpoint did), and write the average strategy to "
            "--out. Information sets are (betting node, bucket of the actor's cards on that "
            "street): lossless buckets (every hand on every board) unless --abstraction DIR "
            "names a card abstraction built for this game by 'pokerbot abstract'. A progress "
            "bar shows deals/s (es/os/as/tcfr: one iteration deals one hand) or iterations/s "
            "(cfr, cfr+, lcfr, cs, pcs, deep) per second of solving (time spent evaluating or "
            "checkpointing not counted, as in --json and --metrics), the elapsed time and the time left (to the end of the --iterations "
            "or the --seconds budget, whichever comes first), nodes/s, resident memory and, "
            "where the game is small enough, the exploitability (mbb/g) in the abstract "
            "game; the final report adds the exploitability in the real card game. --algo deep "
            "(Deep CFR, the optional deep extra: pip install -e '.[deep]') trains networks "
            "instead of tables, on games whose information sets can all be listed without a "
            "card abstraction (Kuhn, Leduc); the strategy file holds its strategy network's "
            "output on every information set.",
            "The plan: once set up (the game, the card abstraction and the checkpoint loaded, "
            "the tables allocated, the kernels compiled), the run prints on stderr, before "
            "its first iteration, its predicted time (the setup as measured; the solving: "
            "what is left of --seconds, or the --iterations left at the rate of a pilot "
            f"run on a throwaway solver ({PILOT_SECONDS:g} s, at most {PILOT_SHARE:.0%} of "
            "the iterations left), which leaves the run's results unchanged, whichever ends "
            "first; writing the checkpoints, the metrics and "
            "the strategy file, scaled from the table's size; where numba's cache is cold, "
            "the compiling still to come, measured: first run only) and its predicted peak memory "
            "(the training memory of 'pokerbot tree' and its biggest part, what writing a "
            "checkpoint or the strategy file adds, and the interpreter's own); exact "
            "evaluations, on games small enough, "
            "are named, not predicted. --json adds it to the last line as \"plan\"; --quiet "
            "does not print it. --dry-run makes the same checks (folders, game, abstraction, "
            "checkpoint to resume, memory), prints the plan and exits 0, writing nothing: no "
            "strategy, checkpoint or metrics file; with a --seconds budget it allocates no "
            "table, with --iterations it runs the pilot (if twice the memory estimate "
            "fits); it needs no --out.",
            "Stopping and resuming: Ctrl-C (SIGINT) or SIGTERM ends the run at the end of "
            "the current batch of iterations (about 0.1 s): the strategy and a checkpoint "
            "(OUT.ckpt unless --checkpoint) are written and the exit status is 130 (SIGINT) "
            "or 143 (SIGTERM), within a second also during an exact evaluation (whose "
            "bar counts its walks' nodes); run the same command with --resume CHECKPOINT to continue "
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
            "precision, unaveraged, averaging, regret_floor, form, targeting, epsilon, probe, as_beta, as_tau, traversals, memory_size, net_width, net_layers, sgd_steps, batch_size, policy_steps, importance, close_threshold, "
            "pure, discount, discount_every, discount_until, dcfr_alpha, dcfr_beta, dcfr_gamma, "
            "prune_threshold, prune_after, prune_share, prune_floor, checkpoint, checkpoint_every, eval_every, final_eval, out, metrics, "
            "cluster, workers, sync_seconds, sync_iterations, hot_syncs, hot_async, cluster_timeout. "
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
            "run); for es/os/as/tcfr deals (= iterations: one deal each) and deals_per_s, nodes "
            "(touched in this run) and nodes_per_s; rss_gib (current resident memory from "
            "/proc/self/statm; the peak from getrusage where /proc is missing); "
            "infosets_visited_share (the share of information sets, rows (decision node, "
            "bucket) of the regret table, with any nonzero regret), regret_max (the largest "
            "cumulative regret) and regret_mean_positive (the mean of max(regret, 0) over "
            "every entry), measured on every line for tables of up to "
            f"{TABLE_STATS_ENTRIES:,} entries and, above, at most every {TABLE_STATS_GAP:g} s "
            "and on the last line (two passes over the table: about 0.1 s per 10M entries); "
            "nodes_per_deal (of this run: what pruning saves); discounts (with --discount: how "
            "many the run has applied); "
            "and exploitability / mbb_per_game (abstract game) when an evaluation happened "
            "then. The last line has \"final\": true, the final evaluation, \"interrupted\" "
            "and \"signal\" (SIGINT, SIGTERM or null), and \"evaluation_stopped\" (the signal "
            "that cut the final evaluation short, after which the strategy is written without "
            "its figures, or null).",
            "On a Ray cluster (the optional cluster extra: pip install -e '.[cluster]'): "
            "--cluster ADDRESS (HOST:PORT of a running cluster's head, 'auto', or 'local' for "
            "a Ray instance of this machine) --workers N trains es, os, as or tcfr on N worker "
            "processes of --threads Hogwild threads each. The driver (this process) keeps "
            "the tables; each round, every worker copies them, runs its share of the round's "
            "iterations with the same kernel and sends back what its copy gained (float32, "
            "sparse where that is smaller); the driver adds the mean. Rounds last "
            f"--sync-seconds (default {SYNC_SECONDS:g}) or --sync-iterations N a worker "
            "(then, with one thread a worker, the run repeats bit for bit). Iteration "
            "schedules (discounting, pruning, linear averaging, targeting) follow the "
            "driver's count. Every worker builds the game, the betting tree and the buckets "
            "itself and refuses to join, in one line, if they or its code differ from the "
            "driver's; a card abstraction is sent to each machine once. A worker that dies "
            "is replaced and its share run again; checkpoints and --resume work as on one "
            "machine (the driver writes them). A head that does not answer (an address "
            "where no Ray head listens, or one that stops answering mid-run) ends the run "
            "in one line after --cluster-timeout seconds, a run under way with the "
            "checkpoint of its last whole round.",
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
            "  pokerbot train leduc.limit.2p --algo cfr+ --abstraction abs/l33 --abstract-buckets 3,3 \\\n"
            "      --iterations 1000 --out l3.strategy   (builds abs/l33 first if it holds none)\n"
            "  pokerbot train --config strategies/leduc.limit.2p.toml --out mine.strategy --metrics m.jsonl\n"
            "  pokerbot train --config strategies/holdem.nolimit.2p.reverse_blinds.toml --dry-run\n"
            "\n"
            "a config (run.toml; 'pokerbot train --config run.toml --seed 2' overrides the seed):\n"
            "  game = \"leduc.limit.2p\"\n"
            "  algo = \"es\"\n"
            "  abstraction = \"abs/leduc\"   # relative to the current directory\n"
            "  abstract_buckets = \"3,3\"    # built first where abs/leduc holds none\n"
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
        "--abstract-buckets",
        metavar="LIST",
        help="with --abstraction DIR: how that abstraction is built (buckets per street, as "
        "'pokerbot abstract --buckets'); where DIR holds none yet the run builds it first "
        "(an interrupted build goes on from its stage), where DIR holds one built otherwise "
        "the run refuses to start; --dry-run predicts the build too",
    )
    p.add_argument("--abstract-seed", type=int, metavar="S", help="the build's k-means seed (default 0)")
    p.add_argument(
        "--abstract-history", action="store_true", default=None, help="history-carrying buckets"
    )
    p.add_argument("--abstract-bins", type=int, metavar="N", help="histogram bins (default 32)")
    p.add_argument(
        "--abstract-metric", choices=ABSTRACT_METRICS, help="the build's feature metric (default emd)"
    )
    p.add_argument(
        "--abstract-history-weight", type=float, metavar="W",
        help="weight of the previous street in history buckets (default 0.5)",
    )  # fmt: skip
    p.add_argument("--abstract-max-iter", type=int, metavar="N", help="k-means iterations at most (default 60)")
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
        help="seed of the algorithms that sample (es, os, as, tcfr, cs, pcs; default 0)",
    )
    p.add_argument(
        "--threads", type=int, metavar="K", help="Hogwild threads (es, os, as, tcfr)"
    )
    p.add_argument(
        "--dtype",
        choices=DTYPES,
        help="table precision of es/os/as/tcfr (auto: float32, or a resumed checkpoint's; "
        "cfr, cfr+, lcfr, cs and pcs always use float64)",
    )
    p.add_argument(
        "--precision",
        choices=PRECISIONS,
        help="stored policy: u8, one byte per probability, rows summing to 255 (default), or f32",
    )
    p.add_argument(
        "--unaveraged",
        choices=FALLBACKS,
        help="es/os/as/tcfr: what the strategy file plays where training never updated the "
        "average (Targeted CFR's partial iterations leave such rows): current, the current "
        "strategy (default), or uniform; the training record counts these rows per street",
    )
    p.add_argument(
        "--averaging",
        choices=AVERAGING,
        help="average-strategy weights of es/os/as/tcfr (default uniform)",
    )
    p.add_argument(
        "--regret-floor",
        action="store_true",
        default=None,
        help="es/os/as/tcfr: keep cumulative regrets at or above 0 (as regret-matching+ does)",
    )
    p.add_argument(
        "--form",
        choices=FORMS,
        help="cfr/cfr+: vector (default) or history: one walk per deal, repeating "
        "OpenSpiel's CFRSolver operation by operation (small games only)",
    )
    p.add_argument(
        "--epsilon",
        type=float,
        metavar="E",
        help="os: exploration (default 0.6); as: the least probability of exploring an action "
        "(default 0.05)",
    )
    p.add_argument(
        "--probe",
        action="store_true",
        default=None,
        help="os, as: an action the scheme leaves out gets the payoff of one play-out of the "
        "current strategy (a probe) instead of 0 (Gibson et al. 2012)",
    )
    p.add_argument(
        "--as-beta", type=float, metavar="B", help="as: beta, exploration of young rows (default 1e6)"
    )
    p.add_argument(
        "--as-tau", type=float, metavar="T", help="as: tau, weight of the average strategy (default 1000)"
    )
    for flag, meta, text in (
        ("--traversals", "K", "deep: external-sampling traversals per player and iteration (default 1000)"),
        ("--memory-size", "N", "deep: capacity of each reservoir memory, in samples (default 1,000,000)"),
        ("--net-width", "W", "deep: units of each hidden layer (default 64)"),
        ("--net-layers", "L", "deep: hidden layers (default 3)"),
        ("--sgd-steps", "S", "deep: Adam steps of each advantage network's training (default 1000)"),
        ("--batch-size", "B", "deep: minibatch size (default 1024)"),
        ("--policy-steps", "S", "deep: Adam steps of the strategy network (default: --sgd-steps)"),
    ):
        p.add_argument(flag, type=int, metavar=meta, help=text)
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
        "--discount",
        choices=DISCOUNTS,
        help="es/os/as/tcfr: discount regrets and average sums after every --discount-every "
        "iterations: linear (Linear CFR's t/(t+1)) or dcfr (Discounted CFR, alpha 1.5, beta 0, "
        "gamma 2, the paper's; with sampling, alpha 0.5, beta 1, gamma 1 measured best: README), t "
        "counting the batches (Brown & Sandholm 2019)",
    )
    p.add_argument(
        "--discount-every", type=int, metavar="N", help="iterations per discount batch (default 1,000,000)"
    )
    p.add_argument(
        "--discount-until",
        type=int,
        metavar="N",
        help="stop discounting after iteration N (Pluribus discounted its first 400 minutes only)",
    )
    for name, default in (("alpha", "1.5"), ("beta", "0"), ("gamma", "2")):
        p.add_argument(f"--dcfr-{name}", type=float, metavar="X", help=f"--discount dcfr: {name} (default {default})")
    p.add_argument(
        "--prune-threshold",
        type=float,
        metavar="C",
        help="es/tcfr: MCCFR-P (Pluribus): on --prune-share of the iterations skip the traverser's "
        "actions whose cumulative regret (chips) is below C < 0, except on the last street and "
        "actions that end the hand; regrets are floored at --prune-floor",
    )
    p.add_argument("--prune-after", type=int, metavar="N", help="iterations before pruning starts (default 0)")
    p.add_argument("--prune-share", type=float, metavar="P", help="share of iterations that prune (default 0.95)")
    p.add_argument(
        "--prune-floor", type=float, metavar="F", help="regret floor with pruning (default 31/30 of the threshold)"
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
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="train nothing, write nothing: check the run and print its plan (predicted "
        "time and memory)",
    )
    p.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="train on a Ray cluster: HOST:PORT of its head, 'auto', or 'local' (es, os, as, tcfr)",
    )
    p.add_argument("--workers", type=int, metavar="N", help="--cluster: worker processes (each --threads threads)")
    p.add_argument(
        "--sync-seconds",
        type=float,
        metavar="T",
        help=f"--cluster: seconds a round aims at (default {SYNC_SECONDS:g})",
    )
    p.add_argument(
        "--sync-iterations",
        type=int,
        metavar="N",
        help="--cluster: iterations a worker runs each round, instead of --sync-seconds",
    )
    p.add_argument(
        "--hot-syncs",
        type=int,
        metavar="S",
        help="--cluster: times a round the workers add up each other's preflop and flop "
        "deltas (the rows nearly every deal visits); default 0, only at the round's end",
    )
    p.add_argument(
        "--hot-async",
        action="store_true",
        default=None,
        help="--hot-syncs: each exchange adds what the workers have sent so far instead "
        "of waiting for all of them (no wait on the slowest; the run no longer repeats "
        "bit for bit)",
    )
    p.add_argument(
        "--cluster-timeout",
        type=float,
        metavar="T",
        help=f"--cluster: seconds to wait for a Ray head that does not answer, at the start "
        f"or mid-run, before the run ends with the checkpoint of its last whole round "
        f"(default {HEAD_TIMEOUT:g}, at most {MAX_HEAD_TIMEOUT:g}: Ray ends a driver whose head "
        "is gone for 60 s)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no plan")
    p.set_defaults(func=run)


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
    :class:`UserError` naming every one missing (--out not with ``dry_run``). Merging a merged namespace changes nothing."""
    merged = argparse.Namespace(**vars(args))
    config_path = getattr(args, "config", None)
    config = load_config(config_path) if config_path is not None else {}
    merged.config_values = config
    for key in CONFIG_KEYS:
        if getattr(args, key, None) is None:
            setattr(merged, key, config.get(key, DEFAULTS.get(key)))
    # a dry run writes nothing, so it needs no --out
    dry = getattr(args, "dry_run", False)
    missing = [
        flag
        for key, flag in _REQUIRED
        if getattr(merged, key) is None and not (dry and key == "out")
    ]
    if missing:
        where = f"on the command line or in --config {config_path}" if config_path else (
            "on the command line or in a --config file"
        )
        them = "it" if len(missing) == 1 else "them"
        raise UserError(f"missing {', '.join(missing)}: give {them} {where}")
    return merged


def config_from_args(args: argparse.Namespace) -> TrainingConfig:
    """The :class:`~solver.training.config.TrainingConfig` of merged options
    (:func:`merge_config`): the recipe is the command line as given, and a --config
    file's settings are recorded beside it. Bad values raise
    :class:`~solver.training.config.ConfigError` (one line)."""
    budget = Budget(seconds=args.seconds, iterations=args.iterations)
    checkpoint = CheckpointConfig(args.checkpoint, args.checkpoint_every, args.resume)
    evaluation = EvaluationConfig(args.eval_every, args.final_eval)
    algorithm = AlgorithmConfig(
        args.algo,
        form=args.form,
        averaging=args.averaging,
        regret_floor=args.regret_floor,
        epsilon=args.epsilon,
        probe=args.probe,
        as_beta=args.as_beta,
        as_tau=args.as_tau,
        **{name: getattr(args, name) for name in DEEP_KEYS},
        targeting=args.targeting,
        importance=args.importance,
        close_threshold=args.close_threshold,
        pure=args.pure,
        **{name: getattr(args, name) for name in SCHEDULE_KEYS},
    )
    record = None
    if args.config is not None:
        # the recipe names the file; its settings are kept in case the file changes
        values = {k: str(v) if isinstance(v, Path) else v for k, v in args.config_values.items()}
        record = {"file": str(args.config), **values}
    return TrainingConfig(
        abstract=_abstract_params(args),
        cluster=_cluster_options(args),
        game=args.game,
        algorithm=algorithm,
        budget=budget,
        out=args.out,
        betting=args.betting,
        abstraction=args.abstraction,
        threads=args.threads,
        seed=args.seed,
        dtype=args.dtype,
        precision=args.precision,
        unaveraged=args.unaveraged,
        checkpoint=checkpoint,
        metrics=args.metrics,
        evaluation=evaluation,
        recipe="pokerbot " + " ".join(_recipe_args(sys.argv[1:])),
        config_record=record,
    )


def _abstract_params(args: argparse.Namespace) -> AbstractionParams | None:
    """How to build the card abstraction (None without --abstract-buckets); another
    --abstract-* option without it is an error."""
    if args.abstract_buckets is None:
        for key in ABSTRACT_KEYS:
            if getattr(args, key) is not None:
                raise ConfigError(f"--{key.replace('_', '-')} needs --abstract-buckets")
        return None
    given = {key.removeprefix("abstract_"): getattr(args, key) for key in ABSTRACT_KEYS}
    return AbstractionParams(
        buckets=parse_buckets(args.abstract_buckets, "--abstract-buckets"),
        **{k: v for k, v in given.items() if v is not None},
    )


def _cluster_options(args: argparse.Namespace) -> ClusterOptions | None:
    """The run's :class:`~solver.training.cluster.ClusterOptions` (None without --cluster);
    a cluster option without --cluster is an error."""
    if args.cluster is None:
        for key in CLUSTER_KEYS:
            if getattr(args, key) is not None:
                raise ConfigError(f"--{key.replace('_', '-')} needs --cluster")
        return None
    if args.workers is None:
        raise ConfigError("--cluster needs --workers N")
    if args.sync_seconds is not None and args.sync_iterations is not None:
        raise ConfigError("give --sync-seconds or --sync-iterations, not both")
    try:
        return ClusterOptions(
            args.cluster,
            args.workers,
            sync_seconds=SYNC_SECONDS if args.sync_seconds is None else args.sync_seconds,
            sync_iterations=args.sync_iterations,
            hot_syncs=0 if args.hot_syncs is None else args.hot_syncs,
            hot_async=bool(args.hot_async),
            timeout=HEAD_TIMEOUT if args.cluster_timeout is None else args.cluster_timeout,
        )
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


class ProgressBar:
    """:func:`~solver.training.run.run_training`'s progress reports drawn as a
    :class:`~agent.progress.Progress` bar (deals/s or iterations/s, elapsed, the time
    left to the sooner budget, and the run's figures), after the run's plan if it has one."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.bar: Progress | None = None
        # the final evaluation's bar (its walks' nodes, with their own rate and ETA) and
        # what it evaluates
        self.eval_bar: Progress | None = None
        self.eval_what = ""

    def note(self, line: str) -> None:
        """Print ``line`` on stderr above the bar (a cluster worker's news)."""
        if self.bar is not None:
            self.bar.note(line)
        else:
            print(line, file=sys.stderr, flush=True)

    def _evaluation(self, e: EvaluationProgress) -> None:
        """Draw the final evaluation's progress on a bar of its own, below the training's."""
        if self.eval_bar is None or e.what != self.eval_what:
            if self.eval_bar is not None:
                self.eval_bar.close()
            elif self.bar is not None:
                self.bar.close()  # the training's last state stays above
            self.eval_what = e.what
            self.eval_bar = Progress(e.total, f"evaluate {e.what}", unit=" nodes", enabled=self.enabled)
            if e.compiling:
                self.eval_bar.phase(COMPILING)
        self.eval_bar.update(e.done)  # its last state is drawn when it closes

    def __call__(self, report: TrainingProgress) -> None:
        if report.stage == "start":
            if report.plan is not None and self.enabled:
                for line in report.plan.lines():
                    print(line, file=sys.stderr, flush=True)
            self.bar = Progress(
                report.iterations_budget,
                f"train {report.algorithm}",
                unit=report.unit,
                enabled=self.enabled,
                seconds=report.seconds_budget,
            )
            return
        assert self.bar is not None, "a run reports its start first"
        if report.stage == "evaluate" and report.evaluation is not None:
            self._evaluation(report.evaluation)
            return
        if report.stage == "end" and self.eval_bar is not None:
            # the training's bar ended as the evaluation began; the figures go to stdout
            self.eval_bar.close()
            self.eval_bar = None
            return
        self.bar.update(report.iterations, spent=report.seconds, **report.fields)
        if report.stage == "end":
            self.bar.close()


def _summary(run: TrainingRun) -> dict[str, Any]:
    """The ``--json`` object of a finished run."""
    config = run.config

    def figure(r: Any) -> float | None:
        return r.exploitability if r is not None else None

    return {
        "game": run.game.name,
        "algorithm": config.algorithm.name,
        "betting": run.problem.tree.betting_spec,
        "options": run.options,
        "iterations": run.iterations,
        "iterations_this_run": run.iterations_this_run,
        "seconds": round(run.seconds, 6),
        "iterations_per_s": run.iterations_per_s,
        "nodes_per_s": run.nodes_per_s,
        "threads": config.threads,
        "seed": config.seed if run.sampled else None,
        "table_entries": run.problem.size,
        "abstraction": run.cards,
        "exploitability": figure(run.final),
        "mbb_per_game": run.final.mbb_per_game if run.final is not None else None,
        "real_exploitability": figure(run.real),
        "real_mbb_per_game": run.real.mbb_per_game if run.real is not None else None,
        "precision": config.precision,
        "stored_exploitability": figure(run.stored),
        "stored_real_exploitability": figure(run.stored_real),
        "out": str(config.out),
        "checkpoint": str(run.checkpoint) if run.checkpoint is not None else None,
        "interrupted": run.interrupted,
        "signal": run.signal_name,
        "evaluation_stopped": signal.Signals(run.evaluation_stopped).name if run.evaluation_stopped else None,
        "plan": run.plan.to_dict() if run.plan is not None else None,
        "cluster": run.cluster,
    }


def _line(run: TrainingRun) -> str:
    """The one line a finished run prints without ``--json``."""
    config = run.config
    final, real, stored_real = run.final, run.real, run.stored_real
    expl = ""
    if real is not None:
        expl = f", exploitability {final.mbb_per_game:.4f} mbb/g" if final is not None else ", exploitability"
        if config.abstraction is not None:
            expl += (" in the abstract game," if final is not None else "") + \
                f" {real.mbb_per_game:.4f} mbb/g in the real game"
        if stored_real is not None and config.precision == "u8":
            expl += f" (as stored, one byte per probability: {stored_real.mbb_per_game:.4f} mbb/g)"
    return (
        f"{config.algorithm.name}: {run.iterations:,} iterations{expl}; wrote {config.out}"
        + (f" and checkpoint {run.checkpoint}" if run.checkpoint is not None else "")
    )


def run(args: argparse.Namespace) -> int:
    """Train, report, write the strategy (and checkpoints, and --metrics lines); ``args``
    as parsed (a --config file is merged here, see :func:`merge_config`); the training
    is :func:`solver.training.run.run_training`."""
    args = merge_config(args)
    config = config_from_args(args)
    if args.dry_run:
        return _dry_run(config, plan_training(config), args.json)
    if config.cluster is not None and getattr(args, "own_process", False) and not os.environ.get(_SUPERVISED):
        return _supervise(config.checkpoint_path)
    bar = ProgressBar(enabled=not args.quiet)
    stages = StageBars(enabled=not args.quiet)  # a card abstraction built first, if any

    def say(line: str) -> None:
        stages.close()  # the build's last bar, before the line that says it is done
        bar.note(line)

    frozen: list[bool] = []

    def progress(report: TrainingProgress) -> None:
        if report.stage == "evaluate" and not frozen:
            # What the run built (tables, problem, card abstraction, compiled kernels) lives
            # until the process ends: frozen, the collector stops scanning it. A full pass
            # over it took about a second on a loaded machine, a pause in which no signal
            # is handled, and the interpreter makes one more at exit (a stopped evaluation
            # then ended the process in 1.5 s instead of 0.3 s).
            gc.freeze()
            frozen.append(True)
        bar(report)

    try:
        result = run_training(
            config, progress=progress, plan=args.json or not args.quiet, say=say, build_progress=stages
        )
    except ClusterError:
        if bar.bar is not None:
            bar.bar.close()  # the error's line must not run on from the bar's
        raise
    finally:
        stages.close()
    print(json.dumps(_summary(result)) if args.json else _line(result))
    if result.interrupted:
        signum = result.signal if result.signal is not None else int(signal.SIGINT)
        print(
            f"pokerbot train: stopped by {signal.Signals(signum).name} after "
            f"{result.iterations:,} iterations; to continue, run the same command with "
            f"--resume {shlex.quote(str(result.config.checkpoint_path))}",
            file=sys.stderr,
        )
        return 128 + signum  # 130 for SIGINT, 143 for SIGTERM, as a shell reports them
    if result.evaluation_stopped is not None:
        signum = result.evaluation_stopped
        where = f"; the strategy is in {result.config.out}" if result.config.out is not None else ""
        print(f"pokerbot train: {signal.Signals(signum).name} stopped the final evaluation; the training "
              f"was complete{where}, without its exploitability figures", file=sys.stderr)
        return 128 + signum
    return 0


#: Set in the child process of a supervised cluster run (:func:`_supervise`).
_SUPERVISED = "POKERBOT_TRAIN_SUPERVISED"
#: The exit statuses pokerbot train ends with itself; any other is an abnormal end.
_OWN_STATUSES = frozenset({0, 2, 130, 143})


def _supervise(checkpoint: Path | None) -> int:
    """Run this command again in a child process and wait for it: a Ray driver whose node's
    object store goes away (the head's machine or Ray processes, when the driver runs
    there, as it usually does) is ended by Ray itself at once (exit 1, nothing printed,
    nothing written), so only a process outside it can say so in one line. The child's
    status is passed on; an abnormal end gets one ``pokerbot train: error:`` line naming
    the checkpoint left (the last one the run wrote: see --checkpoint-every) and status 2.
    Ctrl-C reaches the child through the terminal's process group; SIGTERM is passed on."""
    env = {**os.environ, _SUPERVISED: "1"}
    child = subprocess.Popen([sys.executable, "-m", "agent", *sys.argv[1:]], env=env,
                             preexec_fn=_die_with_parent)  # fmt: skip
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the child has it, and stops on it
    signal.signal(signal.SIGTERM, lambda signum, frame: child.send_signal(signum))
    try:
        status = child.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if status in _OWN_STATUSES:
        return status
    how = f"by signal {signal.Signals(-status).name}" if status < 0 else f"with status {status}"
    print(f"pokerbot train: error: the training process ended {how} without a word (Ray ends a driver at "
          f"once when its machine's Ray node goes away, as when the head dies); {_kept(checkpoint)}",
          file=sys.stderr, flush=True)
    return 2


def _die_with_parent() -> None:
    """In the child before it runs (Linux): be sent SIGTERM if the supervising process dies."""
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _kept(checkpoint: Path | None) -> str:
    """What an abnormally ended run left: its last checkpoint, and how to go on."""
    if checkpoint is None or not checkpoint.exists():
        return "it had written no checkpoint (--checkpoint-every T writes one every T seconds of solving)"
    try:
        iterations = load_checkpoint(checkpoint).iterations
    except ValueError as exc:
        return f"its checkpoint {checkpoint} does not read ({exc})"
    return (f"the checkpoint {checkpoint} holds {iterations:,} iterations: start the cluster again and run "
            f"the same command with --resume {shlex.quote(str(checkpoint))}")


def _dry_run(config: TrainingConfig, plan: TrainingPlan, as_json: bool) -> int:
    """Print a dry run's plan (one JSON object with ``as_json``); a predicted peak over the
    memory available now is a warning, as in ``pokerbot abstract --dry-run``."""
    available = available_memory_gib()
    fits = plan.peak_bytes <= available * GIB
    if as_json:
        print(json.dumps({
            "game": config.game,
            "algorithm": config.algorithm.name,
            "dry_run": True,
            "seconds": plan.to_dict()["seconds"],
            "peak_gib": round(plan.peak_bytes / GIB, 3),
            "memory_limit_gib": round(available, 3),
            "fits_memory": fits,
            "plan": plan.to_dict(),
        }))
    else:
        for line in plan.lines():
            print(line)
        print(
            f"dry run: nothing trained or written; {format_bytes(available * GIB)} of memory "
            "available now"
        )
    if not fits:
        print(
            f"pokerbot train: warning: predicted peak {format_bytes(plan.peak_bytes)} exceeds "
            f"the {format_bytes(available * GIB)} available now",
            file=sys.stderr,
        )
    return 0


def _recipe_args(argv: list[str]) -> list[str]:
    """The command line as it was given, quoted where a word needs it (the file's recipe):
    with --config, 'train --config FILE' and the options that override it, as given."""
    return [shlex.quote(a) for a in argv]
