"""A training run's plan (:mod:`solver.training.plan`): ``pokerbot train --dry-run`` checks
and plans without writing, the solving time is the budget left (after a resume too) or the
iterations left at a pilot's rate, and planning leaves the run's results unchanged."""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import solver.training.run as run_module
from agent.cli import main
from solver.strategy_io import load_strategy
from solver.training.checkpoint import load_checkpoint
from solver.training.config import (
    AlgorithmConfig,
    Budget,
    CheckpointConfig,
    EvaluationConfig,
    TrainingConfig,
)
from solver.training.plan import format_duration
from solver.training.run import plan_training, run_training

PILOT = 0.2  # seconds: enough for a rate on Leduc, short for a test


def _leduc(folder: Path, budget: Budget, **kw) -> TrainingConfig:
    return TrainingConfig(
        "leduc.limit.2p",
        AlgorithmConfig("es"),
        budget,
        out=folder / "run.strategy",
        seed=3,
        evaluation=EvaluationConfig(every=0),
        **kw,
    )


def _last_json(text: str) -> dict:
    return json.loads(text.strip().splitlines()[-1])


def test_dry_run_plans_the_seconds_budget_and_writes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)

    def refuse(*args, **kwargs):
        raise AssertionError("a dry run of a seconds budget allocates no table")

    # neither the problem nor a solver is built: the memory estimate needs neither
    monkeypatch.setattr(run_module, "make_training_problem", refuse)
    monkeypatch.setattr(run_module, "make_training_solver", refuse)
    argv = ["train", "leduc.limit.2p", "--algo", "es", "--seconds", "5", "--out", "x.strategy",
            "--checkpoint-every", "1", "--metrics", "m.jsonl", "--dry-run"]  # fmt: skip
    monkeypatch.setattr(sys, "argv", ["pokerbot", *argv])
    assert main([*argv, "--json"]) == 0
    doc = _last_json(capsys.readouterr().out)
    plan = doc["plan"]
    assert doc["dry_run"] is True and doc["fits_memory"] is True
    assert (plan["solving_seconds"], plan["ends_by"], plan["pilot_iterations"]) == (5.0, "seconds", None)
    assert plan["checkpoints"] == 6  # every second of solving, and one at the end
    assert plan["seconds"] >= 5.0 and plan["peak_bytes"] > plan["memory_bytes"] > 0
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("plan: about") and "5 s of solving" in out[0]
    assert out[1].startswith("plan: peak memory about") and out[2].startswith("dry run: nothing")
    assert list(tmp_path.iterdir()) == []


def test_dry_run_after_a_resume_plans_what_the_budget_leaves(tmp_path, capsys, monkeypatch):
    ckpt = tmp_path / "run.ckpt"
    first = _leduc(tmp_path, Budget(iterations=30_000), checkpoint=CheckpointConfig(ckpt))
    run_training(first)
    saved = load_checkpoint(ckpt)
    before = ckpt.read_bytes()
    (tmp_path / "run.strategy").unlink()
    resume = CheckpointConfig(ckpt, resume=ckpt)
    plan = plan_training(_leduc(tmp_path, Budget(seconds=5), checkpoint=resume))
    assert plan.seconds_left == plan.solving_seconds == pytest.approx(5 - saved.seconds)
    assert plan.solving_seconds < 5 and plan.ends_by == "seconds"
    plan = plan_training(
        _leduc(tmp_path, Budget(iterations=80_000), checkpoint=resume), pilot_seconds=PILOT
    )
    assert plan.iterations_left == 80_000 - saved.iterations == 50_000
    assert 0 < plan.pilot.iterations <= 5_000  # a tenth of those left at most
    # through the command line: the budget minus the checkpoint's seconds
    monkeypatch.chdir(tmp_path)
    assert main(["train", "leduc.limit.2p", "--algo", "es", "--seed", "3", "--seconds", "7",
                 "--resume", str(ckpt), "--dry-run", "--json"]) == 0  # fmt: skip
    plan_doc = _last_json(capsys.readouterr().out)["plan"]
    assert plan_doc["solving_seconds"] == pytest.approx(7 - saved.seconds, abs=1e-3)
    assert ckpt.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["run.ckpt"]


def test_an_iterations_budget_is_timed_by_a_pilot(tmp_path, monkeypatch):
    plan = plan_training(_leduc(tmp_path, Budget(iterations=10_000_000)), pilot_seconds=PILOT)
    assert plan.rate is not None and 0 < plan.rate < math.inf
    assert plan.solving_seconds == pytest.approx(10_000_000 / plan.rate)
    assert 0 < plan.pilot.iterations <= 1_000_000 and plan.ends_by == "iterations"
    assert "iterations/s" in plan.lines()[0] and math.isfinite(plan.total_seconds)
    # both budgets: the sooner end counts
    both = plan_training(_leduc(tmp_path, Budget(seconds=0.5, iterations=10_000_000)), pilot_seconds=PILOT)
    assert (both.solving_seconds, both.ends_by) == (0.5, "seconds")
    # without the memory for a second set of tables, no pilot: the time is unknown
    monkeypatch.setattr(run_module, "available_memory_gib", lambda: 0.0)
    blind = plan_training(_leduc(tmp_path, Budget(iterations=10_000_000)), pilot_seconds=PILOT)
    assert blind.pilot is None and blind.solving_seconds is None and blind.total_seconds is None
    assert "unknown until the first batches" in blind.lines()[0]
    capped = plan_training(_leduc(tmp_path, Budget(seconds=9, iterations=10_000_000)))
    assert capped.solving_seconds is None and capped.solving_at_most == 9
    assert "at most 9 s of solving" in capped.lines()[0]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("algo", ["es", "cfr+"])
def test_planning_leaves_the_run_bit_for_bit_unchanged(tmp_path, algo):
    """The pilot runs on a solver of its own: a planned run (resumed too) ends with the
    tables and the strategy of the run without a plan."""

    def config(folder: Path, iterations: int, resume: bool = False) -> TrainingConfig:
        folder.mkdir(exist_ok=True)
        ckpt = folder / "run.ckpt"
        return TrainingConfig(
            "leduc.limit.2p",
            AlgorithmConfig(algo),
            Budget(iterations=iterations),
            out=folder / "run.strategy",
            seed=3 if algo == "es" else 0,
            precision="f32",
            checkpoint=CheckpointConfig(ckpt, resume=ckpt if resume else None),
            evaluation=EvaluationConfig(every=0),
        )

    total, part = (60_000, 20_000) if algo == "es" else (60, 20)
    plain = run_training(config(tmp_path / "plain", total))
    planned = run_training(config(tmp_path / "planned", total), plan=True, pilot_seconds=PILOT)
    assert plain.plan is None and planned.plan is not None and planned.plan.pilot.iterations > 0
    run_training(config(tmp_path / "resumed", part))
    resumed = run_training(config(tmp_path / "resumed", total, resume=True), plan=True, pilot_seconds=PILOT)
    assert resumed.plan.iterations_left == total - part
    for folder in ("planned", "resumed"):
        a = load_checkpoint(tmp_path / "plain" / "run.ckpt")
        b = load_checkpoint(tmp_path / folder / "run.ckpt")
        assert (a.iterations, a.nodes) == (b.iterations, b.nodes) == (total, a.nodes)
        for k in a.arrays:
            np.testing.assert_array_equal(a.arrays[k], b.arrays[k], err_msg=f"{folder} {k}")
        np.testing.assert_array_equal(
            load_strategy(tmp_path / "plain" / "run.strategy").policy,
            load_strategy(tmp_path / folder / "run.strategy").policy,
        )


def test_the_command_prints_the_plan_and_its_json_keeps_it(tmp_path, capsys, monkeypatch):
    out = tmp_path / "k.strategy"
    argv = ["train", "kuhn.limit.2p", "--algo", "cfr+", "--iterations", "300", "--out", str(out)]
    monkeypatch.setattr(sys, "argv", ["pokerbot", *argv])
    assert main([*argv, "--json"]) == 0
    captured = capsys.readouterr()
    doc = _last_json(captured.out)
    plan = doc["plan"]
    assert plan["iterations_left"] == 300 and plan["ends_by"] == "iterations"
    assert 0 < plan["iterations_per_s"] < math.inf and 0 < plan["solving_seconds"] < math.inf
    assert plan["setup_seconds"] > 0 and plan["dry_run"] is False
    lines = [x for x in captured.err.splitlines() if x.startswith("plan:")]
    assert len(lines) == 2 and "300" not in lines[1] and "peak memory" in lines[1]
    # --quiet: no plan printed (and none made without --json); the JSON keeps it
    assert main([*argv, "--json", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "plan:" not in captured.err and _last_json(captured.out)["plan"]["iterations_left"] == 300
    assert main([*argv, "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_a_dry_run_that_cannot_run_fails_in_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.toml").write_text(
        'game = "leduc.limit.2p"\nalgo = "es"\nseconds = 5\nseeds = 2\n', encoding="utf-8"
    )
    assert main(["train", "--config", "bad.toml", "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert "unknown key 'seeds'" in err and "\n" not in err
    assert main(["train", "leduc.limit.2p", "--algo", "es", "--seconds", "5", "--dry-run",
                 "--resume", "none.ckpt"]) == 2  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert "without --resume" in err and "\n" not in err
    huge = ["train", "holdem.nolimit.2p.reverse_blinds", "--betting", "1p,cap1", "--algo", "tcfr",
            "--iterations", "10", "--out", "x.strategy", "--dry-run"]  # fmt: skip
    assert main(huge) == 2
    err = capsys.readouterr().err.strip()
    assert "TiB" in err and "\n" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.toml"]


def test_format_duration():
    assert [format_duration(s) for s in (0.2, 1.4, 59, 61, 3600 + 125.4)] == [
        "<1 s", "1 s", "59 s", "1:01", "1:02:05",
    ]  # fmt: skip


def test_the_plan_is_plain_data(tmp_path):
    plan = plan_training(_leduc(tmp_path, Budget(seconds=2)))
    doc = plan.to_dict()
    json.dumps(doc)  # plain data
    assert doc["peak_bytes"] == doc["memory_bytes"] + doc["write_bytes"] + doc["runtime_bytes"]
    assert dataclasses.asdict(plan)["solving_seconds"] == 2
