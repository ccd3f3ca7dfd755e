"""Training on a Ray cluster (solver.training.cluster): a local cluster of two nodes, one
CPU each, trains Leduc and 20-card hold'em to the exploitability of one machine, loses
nothing when a worker is killed mid-round, resumes from the driver's checkpoint bit for
bit, sends a card abstraction to the workers, and refuses what cannot run in one line."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time

import numpy as np
import pytest

from agent.cli import main
from poker.game import load_game
from solver.training import cluster as C
from solver.training import cluster_deltas as D
from solver.training.cluster_identity import cluster_cache
from solver.training.config import AlgorithmConfig, Budget, CheckpointConfig, TrainingConfig
from solver.training.run import run_training

from ._ray_nodes import ray, two_nodes  # skips this module without Ray (see there)


@pytest.fixture(scope="module")
def cluster():
    """A head and a second node, one CPU each, with small object stores; this process
    is connected to it as the driver."""
    c = two_nodes()
    ray.init(address=c.address, logging_level="ERROR", log_to_driver=False)
    yield c.address
    ray.shutdown()
    c.shutdown()


def _config(address: str | None, *, game="leduc.limit.2p", iterations=100_000, seed=1, sync=100, **kw):
    algorithm = kw.pop("algorithm", AlgorithmConfig("es"))
    cluster = None if address is None else C.ClusterOptions(address, 2, sync_iterations=sync)
    return TrainingConfig(
        game=game, algorithm=algorithm, budget=Budget(iterations=iterations), seed=seed,
        cluster=cluster, **kw,
    )  # fmt: skip


def _expl(run) -> float:
    return run.final.mbb_per_game


def test_leduc_trains_as_one_machine_does(cluster, tmp_path, capsys):
    """A TOML recipe with the cluster keys, Linear CFR's discount after every 10,000
    global iterations: two workers' 60,000 iterations (rounds of 150 each) lie within
    one machine's 60,000 over seeds 1 to 3 and beat its 30,000 on every seed, so the
    mean of two workers' deltas is worth more than one worker's share. (One seed, not a
    band: over seeds 1 to 8 such rounds averaged 45.8 mbb/g against one machine's 39.0,
    the staleness of a round of 150 on a game whose every row is hot; see
    ``bench/cluster_merge.py --parts leduc_seeds``.) Every round is counted, the
    discounts cut rounds at the global count, and the strategy file records the
    cluster."""
    disc = AlgorithmConfig("es", discount="linear", discount_every=10_000)
    half = [_expl(run_training(_config(None, seed=s, iterations=30_000, algorithm=disc))) for s in (1, 2, 3)]
    full = [_expl(run_training(_config(None, seed=s, iterations=60_000, algorithm=disc))) for s in (1, 2, 3)]
    toml = tmp_path / "run.toml"
    out = tmp_path / "c.strategy"
    toml.write_text(
        'game = "leduc.limit.2p"\nalgo = "es"\niterations = 60000\nseed = 1\n'
        'discount = "linear"\ndiscount_every = 10000\n'
        f'cluster = "{cluster}"\nworkers = 2\nsync_iterations = 150\nout = "{out}"\n'
    )
    assert main(["train", "--config", str(toml), "--json"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out.strip().splitlines()[-1])
    assert doc["mbb_per_game"] < min(half), (doc["mbb_per_game"], half)
    assert min(full) <= doc["mbb_per_game"] <= max(full), (doc["mbb_per_game"], full)
    stats = doc["cluster"]
    # rounds of 300 on a grid of 300, and one more for each discount off the grid
    # (10,000, 20,000, 40,000 and 50,000)
    assert stats["rounds"] == 204 and stats["iterations"] == 60_000
    assert {w["slot"] for w in stats["workers"]} == {0, 1}
    assert stats["bytes_in"] > 0 and stats["bytes_out"] > 0 and stats["replaced"] == 0
    assert sum("ready on" in line for line in captured.err.splitlines()) == 2
    from solver.strategy_io import open_strategy

    record = open_strategy(out).training
    assert record["cluster"]["workers"] == 2 and record["cluster"]["sync_iterations"] == 150
    assert record["cluster"]["rounds"] == 204 and record["options"]["discount"]["every"] == 10_000
    assert record["config"]["cluster"] == cluster


def _killer(lines: list[str], slot: int, delay: float):
    """(pids killed, the killing thread, a progress callback): after the run's first
    batch, ``delay`` seconds later, SIGKILL to worker ``slot`` (its pid read from the
    run's ``lines``). With ``delay`` 0 the callback waits for the kill, so the driver's
    next batch always finds the worker dead (a timer could fire after a short run ended)."""
    killed: list[int] = []

    def kill() -> None:
        time.sleep(delay)
        pid = next(int(line.split("(pid ")[1].split(",")[0]) for line in lines if line.startswith(f"worker {slot} ready"))
        killed.append(pid)
        os.kill(pid, signal.SIGKILL)

    timer = threading.Thread(target=kill)

    def progress(report) -> None:
        if report.stage == "batch" and not killed and not timer.is_alive():
            timer.start()
            if delay == 0:
                timer.join()

    return killed, timer, progress


def test_a_killed_worker_or_driver_loses_nothing(cluster, tmp_path):
    """SIGKILL to a worker's process mid-run: the run says so, replaces it and runs the
    lost share again. That run stops at 80,000 iterations with a checkpoint, as a driver
    that died would have left it; resumed, it ends with the very tables of a run never
    disturbed (rounds of a fixed size, one thread a worker)."""
    calm = run_training(_config(cluster, iterations=200_000, sync=20_000))
    lines: list[str] = []
    killed, timer, progress = _killer(lines, 0, 0)
    ckpt = tmp_path / "run.ckpt"
    rough = run_training(
        _config(cluster, iterations=80_000, sync=20_000, checkpoint=CheckpointConfig(file=ckpt)),
        say=lines.append,
        progress=progress,
    )
    timer.join()
    assert killed and rough.cluster["replaced"] >= 1
    assert any("died" in line and "replacement" in line for line in lines), lines
    resumed = run_training(
        _config(cluster, iterations=200_000, sync=20_000, checkpoint=CheckpointConfig(resume=ckpt))
    )
    assert resumed.iterations == 200_000 and resumed.iterations_this_run == 120_000
    assert np.array_equal(resumed.strategy.policy, calm.strategy.policy)


def test_hot_syncs_rerun_a_round_a_worker_died_in(cluster):
    """With --hot-syncs the workers of a round wait on each other's hot rows, so a
    worker killed mid-round makes the driver free the others and run the whole round
    again: the run ends with the tables of a run never disturbed. The exchanges are
    real: without them the same run ends elsewhere."""

    def config(hot: int) -> TrainingConfig:
        options = C.ClusterOptions(cluster, 2, sync_iterations=20_000, hot_syncs=hot)
        return TrainingConfig(game="leduc.limit.2p", algorithm=AlgorithmConfig("es"),
                              budget=Budget(iterations=120_000), seed=1, cluster=options)  # fmt: skip

    calm = run_training(config(4))
    assert calm.cluster["rounds"] == 3 and calm.cluster["replaced"] == 0
    assert not np.array_equal(run_training(config(0)).strategy.policy, calm.strategy.policy)
    lines: list[str] = []
    killed, timer, progress = _killer(lines, 1, 0.05)
    rough = run_training(config(4), say=lines.append, progress=progress)
    timer.join()
    assert killed and rough.cluster["replaced"] >= 1
    assert any("died" in line and "the round's" in line for line in lines), lines
    assert np.array_equal(rough.strategy.policy, calm.strategy.policy)


def test_hot_async_posts_add_up_without_waiting():
    """The hot rows' actor without waiting: each post returns at once what the *other*
    workers have posted in the round so far (a worker's own posts may run out of order,
    so it adds its own gains itself); the driver takes the whole sum once at the round's
    end; an aborted round's posts get None and its sum is dropped; rounds do not mix."""
    import asyncio

    async def go() -> None:
        rows = D.HotRows()
        a = np.array([1.0, 2.0], np.float32)
        r, _ = await rows.post(7, 0, a, 2 * a)
        assert r.tolist() == [0.0, 0.0]
        r, g = await rows.post(7, 1, 10 * a, a)  # another worker, before the first posts again
        assert r.tolist() == [1.0, 2.0] and g.tolist() == [2.0, 4.0]
        r, g = await rows.post(7, 0, a, a)
        assert r.tolist() == [10.0, 20.0] and g.tolist() == [1.0, 2.0]
        r, g = await rows.post(7, 1, a, None)  # regrets alone: no average sums either way
        assert r.tolist() == [2.0, 4.0] and g is None
        r, _ = await rows.post(8, 0, a, a)  # the next round starts from nothing
        assert r.tolist() == [0.0, 0.0]
        taken = await rows.take(7)
        assert taken[0].tolist() == [13.0, 26.0] and taken[1].tolist() == [4.0, 8.0]
        assert await rows.take(7) is None
        await rows.abort(8)
        assert await rows.post(8, 0, a, a) is None and await rows.take(8) is None

    asyncio.run(go())


@pytest.mark.parametrize("algo", ["es", "as"])
def test_hot_async_steps_of_one_worker_add_its_gains_once(cluster, algo: str):
    """Each asynchronous post's answer is read a step later. With one worker the answers
    carry nothing (no other worker posts), so five exchanges a round must leave the run
    where no exchange does, to float32 rounding, however the actor orders the posts: a
    worker that counted its own gains again through an answer would end far away.
    External sampling posts the average sums only at a round's end; average strategy
    sampling, whose sampling reads them, with every post."""

    def policy(syncs: int) -> np.ndarray:
        options = C.ClusterOptions(cluster, 1, sync_iterations=20_000, hot_syncs=syncs, hot_async=syncs > 0)
        return run_training(TrainingConfig(game="leduc.limit.2p", algorithm=AlgorithmConfig(algo),
                                           budget=Budget(iterations=60_000), seed=1, cluster=options)).strategy.policy  # fmt: skip

    assert np.abs(policy(5) - policy(0)).max() < 1e-6


def test_hot_async_adds_what_the_waiting_exchange_adds_and_survives_a_kill(cluster, tmp_path):
    """--hot-async on Leduc. With one exchange a round, posted after each worker's whole
    share, nothing a worker samples depends on the others' posts, so the round must add
    what the waiting exchange adds (the sum of the hot rows' deltas, the mean of the
    rest): resumed from one machine's checkpoint at 60,000 iterations for one round of
    60,000, the strategies agree to float32 rounding, and differ from a round without exchanges
    (from tables that are not zero, a sum and a mean weigh the round differently). With
    four a round, a worker killed mid-round makes the driver run the round again, the run
    ends at its count, and the strategy file records the option."""
    import shutil

    from solver.strategy_io import open_strategy

    def config(syncs: int, hot_async: bool, per: int, out=None, resume=None) -> TrainingConfig:
        options = C.ClusterOptions(cluster, 2, sync_iterations=per, hot_syncs=syncs, hot_async=hot_async)
        return TrainingConfig(game="leduc.limit.2p", algorithm=AlgorithmConfig("es"),
                              budget=Budget(iterations=120_000), seed=1, cluster=options, out=out,
                              checkpoint=CheckpointConfig(resume=resume))  # fmt: skip

    first = tmp_path / "first.ckpt"
    run_training(TrainingConfig(game="leduc.limit.2p", algorithm=AlgorithmConfig("es"), budget=Budget(iterations=60_000),
                                seed=1, checkpoint=CheckpointConfig(file=first)))  # fmt: skip

    def resumed(syncs: int, hot_async: bool) -> np.ndarray:
        copy = tmp_path / f"resume.{syncs}.{hot_async}.ckpt"
        shutil.copy(first, copy)
        run = run_training(config(syncs, hot_async, 60_000, resume=copy))
        assert run.iterations_this_run == 60_000 and run.cluster["rounds"] == 1
        return run.strategy.policy

    posted, waited, apart = resumed(1, True), resumed(1, False), resumed(0, False)
    # (the waiting round's deltas travel as float32: measured 1.6e-8 apart, 0.06 from
    # the round without exchanges)
    assert np.allclose(posted, waited, rtol=0, atol=1e-6)
    assert np.abs(posted - apart).max() > 1e-3
    lines: list[str] = []
    killed, timer, progress = _killer(lines, 1, 0.02)  # 12 short rounds: kill early
    out = tmp_path / "a.strategy"
    rough = run_training(config(4, True, 5_000, out), say=lines.append, progress=progress)
    timer.join()
    assert rough.iterations == 120_000 and rough.cluster["rounds"] == 12
    assert killed and rough.cluster["replaced"] >= 1
    assert any("died" in line and "the round's" in line for line in lines), lines
    record = open_strategy(out).training
    assert record["cluster"]["hot_async"] is True and record["cluster"]["hot_syncs"] == 4
    assert "--hot-async" in record["recipe"]


def test_hot_entries_are_the_early_streets_in_either_layout():
    """The hot rows are every (node, bucket, action) of the preflop and the flop, a
    leading slice of the bucket layout and the same entries, as indices, of the node
    layout; Leduc's are its first street's."""
    from solver.training.dealt import make_dealt_problem
    from solver.training.sampled import TableLayout

    for game, betting, streets in (("holdem.nolimit.2p.short20", "1p,cap1", 2), ("leduc.limit.2p", None, 1)):
        problem = make_dealt_problem(game, betting)
        tree = problem.tree
        for kind in ("bucket", "node"):
            layout = TableLayout.build(problem, kind)
            want = np.sort(np.concatenate([layout.node_entries(int(n)) for n in tree.decision_nodes()
                                           if int(tree.street[n]) < streets]))  # fmt: skip
            hot = D.hot_entries(layout)
            got = np.arange(hot.start, hot.stop) if isinstance(hot, slice) else hot
            assert isinstance(hot, slice) == (kind == "bucket")
            assert np.array_equal(got, want) and 0 < got.size < problem.size


def test_short20_with_a_card_abstraction_sent_to_the_workers(cluster, tmp_path):
    """20-card hold'em over a small card abstraction: the workers get it from the driver
    into their machine's cache and the result, in the abstract game,
    lies within one machine's over three seeds."""
    from abstraction.build import build_abstraction
    from abstraction.card_abstraction import CardAbstraction
    from abstraction.plan import AbstractionParams
    from solver.evaluation.best_response import abstract_exploitability
    from solver.problem import make_problem
    from solver.strategy import Strategy
    from solver.training.config import EvaluationConfig

    ab = tmp_path / "abs"
    build_abstraction("holdem.nolimit.2p.short20", AbstractionParams((5, 8, 8, 8)), ab)
    listed = make_problem("holdem.nolimit.2p.short20", "a", abstraction=CardAbstraction.load(ab))

    def expl(run) -> float:  # the dealt run's policy on the listed abstract game
        s = run.strategy
        return abstract_exploitability(None, Strategy(listed, s.policy, s.iterations, s.algorithm)).mbb_per_game

    common = dict(
        game="holdem.nolimit.2p.short20", betting="a", abstraction=ab, iterations=200_000,
        evaluation=EvaluationConfig(enabled=False),
    )  # fmt: skip
    single = [expl(run_training(_config(None, seed=s, **common))) for s in (1, 2, 3)]
    lines: list[str] = []
    run = run_training(_config(cluster, sync=10_000, **common), say=lines.append)
    assert min(single) <= expl(run) <= max(single), (expl(run), single)
    assert sum("received" in line and "card abstraction" in line for line in lines) >= 1, lines
    # kept in the machine's cache by content hash, where the next run finds it
    kept = cluster_cache(CardAbstraction.load(ab).content_hash)
    assert CardAbstraction.load(kept, verify=True).content_hash == CardAbstraction.load(ab).content_hash
    assert any(f"from {kept}" in line for line in lines if "ready on" in line), lines


def test_a_distributed_abstraction_is_the_local_one_byte_for_byte(cluster, tmp_path, capsys):
    """``pokerbot abstract --cluster``: 20-card hold'em's feature stages as tasks over
    shards of boards and hands (two workers, four shards each), and its k-means's
    assignment steps on the workers: every table, centroid and feature file equals the
    local build's."""
    from abstraction.build import build_abstraction
    from abstraction.plan import AbstractionParams

    game = "holdem.nolimit.2p.short20"
    here = build_abstraction(game, AbstractionParams((5, 8, 8, 8)), tmp_path / "here")
    argv = ["abstract", game, "--buckets", "5,8,8,8", "--out", str(tmp_path / "there"), "--json", "--quiet"]
    assert main([*argv, "--cluster", cluster, "--workers", "2"]) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    stats = doc["cluster"]
    assert stats["feature_tasks"] >= 4 and stats["bytes_in"] > 0 and stats["assignment_steps"] >= 3
    assert doc["content_hash"] == here.abstraction.content_hash
    names = sorted(p.relative_to(tmp_path / "here") for p in (tmp_path / "here").rglob("*.npy"))
    assert any("river.values" in str(n) for n in names) and any("table" in str(n) for n in names)
    for name in names:
        assert (tmp_path / "here" / name).read_bytes() == (tmp_path / "there" / name).read_bytes(), name


def test_kmeans_assignment_on_workers_is_the_local_one_bit_for_bit(cluster):
    """k-means's assignment steps on two workers, each owning half the points with their
    Yinyang bounds between steps: the centroids and labels of the run in this process,
    bit for bit; a worker killed between two steps is replaced (it scans its points
    fully) and the result is still the same."""
    from abstraction.cluster import FeatureCluster
    from abstraction.kmeans import kmeans

    rng = np.random.default_rng(5)
    n = 80_000  # three of the kernels' chunks: the workers' ranges cut through one
    x = (rng.normal(size=(n, 6)) + rng.integers(0, 9, size=(n, 1))).astype(np.float32)
    w = rng.integers(0, 4, size=n).astype(np.float64)
    here = kmeans(x, 40, weights=w, seed=3, max_iter=12)
    lines: list[str] = []
    features = FeatureCluster(cluster, 2, say=lines.append)
    made = []

    def assignment(points, t):
        made.append(features.assignment(points, t))
        return made[-1]

    def kill_one(iteration, max_iter, moved):
        if iteration == 4:
            ray.kill(made[-1]._actors[1])

    calm = kmeans(x, 40, weights=w, seed=3, max_iter=12, assignment=assignment)
    rough = kmeans(x, 40, weights=w, seed=3, max_iter=12, assignment=assignment, progress=kill_one)
    for there in (calm, rough):
        assert np.array_equal(there.centroids, here.centroids) and np.array_equal(there.labels, here.labels)
        assert (there.iterations, there.inertia) == (here.iterations, here.inertia)
    assert here.iterations > 5 and made[0].steps == here.iterations + 1 and made[0].replaced == 0
    assert made[1].replaced == 1 and any("k-means worker 1 died" in line for line in lines), lines
    assert features.assign_steps == 2 * (here.iterations + 1) and not made[1]._actors
    features.close()


def test_refusals_are_one_line(cluster, tmp_path, capsys, monkeypatch):
    out = tmp_path / "x.strategy"
    base = ["train", "leduc.limit.2p", "--iterations", "1000", "--out", str(out), "--quiet"]
    cases = [
        ([*base, "--algo", "cfr+", "--cluster", cluster, "--workers", "2"], "--cluster applies to --algo es / os / as / tcfr"),
        ([*base, "--algo", "es", "--workers", "2"], "--workers needs --cluster"),
        ([*base, "--algo", "es", "--cluster", cluster], "--cluster needs --workers N"),
        ([*base, "--algo", "es", "--cluster", cluster, "--workers", "3"], "the Ray cluster has 2 CPUs"),
        ([*base, "--algo", "es", "--cluster", cluster, "--workers", "2", "--threads", "2"], "needs 4"),
        ([*base, "--algo", "es", "--cluster", cluster, "--workers", "0"], "--workers must be"),
        ([*base, "--algo", "es", "--cluster", cluster, "--workers", "2", "--hot-syncs", "-1"], "--hot-syncs must be"),
        ([*base, "--algo", "es", "--hot-syncs", "4"], "--hot-syncs needs --cluster"),
        ([*base, "--algo", "es", "--cluster", cluster, "--workers", "2", "--hot-async"], "--hot-async needs --hot-syncs"),
    ]
    for argv, expected in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and expected in err[0], (argv, err)
        assert not out.exists()
    # a worker whose code differs from the driver's refuses to join
    from solver.training.algorithms import make_training_solver
    from solver.training.dealt import make_training_problem
    from solver.training.sampled import SamplingOptions

    problem = make_training_problem("leduc.limit.2p", None, "es")
    solver = make_training_solver(problem, "es", SamplingOptions(seed=1))
    spec = C.worker_spec(problem, "es", {}, solver.sampling, 1)
    doctored = C.WorkerSpec(**{**spec.__dict__, "digests": {**spec.digests, "code": "sha256:" + "0" * 64}})
    with pytest.raises(C.ClusterError, match="runs other code"):
        C.ClusterRunner(C.ClusterOptions(cluster, 1), doctored, solver)
    kuhn = load_game("kuhn.limit.2p").to_text()
    other = C.WorkerSpec(**{**spec.__dict__, "game_text": kuhn})
    with pytest.raises(C.ClusterError, match="builds another game"):
        C.ClusterRunner(C.ClusterOptions(cluster, 1), other, solver)
    # a worker whose machine cannot hold the tables and a round's copies refuses to join
    # (the full deck over lossless buckets: 528,514,685,985 entries)
    full = make_training_problem("holdem.nolimit.2p.reverse_blinds", "1p,cap1", "es")
    big = C.worker_spec(full, "es", {}, SamplingOptions(seed=1, dtype="float32"), 1)
    with pytest.raises(C.ClusterError, match=r"worker 0 on .* needs .*TiB.* but has .* available"):
        C.ClusterRunner(C.ClusterOptions(cluster, 1), big, None)
    # without Ray, the command says how to install it
    monkeypatch.setitem(sys.modules, "ray", None)
    assert main([*base, "--algo", "es", "--cluster", "local", "--workers", "1"]) == 2
    assert C.INSTALL_HINT in capsys.readouterr().err


def test_deltas_round_trip_dense_and_sparse():
    rng = np.random.default_rng(0)
    old = rng.normal(size=1000).astype(np.float32)
    for changed in (10, 900):
        new = old.copy()
        idx = rng.choice(1000, changed, replace=False)
        new[idx] += rng.normal(size=changed).astype(np.float32)
        delta = D.encode_delta(new, old, 0.5)
        assert delta[0] == ("sparse" if changed == 10 else "dense")
        table = old.astype(np.float64)
        D.decode_delta(table, delta)
        assert np.allclose(table, old + 0.5 * (new.astype(np.float64) - old), atol=1e-6)
        assert D.delta_bytes(delta) == (8 * changed if changed == 10 else 4000)
    assert C.split_shares(10, 7, 3) == [(10, 3), (13, 2), (15, 2)]


@pytest.mark.parametrize("size", [1000, 1001])
def test_a_delta_is_sparse_exactly_while_fewer_than_half_the_entries_changed(size: int) -> None:
    """The one-pass encoder stops at half the table and starts again dense: on either
    side of the boundary it gives the same values, as a list or as a table."""
    rng = np.random.default_rng(size)
    old = rng.normal(size=size).astype(np.float32)
    for changed in ((size - 1) // 2, (size - 1) // 2 + 1, size, 0):
        new = old.copy()
        idx = np.sort(rng.choice(size, changed, replace=False))
        new[idx] += 1.0
        kind, a, b = D.encode_delta(new, old)
        want = (new - old).astype(np.float32)
        if 2 * changed < size:
            assert kind == "sparse" and np.array_equal(a, idx) and np.array_equal(b, want[idx])
            assert D.delta_bytes((kind, a, b)) == 8 * changed
        else:
            assert kind == "dense" and b is None and np.array_equal(a, want)


def test_deltas_equal_numpys_arithmetic():
    """The fused encoder gives numpy's subtract, in-place scale and float32 cast, bit
    for bit, for float32 and float64 tables and a scale that rounds (a third)."""
    rng = np.random.default_rng(1)
    for dtype in (np.float32, np.float64):
        old = (rng.normal(size=5000) * 1e4).astype(dtype)
        for changed in (7, 4000):
            new = old.copy()
            idx = rng.choice(old.size, changed, replace=False)
            new[idx] += rng.normal(size=changed).astype(dtype)
            for scale in (1.0 / 3.0, 1.0):
                want = np.subtract(new, old)
                want *= scale
                want = want.astype(np.float32)
                kind, a, b = D.encode_delta(new, old, scale)
                if kind == "sparse":
                    assert np.array_equal(a, np.flatnonzero(want)) and np.array_equal(b, want[a])
                else:
                    assert np.array_equal(a, want)
    with pytest.raises(ValueError, match="tables differ"):
        D.encode_delta(np.zeros(3, np.float32), np.zeros(3, np.float64))


def test_an_address_that_does_not_answer_is_refused_at_once():
    """Before Ray (which retries for minutes) is asked to join it."""
    from abstraction.cluster import probe_head

    with pytest.raises(C.ClusterError, match="cannot reach the Ray cluster at 127.0.0.1:1"):
        probe_head("127.0.0.1:1", seconds=2.0)
    with pytest.raises(C.ClusterError, match="give HOST:PORT"):
        probe_head("nohost")
