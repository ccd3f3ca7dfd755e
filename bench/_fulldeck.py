"""Helpers shared by the strategy-file and agent-latency benchmarks.

* :func:`cached_abstraction`: a card abstraction built by the project's own code
  (:func:`abstraction.build.build_abstraction`) into a directory under
  ``$POKERBOT_BENCH_CACHE`` (default ``pokerbot-bench`` in the system's temporary directory) keyed by the game and the
  parameters, reused when a finished build is there (a full-deck build takes minutes).
* :func:`random_table`: a random policy table over a betting tree and bucket counts,
  uint8 rows summing to 255 like a quantized strategy's, made without a chance layer.
  Written with :func:`solver.strategy_io.save_policy`, it makes a strategy file for a
  game whose :class:`solver.problem.Problem` cannot be built (the full deck).
"""

from __future__ import annotations

# ruff: noqa: E402  (the clock starts before the imports)

import time

T_START = time.perf_counter()  # before the imports: a child process reports their time

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

# run as a script, bench/ comes first on the path and its abstraction.py would hide the package
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from abstraction.build import build_abstraction
from abstraction.card_abstraction import CardAbstraction
from abstraction.plan import AbstractionParams, plan_build
from poker.game import Game
from solver.tree import DECISION, Tree, table_offsets

CACHE = Path(os.environ.get("POKERBOT_BENCH_CACHE", Path(tempfile.gettempdir()) / "pokerbot-bench"))

#: The full-deck abstraction of the latency benchmark: 169 preflop classes (lossless),
#: 1000 buckets on each later street, fitted by the project's k-means with a short run
#: (4 iterations, k-means++ on 20,000 points): about 8 minutes on a shared 2-core machine.
FULL_DECK_GAME = "holdem.nolimit.2p.reverse_blinds"
FULL_DECK_PARAMS = AbstractionParams(buckets=(169, 1000, 1000, 1000), max_iter=4, sample_size=20_000)
#: Its betting tree: 26,973 nodes.
FULL_DECK_BETTING = "0.5p,1p,a;1p,a"


def log(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


def cached_abstraction(
    game: Game, params: AbstractionParams, training: bool = False
) -> tuple[CardAbstraction, dict[str, Any]]:
    """The abstraction of ``game`` with ``params``, built once into the cache directory;
    ``training``: opened as a training run opens it (bucket tables read into memory,
    :func:`solver.training.dealt.load_training_abstraction`), else mapped as a player does.

    Returns it and ``{"directory", "built_s" (None when reused), "predicted_s"}``."""
    key = hashlib.sha256(json.dumps([game.to_text(), params.to_json()], sort_keys=True).encode()).hexdigest()[:16]
    out = CACHE / f"{game.name or 'game'}.{key}"
    plan = plan_build(game, params)
    info: dict[str, Any] = {"directory": str(out), "built_s": None, "predicted_s": plan.seconds,
                            "params": params.to_json()}
    if (out / "meta.json").exists():
        try:
            return _open(out, training), info
        except ValueError as exc:
            log(f"cached abstraction at {out} unusable ({exc}); rebuilding")
    log(f"building card abstraction {list(params.buckets)} of {game.name} into {out} "
        f"(predicted {plan.seconds:.0f} s, {plan.peak_gib:.2f} GiB)")
    t0 = time.perf_counter()
    last = [0.0]

    def progress(stage: str, done: float, total: float) -> None:
        now = time.perf_counter()
        if now - last[0] > 30:
            last[0] = now
            log(f"  {stage}: {done:.0f}/{total:.0f} ({now - t0:.0f} s)")

    rep = build_abstraction(game, params, out, progress=progress)
    info["built_s"] = round(time.perf_counter() - t0, 1)
    log(f"built in {info['built_s']} s")
    return (_open(out, True) if training else rep.abstraction), info


def _open(directory: Path, training: bool) -> CardAbstraction:
    if training:
        from solver.training.dealt import load_training_abstraction

        return load_training_abstraction(directory)
    return CardAbstraction.load(directory)


def random_table(tree: Tree, buckets: list[int], seed: int = 0) -> tuple[np.ndarray, np.ndarray, int]:
    """(table, offset, size): a uint8 policy with every information set's row a random
    split of 255 (so rows sum to exactly 255, as :func:`solver.strategy_io.quantize` gives)."""
    offset, size = table_offsets(tree, buckets)
    rng = np.random.default_rng(seed)
    table = np.zeros(size, dtype=np.uint8)
    dec = np.flatnonzero(tree.kind == DECISION)
    for node in dec.tolist():
        k = int(tree.n_child[node])
        nb = int(buckets[int(tree.street[node])])
        o = int(offset[node])
        rows = rng.integers(0, 256, size=(nb, k), dtype=np.int64)
        rows[:, -1] = 0
        tot = rows.sum(axis=1, keepdims=True)
        # scale each row to 255, the last action takes the remainder
        scaled = np.floor(rows * 255 / np.maximum(tot, 1)).astype(np.int64)
        scaled[tot[:, 0] == 0, 0] = 0
        scaled[:, -1] = 255 - scaled[:, :-1].sum(axis=1)
        table[o : o + nb * k] = scaled.reshape(-1).astype(np.uint8)
    return table, offset, size


def match_decisions(game: Game, player: Any, opponent: Any, *, decisions: int, seed: int,
                    max_hands: int = 10_000_000) -> dict[str, list[float]]:
    """Play ``player`` (seat 0) against ``opponent`` (seat 1) through the project's
    dealer (:class:`agent.protocol.dealer_state.DealerMatch`, seats alternating positions every hand,
    cards dealt from ``seed``) and clients (:class:`agent.protocol.client_state.ClientConnection`),
    in this process, until ``player`` has answered ``decisions`` states.

    Every dealer line for seat 0 goes through its client as it would off the socket;
    for each line that seat 0 must answer the time from the line's bytes to the answer's
    bytes is recorded: reading the line (MatchState), ``player.act`` (translation,
    bucketing, the policy) and formatting the response. Returns per-decision
    ``wall`` seconds (perf_counter) and ``cpu`` seconds of this thread (thread_time:
    what the machine's other load took away is not in it), and ``lines``: the owed
    lines' text.
    """
    from agent.protocol.client_state import ClientConnection
    from agent.protocol.dealer_state import DealerMatch, MatchOver, Send

    dm = DealerMatch(game, num_hands=max_hands, seed=seed, names=("player", "opponent"))
    bots = (player, opponent)
    conns = [ClientConnection(game) for _ in bots]
    for s, c in enumerate(conns):
        dm.receive_version(s, c.initiate())
    out = dm.start(0.0)
    wall: list[float] = []
    cpu: list[float] = []
    lines: list[str] = []
    clock, tclock = time.perf_counter, time.thread_time
    while len(wall) < decisions:
        reply: tuple[int, bytes] | None = None
        for o in out:
            if isinstance(o, MatchOver):
                return {"wall": wall, "cpu": cpu, "lines": lines}
            if not isinstance(o, Send):
                continue
            conn = conns[o.seat]
            if o.seat == 0:
                t0, c0 = clock(), tclock()
                ev = conn.receive_data_event(o.data)
                if getattr(ev, "my_turn", False):
                    data = conn.send_action(player.act(ev.match_state))  # type: ignore[union-attr]
                    wall.append(clock() - t0)
                    cpu.append(tclock() - c0)
                    lines.append(ev.match_state.text)  # type: ignore[union-attr]
                    reply = (0, data)
            else:
                ev = conn.receive_data_event(o.data)
                if getattr(ev, "my_turn", False):
                    reply = (1, conn.send_action(opponent.act(ev.match_state)))  # type: ignore[union-attr]
        if reply is None:
            break
        out = dm.receive_line(reply[0], reply[1], 0.0)
    return {"wall": wall, "cpu": cpu, "lines": lines}


def first_line(game: Game, seed: int) -> str:
    """The first dealer line that a seat must answer in a match dealt with ``seed``."""
    from agent.protocol.client_state import ClientConnection
    from agent.protocol.dealer_state import DealerMatch, Send

    dm = DealerMatch(game, num_hands=1, seed=seed, names=("a", "b"))
    conns = [ClientConnection(game), ClientConnection(game)]
    for s, c in enumerate(conns):
        dm.receive_version(s, c.initiate())
    for o in dm.start(0.0):
        if isinstance(o, Send):
            ev = conns[o.seat].receive_data_event(o.data)
            if getattr(ev, "my_turn", False):
                return ev.match_state.text  # type: ignore[union-attr]
    raise RuntimeError("no seat to act at the start of the hand")


def first_decision_child(path: str, line: str, game_name: str, tables: str | None) -> None:
    """In a fresh process: open ``path``, build the player, answer ``line``; print JSON."""
    t_imp = time.perf_counter()
    from agent.protocol.codec import format_response, parse_match_state
    from agent.strategy_player import StrategyPlayer
    from poker.game import load_game
    from solver.play.player import open_playable

    game = load_game(game_name)
    t0 = time.perf_counter()
    sf = open_playable(path, game=game, tables=tables)
    t1 = time.perf_counter()
    player = StrategyPlayer(sf, seed=1)
    t2 = time.perf_counter()
    ms = parse_match_state(line, game)
    response = format_response(ms, player.act(ms))
    t3 = time.perf_counter()
    print(json.dumps({
        "imports_s": t0 - T_START, "imports_after_script_start_s": t0 - t_imp,
        "open_s": t1 - t0, "player_s": t2 - t1, "act_s": t3 - t2, "first_decision_s": t3 - t0,
        "response": response,
    }))


def child(path: Path, line: str, game_name: str, *, tables: Path | None = None, cold: bool = False) -> dict[str, Any]:
    """:func:`first_decision_child` in a new interpreter (``python -m bench._fulldeck``);
    ``cold``: with an empty ``NUMBA_CACHE_DIR``, so every kernel the player needs is
    compiled. Adds the process's whole wall time (``process_wall_s``)."""
    root = Path(__file__).resolve().parents[1]
    cmd = [sys.executable, "-m", "bench._fulldeck", "--first-decision", str(path), "--line", line,
           "--game", game_name]
    if tables is not None:
        cmd += ["--tables", str(tables)]
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
        if cold:
            env["NUMBA_CACHE_DIR"] = cache
        t = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=root, check=False)
        wall = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"first-decision child failed ({p.returncode}): {p.stderr.strip()[-2000:]}")
    res = json.loads(p.stdout.strip().splitlines()[-1])
    res["process_wall_s"] = wall
    return res


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--first-decision", metavar="FILE", required=True)
    ap.add_argument("--line", required=True)
    ap.add_argument("--game", required=True)
    ap.add_argument("--tables", default=None)
    a = ap.parse_args()
    first_decision_child(a.first_decision, a.line, a.game, a.tables)
