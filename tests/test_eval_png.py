"""``pokerbot eval lbr/aivat --png``: the running estimate drawn to a PNG."""

from __future__ import annotations

from pathlib import Path

import pytest

import agent.plot
from agent.cli import main

ROOT = Path(__file__).resolve().parents[1]
LEDUC = ROOT / "strategies" / "leduc.nolimit.2p.strategy"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _is_png(path: Path) -> bool:
    return path.is_file() and path.stat().st_size > 1000 and path.read_bytes()[:8] == PNG_SIGNATURE


def test_lbr_and_aivat_draw_their_running_estimates(tmp_path, capsys):
    png = tmp_path / "lbr.png"
    assert main(["eval", "lbr", str(LEDUC), "--hands", "60", "--png", str(png), "--json"]) == 0
    assert _is_png(png)
    log = tmp_path / "m.log"
    argv = ["match", "leduc.nolimit.2p", "--players", f"strategy:{LEDUC}", "call", "--hands", "60",
            "--seed", "4", "--quiet", "--log", str(log)]
    assert main(argv) == 0
    png = tmp_path / "aivat.png"
    assert main(["eval", "aivat", str(log), "--strategy", str(LEDUC), "--png", str(png), "--json"]) == 0
    assert _is_png(png)


def test_without_matplotlib_it_is_one_line(tmp_path, capsys, monkeypatch):
    def missing(*args, **kwargs):
        raise agent.plot.PlotUnavailableError("drawing needs matplotlib: pip install 'pokerbot[plot]'")

    monkeypatch.setattr(agent.plot, "running_estimate_png", missing)
    assert main(["eval", "lbr", "call", "--game", "leduc.nolimit.2p", "--hands", "5", "--quiet",
                 "--png", str(tmp_path / "x.png")]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pokerbot[plot]" in err[0]


def test_an_unwritable_png_is_one_line(tmp_path, capsys):
    """Refused before the evaluation runs (no progress drawn)."""
    assert main(["eval", "lbr", "call", "--game", "leduc.nolimit.2p", "--hands", "5",
                 "--png", str(tmp_path / "missing" / "x.png")]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].count("--png") == 1


