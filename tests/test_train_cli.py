"""``pokerbot tree``, ``train`` and ``eval``, run in-process through ``agent.cli.main``."""

from __future__ import annotations

import io
import json
import sys

import numpy as np
import pytest

from agent.cli import main
from agent.progress import Progress
from solver.training.algorithms import make_solver
from solver.evaluation.best_response import exploitability
from solver.training.checkpoint import load_checkpoint
from solver.problem import make_problem
from solver.strategy_io import load_strategy


def _json(capsys) -> dict:
    out = capsys.readouterr().out.strip().splitlines()
    return json.loads(out[-1])


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize(
    "argv",
    [["tree"], ["train"], ["eval"], ["eval", "exploitability"]],
)
def test_help_has_examples(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--help"])
    assert exc.value.code == 0
    assert "example" in capsys.readouterr().out


def test_tree_report(capsys):
    assert main(["tree", "leduc.limit.2p", "--json"]) == 0
    doc = _json(capsys)
    # lossless buckets are suit classes: 3 private cards; 3 pairs + 6 ordered rank pairs
    # x (suited, offsuit) on the flop
    assert (doc["nodes"], doc["infosets"], doc["entries"]) == (90, 468, 1092)
    assert doc["buckets"] == [3, 15] and doc["lossless"]
    assert doc["streets"][1]["decisions"] == [15, 15]
    assert doc["memory"]["cfr_bytes"] == 24 * 1092
    assert doc["memory"]["sampled_float32_bytes"] == 8 * 1092
    assert main(["tree", "holdem.nolimit.2p.short20", "--betting", "1p,cap1"]) == 0
    text = capsys.readouterr().out
    assert "9,623,025" in text and "chance tables" in text
    assert main(["tree", "leduc.limit.2p", "--buckets", "3,4", "--json"]) == 0
    assert _json(capsys)["entries"] == 42 // 3 * 3 + 1050 // 15 * 4


@pytest.mark.parametrize(
    "argv,message",
    [
        (["tree", "holdem.nolimit.2p.short20"], "betting abstraction"),
        (["tree", "leduc.limit.2p", "--buckets", "3"], "2 streets"),
        (["tree", "leduc.limit.2p", "--buckets", "3,x"], "integers"),
        (["tree", "leduc.nolimit.2p", "--betting", "1x"], "1x"),
        (["tree", "no-such-game"], "no-such-game"),
    ],
)
def test_tree_errors(argv, message, capsys):
    assert main(argv) == 2
    line = _error(capsys)
    assert line.startswith("pokerbot tree: error:") and message in line


def test_train_cfr_plus_and_eval(tmp_path, capsys):
    out = tmp_path / "kuhn.strategy"
    argv = ["train", "kuhn.limit.2p", "--algo", "cfr+", "--iterations", "200", "--out", str(out)]
    assert main([*argv, "--json", "--quiet"]) == 0
    doc = _json(capsys)
    assert doc["iterations"] == 200 and doc["algorithm"] == "cfr+"
    assert doc["exploitability"] < 0.005 and doc["checkpoint"] is None
    s = load_strategy(out)
    assert (s.algorithm, s.iterations) == ("cfr+", 200)
    assert main(["eval", "exploitability", "kuhn.limit.2p", str(out), "--json"]) == 0
    ev = _json(capsys)
    assert ev["exploitability"] == pytest.approx(doc["stored_exploitability"], abs=1e-12)
    assert len(ev["br"]) == 2 and ev["value"] == pytest.approx(-1 / 18, abs=0.01)
    assert ev["mbb_per_game"] == pytest.approx(1000 * ev["exploitability"])
    assert main(["eval", "exploitability", "kuhn.limit.2p", str(out)]) == 0
    assert "mbb/g" in capsys.readouterr().out


def test_train_history_form_runs_the_history_solver(tmp_path, capsys):
    # The command line's history form is the library's history-form CFR+ on the
    # lossless (suit class) problem; tests/test_cfr.py checks that solver against
    # OpenSpiel's figures on OpenSpiel's own (raw card) information sets.
    out = tmp_path / "leduc.strategy"
    argv = ["train", "leduc.limit.2p", "--algo", "cfr+", "--form", "history"]
    assert main([*argv, "--iterations", "200", "--out", str(out), "--json", "--quiet"]) == 0
    doc = _json(capsys)
    assert doc["options"] == {"form": "history"} and doc["iterations"] == 200
    solver = make_solver(make_problem("leduc.limit.2p"), "cfr+", form="history")
    solver.iterate(200)
    want = exploitability(None, solver.average_strategy()).exploitability
    assert doc["exploitability"] == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize(
    "algo,extra,limit",
    [
        # 10x below uniform play (2.37); see tests/test_mccfr.py for the seed study.
        ("es", ["--iterations", "20000"], 0.237),
        ("os", ["--iterations", "1000000", "--epsilon", "0.6"], 0.237),
        ("tcfr", ["--iterations", "100000", "--targeting", "01:0.2,1:0.8"], 0.237),
        (
            "tcfr",
            [
                "--iterations",
                "100000",
                "--targeting",
                "mod5:1@1-4",
                "--pure",
                "--close-threshold",
                "0.5",
                "--importance",
            ],
            2.37,
        ),
    ],
)
def test_train_sampled_leduc(tmp_path, capsys, algo, extra, limit):
    out = tmp_path / f"{algo}.strategy"
    argv = ["train", "leduc.limit.2p", "--algo", algo, "--seed", "1", "--out", str(out), *extra]
    assert main([*argv, "--json", "--quiet"]) == 0
    doc = _json(capsys)
    assert doc["exploitability"] < limit
    assert doc["iterations_per_s"] > 0 and doc["nodes_per_s"] > doc["iterations_per_s"]
    assert load_strategy(out).algorithm == algo


def test_train_seconds_threads_and_nolimit(tmp_path, capsys):
    out = tmp_path / "nl.strategy"
    argv = [
        "train",
        "leduc.nolimit.2p",
        "--betting",
        "1p,a",
        "--algo",
        "es",
        "--threads",
        "2",
        "--seconds",
        "0.3",
        "--out",
        str(out),
        "--json",
    ]
    assert main(argv) == 0
    doc = _json(capsys)
    assert doc["threads"] == 2 and doc["iterations"] > 0 and doc["betting"] == "1p,a"
    assert main(["eval", "exploitability", "leduc.nolimit.2p", str(out), "--json"]) == 0
    assert _json(capsys)["betting"] == "1p,a"


def test_seconds_budget_counts_the_resumed_checkpoint(tmp_path, capsys):
    """--seconds is a total, like --iterations: resuming a run that has used its budget
    adds no iterations, and a larger budget adds only the difference."""
    out, ckpt = tmp_path / "s.strategy", tmp_path / "s.ckpt"
    base = ["train", "leduc.limit.2p", "--algo", "es", "--seed", "3", "--quiet", "--json", "--out", str(out)]
    assert main([*base, "--seconds", "0.3", "--checkpoint", str(ckpt)]) == 0
    doc = _json(capsys)
    first, used = doc["iterations"], doc["seconds"]  # a loaded machine may overshoot 0.3
    assert first > 0
    assert main([*base, "--seconds", "0.3", "--resume", str(ckpt), "--checkpoint", str(ckpt)]) == 0
    again = _json(capsys)
    assert (again["iterations"], again["iterations_this_run"]) == (first, 0)
    assert main([*base, "--seconds", str(used + 0.3), "--resume", str(ckpt)]) == 0
    more = _json(capsys)
    assert more["iterations"] > first
    assert more["seconds"] < 0.55  # only the 0.3 s still left was solved


def test_resume_continues_exactly(tmp_path, capsys):
    whole = tmp_path / "whole.strategy"
    part = tmp_path / "part.strategy"
    ckpt = tmp_path / "run.ckpt"
    base = ["train", "leduc.limit.2p", "--algo", "es", "--seed", "3", "--quiet", "--json"]
    assert main([*base, "--iterations", "9000", "--out", str(whole)]) == 0
    capsys.readouterr()
    assert main([*base, "--iterations", "4000", "--out", str(part), "--checkpoint", str(ckpt)]) == 0
    assert _json(capsys)["checkpoint"] == str(ckpt)
    assert main([*base, "--iterations", "9000", "--out", str(part), "--resume", str(ckpt)]) == 0
    doc = _json(capsys)
    assert (doc["iterations"], doc["iterations_this_run"]) == (9000, 5000)
    np.testing.assert_array_equal(load_strategy(part).policy, load_strategy(whole).policy)
    # Resuming with other settings is refused.
    assert (
        main(
            [
                *base,
                "--iterations",
                "9000",
                "--out",
                str(part),
                "--resume",
                str(ckpt),
                "--seed",
                "4",
            ]
        )
        == 2
    )
    assert "seed" in _error(capsys)
    assert (
        main(
            [
                "train",
                "leduc.limit.2p",
                "--algo",
                "os",
                "--iterations",
                "10",
                "--out",
                str(part),
                "--resume",
                str(ckpt),
            ]
        )
        == 2
    )
    assert "es run" in _error(capsys)
    assert (
        main(
            [
                "train",
                "kuhn.limit.2p",
                "--algo",
                "es",
                "--iterations",
                "10",
                "--out",
                str(part),
                "--resume",
                str(ckpt),
            ]
        )
        == 2
    )
    assert "different game" in _error(capsys)


def test_sampled_tables_are_float32_unless_resumed_from_float64(tmp_path, capsys):
    base = ["train", "leduc.limit.2p", "--iterations", "300", "--quiet", "--json",
            "--out", str(tmp_path / "x.strategy")]  # fmt: skip
    for algo in ("es", "os", "tcfr"):
        assert main([*base, "--algo", algo]) == 0
        assert _json(capsys)["options"]["dtype"] == "float32"
    assert main([*base, "--algo", "cfr+", "--checkpoint", str(tmp_path / "c.ckpt")]) == 0
    assert load_checkpoint(tmp_path / "c.ckpt").arrays["regrets"].dtype == np.float64
    # a float64 run (an explicit --dtype, or an older default) resumes as one under auto
    ckpt = tmp_path / "e.ckpt"
    assert main([*base, "--algo", "es", "--dtype", "float64", "--checkpoint", str(ckpt)]) == 0
    capsys.readouterr()
    argv = [*base, "--algo", "es", "--iterations", "600", "--resume", str(ckpt)]
    assert main(argv) == 0
    assert _json(capsys)["options"]["dtype"] == "float64"
    assert main([*argv, "--dtype", "float32"]) == 2
    assert "options" in _error(capsys)


def test_progress_shows_the_sooner_end():
    out = io.StringIO()
    bar = Progress(1000, "train es", unit=" deals", stream=out, seconds=10.0)
    bar.start -= 3.0  # 3 s of wall time, 2 of them solving, 500 deals: 250 deals/s of solving
    bar.update(500, force=True, spent=2.0)
    line = out.getvalue().splitlines()[-1]
    assert "500/1,000 250 deals/s" in line and "elapsed 00:03" in line
    assert "eta 00:02" in line and "[############" in line  # the count ends first
    bar.update(500, force=True, spent=9.0)  # the time budget ends first
    line = out.getvalue().splitlines()[-1]
    assert "eta 00:01" in line and "#" * 21 in line
    assert bar.remaining() == pytest.approx(1.0)
    unbounded = Progress(None, "x", stream=out, seconds=None)
    assert unbounded.remaining() is None
    unbounded.update(3, force=True)
    assert "eta" not in out.getvalue().splitlines()[-1]


@pytest.mark.parametrize(
    "extra,message",
    [
        (
            ["--algo", "es", "--iterations", "1", "--abstraction", "no-such-dir/"],
            "no meta.json: not a card abstraction",
        ),
        (["--algo", "es"], "--seconds"),
        (
            ["--algo", "es", "--iterations", "1", "--epsilon", "0.5"],
            "--epsilon applies to --algo os",
        ),
        (["--algo", "cfr", "--iterations", "1", "--threads", "2"], "--threads applies"),
        (["--algo", "es", "--iterations", "1", "--form", "history"], "--form applies to --algo cfr"),
        (["--algo", "tcfr", "--iterations", "1", "--targeting", "0123:1"], "street 2"),
        (
            ["--algo", "tcfr", "--iterations", "1", "--targeting", "1:1"],
            "never targets every street",
        ),
        (["--algo", "os", "--iterations", "1", "--epsilon", "0"], "epsilon"),
        (["--algo", "es", "--iterations", "-5"], "--iterations"),
        (["--algo", "es", "--iterations", "1", "--threads", "0"], "--threads"),
        (["--algo", "es", "--iterations", "1", "--betting", "1p"], "limit game"),
        (["--algo", "es", "--iterations", "1", "--resume", "missing.ckpt"], "without --resume"),
    ],
)
def test_train_errors(tmp_path, capsys, extra, message):
    argv = ["train", "leduc.limit.2p", "--out", str(tmp_path / "x.strategy"), "--quiet", *extra]
    assert main(argv) == 2
    line = _error(capsys)
    assert line.startswith("pokerbot train: error:") and message in line, line
    assert not (tmp_path / "x.strategy").exists()


def test_train_bad_out_folder(tmp_path, capsys):
    argv = [
        "train",
        "kuhn.limit.2p",
        "--algo",
        "cfr",
        "--iterations",
        "1",
        "--out",
        str(tmp_path / "nope" / "x.strategy"),
    ]
    assert main(argv) == 2
    assert "does not exist" in _error(capsys)


def test_eval_errors(tmp_path, capsys):
    out = tmp_path / "k.strategy"
    assert (
        main(
            [
                "train",
                "kuhn.limit.2p",
                "--algo",
                "cfr",
                "--iterations",
                "3",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["eval", "exploitability", "leduc.limit.2p", str(out)]) == 2
    assert "trained for kuhn.limit.2p" in _error(capsys)
    assert main(["eval", "exploitability", "kuhn.limit.2p", str(tmp_path / "none.strategy")]) == 2
    assert "cannot read" in _error(capsys)
    (tmp_path / "junk.strategy").write_bytes(b"\x00\x01junk")
    assert main(["eval", "exploitability", "kuhn.limit.2p", str(tmp_path / "junk.strategy")]) == 2
    assert _error(capsys).startswith("pokerbot eval: error:")


def test_train_deals_without_a_chance_layer_and_refuses_what_cannot_fit(tmp_path, capsys):
    # full hold'em with lossless buckets: terabytes of tables, refused before anything runs
    out = tmp_path / "fd.strategy"
    argv = ["train", "holdem.nolimit.2p.reverse_blinds", "--betting", "1p,cap1", "--algo", "tcfr"]
    assert main([*argv, "--iterations", "10", "--out", str(out), "--quiet"]) == 2
    line = _error(capsys)
    assert "does not fit" in line or "needs" in line, line
    assert "TiB" in line and not out.exists()


def test_train_short20_deals_with_a_regret_floor(tmp_path, capsys):
    from abstraction.build import build_abstraction
    from abstraction.plan import AbstractionParams

    ab = tmp_path / "abs"
    build_abstraction("holdem.nolimit.2p.short20", AbstractionParams((5, 8, 8, 8)), ab)
    out = tmp_path / "s20.strategy"
    argv = ["train", "holdem.nolimit.2p.short20", "--betting", "a", "--abstraction", str(ab)]
    argv += ["--algo", "es", "--iterations", "100000", "--regret-floor", "--seed", "2"]
    assert main([*argv, "--out", str(out), "--json", "--quiet"]) == 0
    doc = _json(capsys)
    assert doc["options"]["deals"] == "dealt" and doc["options"]["floor"] is True
    assert doc["options"]["dtype"] == "float32"
    # evaluated exactly on the listed game: far below the uniform strategy's
    assert 0 < doc["real_mbb_per_game"] < 20_000
    # and so is the policy as stored, one byte per probability (it read 0 when measured
    # on the dealt problem, which has no chance layer to walk)
    assert doc["stored_real_exploitability"] == pytest.approx(doc["real_exploitability"], rel=0.05)
    assert load_strategy(out).iterations == 100_000


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_during_the_final_evaluation_writes_the_strategy(tmp_path):
    """The command stopped while it evaluates a finished run: exit 130, the strategy
    written without figures, one line saying so."""
    import signal
    import subprocess
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    cmd = [sys.executable, "-m", "agent"]
    subprocess.run(cmd + ["abstract", "holdem.nolimit.2p.short20", "--buckets", "5,8,8,8", "--seed", "1",
                          "--out", str(tmp_path / "abs")], cwd=root, check=True, capture_output=True)
    out = tmp_path / "run.strategy"
    proc = subprocess.Popen(cmd + ["train", "holdem.nolimit.2p.short20", "--betting", "1p,cap1", "--algo", "es",
                                   "--iterations", "20000", "--seed", "1", "--threads", "1",
                                   "--abstraction", str(tmp_path / "abs"), "--out", str(out)],
                            cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    seen = b""
    deadline = time.monotonic() + 240
    while b"evaluate average strategy" not in seen and time.monotonic() < deadline and proc.poll() is None:
        seen += proc.stderr.read1(4096)
    assert b"evaluate average strategy" in seen, seen[-500:]
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-500:]
    last = err.decode().strip().splitlines()[-1]
    assert last.startswith("pokerbot train: SIGINT stopped the final evaluation") and str(out) in last
    assert load_strategy(out).iterations == 20000
