"""The best-response walks stop when asked and count their progress within the walk
(issue 58): the walk kernel (solver/_kernels.py) reads a stop flag as it enters each
(public node, board state) pair and counts those pairs against a total known before it
starts (solver.evaluation.best_response.walk_units); ``pokerbot eval exploitability``,
``pokerbot train --final-eval`` and ``pokerbot eval translated`` end within 2 s of SIGINT
or SIGTERM sent mid-walk, with one line and status 130 or 143."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from poker._stop import Interrupted, counter, stop_all
from poker.cards import rank_of
from solver import _kernels as K
from solver.evaluation.best_response import (
    abstract_and_real_exploitability,
    abstract_walks,
    evaluation_units,
    exploitability,
    walk_units,
)
from solver.problem import make_problem
from solver.strategy import Strategy
from solver.strategy_io import load_strategy, open_strategy

from ._signals import LONG, signal_when
from ._solver_twins import random_policy

ROOT = Path(__file__).resolve().parents[1]
SHORT20 = ROOT / "strategies" / "holdem.nolimit.2p.short20.strategy"


def _pair_buckets(street: int, hole: tuple[int, ...], board: tuple[int, ...]) -> int:
    """Leduc buckets that forget everything but 'paired or not' after the flop: imperfect
    recall, so the abstract responder walks once per level of its decisions."""
    return rank_of(hole[0]) - 10 if street == 0 else int(rank_of(hole[0]) == rank_of(board[0]))


@pytest.fixture(scope="module")
def capped20():  # type: ignore[no-untyped-def]
    """Lossless 20-card hold'em, raises of a pot capped at one a street: a walk of
    1,693,450 (node, board state) pairs, seconds long."""
    return make_problem("holdem.nolimit.2p.short20", "1p,cap1")


def _walk(problem, policy, flag, visited) -> float:  # type: ignore[no-untyped-def]
    b = problem.buffers()
    return K.root_value(problem.ktree, problem.kchance, 0, K.MODE_BR, policy, np.zeros(1), np.zeros(1), 0.0,
                        b.vals, b.rbuf, b.cs, b.frames, flag, visited)


@pytest.mark.parametrize("game", ["kuhn.limit.2p", "leduc.limit.2p", "leduc.nolimit.2p"])
def test_a_walk_counts_exactly_its_predicted_units(game: str) -> None:
    betting = "0.5p,1p,a" if "nolimit" in game else None
    problem = make_problem(game, betting)
    policy = random_policy(problem, np.random.default_rng(1))
    visited = counter()
    _walk(problem, policy, np.zeros(1, dtype=np.int64), visited)
    assert visited[0] == walk_units(problem) >= problem.tree.n_nodes  # every node, once per board state


def test_an_evaluation_counts_to_its_total_and_a_stopped_one_raises_interrupted() -> None:
    problem = make_problem("leduc.limit.2p", bucket_fn=_pair_buckets, bucket_counts=[3, 2])
    strategy = Strategy(problem, random_policy(problem, np.random.default_rng(5)))
    heard: list[tuple[int, int]] = []
    figures = abstract_and_real_exploitability(strategy, progress=lambda d, t: heard.append((d, t)))
    total = evaluation_units(strategy)
    # 5 walks of each abstract responder (a level of its decisions each, and its value),
    # both real responders' and the profile's value
    assert [abstract_walks(strategy, p) for p in (0, 1)] == [5, 5]
    assert total == 13 * walk_units(problem) == 13 * 465
    assert heard[0] == (0, total) and heard[-1] == (total, total)

    def stop_once_under_way(done: int, total: int) -> None:
        if done > 0:
            stop_all(signal.SIGTERM)  # as the command line's handlers do

    with pytest.raises(Interrupted) as info:
        abstract_and_real_exploitability(strategy, progress=stop_once_under_way)
    assert info.value.signum == signal.SIGTERM
    # the figures of a walk never stopped are what they were
    assert abstract_and_real_exploitability(strategy) == figures


def test_a_walk_reads_the_flag_while_it_runs(capped20) -> None:  # type: ignore[no-untyped-def]
    """A flag set from another thread ends a walk under way: the compiler keeps the
    flag's load in the walk's loop (the counter's store there may alias it). The walk
    (:func:`capped20`) takes seconds; stopped after its first pair, it has done a few."""
    problem = capped20
    policy = np.full(problem.size, 0.5)
    flag, visited = np.zeros(1, dtype=np.int64), counter()
    kuhn = make_problem("kuhn.limit.2p")
    _walk(kuhn, np.full(kuhn.size, 0.5), flag, counter())  # compiled before the clock matters
    total = walk_units(problem)
    assert total == 1_693_450
    worker = threading.Thread(target=_walk, args=(problem, policy, flag, visited), daemon=True)
    worker.start()
    while visited[0] == 0:
        time.sleep(0.0005)
    flag[0] = signal.SIGINT
    t0 = time.monotonic()
    worker.join(30.0)
    assert not worker.is_alive() and time.monotonic() - t0 < 1.0
    assert 0 < visited[0] < total


def test_exploitability_stops_within_a_second_of_stop_all_and_returns_nothing(capped20) -> None:  # type: ignore[no-untyped-def]
    """Through the public call, from the main thread: the walks run off it and the call
    raises Interrupted once a stop is asked, well before they would end."""
    problem = capped20
    strategy = Strategy(problem, np.full(problem.size, 0.5))
    total = evaluation_units(strategy, abstract=False)
    asked: list[float] = []
    seen: list[int] = []

    def stop_once_under_way(done: int, _total: int) -> None:
        seen.append(done)
        if done > 0 and not asked:
            asked.append(time.monotonic())
            stop_all(signal.SIGINT)

    with pytest.raises(Interrupted) as info:
        exploitability(None, strategy, progress=stop_once_under_way)
    assert info.value.signum == signal.SIGINT
    assert asked and time.monotonic() - asked[0] < 1.0
    assert 0 < seen[-1] < total


def test_eval_exploitability_stops_on_sigint_mid_walk() -> None:
    """The shipped 20-card strategy: 20 walks of 42,909,202 (node, board state) pairs, a
    few hundred thousand a second on one thread: half an hour; the signal comes within
    seconds of its start."""
    got = signal_when(["eval", "exploitability", "holdem.nolimit.2p.short20", str(SHORT20), "--threads", "1"],
                      signal.SIGINT, label="best response")
    assert got.match.total == evaluation_units(load_strategy(SHORT20)) == 858_184_040
    assert got.match.seconds_left() > LONG, got.match
    got.check("eval", signal.SIGINT)


def test_train_final_evaluation_stops_on_sigterm_mid_walk(tmp_path: Path) -> None:
    """A short run over a small card abstraction on 20-card hold'em with the shipped
    betting: its final evaluation (real game only, past the size limit) makes 3 walks of
    42,909,202 pairs, minutes on one thread; the strategy is written without figures."""
    from abstraction.build import build_abstraction
    from abstraction.plan import AbstractionParams

    build_abstraction("holdem.nolimit.2p.short20", AbstractionParams((5, 8, 8, 8)), tmp_path / "abs")
    out = tmp_path / "run.strategy"
    got = signal_when(
        ["train", "holdem.nolimit.2p.short20", "--betting", "0.5p,1p,a;1p,a", "--abstraction", str(tmp_path / "abs"),
         "--algo", "es", "--iterations", "20000", "--seed", "1", "--threads", "1", "--final-eval", "--out", str(out)],
        signal.SIGTERM, label="evaluate average strategy")
    assert got.match.total == 3 * 42_909_202 and got.match.seconds_left() > LONG, got.match
    assert got.status == 128 + signal.SIGTERM, got.lines[-5:]
    assert got.waited < 2.0, (got.waited, got.lines[-5:])
    last = got.lines[-1]
    assert last.startswith("pokerbot train: SIGTERM stopped the final evaluation") and str(out) in last
    assert load_strategy(out).iterations == 20_000 and not open_strategy(out).evaluation


def test_eval_translated_stops_on_sigterm_mid_walk() -> None:
    """The shipped 20-card strategy against a responder betting half a pot, a pot or
    all-in: 47,977 real nodes predicted (47,949 walked), about 700 a second on the 2-vCPU
    development VM (70 s); the walk is Python, so the signal acts between two of its steps."""
    got = signal_when(["eval", "translated", str(SHORT20), "--responder", "0.5,1,a"], signal.SIGTERM,
                      label="best response")
    assert got.match.total == 47_977 and got.match.seconds_left() > LONG, got.match
    got.check("eval", signal.SIGTERM)


def test_a_signal_during_a_periodic_evaluation_ends_the_loop_within_a_second(tmp_path: Path, monkeypatch) -> None:
    """--eval-every's evaluations run inside the training loop: SIGTERM while one walks
    (lossless 20-card hold'em, raises of a pot capped at one: three walks of 1,693,450
    pairs, seconds) stops its walks within a second and ends the loop as between batches,
    with that signal; a second one stops the final evaluation."""
    import os

    import solver.training.run as run_module
    from solver.training.config import AlgorithmConfig, Budget, EvaluationConfig, TrainingConfig
    from solver.training.run import TrainingProgress, run_training

    walks = run_module.abstract_exploitability
    times: dict[str, float] = {}

    def evaluate(*args, **kwargs):  # type: ignore[no-untyped-def]
        if "sent" not in times:
            def send() -> None:
                times["sent"] = time.monotonic()
                os.kill(os.getpid(), signal.SIGTERM)

            threading.Timer(0.5, send).start()
        try:
            return walks(*args, **kwargs)
        except Interrupted:
            times["stopped"] = time.monotonic()  # mid-walk, not after the walks ended
            raise

    def stop_the_final_evaluation(report: TrainingProgress) -> None:
        if report.stage == "evaluate" and "again" not in times:
            times["again"] = time.monotonic()
            os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(run_module, "abstract_exploitability", evaluate)
    config = TrainingConfig("holdem.nolimit.2p.short20", AlgorithmConfig("es"), Budget(seconds=120), betting="1p,cap1",
                            seed=1, out=tmp_path / "run.strategy", evaluation=EvaluationConfig(every=0.05))
    before = signal.getsignal(signal.SIGTERM)
    run = run_training(config, progress=stop_the_final_evaluation)
    assert "stopped" in times and times["stopped"] - times["sent"] < 1.0, times
    assert run.interrupted and run.signal == signal.SIGTERM and run.seconds < 60
    assert run.evaluation_stopped == signal.SIGTERM and run.final is None
    assert signal.getsignal(signal.SIGTERM) is before
    assert load_strategy(tmp_path / "run.strategy").iterations == run.iterations


def test_plans_count_compiling_only_where_the_cache_is_cold(monkeypatch) -> None:
    import solver.evaluation.real_response as real_response
    import solver.training.run as run_module
    from solver.evaluation.real_response import WALK_COMPILE_SECONDS, Responder, predict_walk
    from solver.play.player import translated
    from solver.training.config import AlgorithmConfig, Budget, TrainingConfig
    from solver.training.plan import COMPILE_SECONDS, EVALUATION_COMPILE_SECONDS
    from solver.training.run import plan_training

    config = TrainingConfig("leduc.limit.2p", AlgorithmConfig("es"), Budget(seconds=5))
    for is_cold in (True, False):
        monkeypatch.setattr(run_module, "cold", lambda *kernels: is_cold)
        monkeypatch.setattr(run_module, "walks_cold", lambda: is_cold)
        plan = plan_training(config)
        compiling = COMPILE_SECONDS["es"] + EVALUATION_COMPILE_SECONDS if is_cold else 0.0
        assert plan.compile_seconds == compiling and plan.to_dict()["compile_seconds"] == compiling
        assert plan.total_seconds is not None and plan.total_seconds >= 5 + compiling
        assert ("compiling, first run only" in plan.lines()[0]) is is_cold
    policy = translated(open_strategy(ROOT / "strategies" / "leduc.nolimit.2p.strategy"))
    for is_cold in (True, False):
        monkeypatch.setattr(real_response, "walk_cold", lambda: is_cold)
        cost = predict_walk(policy, Responder.parse("1,a"))
        assert cost.compile_seconds == (WALK_COMPILE_SECONDS if is_cold else 0.0)
    # and the check itself: once a walk ran in this process, its kernel is compiled
    kuhn = make_problem("kuhn.limit.2p")
    exploitability(None, Strategy(kuhn, np.full(kuhn.size, 0.5)))
    from solver.evaluation.best_response import walks_cold

    assert not walks_cold()
