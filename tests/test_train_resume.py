"""Runs that survive anything: ``pokerbot train`` killed with SIGKILL at random moments,
or stopped with SIGTERM / SIGINT, and resumed with the same command and ``--resume``
each time, ends with the tables of the run never stopped, bit for bit (one thread, a
seed, an iteration budget); a stop ends the loop between batches, also with Hogwild
threads.

The runs stopped are subprocesses (``python -m agent``): each pays about 1.3 s of CPU
for imports and loading the compiled kernels, so the game is Leduc, the budgets are
about 0.6 s of solving, and the runs never stopped (the reference, the last leg) run in
this process.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from agent.cli import main
from poker.game import load_game
from solver.training.algorithms import make_training_solver
from solver.training.checkpoint import Checkpoint, load_checkpoint
from solver.training.sampled import SamplingOptions
from solver.problem import make_problem
from solver.strategy_io import load_strategy
from solver.training.loop import StopRequest, stop_on_signals, train

ROOT = Path(__file__).resolve().parent.parent
#: About 1 to 2 s of single-thread solving each on the development machine (batches of
#: about 0.1 s: many checkpoints apart), so that a stop sent after the last target
#: (at most 70% of the budget) reaches the run before it ends, even on an idle machine.
BUDGET = {"es": 3_200_000, "tcfr": 6_400_000}
CKPT, OUT = "run.ckpt", "run.strategy"
EARLY = "early"  # a SIGKILL before the first checkpoint


def _argv(algo: str) -> list[str]:
    """The run's command (relative paths: each run's folder is its working directory)."""
    return [
        "train", "leduc.limit.2p", "--algo", algo, "--iterations", str(BUDGET[algo]),
        "--seed", "3", "--checkpoint", CKPT, "--checkpoint-every", "0.02",
        "--precision", "f32", "--out", OUT, "--quiet", "--json",
    ]  # fmt: skip


def _in(folder: Path, argv: list[str]) -> list[str]:
    """``argv`` with the run's files in ``folder`` (for runs in this process)."""
    return [str(folder / a) if a in (CKPT, OUT) else a for a in argv]


def _launch(folder: Path, argv: list[str]) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen(
        [sys.executable, "-m", "agent", *argv],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _iterations(path: Path) -> int:
    try:
        return load_checkpoint(path).iterations
    except (ValueError, OSError):  # not written yet
        return -1


def _run_until(proc: subprocess.Popen[str], path: Path, target: int, timeout: float = 90) -> None:
    """Wait until the run's checkpoint records at least ``target`` iterations."""
    end = time.monotonic() + timeout
    while _iterations(path) < target:
        assert proc.poll() is None, f"the run ended (status {proc.returncode}) before {target:,}"
        assert time.monotonic() < end, f"no checkpoint at {target:,} iterations in {timeout} s"
        time.sleep(0.005)


def _same_tables(a: Checkpoint, b: Checkpoint) -> None:
    assert (a.iterations, a.nodes) == (b.iterations, b.nodes)
    assert a.arrays.keys() == b.arrays.keys()
    for k in a.arrays:
        assert a.arrays[k].dtype == b.arrays[k].dtype, k
        np.testing.assert_array_equal(a.arrays[k], b.arrays[k], err_msg=k)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The uninterrupted runs, in-process: {algo: (checkpoint, f32 policy)}."""
    out = {}
    for algo in BUDGET:
        folder = tmp_path_factory.mktemp(f"whole-{algo}")
        assert main(_in(folder, _argv(algo))) == 0
        out[algo] = (load_checkpoint(folder / CKPT), load_strategy(folder / OUT).policy)
        assert out[algo][0].options["dtype"] == "float32"  # the sampled algorithms' default
    return out


# The stops of each run, in order: a SIGKILL before the first checkpoint (the run then
# starts over without --resume, as the user would), SIGKILLs and a SIGTERM or a SIGINT
# at seeded random moments; after the last, the run completes.
STOPS = {
    "es": [EARLY, signal.SIGKILL, signal.SIGKILL, signal.SIGTERM, signal.SIGKILL],
    "tcfr": [signal.SIGKILL, signal.SIGINT],
}


@pytest.mark.parametrize("algo", list(STOPS))
def test_stopped_and_killed_runs_resume_to_the_same_tables(tmp_path, capsys, reference, algo):
    rng = random.Random(f"stops-{algo}")
    stops = STOPS[algo]
    n = BUDGET[algo]
    # kill or stop once the checkpoints pass a random point in each slice of the budget,
    # then after a random moment more (mid-batch, mid-write or between)
    slices = np.linspace(0.1, 0.7, len(stops) + 1)
    targets = [int(n * rng.uniform(a, b)) for a, b in zip(slices[:-1], slices[1:])]
    ckpt, out = tmp_path / CKPT, tmp_path / OUT
    done = -1
    for stop, target in zip(stops, targets):
        resume = ["--resume", CKPT] if ckpt.exists() else []
        proc = _launch(tmp_path, _argv(algo) + resume)
        if stop == EARLY:
            time.sleep(rng.uniform(0.05, 0.3))  # still importing: far from a checkpoint
            proc.kill()
            proc.communicate(timeout=30)
            assert not ckpt.exists()
            # --resume has nothing to read: the one line says to start over without it
            assert main(_in(tmp_path, [*_argv(algo), "--resume", CKPT])) == 2
            assert "without --resume" in capsys.readouterr().err
            continue
        _run_until(proc, ckpt, max(target, done + 1))  # a checkpoint of this run's
        time.sleep(rng.uniform(0.0, 0.03))
        proc.send_signal(stop)
        stdout, stderr = proc.communicate(timeout=60)
        ck = load_checkpoint(ckpt)  # whole, whatever the moment (written atomically)
        assert done < ck.iterations < n
        done = ck.iterations
        if stop == signal.SIGKILL:
            assert proc.returncode == -signal.SIGKILL
            continue
        # a stop: the exit status a shell gives the signal, the strategy and a checkpoint
        # of the same, whole batches, and how to go on
        assert proc.returncode == 128 + stop, stderr
        doc = json.loads(stdout.splitlines()[-1])
        assert doc["interrupted"] and doc["signal"] == signal.Signals(stop).name
        assert doc["iterations"] == ck.iterations == load_strategy(out).iterations
        assert f"--resume {CKPT}" in stderr.splitlines()[-1]
    # the last leg, never stopped, runs in this process (the same code, without the
    # second or so a new process spends on imports and loading the compiled kernels)
    assert main(_in(tmp_path, [*_argv(algo), "--resume", CKPT])) == 0
    doc = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert (doc["iterations"], doc["iterations_this_run"]) == (n, n - done)
    whole, policy = reference[algo]
    _same_tables(load_checkpoint(ckpt), whole)
    np.testing.assert_array_equal(load_strategy(out).policy, policy)
    # resuming a run that has reached its budget only writes the strategy again
    assert main(_in(tmp_path, [*_argv(algo), "--resume", CKPT])) == 0
    doc = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert (doc["iterations"], doc["iterations_this_run"], doc["interrupted"]) == (n, 0, False)
    _same_tables(load_checkpoint(ckpt), whole)
    np.testing.assert_array_equal(load_strategy(out).policy, policy)


def test_hogwild_threads_stop_between_batches():
    """A SIGTERM while two Hogwild threads run a batch: the batch completes and counts."""
    problem = make_problem(load_game("leduc.limit.2p"), None)
    solver = make_training_solver(problem, "es", SamplingOptions(seed=1, threads=2, dtype="float32"))
    solver.iterate(2)  # compiled and the pool started
    before = signal.getsignal(signal.SIGTERM)
    timer = threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGTERM))
    with stop_on_signals() as stop:
        timer.start()
        res = train(solver, iterations=10**9, batch=400_000, stop=stop)
    timer.join()
    assert signal.getsignal(signal.SIGTERM) is before  # the previous handler is back
    assert res.interrupted and res.signal == signal.SIGTERM and not res.stopped
    assert res.iterations > 0 and res.iterations % 400_000 == 0
    assert solver.iterations == 2 + res.iterations
    # and without a stop request the loop runs on
    assert not train(solver, iterations=10, stop=StopRequest()).interrupted


def test_checkpoint_of_other_betting_is_refused(tmp_path, capsys):
    ckpt = tmp_path / "nl.ckpt"
    base = ["train", "leduc.nolimit.2p", "--algo", "es", "--iterations", "100", "--quiet",
            "--out", str(tmp_path / "nl.strategy")]  # fmt: skip
    assert main([*base, "--betting", "1p,a", "--checkpoint", str(ckpt)]) == 0
    capsys.readouterr()
    assert main([*base, "--betting", "1p", "--resume", str(ckpt)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "different game or betting" in err[0], err
