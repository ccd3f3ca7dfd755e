"""How sound a hold'em blueprint looks from the inside, for one file or several side by side.

For each strategy file, three figures the blueprint issue asks of a retrained file:

- ``uniform_rows``: per street, the share of stored rows with every action within one
  step of equal (``pokerbot inspect FILE --json``; a row whose average was never
  updated is stored this way unless training kept its current strategy);
- ``order``: Spearman's correlation, over the 169 preflop classes, of the button's
  opening raise probability (all sizes and all-in together) with the class's equity
  against a random hand (``pokerbot inspect FILE --grid --json``);
- ``uniform_decisions`` (unless ``--no-matches``): the share of the strategy player's
  decisions drawn from a uniform row in a duplicate match against ``equity`` and
  against ``random`` (``--hands`` per seating, 10,000 by default: 20,000 hands a match;
  through :mod:`bench.shipped`'s match runner, the recipe's bucket tables when built).

    python bench/blueprint_quality.py strategies/holdem.nolimit.2p.reverse_blinds.strategy \\
        strategies/holdem.nolimit.2p.reverse_blinds.tcfr.strategy --jobs 2

Prints one JSON object as its last line; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from shipped import file_game, run_match  # noqa: E402  (after the path)

BOTS = ("equity", "random")


def _inspect(path: Path, *extra: str) -> dict:
    cmd = [sys.executable, "-m", "agent", "inspect", str(path), "--json", "--tables", "none", *extra]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"inspect failed ({out.returncode}): {' '.join(cmd)}\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def inside(path: Path) -> dict:
    """The file's uniform rows per street and its preflop order."""
    meta = _inspect(path)
    grid = _inspect(path, "--grid")
    return {"file": path.name, "file_bytes": meta["file_bytes"], "uniform_rows": meta["uniform_rows"],
            "order": grid["order"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", type=Path, help="hold'em strategy files")
    ap.add_argument("--hands", type=int, default=10_000, help="hands per seating (default 10,000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1, help="matches side by side, each pinned to one CPU")
    ap.add_argument("--no-matches", action="store_true", help="the file's figures only")
    args = ap.parse_args()
    t0 = time.perf_counter()
    results = []
    for path in args.files:
        if not path.is_file():
            raise SystemExit(f"blueprint_quality: no such file {path}")
        r = inside(path)
        print(f"{path.name}: uniform rows {r['uniform_rows']['shares']}, order {r['order']['raise_vs_equity']:.3f}",
              file=sys.stderr, flush=True)
        results.append(r)
    if not args.no_matches:
        jobs = [(i, bot) for i in range(len(args.files)) for bot in BOTS]
        with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(max(1, args.jobs)) as pool:
            def one(k: int) -> dict:
                i, bot = jobs[k]
                path = args.files[i]
                cpus = str(k % 2) if args.jobs > 1 else None
                m = run_match(file_game(path), path, bot, args.hands, args.seed, Path(tmp) / f"{k}.log", cpus)
                t = m["translation"] or {}
                share = t.get("uniform", 0) / t["decisions"] if t.get("decisions") else None
                print(f"{path.name} vs {bot}: {t.get('uniform')} of {t.get('decisions')} decisions on uniform rows",
                      file=sys.stderr, flush=True)
                return {"bot": bot, "hands": m["hands"], "decisions": t.get("decisions"),
                        "uniform": t.get("uniform"), "share": share, "fallback": t.get("fallback"),
                        "mbb_per_game": m["mbb_per_game"], "ci95": m["ci95"]}

            for (i, _), m in zip(jobs, pool.map(one, range(len(jobs)))):
                results[i].setdefault("uniform_decisions", []).append(m)
    print(json.dumps({"hands_per_seating": None if args.no_matches else args.hands, "seed": args.seed,
                      "results": results, "total_s": round(time.perf_counter() - t0, 1)}))


if __name__ == "__main__":
    main()
