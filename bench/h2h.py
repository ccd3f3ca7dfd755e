"""Exact head-to-head against a duplicate match: the interval after the same wall time.

For two strategy files of the same game, plays a duplicate match of A against B through
the real CLI (``pokerbot match GAME --players strategy:A strategy:B --hands N --duplicate``)
with N chosen so the match takes about ``--seconds`` (default 60, ``--quick`` 15), records
its wall time W, A's mbb/g and its 95% interval over deals; then runs
``pokerbot eval h2h A B --boards K`` with K chosen so it takes about the same wall time W
(the interval is over sampled final boards; each board is evaluated exactly over every
hand pair, action and translation draw). Both sides use the same two files on the same
machine, one after the other; the ratio of the interval half-widths is reported.

Games and players:

* ``holdem.nolimit.2p.short20``: A = the shipped ``strategies/holdem.nolimit.2p.short20.strategy``;
  B = a strategy the bench trains itself in a temporary directory (training time is
  excluded): a card abstraction ``pokerbot abstract ... --buckets 25,255,115,66 --seed 3``
  and ``pokerbot train ... --betting 1p,a --algo es --iterations 3000000 --seed 3`` over it
  (about 12 s; lossless buckets would make an 860 MB file and take a minute).
* ``leduc.nolimit.2p``: A = the shipped ``strategies/leduc.nolimit.2p.strategy``; B =
  ``--betting 1p,a`` CFR+ for 2,000 iterations. Every board takes a fraction of a second
  here, so the h2h side is the exact all-board computation (its interval is a point, the
  ratio is null) and ``match_error`` is the match's distance from the exact value.

Sizing: two pilot matches (20 and ``--pilot-hands`` per seating) give the start-up time
and the wall time per hand; a pilot h2h of two walks' worth of boards (64) gives ``seconds_per_board`` and the
process's fixed overhead.

Usage: ``python bench/h2h.py [--quick] [--seconds T] [--seed S]``. Progress goes to
stderr; the last line of stdout is one JSON object::

    {"quick", "target_seconds", "seed", "load_before", "load_after", "games": {game:
     {"a", "b", "match": {"hands", "seconds", "mbb_per_game", "ci95", "ci_halfwidth"},
      "h2h": {"boards", "boards_total", "seconds", "mbb_per_game", "ci95", "ci_halfwidth",
      "exact"}, "halfwidth_ratio"}}}

``hands`` counts both passes of the duplicate match (2N); ``seconds`` are wall times of
the whole CLI processes (start-up and strategy loading included).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from solver.evaluation.head_to_head import BOARDS_PER_WALK  # noqa: E402  (after the path)

HOLDEM = "holdem.nolimit.2p.short20"
LEDUC = "leduc.nolimit.2p"


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _cli(args: list[str], what: str) -> tuple[dict[str, Any], float]:
    """Run ``python -m agent ARGS`` from the repo root; its last-line JSON (or {}) and wall time."""
    cmd = [sys.executable, "-m", "agent", *args]
    t = time.perf_counter()
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - t
    if out.returncode != 0:
        raise SystemExit(f"{what} failed ({out.returncode}): {' '.join(cmd)}\n{out.stderr[-2000:]}")
    lines = out.stdout.strip().splitlines()
    doc = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else {}
    return doc, seconds


def train_holdem(tmp: Path) -> Path:
    abs_dir, out = tmp / "abs", tmp / "b_short20.strategy"
    _cli(["abstract", HOLDEM, "--buckets", "25,255,115,66", "--seed", "3", "--out", str(abs_dir)], "abstract")
    _cli(["train", HOLDEM, "--betting", "1p,a", "--abstraction", str(abs_dir), "--algo", "es",
          "--iterations", "3000000", "--seed", "3", "--out", str(out), "--quiet"], "train")
    return out


def train_leduc(tmp: Path) -> Path:
    out = tmp / "b_leduc.strategy"
    _cli(["train", LEDUC, "--betting", "1p,a", "--algo", "cfr+", "--iterations", "2000",
          "--out", str(out), "--quiet"], "train")
    return out


def match(game: str, a: Path, b: Path, hands: int, seed: int, tmp: Path) -> dict[str, Any]:
    doc, seconds = _cli(["match", game, "--players", f"strategy:{a}", f"strategy:{b}", "--hands", str(hands),
                         "--duplicate", "--seed", str(seed), "--json", "--quiet", "--no-aivat", "--log", str(tmp / "m.log")],
                        "match")
    if not doc.get("completed", False):
        raise SystemExit(f"match of {game} did not complete: {doc}")
    me = doc["players"][0]
    lo, hi = me["ci95"]
    return {"hands": doc["hands"], "hands_per_seating": hands, "seconds": round(seconds, 2),
            "mbb_per_game": round(me["mbb_per_game"], 2), "ci95": [round(lo, 2), round(hi, 2)],
            "ci_halfwidth": round((hi - lo) / 2, 2)}


def h2h(a: Path, b: Path, boards: int | None, seed: int) -> dict[str, Any]:
    args = ["eval", "h2h", str(a), str(b), "--seed", str(seed), "--json"]
    if boards is not None:
        args[4:4] = ["--boards", str(boards)]
    doc, seconds = _cli(args, "eval h2h")
    lo, hi = doc["ci95"]
    return {"boards": doc["boards"], "boards_total": doc["boards_total"], "seconds": round(seconds, 2),
            "compute_seconds": round(doc["seconds"], 2),
            "seconds_per_board": round(doc.get("seconds_per_board") or doc["seconds"] / max(doc["boards"], 1), 4),
            "mbb_per_game": round(doc["mbb_per_game"], 2), "ci95": [round(lo, 2), round(hi, 2)],
            "ci_halfwidth": round((hi - lo) / 2, 2), "exact": bool(doc["exact"])}


def compare(game: str, a: Path, b: Path, target: float, seed: int, pilot_hands: int, exact: bool,
            tmp: Path) -> dict[str, Any]:
    _log(f"{game}: A = {a.relative_to(ROOT) if a.is_relative_to(ROOT) else a}, B = {b.name}")
    tiny = match(game, a, b, 20, seed + 1000, tmp)  # ~ the fixed start-up cost
    pilot = match(game, a, b, pilot_hands, seed + 1000, tmp)
    per_hand = max(pilot["seconds"] - tiny["seconds"], 0.1) / (pilot_hands - 20)
    hands = max(pilot_hands, int((target - tiny["seconds"]) / per_hand))
    _log(f"  pilot matches: 20 / {pilot_hands} hands/seating in {tiny['seconds']:.1f} / "
         f"{pilot['seconds']:.1f} s -> {hands} hands/seating")
    m = match(game, a, b, hands, seed, tmp)
    _log(f"  match: {m['hands']} hands in {m['seconds']:.1f} s: {m['mbb_per_game']:+.1f} mbb/g "
         f"+- {m['ci_halfwidth']:.1f}")
    if exact:
        h = h2h(a, b, None, seed)
    else:
        # a walk serves a chunk of boards (solver.evaluation.head_to_head.BOARDS_PER_WALK) for about
        # the price of one, so the pilot covers two whole chunks
        p = h2h(a, b, 2 * BOARDS_PER_WALK, seed + 1000)
        overhead = max(0.0, p["seconds"] - p["compute_seconds"])
        boards = int((m["seconds"] - overhead) / p["seconds_per_board"])
        boards = max(2, min(boards, p["boards_total"]))
        _log(f"  pilot h2h: {p['seconds_per_board']:.3f} s/board, {overhead:.1f} s overhead -> {boards} boards")
        h = h2h(a, b, boards, seed)
    _log(f"  h2h: {h['boards']}/{h['boards_total']} boards in {h['seconds']:.1f} s: {h['mbb_per_game']:+.1f} "
         f"mbb/g +- {h['ci_halfwidth']:.1f}{' (exact)' if h['exact'] else ''}")
    row: dict[str, Any] = {"a": str(a.relative_to(ROOT)) if a.is_relative_to(ROOT) else str(a),
                           "b": b.name, "match": m, "h2h": h,
                           "halfwidth_ratio": round(m["ci_halfwidth"] / h["ci_halfwidth"], 2)
                           if h["ci_halfwidth"] > 0 else None}
    if h["exact"]:
        row["match_error"] = round(m["mbb_per_game"] - h["mbb_per_game"], 2)
        row["match_covers_exact"] = m["ci95"][0] <= h["mbb_per_game"] <= m["ci95"][1]
    else:
        row["intervals_overlap"] = m["ci95"][0] <= h["ci95"][1] and h["ci95"][0] <= m["ci95"][1]
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="about 15 s per side instead of 60")
    ap.add_argument("--seconds", type=float, help="target wall time of each side (default 60, quick 15)")
    ap.add_argument("--seed", type=int, default=1, help="card seed of the match and board seed of h2h")
    ap.add_argument("--pilot-hands", type=int, default=500, help="hands per seating of the sizing match")
    args = ap.parse_args()
    target = args.seconds or (15.0 if args.quick else 60.0)
    load_before = [round(x, 2) for x in os.getloadavg()]
    t0 = time.perf_counter()
    games: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="h2h_bench_") as tmpdir:
        tmp = Path(tmpdir)
        _log("training the B strategies (excluded from the timings)")
        b_holdem, b_leduc = train_holdem(tmp), train_leduc(tmp)
        games[HOLDEM] = compare(HOLDEM, ROOT / "strategies" / f"{HOLDEM}.strategy", b_holdem, target,
                                args.seed, args.pilot_hands, False, tmp)
        games[LEDUC] = compare(LEDUC, ROOT / "strategies" / f"{LEDUC}.strategy", b_leduc, target,
                               args.seed, args.pilot_hands, True, tmp)
    out = {"quick": args.quick, "target_seconds": target, "seed": args.seed, "cpus": os.cpu_count(),
           "load_before": load_before, "load_after": [round(x, 2) for x in os.getloadavg()],
           "games": games, "total_seconds": round(time.perf_counter() - t0, 1)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
