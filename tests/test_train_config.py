"""``pokerbot train --config FILE.toml`` and ``--metrics FILE``, in-process through
``agent.cli.main``; the shipped strategies' recipe files against their stored recipes."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import numpy as np
import pytest

from agent.cli import build_parser, main
from agent.commands.train import CONFIG_KEYS, config_from_args, merge_config
from solver.strategy_io import load_strategy, open_strategy

ROOT = Path(__file__).resolve().parent.parent
STRATEGIES = ROOT / "strategies"
SHIPPED = sorted(STRATEGIES.glob("*.strategy"))
#: Display options: not run settings, so not config keys (a recipe may carry --quiet).
DISPLAY = {"quiet", "json"}


def _merged(argv: list[str]):
    return merge_config(build_parser().parse_args(argv))


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_every_shipped_strategy_has_a_recipe_file():
    assert SHIPPED
    for strategy in SHIPPED:
        assert strategy.with_suffix(".toml").is_file(), strategy


@pytest.mark.parametrize("strategy", SHIPPED, ids=lambda p: p.stem)
def test_recipe_file_is_the_stored_recipe(strategy):
    stored = open_strategy(strategy)
    words = shlex.split(stored.training["recipe"])
    assert words[:2] == ["pokerbot", "train"]
    game = stored.game.name
    if strategy.stem != game:
        # a kept older file (<game>.<label>.strategy): its recipe moved beside it, away
        # from the path the file records, which the current file's recipe now holds
        moved = f"strategies/{game}.toml"
        assert moved in words
        words = [str(strategy.with_suffix(".toml").relative_to(ROOT)) if w == moved else w for w in words]
    from_recipe = _merged(words[1:])
    from_config = _merged(["train", "--config", str(strategy.with_suffix(".toml"))])
    a, b = vars(from_recipe), vars(from_config)
    # How the card abstraction is built may be newer than a recipe the file records: it
    # does not change the training, and must be how the file's abstraction was built.
    building = {k for k in CONFIG_KEYS if k.startswith("abstract_")}
    if b["abstract_buckets"] is not None:
        built = config_from_args(from_config).abstract
        assert built is not None and built.to_json() == stored.cards["params"]
    for key in CONFIG_KEYS:
        if key not in building or a["abstract_buckets"] is not None:
            assert a[key] == b[key], (key, a[key], b[key])
    ignore = DISPLAY | building | {"config", "config_values", "func"}
    assert {k: v for k, v in a.items() if k not in ignore} == {
        k: v for k, v in b.items() if k not in ignore
    }
    # and the file's out is the shipped file (the recipe, run from the root, rebuilds it)
    assert (ROOT / from_config.out).resolve() == strategy.resolve()


KUHN = 'game = "kuhn.limit.2p"\nalgo = "cfr+"\niterations = 200\n'


def test_config_trains_like_flags(tmp_path, capsys, monkeypatch):
    flags = tmp_path / "flags.strategy"
    conf = tmp_path / "conf.strategy"
    assert main(["train", "kuhn.limit.2p", "--algo", "cfr+", "--iterations", "200",
                 "--out", str(flags), "--quiet"]) == 0
    cfg = _write(tmp_path / "run.toml", KUHN + f'out = "{conf}"\n')
    argv = ["train", "--config", str(cfg), "--quiet"]
    monkeypatch.setattr(sys, "argv", ["pokerbot", *argv])
    assert main(argv) == 0
    np.testing.assert_array_equal(load_strategy(conf).policy, load_strategy(flags).policy)
    training = open_strategy(conf).training
    assert training["recipe"] == f"pokerbot train --config {shlex.quote(str(cfg))} --quiet"
    assert training["config"]["iterations"] == 200 and training["config"]["file"] == str(cfg)
    assert training["iterations"] == 200


def test_flags_override_the_file(tmp_path, monkeypatch):
    cfg = _write(tmp_path / "run.toml", KUHN + 'out = "a.strategy"\nseed = 4\nthreads = 2\n')
    args = _merged(["train", "--config", str(cfg), "--iterations", "7", "--out", "b.strategy",
                    "--algo", "es"])
    assert (args.game, args.algo, args.iterations, args.out) == (
        "kuhn.limit.2p", "es", 7, Path("b.strategy"))
    assert (args.seed, args.threads, args.dtype) == (4, 2, "auto")
    # a flag equal to the default still overrides the file
    assert _merged(["train", "--config", str(cfg), "--seed", "0"]).seed == 0
    # relative paths are relative to the current directory, not to the file's folder
    sub = tmp_path / "cfg"
    sub.mkdir()
    _write(sub / "run.toml", KUHN + 'out = "k.strategy"\n')
    monkeypatch.chdir(tmp_path)
    assert main(["train", "--config", "cfg/run.toml", "--quiet"]) == 0
    assert (tmp_path / "k.strategy").is_file() and not (sub / "k.strategy").exists()


@pytest.mark.parametrize(
    "text,message",
    [
        (KUHN + 'out = "x.strategy"\nspeed = 3\n', "unknown key 'speed'"),
        (KUHN + 'out = "x.strategy"\ncheckpoint-every = 3\n', "did you mean checkpoint_every"),
        (KUHN.replace("200", '"200"') + 'out = "x.strategy"\n', "iterations must be an integer"),
        (KUHN + 'out = "x.strategy"\nseconds = "ten"\n', "seconds must be a number"),
        (KUHN + 'out = "x.strategy"\npure = 1\n', "pure must be true or false"),
        (KUHN + 'out = "x.strategy"\ndtype = "float16"\n', "dtype must be one of"),
        (KUHN + "out = \n", "not valid TOML"),
        (KUHN, "missing --out"),
        ('out = "x.strategy"\niterations = 5\n', "missing GAME, --algo"),
    ],
)
def test_config_errors(tmp_path, capsys, monkeypatch, text, message):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "run.toml", text)
    assert main(["train", "--config", "run.toml", "--quiet"]) == 2
    line = _error(capsys)
    assert line.startswith("pokerbot train: error:") and message in line, line
    assert not (tmp_path / "x.strategy").exists()


def test_missing_config_and_missing_required(tmp_path, capsys):
    assert main(["train", "--config", str(tmp_path / "none.toml"), "--quiet"]) == 2
    assert "none.toml: no such file" in _error(capsys)
    assert main(["train", "kuhn.limit.2p", "--iterations", "3", "--quiet"]) == 2
    line = _error(capsys)
    assert "missing --algo, --out" in line and "--config" in line, line


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_metrics_jsonl(tmp_path, capsys):
    metrics = tmp_path / "m.jsonl"
    ckpt = tmp_path / "run.ckpt"
    base = ["train", "kuhn.limit.2p", "--algo", "es", "--seed", "1", "--quiet",
            "--out", str(tmp_path / "k.strategy"), "--metrics", str(metrics),
            "--checkpoint", str(ckpt)]
    assert main([*base, "--seconds", "1.2", "--eval-every", "0.5"]) == 0
    first = _lines(metrics)
    assert len(first) >= 3 and first[-1]["final"] is True
    assert not any(line.get("final") for line in first[:-1])
    ts = [line["t"] for line in first]
    assert all(a < b for a, b in zip(ts[:-2], ts[1:-1])) and ts[-2] <= ts[-1]
    assert all(b - a >= 0.45 for a, b in zip(ts[:-2], ts[1:-1]))  # at most ~2 lines a second
    for line in first:
        assert {"t", "iterations", "iterations_per_s", "deals", "deals_per_s", "nodes",
                "nodes_per_s", "rss_gib", "infosets_visited_share", "regret_max",
                "regret_mean_positive"} <= set(line)  # fmt: skip
        assert 0 < line["rss_gib"] < 64
        assert line["deals"] == line["iterations"] and 0 < line["infosets_visited_share"] <= 1
        assert line["regret_max"] > 0 and 0 < line["regret_mean_positive"] < line["regret_max"]
    assert first[-1]["infosets_visited_share"] == 1.0  # Kuhn: every row reached
    assert any("mbb_per_game" in line for line in first[:-1])  # an evaluation's line
    assert first[-1]["mbb_per_game"] is not None and first[-1]["interrupted"] is False
    # a resumed run appends, its time continuing the first run's
    n = first[-1]["iterations"]
    assert main([*base, "--iterations", str(n + 1000), "--resume", str(ckpt)]) == 0
    both = _lines(metrics)
    assert both[: len(first)] == first and both[-1]["final"] is True
    assert both[-1]["iterations"] == n + 1000 and both[-1]["t"] >= first[-1]["t"]


def test_metrics_of_cfr_have_no_nodes(tmp_path):
    metrics = tmp_path / "m.jsonl"
    assert main(["train", "kuhn.limit.2p", "--algo", "cfr+", "--iterations", "50", "--quiet",
                 "--out", str(tmp_path / "k.strategy"), "--metrics", str(metrics)]) == 0
    lines = _lines(metrics)
    assert lines[-1]["final"] is True and lines[-1]["iterations"] == 50
    assert "nodes" not in lines[-1] and "deals" not in lines[-1]
    assert lines[-1]["infosets_visited_share"] == 1.0 and lines[-1]["regret_max"] > 0
    assert lines[-1]["signal"] is None


def test_metrics_measure_large_tables_seldom(tmp_path, monkeypatch):
    import solver.training.run as training_run

    # every table is "large" here: measured on the first line, then not for 60 s, and last
    monkeypatch.setattr(training_run, "TABLE_STATS_ENTRIES", 0)
    monkeypatch.setattr(training_run, "TABLE_STATS_GAP", 60.0)
    metrics = tmp_path / "m.jsonl"
    assert main(["train", "kuhn.limit.2p", "--algo", "es", "--seconds", "1.2", "--eval-every",
                 "0.5", "--quiet", "--out", str(tmp_path / "k.strategy"),
                 "--metrics", str(metrics)]) == 0  # fmt: skip
    lines = _lines(metrics)
    measured = ["regret_max" in line for line in lines]
    assert len(lines) >= 3 and measured[0] and measured[-1] and not any(measured[1:-1])


def test_help_shows_a_config(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = capsys.readouterr().out
    assert "--config" in out and "algo = " in out and "current directory" in out
