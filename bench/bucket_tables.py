"""Bucket tables mapped from their files against read into memory, for training.

A full-deck training run looks up every dealt hand's bucket on every street in the card
abstraction's tables (the river's alone is 123,156,254 entries), at random. Read into the
process's memory, the tables get huge pages where the kernel's transparent huge pages
allow them; mapped from their files, they sit on 4 KiB pages and most lookups miss the
TLB. ``pokerbot train`` reads them (:func:`solver.training.dealt.load_training_abstraction`);
a player maps them (few lookups, and processes share the page cache).

Here both ways run in one process on the same cached abstraction (169/1000/1000/1000,
``bench/_fulldeck.py``; the first run builds it, about 10 minutes on two cores): external
sampling on one thread, float32 tables, alternating rounds of ``--seconds`` of CPU time
each way, for ``1p,cap1`` and the shipped betting. Per betting: iterations per CPU second
each way (the mean over the rounds and each round's figure) and ``read_over_mapped``,
the ratio of the means; ``huge_pages_kib``, the process's anonymous memory on huge pages
once both are loaded (Linux; None elsewhere). Prints one JSON object as its last line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._fulldeck import CACHE, FULL_DECK_GAME, FULL_DECK_PARAMS, cached_abstraction, log  # noqa: E402

SHIPPED = "0.5p,1p,2p,a/1p,a,cap3;0.5p,1p,a/1p,a,cap2"
BETTINGS = {"1p,cap1": "1p,cap1", "shipped": SHIPPED}
#: Iterations a call to the solver runs between looks at the clock.
STEP = 200_000


def huge_pages_kib() -> int | None:
    """Anonymous memory of this process on transparent huge pages (None: unknown)."""
    try:
        with open("/proc/self/smaps_rollup") as fh:
            return sum(int(line.split()[1]) for line in fh if line.startswith("AnonHugePages"))
    except OSError:
        return None


def run_for(solver: Any, seconds: float) -> float:
    """Iterate ``solver`` for ``seconds`` of this thread's CPU time; iterations a CPU second."""
    t0, n0 = time.thread_time(), solver.iterations
    while time.thread_time() - t0 < seconds:
        solver.iterate(STEP)
    return (solver.iterations - n0) / (time.thread_time() - t0)


def compare(betting: str, mapped: Any, read: Any, rounds: int, seconds: float) -> dict[str, Any]:
    from solver.training.algorithms import make_training_solver
    from solver.training.dealt import make_dealt_problem
    from solver.training.sampled import SamplingOptions

    solvers = {}
    for name, ab in (("mapped", mapped), ("read", read)):
        problem = make_dealt_problem(FULL_DECK_GAME, betting, abstraction=ab)
        solvers[name] = make_training_solver(problem, "es", SamplingOptions(seed=1, threads=1, dtype="float32"))
        solvers[name].iterate(STEP)  # compiled and every page touched once, outside the timing
    rates: dict[str, list[float]] = {"mapped": [], "read": []}
    for r in range(rounds):
        for name in ("mapped", "read") if r % 2 == 0 else ("read", "mapped"):
            rates[name].append(run_for(solvers[name], seconds))
        log(f"{betting}: round {r + 1}: mapped {rates['mapped'][-1]:,.0f}, read {rates['read'][-1]:,.0f} it/CPU s")
    mean = {k: sum(v) / len(v) for k, v in rates.items()}
    return {
        "entries": int(solvers["read"].regrets.size),
        "mapped_it_per_cpu_s": round(mean["mapped"]),
        "read_it_per_cpu_s": round(mean["read"]),
        "read_over_mapped": round(mean["read"] / mean["mapped"], 3),
        "rounds": {k: [round(x) for x in v] for k, v in rates.items()},
        "huge_pages_kib": huge_pages_kib(),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 rounds of 3 s each way, 1p,cap1 only")
    ap.add_argument("--rounds", type=int, default=6, help="rounds each way (default 6)")
    ap.add_argument("--seconds", type=float, default=15.0, help="CPU seconds a round (default 15)")
    ap.add_argument("--bettings", nargs="+", choices=list(BETTINGS), default=list(BETTINGS))
    args = ap.parse_args(argv)
    rounds, seconds, bettings = args.rounds, args.seconds, args.bettings
    if args.quick:
        rounds, seconds, bettings = 2, 3.0, ["1p,cap1"]
    from poker.game import load_game

    game = load_game(FULL_DECK_GAME)
    mapped, info = cached_abstraction(game, FULL_DECK_PARAMS)
    read, _ = cached_abstraction(game, FULL_DECK_PARAMS, training=True)
    out: dict[str, Any] = {"game": FULL_DECK_GAME, "abstraction": info, "rounds": rounds,
                           "seconds_a_round": seconds, "cache": str(CACHE), "bettings": {}}  # fmt: skip
    t0 = time.perf_counter()
    for name in bettings:
        out["bettings"][name] = compare(BETTINGS[name], mapped, read, rounds, seconds)
    out["seconds"] = round(time.perf_counter() - t0, 1)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
