"""Benchmark: the re-solving player against its own blueprint, exactly, board by board.

Each row is ``pokerbot eval h2h resolve:FILE FILE`` (:func:`solver.resolve.h2h.resolved_h2h`):
boards dealt through a street sampled with a seed, each board's value exact (every hand
pair, every later card, every draw of both players), the mean and its 95% interval over
the boards, in mbb/g for the re-solving player. Rows (``--rows``, comma-separated):

* ``leduc_check``: no-limit Leduc (the shipped file), re-solving from the first decision
  of both streets, every board: the figure and the tabulated exact walk's
  (:func:`solver.resolve.exact.resolved_head_to_head`), which must agree to 1e-9;
* ``s20_river``, ``s20_turn``: the 20-card game's shipped blueprint re-solving at the start
  of the river, and of the turn and the river; boards dealt through the river and the
  turn (the river enumerated);
* ``full_river``: the full deck's shipped blueprint re-solving at the start of the river,
  final boards sampled.

Options: ``--boards N`` per row (default 40; ``--quick`` 4), ``--iterations`` of a
re-solve (default 100), ``--gadget`` (default ``safe``), ``--jobs`` (default 2),
``--seed``. Progress goes to stderr; the last line of stdout is one JSON object:
``{"rows": [{"row", "game", "through", "boards", "mbb_per_game", "ci95", "half_width",
"seconds", "seconds_per_board", "resolves_per_board", ...}], "machine"}``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent.players import PlayerSpec, open_for_play  # noqa: E402
from solver.resolve.exact import resolved_head_to_head  # noqa: E402
from solver.resolve.h2h import Contender, resolved_h2h  # noqa: E402
from solver.resolve.player import ResolveOptions  # noqa: E402

#: row -> (strategy file, streets at whose start it re-solves, the street boards are dealt through)
ROWS = {
    "leduc_check": ("leduc.nolimit.2p.strategy", (0, 1), 0),
    "s20_river": ("holdem.nolimit.2p.short20.strategy", (3,), 3),
    "s20_turn": ("holdem.nolimit.2p.short20.strategy", (2, 3), 2),
    "full_river": ("holdem.nolimit.2p.reverse_blinds.strategy", (3,), 3),
}


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def row(name: str, boards: int, iterations: int, gadget: str, jobs: int, seed: int) -> dict:
    """One row (module docstring)."""
    file, at, through = ROWS[name]
    player = open_for_play(PlayerSpec.parse(str(ROOT / "strategies" / file), tables="auto", bots=(), bare_files=True),
                           quiet=True)
    policy = player.policy
    game = policy.game
    options = ResolveOptions(iterations=iterations, street_starts=at, first_street=min(at), gadget=gadget)
    t0 = time.perf_counter()
    got = resolved_h2h(Contender(policy, options), Contender(policy), game, through=through,
                       boards=None if name == "leduc_check" else boards, seed=seed, jobs=jobs)
    r = got.result
    out = {"row": name, "game": game.name, "file": file, "at": list(at), "through": through,
           "iterations": iterations, "gadget": gadget, "jobs": jobs, "seed": seed, "boards": r.boards,
           "boards_total": r.boards_total, "exact": r.exact, "mbb_per_game": r.mbb_per_game, "ci95": list(r.ci95),
           "half_width": (r.ci95[1] - r.ci95[0]) / 2.0, "board_sd_mbb": _sd(r.board_values, game.big_blind),
           "seconds": time.perf_counter() - t0, "seconds_per_board": r.seconds_per_board,
           "resolves_per_board": got.resolves / max(r.boards, 1), "failed": got.failed}
    if name == "leduc_check":
        want = resolved_head_to_head(policy, options)
        out["tabulated_seats"] = list(want)
        out["largest_difference"] = max(abs(a - b) for a, b in zip(r.seat_values, want))
    return out


def _sd(values: tuple[float, ...], big_blind: float) -> float | None:
    if len(values) < 2:
        return None
    m = sum(values) / len(values)
    var = sum((v - m) ** 2 for v in values) / (len(values) - 1)
    return 1000.0 * var**0.5 / big_blind


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default=",".join(ROWS), help=f"comma-separated, of {', '.join(ROWS)}")
    ap.add_argument("--quick", action="store_true", help="4 boards a row")
    ap.add_argument("--boards", type=int, help="boards sampled a row (default 40)")
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--gadget", default="safe")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    names = [n for n in args.rows.split(",") if n]
    bad = [n for n in names if n not in ROWS]
    if bad:
        ap.error(f"--rows: no row {bad[0]!r} (rows: {', '.join(ROWS)})")
    boards = args.boards or (4 if args.quick else 40)
    rows = []
    for n in names:
        _log(f"{n}: {boards} boards ...")
        got = row(n, boards, args.iterations, args.gadget, args.jobs, args.seed)
        _log(f"{n}: {got['mbb_per_game']:+.1f} [{got['ci95'][0]:+.1f}, {got['ci95'][1]:+.1f}] mbb/g, "
             f"{got['seconds_per_board']:.1f} s a board, {got['resolves_per_board']:.0f} re-solves a board")
        rows.append(got)
    print(json.dumps({"rows": rows, "machine": {"cpus": os.cpu_count(), "platform": platform.platform()}}))


if __name__ == "__main__":
    main()
