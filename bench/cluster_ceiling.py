"""The most deals any design with local copies of the tables can make on this machine.

``pokerbot train --cluster`` gives each worker its own copy of the regret and average
tables (:mod:`solver.training.cluster`). Before any round, delta or exchange, two copies
cost something on their own: each process reads and writes its own 264 MB of float32
tables (and its own bucket tables) where two Hogwild threads share one, so the machine's
caches hold half as much of each. This benchmark measures that cost alone, with no Ray:

* ``hogwild``: one ``pokerbot train`` process, two Hogwild threads on one copy;
* ``separate``: two processes at once, one thread each, each on its own tables, seeds 1
  and 2 (the kernel's speed does not depend on the seed), their deals/s summed.

Both train external sampling over the full deck's 169/1000/1000/1000 abstraction
(:data:`bench._fulldeck.FULL_DECK_PARAMS`, the bench cache) for ``--seconds`` (120) of
training each, on the betting of ``--bettings`` (``shipped``: 33,008,731 entries;
``1p,cap1``: 313,521), alternating ``--repeats`` (2) times so that both sides share the
machine's drift. ``ratio`` = separate / Hogwild deals per second, per repeat and pooled:
a cluster of two one-thread workers on this machine deals at most that fraction of
Hogwild's hands, before its rounds cost anything.

Prints one JSON object as its last line (and writes it to ``--out``). Seconds: about
``2 x repeats x (seconds + 15)`` a betting.

Usage: ``python bench/cluster_ceiling.py [--seconds T] [--repeats R] [--bettings B ...] [--out FILE]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._fulldeck import FULL_DECK_GAME, FULL_DECK_PARAMS, cached_abstraction, log  # noqa: E402
from bench.cluster import BETTINGS, train  # noqa: E402
from poker._atomic import atomic_write_bytes  # noqa: E402


def child(ab_dir: str, betting: str, seconds: float, threads: int, seed: int, out: str) -> dict[str, Any]:
    """One training run in this process (bench/cluster.py's, without Ray); its deals and
    training seconds."""
    run = train(Path(ab_dir), betting, seconds, Path(out), cluster=False, threads=threads, seed=seed)
    return {"deals": run["deals"], "seconds": run["seconds"]}


def spawn(ab_dir: Path, betting: str, seconds: float, threads: int, seed: int, out: Path) -> subprocess.Popen[str]:
    """A child process running :func:`child`; it prints its result as JSON."""
    argv = [sys.executable, __file__, "--child", str(ab_dir), betting, str(seconds), str(threads), str(seed), str(out)]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)


def collect(proc: subprocess.Popen[str]) -> dict[str, Any]:
    """What a child printed; a child that failed stops the benchmark in one line."""
    out, _ = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"a training process exited with status {proc.returncode}")
    return json.loads(out.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        ab_dir, betting, seconds, threads, seed, out = argv[1:7]
        print(json.dumps(child(ab_dir, betting, float(seconds), int(threads), int(seed), out)), flush=True)
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=120.0, help="training seconds a run")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--bettings", nargs="+", choices=sorted(BETTINGS), default=["shipped"])
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    if not args.seconds > 0 or args.repeats < 1:
        ap.error("--seconds takes positive seconds and --repeats at least 1")

    from poker.game import load_game

    # mapped here: only the children train, each reading the tables into its own memory
    ab, ab_info = cached_abstraction(load_game(FULL_DECK_GAME), FULL_DECK_PARAMS)
    ab_dir = Path(str(ab.directory))
    doc: dict[str, Any] = {"game": FULL_DECK_GAME, "abstraction": {**ab_info, "buckets": ab.bucket_counts},
                           "algorithm": "es", "seconds": args.seconds, "bettings": {}}  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        for name in args.bettings:
            betting = BETTINGS[name]
            rows = []
            for r in range(args.repeats):
                log(f"{name}, repeat {r + 1}: Hogwild, 2 threads, {args.seconds:g} s")
                hog = collect(spawn(ab_dir, betting, args.seconds, 2, 1, t / "hog.strategy"))
                log(f"{name}, repeat {r + 1}: two processes of 1 thread, {args.seconds:g} s")
                procs = [spawn(ab_dir, betting, args.seconds, 1, 1 + k, t / f"sep{k}.strategy") for k in range(2)]
                sep = [collect(p) for p in procs]
                hog_rate = hog["deals"] / hog["seconds"]
                sep_rate = sum(s["deals"] / s["seconds"] for s in sep)
                rows.append({"hogwild": {**hog, "deals_per_s": round(hog_rate)},
                             "separate": [{**s, "deals_per_s": round(s["deals"] / s["seconds"])} for s in sep],
                             "separate_deals_per_s": round(sep_rate), "ratio": round(sep_rate / hog_rate, 3)})  # fmt: skip
                log(f"{name}, repeat {r + 1}: Hogwild {hog_rate:,.0f} deals/s, separate {sep_rate:,.0f}, "
                    f"ratio {sep_rate / hog_rate:.3f}")
            pooled = sum(x["separate_deals_per_s"] for x in rows) / sum(x["hogwild"]["deals_per_s"] for x in rows)
            doc["bettings"][name] = {"betting": betting, "repeats": rows, "ratio": round(pooled, 3)}
    text = json.dumps(doc)
    if args.out:
        atomic_write_bytes(args.out, (text + "\n").encode())
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
