"""Shipped strategies against the reference bots: duplicate matches through the real CLI.

For every strategy in ``strategies/`` (named ``<game>.strategy``, or ``<game>.<label>.strategy``
for a kept older file; the game is read from the file's header) and every reference
bot, runs ``pokerbot match GAME --players strategy:FILE BOT --hands N --duplicate`` (N
hands per seating, so 2N hands in all) and reports the strategy's mbb/g with its 95%
interval over deals, the translation counts and the wall time. Prints one JSON object as
its last line; progress goes to stderr.

    python bench/shipped.py            # 20,000 hands per seating (minutes per match)
    python bench/shipped.py --quick    # 1,000 hands per seating
    python bench/shipped.py --soak 100000   # the 20-card strategy against random only
    python bench/shipped.py --only holdem.nolimit.2p.reverse_blinds --jobs 2   # two at a time
    python bench/shipped.py --only holdem.nolimit.2p.reverse_blinds --bots random --hands 1000 \
        --resolve --resolve-from preflop --resolve-iterations 100   # the re-solving player's row

``--resolve`` seats the re-solving player (``resolve:FILE``) instead of the blueprint,
with the ``--resolve-*`` options given (the rest at their defaults); its re-solve counts
are in the row's ``translation.resolve``.

``--soak N`` plays one N-hand match of the 20-card hold'em strategy against ``random``
(which bets sizes anywhere in the legal range, mostly off the tree) and checks that it
completes. It reports the translation counts and where the real action differed from
the abstract one the blueprint chose: the player's own repairs (``repaired``: a raise
sized from the real pot below the minimum or above the stack, a fold where checking was
free, a raise where none was allowed; expected, the blueprint's sizes do not fit every
real pot) and the actions the client's ``legalize`` still had to change after the player
(``legalized``: the player should never leave one). The soak **fails** (exit 1, one
line on stderr) if ``legalized`` is not 0 or the match did not complete.
``dealer_warnings`` (the dealer's own repairs of what it received, after the client's)
is one more figure: 0 unless the client sent something illegal.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from solver.strategy_io import open_strategy  # noqa: E402  (after the path)
BOTS = ("random", "call", "raise", "allin", "equity")


#: Card abstraction directories the shipped recipes build (strategies/*.toml): where one
#: exists, the strategy player reads its bucket tables (the player checks that they were
#: built from the file's model) instead of computing buckets from the cards.
TABLES = {
    "holdem.nolimit.2p.short20": ROOT / "abs" / "short20",
    "holdem.nolimit.2p.reverse_blinds": ROOT / "abs" / "holdem",
}


def run_match(game: str, strategy: Path, bot: str, hands: int, seed: int, log: Path,
              cpus: str | None = None, resolve: list[str] | None = None) -> dict:
    """One duplicate match through the CLI; its JSON summary plus the wall time
    (``resolve``: the re-solving player with these ``--resolve-*`` flags)."""
    player = f"resolve:{strategy}" if resolve is not None else f"strategy:{strategy}"
    cmd = [sys.executable, "-m", "agent", "match", game, "--players", player, bot,
           "--hands", str(hands), "--duplicate", "--seed", str(seed), "--json", "--quiet", "--no-aivat",
           "--log", str(log), *(resolve or [])]
    tables = TABLES.get(game)
    if tables is not None and (tables / "meta.json").exists():
        cmd += ["--tables", str(tables)]
    if cpus is not None:
        cmd += ["--cpus", cpus]
    t = time.perf_counter()
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - t
    if out.returncode != 0:
        raise SystemExit(f"match failed ({out.returncode}): {' '.join(cmd)}\n{out.stderr[-2000:]}")
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    me = doc["players"][0]
    return {
        "bot": bot,
        "hands": doc["hands"],
        "mbb_per_game": round(me["mbb_per_game"], 1),
        "ci95": [round(x, 1) for x in me["ci95"]],
        "wins": me["ci95"][0] > 0,
        "translation": me.get("translation"),
        "legalized": me.get("legalized"),
        "seconds": round(seconds, 1),
    }


def file_game(path: Path) -> str:
    """The game a strategy file was trained for (its header; the table is not read)."""
    return open_strategy(path).game.name


def soak(hands: int, seed: int) -> dict:
    """One long match of the 20-card strategy against random (see the module docstring)."""
    game = "holdem.nolimit.2p.short20"
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "soak.log"
        cmd = [sys.executable, "-m", "agent", "match", game, "--players",
               f"strategy:{ROOT / 'strategies' / (game + '.strategy')}", "random", "--hands", str(hands),
               "--seed", str(seed), "--json", "--quiet", "--no-aivat", "--log", str(log)]
        t = time.perf_counter()
        out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - t
        dealer_err = log.with_suffix(".dealer.err").read_text()
        player_err = log.with_suffix(".player1.err").read_text()
    if out.returncode != 0 or not out.stdout.strip():
        raise SystemExit(f"soak: the match failed ({out.returncode}): {out.stderr.strip()[-2000:]}")
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    me = doc["players"][0]
    translation = me.get("translation") or {}
    warnings = [line for line in dealer_err.splitlines() if "WARNING" in line.upper()]
    return {"game": game, "hands": doc["hands"], "completed": doc["completed"] and out.returncode == 0,
            "mbb_per_game": round(me["mbb_per_game"], 1), "ci95": [round(x, 1) for x in me["ci95"]],
            "translation": translation, "repaired": translation.get("repaired"),
            "legalized": me.get("legalized"), "dealer_warnings": len(warnings),
            "player_stderr_lines": len(player_err.splitlines()), "seconds": round(seconds, 1),
            "hands_per_s": round(doc["hands"] / seconds, 1)}


def soak_failure(result: dict) -> str | None:
    """Why a soak result fails (one line), or None: the match did not complete, or the
    client's legalize changed an action of the strategy player (or did not say)."""
    if not result["completed"]:
        return f"soak: the match did not complete ({result['hands']} hands)"
    if result["legalized"] is None:
        return "soak: the strategy player wrote no count of the actions the client legalized"
    if result["legalized"] != 0:
        return (f"soak: the client legalized {result['legalized']} of the strategy player's actions "
                "(the player must leave none illegal)")
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1,000 hands per seating")
    ap.add_argument("--hands", type=int, help="hands per seating (default 20,000; --quick 1,000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", nargs="*", help="games to run (default: every shipped strategy)")
    ap.add_argument("--bots", nargs="*", default=list(BOTS))
    ap.add_argument("--soak", type=int, metavar="N", help="only: one N-hand match of short20 against random")
    ap.add_argument("--jobs", type=int, default=1,
                    help="matches side by side, each pinned to one CPU (default 1)")
    ap.add_argument("--resolve", action="store_true", help="the re-solving player instead of the blueprint")
    ap.add_argument("--resolve-from", help="re-solving: the earliest street (default: the player's)")
    ap.add_argument("--resolve-iterations", type=int, help="re-solving: iterations a re-solve (default: the player's)")
    ap.add_argument("--resolve-gadget", help="re-solving: safe, estimated or none (default: the player's)")
    args = ap.parse_args()
    resolve = None
    if args.resolve:
        resolve = [f"--resolve-{k}={v}" for k, v in (("from", args.resolve_from),
                                                    ("iterations", args.resolve_iterations),
                                                    ("gadget", args.resolve_gadget)) if v is not None]
    if args.soak:
        result = soak(args.soak, args.seed)
        print(json.dumps({"soak": result}))
        why = soak_failure(result)
        if why is not None:
            print(why, file=sys.stderr)
            raise SystemExit(1)
        return
    hands = args.hands or (1000 if args.quick else 20000)
    files = sorted((ROOT / "strategies").glob("*.strategy"))
    results: dict[str, list[dict]] = {}
    t0 = time.perf_counter()
    jobs = [(f, file_game(f), bot) for f in files for bot in args.bots
            if not args.only or f.name[: -len(".strategy")] in args.only]
    n_cpu = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(max(1, args.jobs)) as pool:
        def one(k: int) -> dict:
            f, game, bot = jobs[k]
            cpus = str(k % n_cpu) if args.jobs > 1 else None
            r = run_match(game, f, bot, hands, args.seed, Path(tmp) / f"{game}.{bot}.log", cpus, resolve)
            print(f"{f.name} vs {bot}: {r['mbb_per_game']} mbb/g {r['ci95']} ({r['seconds']} s)",
                  file=sys.stderr, flush=True)
            return r

        for (f, game, bot), r in zip(jobs, pool.map(one, range(len(jobs)))):
            results.setdefault(f.name[: -len(".strategy")], []).append(r)
    print(json.dumps({"hands_per_seating": hands, "seed": args.seed, "resolve": resolve, "results": results,
                      "all_win": all(r["wins"] for g, rs in results.items() if not g.startswith("kuhn")
                                     for r in rs),
                      "quick": bool(args.quick), "total_s": round(time.perf_counter() - t0, 1)}))


if __name__ == "__main__":
    main()
