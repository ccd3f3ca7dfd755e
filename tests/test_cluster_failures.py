"""A Ray cluster that fails under ``pokerbot train --cluster`` ends the run in one
``pokerbot train: error:`` line, soon, with a non-zero exit: a head killed mid-run (the
checkpoint then holds the run's last whole round), and an address that answers but is
not a Ray head, or does not answer at all (nothing is written)."""

from __future__ import annotations

import http.server
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from agent.cli import build_parser, main
from agent.commands.train import config_from_args, merge_config
from solver.training.checkpoint import load_checkpoint
from solver.training.config import CheckpointConfig
from solver.training.run import run_training

from ._ray_nodes import ray, two_nodes  # skips this module without Ray (see there)

ROOT = Path(__file__).resolve().parents[1]
#: Iterations a worker runs a round, and rounds in the run: two workers of one thread on
#: Leduc take about 0.2 s a round, so the run is still under way when the head is killed
#: after its first round, and any round it ends in was also reached by the calm run.
SYNC, ROUNDS = 20_000, 20
#: Seconds the driver waits for a head that does not answer (the default is 10).
TIMEOUT = 2


def _train_argv(address: str, out: Path) -> list[str]:
    return [
        "train", "leduc.limit.2p", "--algo", "es", "--seed", "1", "--iterations", str(ROUNDS * 2 * SYNC),
        "--cluster", address, "--workers", "2", "--sync-iterations", str(SYNC),
        "--cluster-timeout", str(TIMEOUT), "--out", str(out),
    ]  # fmt: skip


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never says anything."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


class _Quiet(http.server.BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # the test reads stderr
        pass


@pytest.fixture
def http_port() -> Iterator[int]:
    """A port where an HTTP/1 server answers."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A port where nothing listens (bound, never listening, so no one else takes it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


@pytest.mark.parametrize(
    ("port", "why"),
    [
        ("silent_port", f"the port accepted a connection but said nothing in {TIMEOUT} s (not a Ray head)"),
        ("http_port", "the port answers, but not as a Ray head (a gRPC server) does"),
        ("closed_port", "Connection refused"),
    ],
    ids=["silent", "http", "closed"],
)
def test_an_address_that_is_not_a_ray_head_is_refused_in_one_line(port, why, request, tmp_path, capsys):
    """A port that is silent, speaks HTTP/1 or is closed: one error line naming the
    address and why, within the timeout (not Ray's minutes of retries, nor forever), exit
    2, and no strategy, checkpoint or metrics file."""
    assert not ray.is_initialized()  # a connected process would not ask the address
    number = request.getfixturevalue(port)
    out = tmp_path / "x.strategy"
    argv = [*_train_argv(f"127.0.0.1:{number}", out), "--metrics", str(tmp_path / "m.jsonl"), "--quiet"]
    t0 = time.monotonic()
    assert main(argv) == 2
    took = time.monotonic() - t0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"pokerbot train: error: cannot reach the Ray cluster at 127.0.0.1:{number}: {why}"]
    assert took < 30, took  # the bound; the silent port takes the timeout, 2 s
    assert list(tmp_path.iterdir()) == []


def test_the_timeout_is_refused_in_one_line_where_ray_would_end_the_run_first(tmp_path, capsys):
    """--cluster-timeout must be positive and end the run before Ray's own 60 s; it
    needs --cluster."""
    out = tmp_path / "x.strategy"
    base = ["train", "leduc.limit.2p", "--algo", "es", "--iterations", "1000", "--out", str(out), "--quiet"]
    cluster = ["--cluster", "127.0.0.1:1", "--workers", "1"]
    for extra, expected in (
        ([*cluster, "--cluster-timeout", "0"], "--cluster-timeout must be more than 0 and at most 45 seconds"),
        ([*cluster, "--cluster-timeout", "50"], "(Ray ends a driver whose head has been gone for 60 s), not 50.0"),
        (["--cluster-timeout", "5"], "--cluster-timeout needs --cluster"),
    ):
        assert main([*base, *extra]) == 2, extra
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("pokerbot train: error: ") and expected in err[0], (extra, err)
    assert list(tmp_path.iterdir()) == []


def _lines(stream, into: list[str]) -> None:
    for line in iter(stream.readline, ""):
        into.append(line.rstrip("\n"))


def test_a_lost_head_ends_the_run_with_the_checkpoint_of_its_last_whole_round(tmp_path):
    """The head of a two-node cluster killed while ``pokerbot train --cluster`` runs
    (every one of its processes, the driver's raylet among them): the command exits 2
    within the timeout and a few seconds, not after Ray's 60-s exit, with one error line
    naming the checkpoint, and writes no strategy. The driver either sees the head go and
    checkpoints, or is ended by Ray at once (its node's object store is the head's), and
    then the supervising process says so and the run's last checkpoint (one a round here)
    is kept. The checkpoint holds
    exactly the tables of the same run, undisturbed, at its iteration count, a whole
    number of rounds: no round is half in it."""
    nodes = two_nodes()
    head = nodes.address
    proc = None
    try:
        # the calm run, in this process: its checkpoint after every round
        ray.init(address=head, logging_level="ERROR", log_to_driver=False)
        args = merge_config(build_parser("train").parse_args(_train_argv(head, tmp_path / "calm.strategy")))
        ckpt = tmp_path / "calm.ckpt"
        calm = replace(config_from_args(args), checkpoint=CheckpointConfig(file=ckpt, every=1e-9))
        (tmp_path / "calm").mkdir()

        def keep(report) -> None:
            if report.stage == "batch":
                shutil.copy(ckpt, tmp_path / "calm" / f"{report.iterations}.ckpt")

        run_training(calm, progress=keep)
        ray.shutdown()  # this process must not outlive the head with it
        # the same run from the command line; its first metrics line comes after its first round
        out, metrics = tmp_path / "x.strategy", tmp_path / "m.jsonl"
        argv = [*_train_argv(head, out), "--metrics", str(metrics), "--checkpoint-every", "1e-9"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "agent", *argv], cwd=ROOT, text=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        err: list[str] = []
        reader = threading.Thread(target=_lines, args=(proc.stderr, err), daemon=True)
        reader.start()
        deadline = time.monotonic() + 180  # a cold start compiles the kernels on the workers
        while not (metrics.exists() and metrics.read_text().strip()):
            assert proc.poll() is None and time.monotonic() < deadline, err
            time.sleep(0.02)
        nodes.remove_node(nodes.head_node, allow_graceful=False)
        killed = time.monotonic()
        proc.wait(timeout=60)
        took = time.monotonic() - killed
        reader.join(5)
        assert proc.returncode == 2, err
        # the timeout, then the checkpoint and Ray's own shutdown (about 5 s with the head gone)
        assert took < 30, took
        ckpt = tmp_path / "x.strategy.ckpt"
        lost = load_checkpoint(ckpt)
        n = lost.iterations
        # Either the driver saw the head go (and checkpointed its last whole round), or Ray
        # ended it at once as the object store of its node, the head's, went away (then the
        # supervising process says so, and the checkpoint of its last round is the one kept)
        seen = (
            f"pokerbot train: error: the Ray head at {head} has not answered for {TIMEOUT} s (",
            f"; the checkpoint {ckpt} holds its last whole round ({n:,} iterations): start the "
            f"cluster again and run the same command with --resume {ckpt}",
        )
        ended = (
            "pokerbot train: error: the training process ended with status 1 without a word (Ray ends a "
            "driver at once when its machine's Ray node goes away, as when the head dies); ",
            f"the checkpoint {ckpt} holds {n:,} iterations: start the cluster again and run the same "
            f"command with --resume {ckpt}",
        )
        assert any(err[-1].startswith(a) and err[-1].endswith(b) for a, b in (seen, ended)), err
        # nothing else went wrong, nor did Ray say it would end the process
        assert sum("error" in line for line in err) == 1 and not any("GCS" in line for line in err), err
        assert not out.exists()
        assert 0 < n < ROUNDS * 2 * SYNC and n % (2 * SYNC) == 0, n
        same = load_checkpoint(tmp_path / "calm" / f"{n}.ckpt")
        assert same.iterations == n and lost.arrays.keys() == same.arrays.keys()
        for name, table in same.arrays.items():
            assert np.array_equal(lost.arrays[name], table), name
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        if ray.is_initialized():
            ray.shutdown()
        for node in list(nodes.worker_nodes):  # without its head, at once
            nodes.remove_node(node, allow_graceful=False)
        nodes.shutdown()


def test_the_supervising_process_passes_sigterm_on_and_names_an_abnormal_end(tmp_path):
    """``pokerbot train --cluster`` runs the training in a child it watches: SIGTERM to the
    command stops the child as it stops any run (checkpoint, status 143); the child
    killed outright (as Ray ends a driver whose node's object store goes away) gives one
    error line naming the checkpoint it left, and status 2."""
    nodes = two_nodes()
    proc = None
    try:
        out, metrics = tmp_path / "x.strategy", tmp_path / "m.jsonl"
        ckpt = tmp_path / "x.strategy.ckpt"
        argv = [*_train_argv(nodes.address, out), "--metrics", str(metrics), "--checkpoint-every", "1e-9"]

        def start() -> tuple[subprocess.Popen[str], list[str], list[int]]:
            metrics.unlink(missing_ok=True)
            p = subprocess.Popen([sys.executable, "-m", "agent", *argv], cwd=ROOT, text=True,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
            err: list[str] = []
            threading.Thread(target=_lines, args=(p.stderr, err), daemon=True).start()
            deadline = time.monotonic() + 180  # a cold start compiles the kernels on the workers
            while not (metrics.exists() and metrics.read_text().strip()):
                assert p.poll() is None and time.monotonic() < deadline, err
                time.sleep(0.02)
            kids = subprocess.run(["ps", "-o", "pid=", "--ppid", str(p.pid)], capture_output=True,
                                  text=True).stdout.split()
            return p, err, [int(k) for k in kids]

        proc, err, kids = start()
        assert len(kids) == 1  # the training process, under the one the user started
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 128 + signal.SIGTERM, err
        time.sleep(0.2)  # the reader's last lines
        assert err[-1].startswith("pokerbot train: stopped by SIGTERM after "), err
        done = load_checkpoint(ckpt).iterations
        assert done > 0

        argv += ["--resume", str(ckpt)]
        proc, err, kids = start()
        os.kill(kids[0], signal.SIGKILL)
        assert proc.wait(timeout=60) == 2, err
        time.sleep(0.2)
        n = load_checkpoint(ckpt).iterations
        assert n >= done
        assert err[-1] == (
            "pokerbot train: error: the training process ended by signal SIGKILL without a word (Ray ends a "
            "driver at once when its machine's Ray node goes away, as when the head dies); the checkpoint "
            f"{ckpt} holds {n:,} iterations: start the cluster again and run the same command with "
            f"--resume {ckpt}"
        ), err
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        nodes.shutdown()
