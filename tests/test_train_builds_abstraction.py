"""``pokerbot train --abstract-buckets``: a recipe that names how its card abstraction is
built rebuilds its strategy from nothing with one command. The run builds the folder
where it holds no finished abstraction (the same files as ``pokerbot abstract``), uses it
where it holds the one asked for, refuses one built otherwise, and a dry run predicts the
build without writing anything."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from abstraction.card_abstraction import CardAbstraction
from abstraction.model import META_FILE
from agent.cli import main
from solver.strategy_io import open_strategy

LEDUC = ["train", "leduc.limit.2p", "--algo", "cfr+", "--iterations", "30", "--quiet"]


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["pokerbot"])
    return tmp_path


def test_dry_run_predicts_the_build_and_writes_nothing(here, capsys):
    argv = [*LEDUC, "--abstraction", "abs/leduc", "--abstract-buckets", "3,3",
            "--checkpoint", "abs/l.ckpt", "--out", "l.strategy", "--dry-run"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "to build the card abstraction first" in out
    assert "building the card abstraction before it" in out
    # the folders the build would make (and the checkpoint's inside them) are not refused
    assert sorted(p.name for p in here.iterdir()) == []
    assert main([*argv, "--json"]) == 0
    plan = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["plan"]
    # the build's own prediction, as 'pokerbot abstract --dry-run' gives it
    assert main(["abstract", "leduc.limit.2p", "--buckets", "3,3", "--dry-run", "--json"]) == 0
    alone = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert plan["build_seconds"] == round(alone["seconds"], 3)
    assert plan["build_peak_bytes"] == int(alone["peak_gib"] * 2**30) > 0
    assert plan["peak_bytes"] == max(plan["build_peak_bytes"], plan["runtime_bytes"] + plan["memory_bytes"] + plan["write_bytes"])
    # no pilot without the abstraction: the time of an iterations budget is unknown
    assert plan["pilot_iterations"] is None and "not built yet" in plan["unknown"]
    assert sorted(p.name for p in here.iterdir()) == []


def test_train_builds_what_abstract_builds_then_reuses_it(here, capsys):
    assert main(["abstract", "leduc.limit.2p", "--buckets", "3,3", "--seed", "2", "--out", "ref",
                 "--quiet"]) == 0  # fmt: skip
    reference = CardAbstraction.load("ref").content_hash
    capsys.readouterr()
    argv = [*LEDUC, "--abstraction", "abs/leduc", "--abstract-buckets", "3,3", "--abstract-seed", "2",
            "--checkpoint", "abs/l.ckpt", "--out", "l.strategy"]  # fmt: skip
    assert main(argv) == 0
    built = CardAbstraction.load("abs/leduc", verify=True)
    assert built.content_hash == reference
    assert open_strategy(here / "l.strategy").cards["content_hash"] == reference
    assert (here / "abs" / "l.ckpt").is_file()
    # a second run uses the folder as it is: nothing rebuilt
    meta = here / "abs" / "leduc" / META_FILE
    stamp = meta.stat().st_mtime_ns
    assert main([*argv, "--out", "again.strategy"]) == 0
    assert meta.stat().st_mtime_ns == stamp
    assert open_strategy(here / "again.strategy").cards["content_hash"] == reference


def test_a_folder_built_otherwise_is_refused(here, capsys):
    assert main(["abstract", "leduc.limit.2p", "--buckets", "3,3", "--out", "abs/leduc", "--quiet"]) == 0
    capsys.readouterr()
    argv = [*LEDUC, "--abstraction", "abs/leduc", "--out", "l.strategy"]
    for extra, asked in ((["--abstract-buckets", "3,2"], "3,2 buckets"),
                         (["--abstract-buckets", "3,3", "--abstract-seed", "1"], "3,3 buckets, seed 1")):  # fmt: skip
        assert main([*argv, *extra]) == 2
        line = _error(capsys)
        assert "holds an abstraction of 3,3 buckets," in line and f"not the {asked} that" in line, line
    assert not (here / "l.strategy").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--abstraction", "a", "--abstract-buckets", "3,4,5"], "--abstract-buckets: game leduc.limit.2p has 2 streets"),
        (["--abstraction", "a", "--abstract-buckets", "3,0"], "every count must be at least 1"),
        (["--abstract-buckets", "3,3"], "--abstract-buckets needs --abstraction DIR"),
        (["--abstraction", "a", "--abstract-seed", "3"], "--abstract-seed needs --abstract-buckets"),
        (["--abstraction", "a", "--abstract-buckets", "3,3", "--abstract-bins", "1"], "bins 1 is not in 2..1024"),
    ],
)
def test_bad_build_options_are_one_line(here, capsys, extra, message):
    assert main([*LEDUC, "--out", "l.strategy", *extra]) == 2
    assert message in _error(capsys)
    assert sorted(p.name for p in here.iterdir()) == []


def test_recipe_file_keys(here, capsys):
    (here / "r.toml").write_text(
        'game = "leduc.limit.2p"\nalgo = "cfr+"\niterations = 30\nabstraction = "abs/l"\n'
        'abstract_buckets = "3,3"\nabstract_seed = 5\nabstract_metric = "moments"\nout = "l.strategy"\n',
        encoding="utf-8",
    )
    assert main(["train", "--config", "r.toml", "--quiet"]) == 0
    params = CardAbstraction.load("abs/l").params
    assert (params.buckets, params.seed, params.metric) == ((3, 3), 5, "moments")
    record = open_strategy(here / "l.strategy").training["config"]
    assert record["abstract_buckets"] == "3,3" and record["abstract_seed"] == 5
