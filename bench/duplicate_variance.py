"""How much a duplicate match can tell two strategies apart: common draws and a known opponent.

For two strategy files A and B of one heads-up game, plays the same duplicate matches
(``pokerbot match GAME --players strategy:A strategy:B --hands N --duplicate --seed S``,
seeds ``S, S+1, ...``) twice through the real CLI: with the strategy players' draws in
common (the default) and with ``--no-common-draws``. On each match's log it runs AIVAT
for A (:func:`solver.evaluation.aivat.aivat`) with B's strategy unknown and known, and
reports the 95% half-width over deals of the plain result and of both AIVAT estimates,
per seed and as the mean over seeds, and the ratios of each against the plain result
with independent draws (the estimate a duplicate match gave before either change). Both
sides play the same deals (the same card seeds) on the same machine, one after the
other.

Defaults: the shipped full-deck blueprint against the previous one
(``strategies/holdem.nolimit.2p.reverse_blinds.strategy`` and ``...tcfr.strategy``),
1,000 deals a match, seeds 5 to 7 (about 8 minutes on the 2-vCPU development VM with
the bucket tables cached); ``--quick``: the shipped no-limit Leduc strategy against a
CFR+ strategy of another betting abstraction (``--betting 1p,a``, 2,000 iterations,
trained in a temporary directory, as ``bench/h2h.py`` does), 2,000 deals, seeds 5 and
6 (under a minute).

Usage: ``python bench/duplicate_variance.py [--quick] [--a FILE --b FILE] [--deals N]
[--seeds S ...]``. Progress goes to stderr; the last line of stdout is one JSON object::

    {"quick", "a", "b", "game", "deals", "seeds", "runs": [{"seed", "common_draws",
     "plain", "aivat_unknown", "aivat_known"}], "mean_halfwidth": {"independent":
     {...}, "common": {...}}, "ratio_to_plain_independent": {...}}

where each estimate is ``[mean, half-width]`` in mbb/g over deals.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent.players import PlayerSpec, open_for_play  # noqa: E402  (after the path)
from agent.results import deal_means, hands_per_pass, mean_ci95  # noqa: E402
from agent.strategy_player import StrategyPlayer  # noqa: E402
from poker.log import parse_log  # noqa: E402
from solver.evaluation.aivat import aivat, known_player_name, strategy_ranges  # noqa: E402

STRATEGIES = ROOT / "strategies"
FULL_A = STRATEGIES / "holdem.nolimit.2p.reverse_blinds.strategy"
FULL_B = STRATEGIES / "holdem.nolimit.2p.reverse_blinds.tcfr.strategy"
LEDUC = STRATEGIES / "leduc.nolimit.2p.strategy"
ESTIMATES = ("plain", "aivat_unknown", "aivat_known")


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _player(path: Path) -> StrategyPlayer:
    player = open_for_play(PlayerSpec.parse(str(path), bots=(), bare_files=True, tables="cached"), quiet=True)
    assert isinstance(player, StrategyPlayer)
    return player


def one_match(a: Path, b: Path, deals: int, seed: int, common: bool,
              players: tuple[StrategyPlayer, StrategyPlayer], tmp: Path) -> dict[str, Any]:
    """One duplicate match of ``deals`` deals and the three estimates of A's result."""
    log_path = tmp / f"m{seed}{'c' if common else 'i'}.log"
    argv = [sys.executable, "-m", "agent", "match", players[0].strategy.game.name, "--players", f"strategy:{a}",
            f"strategy:{b}", "--hands", str(deals), "--duplicate", "--seed", str(seed), "--quiet", "--no-aivat",
            "--log", str(log_path), "--common-draws" if common else "--no-common-draws"]
    t = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the match failed ({done.returncode}): {' '.join(argv)}\n{done.stderr[-2000:]}")
    seconds = time.perf_counter() - t
    log = parse_log(log_path.read_text())
    name = known_player_name(log, a.stem)
    per_pass = hands_per_pass(log, 2)
    row: dict[str, Any] = {"seed": seed, "common_draws": common, "match_seconds": round(seconds, 1)}
    for label, opponent in (("unknown", None), ("known", strategy_ranges(players[1].policy))):
        result = aivat(players[0].policy, log, name, opponent_range=opponent)
        for key, values in (("plain", result.mbb_values), (f"aivat_{label}", result.aivat_mbb_values)):
            means = deal_means(values, result.hand_numbers, per_pass, 2)
            assert means is not None
            m, lo, hi = mean_ci95(means)
            row[key] = [round(m, 1), round((hi - lo) / 2, 1)]
    _log(f"  seed {seed}, {'common' if common else 'independent'} draws: "
         + ", ".join(f"{k} {row[k][0]:+.1f} +- {row[k][1]:.1f}" for k in ESTIMATES))
    return row


def _train_leduc(tmp: Path) -> Path:
    out = tmp / "b_leduc.strategy"
    argv = [sys.executable, "-m", "agent", "train", "leduc.nolimit.2p", "--betting", "1p,a", "--algo", "cfr+",
            "--iterations", "2000", "--out", str(out), "--quiet"]
    subprocess.run(argv, cwd=ROOT, capture_output=True, check=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--a", type=Path)
    ap.add_argument("--b", type=Path)
    ap.add_argument("--deals", type=int)
    ap.add_argument("--seeds", type=int, nargs="+")
    args = ap.parse_args()
    deals = args.deals or (2000 if args.quick else 1000)
    seeds = args.seeds or ([5, 6] if args.quick else [5, 6, 7])
    with tempfile.TemporaryDirectory() as tmp:
        a = args.a or (LEDUC if args.quick else FULL_A)
        b = args.b or (_train_leduc(Path(tmp)) if args.quick else FULL_B)
        players = (_player(a), _player(b))
        game = players[0].strategy.game.name
        _log(f"{game}: A = {a.name}, B = {b.name}, {deals} deals a match, seeds {seeds}")
        runs = [one_match(a, b, deals, seed, common, players, Path(tmp))
                for seed in seeds for common in (True, False)]
    mean = {which: {k: round(statistics.mean(r[k][1] for r in runs if r["common_draws"] == (which == "common")), 1)
                    for k in ESTIMATES} for which in ("independent", "common")}
    base = mean["independent"]["plain"]
    ratios = {f"{which}_{k}": round(mean[which][k] / base, 3) for which in mean for k in ESTIMATES}
    print(json.dumps({"quick": args.quick, "a": str(a), "b": str(b), "game": game,
                      "deals": deals, "seeds": seeds, "runs": runs, "mean_halfwidth": mean,
                      "ratio_to_plain_independent": ratios}))


if __name__ == "__main__":
    main()
