"""``pokerbot abstract``: build the card abstraction (buckets per street) of a game."""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from typing import Any

from agent.commands.options import UserError, parse_buckets
from abstraction.plan import METRICS
from agent.progress import StageBars

_EXAMPLES = """\
examples:
  pokerbot abstract holdem.nolimit.2p.short24 --buckets 36,200,200,200 --out abs/short24
  pokerbot abstract holdem.nolimit.2p.reverse_blinds --buckets 169,200,200,200 --dry-run --json
  pokerbot abstract holdem.nolimit.2p.reverse_blinds --buckets 169,1000,1000,1000 --out abs/hu1000
  pokerbot abstract holdem.nolimit.2p.short20 --buckets 25,60,60,60 --history --out abs/short20h
  pokerbot abstract leduc.limit.2p --buckets 3,3 --out abs/leduc

A street whose bucket count equals its number of canonical hands is lossless (169 preflop
on the full deck). An interrupted build (Ctrl-C or SIGTERM stop it within about a second)
restarts at the stage it was in: run the same command again. The first build on a machine
also compiles its kernels (numba caches them for later runs): --dry-run counts that time
while the cache is cold, and the bars say "compiling (first run only)" meanwhile.
"""


class _Bars(StageBars):
    """:class:`StageBars` that also show what a stage waits on before it counts work
    (``phase(stage, text)``: compiling, k-means's seeding and first assignment). A phase
    whose text only counts on is redrawn at most once per redraw interval of the bar, so
    logs stay short; a new kind of phase is drawn at once. When work is first counted
    after a phase, the phase is drawn one last time (with the time it took) in place of
    that update, whose rate, measured from one count, would still include the phase."""

    def __init__(self, enabled: bool) -> None:
        super().__init__(enabled)
        self._shown: tuple[str, str, float] = ("", "", 0.0)  # stage, kind of phase, when drawn
        self._waiting: str | None = None  # the current stage's phase, until work is counted

    def __call__(self, stage: str, done: float, total: float) -> None:
        if stage != self.stage:
            self._waiting = None
        elif self._waiting is not None and done > 0 and self.bar is not None:
            self.bar.phase(self._waiting)
            self._waiting = None
        super().__call__(stage, done, total)

    def phase(self, stage: str, text: str | None) -> None:
        if stage != self.stage:
            self(stage, 0, 1)
        if self.bar is None:
            return
        self._waiting = text
        kind = "" if text is None else re.split(r"\d", text, maxsplit=1)[0]
        now = time.monotonic()
        last_stage, last_kind, at = self._shown
        if (stage, kind) == (last_stage, last_kind) and now - at < self.bar.interval:
            return
        self._shown = (stage, kind, now)
        self.bar.phase(text)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``abstract`` subcommand."""
    p = sub.add_parser(
        "abstract",
        help="build card buckets (features -> k-means) for a game",
        description=(
            "Build the card abstraction of a two-player hold'em-like game: per street, river "
            "E[HS] or the histogram of river E[HS] over the run-outs, clustered by weighted "
            "k-means; tables indexed by canonical hand, centroids and metadata go to --out."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_EXAMPLES,
    )
    p.add_argument("game", help="a shipped game name or a .game file")
    p.add_argument("--buckets", required=True, help="buckets per street, comma-separated (e.g. 169,200,200,200)")
    p.add_argument("--out", help="output directory (required unless --dry-run)")
    p.add_argument("--history", action="store_true", help="history-carrying buckets (previous street's bucket x own)")
    p.add_argument("--seed", type=int, default=0, help="k-means seed (default 0)")
    p.add_argument("--bins", type=int, default=32, help="histogram bins of river E[HS] (default 32)")
    p.add_argument("--metric", choices=METRICS, default="emd",
                   help="emd: L2 on the histogram CDF (default); moments: (E[HS], E[HS^2])")
    p.add_argument("--history-weight", type=float, default=0.5,
                   help="weight of the previous street in history buckets (default 0.5)")
    p.add_argument("--max-iter", type=int, default=60, help="k-means iterations at most (default 60)")
    p.add_argument("--memory-limit", type=float, metavar="GIB",
                   help="refuse builds predicted to need more (default: the machine's available memory)")
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="run the feature stages and k-means's assignment steps on a Ray cluster (HOST:PORT "
                   "of its head, 'auto' or 'local'; the optional cluster extra): the same files, byte for byte")
    p.add_argument("--workers", type=int, metavar="N", help="--cluster: CPUs of the cluster to use (tasks at once)")
    p.add_argument("--dry-run", action="store_true", help="build nothing: print sizes and predicted time and memory")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Plan (``--dry-run``) or build the abstraction; returns the exit status."""
    from abstraction.build import build_abstraction
    from abstraction.plan import AbstractionParams, plan_build
    from poker._sysinfo import available_memory_gib, peak_memory_gib
    from poker.game import load_game

    game = load_game(args.game)
    params = AbstractionParams(
        buckets=parse_buckets(args.buckets),
        history=args.history,
        seed=args.seed,
        bins=args.bins,
        metric=args.metric,
        history_weight=args.history_weight,
        max_iter=args.max_iter,
    )
    plan = plan_build(game, params)
    available = available_memory_gib()
    limit = args.memory_limit if args.memory_limit is not None else available
    if args.dry_run:
        out: dict[str, Any] = {
            "game": game.name,
            "dry_run": True,
            "history": params.history,
            "streets": [s.to_json() for s in plan.streets],
            "seconds": plan.seconds,
            "compile_seconds": plan.compile_seconds,
            "peak_gib": plan.peak_gib,
            "memory_limit_gib": round(limit, 3),
            "fits_memory": plan.peak_gib <= limit,
        }
        if not args.json:
            for s in plan.streets:
                print(
                    f"{s.name:<8} {s.buckets:>8,} buckets of {s.canonical_hands:>15,} canonical hands "
                    f"({s.kind:<8}) ~{s.seconds:>8.1f} s  ~{s.peak_gib:.2f} GiB"
                )
            compiling = (f" ({plan.compile_seconds:.0f} s of it compiling kernels, first run only)"
                         if plan.compile_seconds else "")
            print(f"total   ~{plan.seconds:.0f} s{compiling}, peak ~{plan.peak_gib:.2f} GiB (limit {limit:.2f} GiB)")
        if not out["fits_memory"]:
            print(f"pokerbot abstract: warning: predicted peak {plan.peak_gib:.2f} GiB exceeds {limit:.2f} GiB",
                  file=sys.stderr)
        if args.json:
            print(json.dumps(out))
        return 0
    if not args.out:
        raise UserError("--out DIR is required (or use --dry-run)")
    if args.workers is not None and args.cluster is None:
        raise UserError("--workers needs --cluster")
    cluster = None
    if args.cluster is not None:
        from abstraction.cluster import FeatureCluster

        if args.workers is None:
            raise UserError("--cluster needs --workers N")
        cluster = FeatureCluster(args.cluster, args.workers, say=lambda line: print(line, file=sys.stderr, flush=True))
    bars = _Bars(enabled=not args.quiet)
    try:
        report = build_abstraction(game, params, args.out, progress=bars, memory_limit_gib=limit, cluster=cluster,
                                   phase=bars.phase)
    finally:
        bars.close()
        if cluster is not None:
            cluster.close()
    ab = report.abstraction
    peak = peak_memory_gib()
    streets = [
        {
            "street": s.street, "name": s.name, "buckets": s.buckets, "canonical_hands": s.canonical_hands,
            "kind": s.kind,
        }
        for s in plan.streets
    ]
    if args.json:
        print(json.dumps({
            "game": game.name, "out": str(args.out), "history": params.history, "streets": streets,
            "stages": report.stages, "seconds": report.seconds, "peak_gib": round(peak, 3),
            "content_hash": ab.content_hash,
            **({} if cluster is None else {"cluster": {
                "workers": cluster.workers, "feature_tasks": cluster.tasks,
                "assignment_steps": cluster.assign_steps, "bytes_in": cluster.bytes_in,
            }}),
        }))
    else:
        for st in report.stages:
            how = "reused" if st["reused"] else f"{st['seconds']:.1f} s"
            print(f"{st['stage']:<18} {how}")
        print(f"built {ab!r} in {report.seconds:.1f} s, peak memory {peak:.2f} GiB -> {args.out}")
    return 0
