"""``--tables`` of the commands that open strategy files (agent.commands.strategy_tables)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.cli import main
from agent.commands.options import UserError
from agent.commands.strategy_tables import tables_mode

ROOT = Path(__file__).resolve().parents[1]
LEDUC = ROOT / "strategies" / "leduc.nolimit.2p.strategy"


def test_modes_and_directories(tmp_path):
    assert tables_mode("none") is None and tables_mode(None) is None
    assert tables_mode("auto") == "auto" and tables_mode("cached") == "cached"
    (tmp_path / "meta.json").write_text("{}")
    assert tables_mode(str(tmp_path)) == tmp_path
    with pytest.raises(UserError, match="not a card abstraction directory"):
        tables_mode(str(tmp_path / "missing"))


@pytest.mark.parametrize(
    "argv",
    [
        ["eval", "lbr", str(LEDUC), "--hands", "2"],
        ["eval", "h2h", str(LEDUC), str(LEDUC)],
        ["inspect", str(LEDUC)],
        ["match", "leduc.nolimit.2p", "--players", f"strategy:{LEDUC}", "call", "--hands", "2", "--quiet"],
    ],
)
def test_a_directory_that_is_not_an_abstraction_is_one_line(argv, tmp_path, capsys):
    assert main([*argv, "--tables", str(tmp_path)]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a card abstraction directory" in err[0]


def test_lossless_file_needs_no_tables(capsys, tmp_path, monkeypatch):
    """'auto' on a file without a card abstraction builds nothing and plays as 'none'."""
    monkeypatch.setenv("POKERBOT_CACHE", str(tmp_path))
    for mode in ("auto", "none"):
        assert main(["eval", "lbr", str(LEDUC), "--hands", "50", "--seed", "3", "--tables", mode, "--json"]) == 0
    a, b = [line for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert a.split('"seconds"')[0] == b.split('"seconds"')[0]
    assert not any(tmp_path.iterdir())
