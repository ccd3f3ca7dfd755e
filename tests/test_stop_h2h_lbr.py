"""Head-to-head and LBR stop when asked: a signal in the middle of a long walk ends the
command within 2 s with one line and 128 + signum, workers included; in-process, a set
stop flag ends the walk at once and raises Interrupted, with no figures."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import solver.evaluation.head_to_head as h2h_mod
from poker._stop import Interrupted, Stop, run_stoppable, stoppable
from poker.game import load_game
from solver.evaluation.head_to_head import head_to_head, n_boards
from solver.evaluation.lbr import LocalBestResponse, StrategyOpponent, range_equity
from solver.play.player import translated
from solver.strategy_io import open_strategy

from ._signals import LONG, signal_when

ROOT = Path(__file__).resolve().parents[1]
SHORT20 = "strategies/holdem.nolimit.2p.short20.strategy"
LEDUC = "strategies/leduc.nolimit.2p.strategy"

# ---------------------------------------------------------------- the commands


@pytest.mark.parametrize(
    ("jobs", "signum", "group"),
    [(1, signal.SIGINT, False), (2, signal.SIGTERM, False), (2, signal.SIGINT, True)],
    ids=["sigint", "jobs2-sigterm", "jobs2-ctrl-c-to-the-group"],
)
def test_h2h_stops_mid_walk(jobs: int, signum: int, group: bool) -> None:
    """Every final board of the 20-card game, the shipped blueprint against itself: 6,840
    boards at some 30 a second on one core (0.03 s a board, see head_to_head's docstring),
    minutes of work. The two workers of --jobs 2 end with the command, whether the
    signal reaches the parent alone or, as a terminal's Ctrl-C does, the whole group."""
    got = signal_when(["eval", "h2h", SHORT20, SHORT20, "--jobs", str(jobs)], signum, label="h2h", group=group)
    assert got.match.total == n_boards(load_game("holdem.nolimit.2p.short20")) == 6840
    assert got.match.seconds_left() > LONG, got.match
    if jobs == 2:
        assert len(got.children) == 2, got.children
    got.check("eval", signum)


def test_h2h_of_the_re_solving_player_stops_mid_board() -> None:
    """The re-solving 20-card player against its blueprint, 300 final boards with the
    river re-solved: some 10 s a board on a core (1,230 re-solves each), most of an hour
    on two workers. Ctrl-C to the group ends the workers' re-solves and walks too."""
    argv = ["eval", "h2h", f"resolve:{SHORT20}", SHORT20, "--resolve-at", "river", "--resolve-from", "river",
            "--resolve-iterations", "100", "--through", "river", "--boards", "300", "--jobs", "2"]
    got = signal_when(argv, signal.SIGINT, label="h2h", group=True)
    assert got.match.total == 300 and got.match.seconds_left() > LONG, got.match
    assert len(got.children) == 2, got.children
    got.check("eval", signal.SIGINT)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c-to-the-group"])
def test_lbr_stops_mid_match(signum: int) -> None:
    """100,000 hands against the 20-card blueprint: from 4 to 40 ms a hand on one core
    (measured on a loaded machine), minutes of work."""
    got = signal_when(["eval", "lbr", SHORT20, "--hands", "100000"], signum, label="lbr",
                      group=signum == signal.SIGINT)
    assert got.match.total == 100_000 and got.match.seconds_left() > LONG, got.match
    got.check("eval", signum)


def test_lbr_exact_stops_mid_walk() -> None:
    """--exact against the re-solving Leduc player, re-solving from preflop on every
    street: 240 hands (120 deals, each at both seats) of about a second each with a warm
    cache, minutes of work."""
    argv = ["eval", "lbr", f"resolve:{LEDUC}", "--exact", "--actions", "leaks", "--resolve-from", "preflop",
            "--resolve-at", "preflop,flop", "--resolve-iterations", "200"]
    got = signal_when(argv, signal.SIGTERM, label="lbr")
    assert got.match.total == 240 and got.match.seconds_left() > LONG, got.match
    got.check("eval", signal.SIGTERM)


# ---------------------------------------------------------------- in process


def test_a_set_stop_ends_head_to_head_with_interrupted_and_no_figures() -> None:
    """A stop asked from the progress callback (the main thread) once the walk is under
    way (nodes counted) ends it at its next node: in this process, where it runs on
    another thread, and in two workers, whose counts reach the parent through shared
    memory and which learn of a stop asked of the caller's flag alone (Stop.set, not
    stop_all)."""
    f = open_strategy(ROOT / SHORT20)
    a = translated(f)
    for jobs in (1, 2):
        stop = Stop()
        seen: list[tuple[float, int]] = []
        asked: list[float] = []

        def walking(done: float, total: int, nodes: int) -> None:
            seen.append((done, nodes))
            if nodes > 0 and not asked:
                asked.append(time.monotonic())
                stop.set(signal.SIGTERM)

        with pytest.raises(Interrupted) as info:
            head_to_head(a, a, a.game, boards=64, jobs=jobs, walking=walking, stop=stop)
        assert asked and time.monotonic() - asked[0] < 1.0
        assert info.value.signum == signal.SIGTERM
        assert seen[-1][0] < 64


def test_a_walk_counts_its_share_done_to_exactly_one() -> None:
    """The share of a walk done (what the bar counts within a chunk of boards) adds up to
    one per walk at its end, so the bar stands at the chunk's boards exactly when it is
    done; the nodes counted are the shared walk's."""
    f = open_strategy(ROOT / SHORT20)
    a = translated(f)
    chunk = [h2h_mod.board_at(a.game, i) for i in (5, 4321)]
    watch = h2h_mod._Watch()
    out = h2h_mod._both_seatings(a, a, a.game, chunk, h2h_mod._chunk_buckets(a, a, a.game, chunk), watch)
    assert out is not None and len(out) == 2
    assert watch.done[0] == pytest.approx(2.0, abs=1e-9)  # two seatings, one walk each
    # a walk of one board alone visits no more nodes than the walk the boards share
    assert max(n for _, _, n in out) <= watch.nodes[0] <= sum(n for _, _, n in out)


def test_a_set_stop_ends_lbr_with_interrupted() -> None:
    """A match and the exact walk raise Interrupted once the stop is asked, at once."""
    f = open_strategy(ROOT / LEDUC)
    policy = translated(f)
    lbr = LocalBestResponse(policy.game, StrategyOpponent(policy, seed=0))
    for run in (lambda stop, cb: lbr.run(10**6, progress=lambda n: cb(n), stop=stop),
                lambda stop, cb: lbr.exact_values(progress=lambda n, total: cb(n), stop=stop)):
        stop = Stop()
        asked: list[float] = []

        def cb(n: int) -> None:
            if n > 0 and not asked:
                asked.append(time.monotonic())
                stop.set(signal.SIGINT)

        with pytest.raises(Interrupted):
            run(stop, cb)
        assert time.monotonic() - asked[0] < 1.0
    # a stopped run leaves the object as it was: the next run is whole
    assert lbr.run(4).hands == 4


@pytest.mark.parametrize("enum_limit", [0, 10**9], ids=["sampled", "enumerated"])
def test_the_equity_kernel_reads_the_flag_inside_its_loop(enum_limit: int) -> None:
    """A stop set from another thread while range_equity's kernel runs (on a thread of its
    own: it releases the GIL) ends it at the next run-out: the flag's load is not hoisted
    out of the loop. Unstopped, each call takes many minutes: 10^7 sampled preflop
    run-outs, or all C(50, 5) = 2,118,760 enumerated, each over 1,326 hands."""
    game = load_game("holdem.nolimit.2p.reverse_blinds")
    hands = np.array([(i, j) for i in range(52) for j in range(i + 1, 52)], np.int64)
    weights = np.ones(hands.shape[0])
    range_equity([0, 1], [], hands[:3], weights[:3], game, samples=10, enum_limit=0)  # compile first
    with stoppable() as stop:
        timer = threading.Timer(0.3, stop.set, (signal.SIGTERM,))
        timer.start()
        t0 = time.monotonic()
        with pytest.raises(Interrupted) as info:
            run_stoppable(lambda: range_equity([0, 1], [], hands, weights, game, samples=10**7,
                                               enum_limit=enum_limit, stop=stop), stop)
        assert time.monotonic() - t0 < 1.5
    assert info.value.signum == signal.SIGTERM
