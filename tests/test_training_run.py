"""Training as a library call: :class:`solver.training.config.TrainingConfig` (validation,
the ``pokerbot train`` command line and ``--config`` file merged into it) and
:func:`solver.training.run.run_training` (a small game trained, stopped and resumed
through it, bit for bit the run never stopped)."""

from __future__ import annotations

import dataclasses
import signal
import sys
from pathlib import Path

import numpy as np
import pytest

from abstraction.plan import AbstractionParams
from agent.cli import build_parser, main
from agent.commands.train import config_from_args, merge_config
from solver.problem import make_problem
from solver.strategy_io import load_strategy, open_strategy
from solver.training.algorithms import make_solver
from solver.training.checkpoint import load_checkpoint
from solver.training.config import (
    AlgorithmConfig,
    Budget,
    CheckpointConfig,
    ConfigError,
    EvaluationConfig,
    TrainingConfig,
)
from solver.training.loop import StopRequest
from solver.training.run import TrainingProgress, run_training


def _config(algo: str = "es", **kw) -> TrainingConfig:
    budget = kw.pop("budget", Budget(iterations=100))
    return TrainingConfig("leduc.limit.2p", AlgorithmConfig(algo), budget, **kw)


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda: Budget(), "give --seconds T and/or --iterations N"),
        (lambda: Budget(seconds=-1), "--seconds must not be negative, not -1.0"),
        (lambda: Budget(iterations=-5), "--iterations must not be negative, not -5"),
        (lambda: Budget(iterations="3"), "--iterations must be a whole number, not '3'"),
        (lambda: Budget(seconds="ten"), "--seconds must be a number"),
        (lambda: AlgorithmConfig("xs"), "--algo must be one of cfr, cfr+, lcfr, cs, pcs, es, os, as, tcfr, deep"),
        (lambda: AlgorithmConfig("es", epsilon=0.5), "--epsilon applies to --algo os / as, not es"),
        (lambda: AlgorithmConfig("os", targeting="full"), "--targeting applies to --algo tcfr"),
        (lambda: AlgorithmConfig("es", pure=True), "--pure applies to --algo tcfr, not es"),
        (lambda: AlgorithmConfig("cfr", averaging="linear"), "--averaging applies to --algo es / os / as / tcfr"),
        (lambda: AlgorithmConfig("cfr+", regret_floor=True), "--regret-floor applies"),
        (lambda: AlgorithmConfig("es", form="history"), "--form applies to --algo cfr / cfr+, not es"),
        (lambda: AlgorithmConfig("es", averaging="cubic"), "--averaging must be one of uniform, linear"),
        (lambda: AlgorithmConfig("es", discount_every=10), "--discount-every needs --discount"),
        (lambda: AlgorithmConfig("es", discount="linear", dcfr_alpha=2.0), "--dcfr-alpha needs --discount dcfr"),
        (lambda: AlgorithmConfig("es", discount="dcfr", averaging="linear"), "leave --averaging uniform"),
        (lambda: AlgorithmConfig("es", discount="dcfr", discount_every=0), "--discount: discount interval 0"),
        (lambda: AlgorithmConfig("cfr+", discount="linear"), "--discount applies to --algo es / os / as / tcfr"),
        (lambda: AlgorithmConfig("os", prune_threshold=-5.0), "--prune-threshold applies to --algo es / tcfr"),
        (lambda: AlgorithmConfig("as", prune_threshold=-5.0), "--prune-threshold applies to --algo es / tcfr, not as"),
        (lambda: AlgorithmConfig("es", probe=True), "--probe applies to --algo os / as, not es"),
        (lambda: AlgorithmConfig("os", as_beta=1.0), "--as-beta applies to --algo as, not os"),
        (lambda: AlgorithmConfig("es", prune_share=0.5), "--prune-share needs --prune-threshold"),
        (lambda: AlgorithmConfig("es", prune_threshold=3.0), "--prune-threshold: pruning threshold 3"),
        (lambda: AlgorithmConfig("es", prune_threshold=-3.0, regret_floor=True), "cannot run with --regret-floor"),
        (lambda: CheckpointConfig(every=-2), "--checkpoint-every must not be negative"),
        (lambda: EvaluationConfig(every=-1), "--eval-every must not be negative"),
        (lambda: _config(seed=-1), "--seed must not be negative, not -1"),
        (lambda: _config("cfr", threads=2), "--threads applies to --algo es / os / as / tcfr, not cfr"),
        (lambda: _config("cfr+", dtype="float32"), "--dtype applies"),
        (lambda: _config(threads=0), "--threads must be at least 1, not 0"),
        (lambda: _config(dtype="float16"), "--dtype must be one of auto, float64, float32"),
        (lambda: _config(precision="f16"), "--precision must be one of u8, f32"),
        (lambda: _config(budget=5), "budget must be a Budget"),
    ],
)
def test_config_errors_are_one_line_value_errors(make, message):
    with pytest.raises(ConfigError) as exc:
        make()
    assert isinstance(exc.value, ValueError)
    text = str(exc.value)
    assert message in text and "\n" not in text, text


def test_config_resolves_the_solver_options():
    tcfr = _config("tcfr", seed=4, threads=1)
    assert tcfr.sampling_options().record() == {
        "averaging": "uniform", "dtype": "float32", "stratify": True,
    }  # fmt: skip
    assert tcfr.solver_options() == {
        "targeting": None, "importance": False, "close_threshold": 0.0, "pure": False,
    }  # fmt: skip
    es = TrainingConfig(
        "leduc.limit.2p",
        AlgorithmConfig("es", averaging="linear", regret_floor=True),
        Budget(seconds=30),
        dtype="float64",
        seed=2,
        out=Path("x.strategy"),
    )
    sampling = es.sampling_options()
    assert (sampling.seed, sampling.dtype, sampling.averaging.value, sampling.floor) == (
        2, "float64", "linear", True,
    )  # fmt: skip
    assert es.eval_every == 3.0 and es.checkpoint_path == Path("x.strategy.ckpt")
    cfr = _config("cfr+", budget=Budget(iterations=10))
    assert cfr.sampling_options() is None and cfr.table_dtype() == "float64"
    assert cfr.eval_every == 5.0 and cfr.checkpoint_path is None
    history = TrainingConfig("kuhn.limit.2p", AlgorithmConfig("cfr", form="history"), Budget(iterations=1))
    assert history.solver_options() == {"form": "history"}


def _from_cli(argv: list[str]) -> TrainingConfig:
    return config_from_args(merge_config(build_parser().parse_args(argv)))


def test_toml_and_flags_merge_into_the_config(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.toml").write_text(
        'game = "leduc.limit.2p"\nalgo = "tcfr"\nseconds = 60\niterations = 5000\nseed = 4\n'
        'threads = 2\ntargeting = "mod5:1@1-4"\nimportance = true\ncheckpoint = "c/run.ckpt"\n'
        'checkpoint_every = 30\neval_every = 0\nfinal_eval = true\nout = "o/a.strategy"\n'
        'metrics = "m.jsonl"\nprecision = "f32"\n',
        encoding="utf-8",
    )
    argv = ["pokerbot", "train", "--config", "run.toml", "--seed", "0", "--iterations", "7",
            "--out", "b.strategy", "--close-threshold", "0.5"]  # fmt: skip
    monkeypatch.setattr(sys, "argv", argv)
    c = _from_cli(argv[1:])
    # the flags win, even one equal to its default (--seed 0); the file gives the rest
    assert (c.seed, c.budget, c.out) == (0, Budget(seconds=60.0, iterations=7), Path("b.strategy"))
    assert c.algorithm == AlgorithmConfig(
        "tcfr", targeting="mod5:1@1-4", importance=True, close_threshold=0.5
    )
    assert (c.game, c.threads, c.dtype, c.precision, c.metrics) == (
        "leduc.limit.2p", 2, "auto", "f32", Path("m.jsonl"),
    )  # fmt: skip
    assert c.checkpoint == CheckpointConfig(Path("c/run.ckpt"), 30.0, None)
    assert c.evaluation == EvaluationConfig(0.0, True) and c.eval_every == 0.0
    # the recipe is the command as given; the file's settings are recorded beside it
    assert c.recipe_text() == "pokerbot train --config run.toml --seed 0 --iterations 7 " \
        "--out b.strategy --close-threshold 0.5"
    assert c.config_record["file"] == "run.toml" and c.config_record["seed"] == 4
    assert c.config_record["out"] == "o/a.strategy" and c.config_record["seconds"] == 60.0
    # a value the file may hold but the run refuses: the usual one-line error, status 2
    (tmp_path / "bad.toml").write_text(
        'game = "kuhn.limit.2p"\nalgo = "cfr"\niterations = 3\nthreads = 2\nout = "k.strategy"\n',
        encoding="utf-8",
    )
    assert main(["train", "--config", "bad.toml", "--quiet"]) == 2
    assert not (tmp_path / "k.strategy").exists()


def test_command_runs_the_same_config(tmp_path):
    config = TrainingConfig(
        "leduc.nolimit.2p",
        AlgorithmConfig("tcfr", averaging="linear", regret_floor=True, targeting="01:0.2,1:0.8",
                        importance=True, close_threshold=2.5, pure=True),
        Budget(seconds=0.3, iterations=12345),
        out=tmp_path / "x y.strategy",
        betting="1p,a",
        abstraction=tmp_path / "abs",
        threads=2,
        seed=9,
        dtype="float64",
        precision="f32",
        checkpoint=CheckpointConfig(tmp_path / "c.ckpt", 60.0, tmp_path / "old.ckpt"),
        metrics=tmp_path / "m.jsonl",
        evaluation=EvaluationConfig(0.5, True),
        abstract=AbstractionParams((3, 5), history=True, seed=2, bins=8, metric="moments",
                                   history_weight=0.25, max_iter=7),
    )  # fmt: skip
    again = _from_cli(config.command())
    assert dataclasses.replace(again, recipe=None) == config
    assert config.recipe_text().startswith("pokerbot train leduc.nolimit.2p --betting 1p,a")
    scheduled = TrainingConfig(
        "leduc.limit.2p",
        AlgorithmConfig("es", discount="dcfr", discount_every=500, discount_until=9000, dcfr_alpha=1.0,
                        dcfr_beta=0.5, dcfr_gamma=3.0, prune_threshold=-40.0, prune_after=100,
                        prune_share=0.9, prune_floor=-50.0),
        Budget(iterations=100),
        out=tmp_path / "s.strategy",
    )  # fmt: skip
    assert dataclasses.replace(_from_cli(scheduled.command()), recipe=None) == scheduled
    options = scheduled.sampling_options().record()
    assert options["discount"] == {"rule": "dcfr", "every": 500, "until": 9000, "alpha": 1.0, "beta": 0.5, "gamma": 3.0}
    assert options["pruning"] == {"threshold": -40.0, "after": 100, "share": 0.9, "floor": -50.0}
    minimal = TrainingConfig("kuhn.limit.2p", AlgorithmConfig("cfr+"), Budget(iterations=10))
    assert minimal.command() == ["train", "kuhn.limit.2p", "--algo", "cfr+", "--iterations", "10"]


def test_run_training_is_the_command(tmp_path, capsys, monkeypatch):
    """The library call writes what ``pokerbot train`` writes, and reports its progress."""
    cli = tmp_path / "cli.strategy"
    argv = ["train", "kuhn.limit.2p", "--algo", "cfr+", "--iterations", "300", "--out", str(cli),
            "--quiet"]  # fmt: skip
    monkeypatch.setattr(sys, "argv", ["pokerbot", *argv])
    assert main(argv) == 0
    out = tmp_path / "lib.strategy"
    config = TrainingConfig("kuhn.limit.2p", AlgorithmConfig("cfr+"), Budget(iterations=300), out=out)
    reports: list[TrainingProgress] = []
    run = run_training(config, progress=reports.append)
    np.testing.assert_array_equal(load_strategy(out).policy, load_strategy(cli).policy)
    solver = make_solver(make_problem("kuhn.limit.2p"), "cfr+")
    solver.iterate(300)
    np.testing.assert_array_equal(run.strategy.policy, solver.average_policy())
    training = open_strategy(out).training
    assert training == run.training
    assert training["recipe"] == f"pokerbot train kuhn.limit.2p --algo cfr+ --iterations 300 --out {out}"
    from_cli = open_strategy(cli).training
    assert from_cli["recipe"] == "pokerbot " + " ".join(argv)
    same = ("algorithm", "iterations", "seed", "threads", "options")
    assert [training[k] for k in same] == [from_cli[k] for k in same] == ["cfr+", 300, None, 1, {}]
    assert (run.iterations, run.iterations_this_run, run.interrupted, run.checkpoint) == (300, 300, False, None)
    assert run.final is not None and run.final.exploitability < 0.01
    assert run.evaluation["precision"] == "u8" and run.stored is not None
    stages = [r.stage for r in reports]
    batches = stages.count("batch")
    assert stages[0] == "start" and stages[-1] == "end" and set(stages[1 : batches + 1]) == {"batch"}
    # then the evaluations' walks: the average's (both responders and the profile's
    # value, one walk each on kuhn: 9 nodes a walk) and the policy as stored, each
    # counted from 0 to 27 nodes
    evaluating = [r.evaluation for r in reports[batches + 1 : -1]]
    assert all(e is not None for e in evaluating)
    for what in ("average strategy", "as stored"):
        done = [(e.done, e.total) for e in evaluating if e.what == what]
        assert done[0] == (0, 27) and done[-1] == (27, 27) and done == sorted(done)
    assert [e.what for e in evaluating] == sorted((e.what for e in evaluating), key=lambda w: w == "as stored")
    assert reports[batches + 1].fields["evaluating"] == "average strategy, 0/27 nodes"
    assert reports[0].iterations_budget == 300 and reports[0].unit == " it"
    done = [r.iterations for r in reports[1 : batches + 1]]
    assert done == sorted(done)
    assert reports[-1].iterations == 300 and "expl" in reports[-1].fields
    assert capsys.readouterr().err == ""  # the library draws nothing


def _same_tables(a, b) -> None:
    assert (a.iterations, a.nodes) == (b.iterations, b.nodes)
    assert a.arrays.keys() == b.arrays.keys()
    for k in a.arrays:
        np.testing.assert_array_equal(a.arrays[k], b.arrays[k], err_msg=k)


@pytest.mark.parametrize(
    "algo,options",
    [
        ("es", {}),
        ("tcfr", {}),
        ("es", {"discount": "dcfr", "discount_every": 7_000, "prune_threshold": -50.0}),
        ("as", {"probe": True, "as_beta": 1.0, "as_tau": 1.0}),
        ("os", {"probe": True}),
    ],
    ids=["es", "tcfr", "es-discounted-pruned", "as-probe", "os-probe"],
)
def test_stopped_and_resumed_through_the_library_is_the_run_never_stopped(tmp_path, algo, options):
    def config(folder: Path) -> TrainingConfig:
        return TrainingConfig(
            "leduc.limit.2p",
            AlgorithmConfig(algo, **options),
            Budget(iterations=100_000),
            out=folder / "run.strategy",
            seed=3,
            precision="f32",
            checkpoint=CheckpointConfig(folder / "run.ckpt"),
            evaluation=EvaluationConfig(every=0),
        )

    whole = tmp_path / "whole"
    part = tmp_path / "part"
    whole.mkdir()
    part.mkdir()
    before = signal.getsignal(signal.SIGTERM)
    done = run_training(config(whole))
    assert not done.interrupted and done.checkpoint == whole / "run.ckpt"
    stops = iter((5_000, 20_000))
    stop = StopRequest()
    target = next(stops)

    def stop_at(report: TrainingProgress) -> None:
        if report.stage == "batch" and report.iterations >= target:
            stop.set()  # the loop ends before its next batch

    first = run_training(config(part), progress=stop_at, stop=stop)
    assert first.interrupted and first.signal == signal.SIGINT
    assert target <= first.iterations < 100_000
    assert load_checkpoint(part / "run.ckpt").iterations == first.iterations
    assert load_strategy(part / "run.strategy").iterations == first.iterations
    target = next(stops)
    stop = StopRequest()
    resume = CheckpointConfig(part / "run.ckpt", resume=part / "run.ckpt")
    second = run_training(
        dataclasses.replace(config(part), checkpoint=resume), progress=stop_at, stop=stop
    )
    assert second.interrupted and first.iterations < second.iterations < 100_000
    assert second.iterations_this_run == second.iterations - first.iterations
    last = run_training(dataclasses.replace(config(part), checkpoint=resume))
    assert not last.interrupted and last.iterations == 100_000
    assert last.iterations_this_run == 100_000 - second.iterations
    assert signal.getsignal(signal.SIGTERM) is before  # the handlers are put back
    _same_tables(load_checkpoint(part / "run.ckpt"), load_checkpoint(whole / "run.ckpt"))
    np.testing.assert_array_equal(
        load_strategy(part / "run.strategy").policy, load_strategy(whole / "run.strategy").policy
    )
    assert last.training["options"] == done.training["options"]


@pytest.mark.parametrize("threads", [1, 2])
def test_a_signal_during_the_final_evaluation_keeps_the_strategy(tmp_path, threads):
    """SIGINT or SIGTERM while the finished run evaluates ends the evaluation after the
    walks under way, writes the strategy without figures and says so; the handlers are
    put back."""
    import os

    def config(out: Path) -> TrainingConfig:
        return TrainingConfig("leduc.nolimit.2p", AlgorithmConfig("es"), Budget(iterations=2_000), out=out,
                              betting="0.5p,1p,a", seed=5, threads=threads)

    whole = run_training(config(tmp_path / "whole.strategy"))
    assert whole.evaluation_stopped is None and whole.evaluation  # evaluated, figures stored
    before = signal.getsignal(signal.SIGTERM)
    sent: list[int] = []

    def interrupt(report: TrainingProgress) -> None:
        if report.stage == "evaluate" and not sent:
            sent.append(signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGTERM)

    stopped = run_training(config(tmp_path / "stopped.strategy"), progress=interrupt)
    assert sent and stopped.evaluation_stopped == signal.SIGTERM and not stopped.interrupted
    assert stopped.final is None and stopped.real is None and stopped.evaluation == {}
    assert signal.getsignal(signal.SIGTERM) is before
    kept = load_strategy(tmp_path / "stopped.strategy")
    assert kept.iterations == 2_000 and not open_strategy(tmp_path / "stopped.strategy").evaluation
    if threads == 1:  # (Hogwild threads make a run reproducible only statistically)
        np.testing.assert_array_equal(kept.policy, load_strategy(tmp_path / "whole.strategy").policy)


def test_run_training_refuses_before_it_runs(tmp_path):
    missing = _config(out=tmp_path / "nope" / "x.strategy")
    with pytest.raises(ConfigError, match="folder .* does not exist"):
        run_training(missing)
    resume = _config(out=tmp_path / "x.strategy", checkpoint=CheckpointConfig(resume=tmp_path / "none.ckpt"))
    with pytest.raises(ConfigError, match="without --resume"):
        run_training(resume)
    huge = TrainingConfig(
        "holdem.nolimit.2p.reverse_blinds", AlgorithmConfig("tcfr"), Budget(iterations=10),
        betting="1p,cap1", out=tmp_path / "x.strategy",
    )  # fmt: skip
    with pytest.raises(ConfigError, match="TiB"):
        run_training(huge)
    assert list(tmp_path.iterdir()) == []
