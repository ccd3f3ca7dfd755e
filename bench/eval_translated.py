"""Benchmark of ``pokerbot eval translated``: the exact real-game exploitability of the shipped files.

Rows (each the walk of :func:`solver.evaluation.real_response.real_exploitability` on a
shipped strategy file, its responder's bets restricted as ``--responder`` restricts them):

* ``leduc.nolimit.2p`` against a responder that may bet any legal amount, and against
  the default responder (¼, ½, ¾, 1, 1½, 2 pots, all-in, one raise past the cap);
* ``holdem.nolimit.2p.short20`` against all-in only (``a,+cap0``), pot or all-in
  (``1,a,+cap0``) and, unless ``--quick``, the default responder (about 12 minutes on
  two cores);
* the planted leak: the 20-card file changed to call every all-in on one street
  (:func:`solver.evaluation.leaks.planted_policy`), for each street, against the
  all-in-only responder, beside the original's figure.

Each row gives mbb/g (per big blind), the walk's nodes and its wall time. Usage:
``python bench/eval_translated.py [--quick]``; progress goes to stderr, the last line of
stdout is one JSON object ``{"rows": [...], "planted": [...], "total_seconds"}``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.commands.eval import DEFAULT_RESPONDER  # noqa: E402
from poker.game import load_game
from solver.evaluation.leaks import planted_policy
from solver.evaluation.real_response import Responder, real_exploitability
from solver.play.player import translated
from solver.strategy_io import open_strategy

STRATEGIES = Path(__file__).resolve().parent.parent / "strategies"


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _row(name: str, policy, responder: str, label: str | None = None) -> dict[str, Any]:
    t0 = time.perf_counter()
    res = real_exploitability(policy, policy.game, self_play=False, count_tree=False,
                              responder=Responder.parse(responder))
    row = {"file": name, "responder": responder, "label": label, "mbb_per_game": res.mbb_per_game,
           "nodes": res.nodes, "seconds": time.perf_counter() - t0}
    _log(f"{name} {label or ''} responder {responder}: {res.mbb_per_game:.1f} mbb/g, "
         f"{res.nodes} nodes, {row['seconds']:.1f} s")
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="leave out the 20-card default responder (12 minutes)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    default = DEFAULT_RESPONDER
    policies = {}
    for name in ("leduc.nolimit.2p", "holdem.nolimit.2p.short20"):
        game = load_game(name)
        policies[name] = translated(open_strategy(STRATEGIES / f"{name}.strategy", game=game))
    rows = [_row("leduc.nolimit.2p", policies["leduc.nolimit.2p"], "any"),
            _row("leduc.nolimit.2p", policies["leduc.nolimit.2p"], default)]
    short = "holdem.nolimit.2p.short20"
    for responder in ("a,+cap0", "1,a,+cap0") + (() if args.quick else (default,)):
        rows.append(_row(short, policies[short], responder))
    planted = []
    for street in range(policies[short].game.num_rounds):
        leaky, changed = planted_policy(policies[short], street)
        row = _row(short, leaky, "a,+cap0", f"calls every all-in on street {street}")
        row["changed_rows"] = changed
        planted.append(row)
    print(json.dumps({"rows": rows, "planted": planted, "total_seconds": time.perf_counter() - t0}))


if __name__ == "__main__":
    main()
