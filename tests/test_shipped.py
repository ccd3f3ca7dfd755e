"""Every shipped strategy loads, says what it is, and plays: its stored evaluation is
what an exact best response measures on the file, and it plays a short match."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.cli import main
from poker.game import load_game
from solver.evaluation.best_response import abstract_and_real_exploitability
from solver.strategy_io import open_strategy

STRATEGIES = Path(__file__).resolve().parent.parent / "strategies"
FILES = sorted(STRATEGIES.glob("*.strategy"))
#: What the shipped set must hold: Kuhn, Leduc limit and no-limit, 20-card hold'em, and
#: the full-deck blueprint.
FULL_DECK = "holdem.nolimit.2p.reverse_blinds"
EXPECTED = {"kuhn.limit.2p", "leduc.limit.2p", "leduc.nolimit.2p", "holdem.nolimit.2p.short20", FULL_DECK}
#: Size limits: 10 MB, the full-deck blueprint 40 MB.
LIMIT = {FULL_DECK: 40 * 10**6}


def _game(path: Path) -> str:
    """The game of a shipped file: its header's (a kept older file is named
    ``<game>.<label>.strategy``)."""
    return open_strategy(path).game.name


def _name(path: Path) -> str:
    return path.name[: -len(".strategy")]


def test_the_shipped_set_is_complete_and_small():
    assert {_game(f) for f in FILES} == EXPECTED
    assert EXPECTED <= {_name(f) for f in FILES}  # each game's current file by its plain name
    for f in FILES:
        assert f.stat().st_size <= LIMIT.get(_game(f), 10 * 2**20), f
    recipes = (STRATEGIES / "README.md").read_text()
    for f in FILES:
        s = open_strategy(f)
        assert s.training["recipe"] in recipes, f"{f.name}: its recipe is not in strategies/README.md"


@pytest.mark.parametrize("path", FILES, ids=_name)
def test_shipped_file_loads_for_its_game_and_records_itself(path):
    game = load_game(_game(path))
    s = open_strategy(path, game=game)
    assert s.version == 3 and s.precision == "u8"
    assert s.training["recipe"].startswith("pokerbot train ")
    if _game(path) == FULL_DECK:
        # no exact evaluation exists on the full deck; it was trained dealing from the deck
        assert s.training["options"]["deals"] == "dealt" and not s.evaluation
        assert (STRATEGIES / f"{FULL_DECK}.toml").exists()
        return
    assert s.evaluation["precision"] == "u8"
    assert s.evaluation["real_exploitability"] >= 0


@pytest.mark.parametrize("name", ["kuhn.limit.2p", "leduc.limit.2p", "leduc.nolimit.2p"])
def test_stored_exploitability_is_the_files(name):
    s = open_strategy(STRATEGIES / f"{name}.strategy")
    abstract, real = abstract_and_real_exploitability(s.to_strategy())
    assert real.exploitability == pytest.approx(s.evaluation["real_exploitability"], abs=1e-12)
    assert abstract.exploitability == pytest.approx(s.evaluation["exploitability"], abs=1e-12)
    if name == "leduc.limit.2p":
        assert real.exploitability <= 0.005  # after quantization to one byte per probability


@pytest.mark.parametrize("path", FILES, ids=_name)
def test_shipped_strategy_plays_a_match(path, tmp_path, capsys):
    argv = ["match", _game(path), "--players", f"strategy:{path}", "random", "--hands", "50",
            "--seed", "2", "--quiet", "--json", "--no-aivat", "--log", str(tmp_path / "m.log")]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert doc["completed"] and doc["hands"] == 50
    assert doc["players"][0]["translation"]["decisions"] > 0


def test_match_passes_bucket_tables_to_strategy_players(tmp_path, capsys):
    from abstraction.build import build_abstraction
    from abstraction.plan import AbstractionParams

    # the shipped 20-card strategy's own abstraction (its recipe), built in about a second
    tables = tmp_path / "short20"
    build_abstraction("holdem.nolimit.2p.short20", AbstractionParams((25, 255, 115, 66), seed=1), tables)
    path = STRATEGIES / "holdem.nolimit.2p.short20.strategy"
    log = tmp_path / "m.log"
    argv = ["match", "holdem.nolimit.2p.short20", "--players", f"strategy:{path}", "call",
            "--hands", "40", "--seed", "3", "--quiet", "--json", "--no-aivat", "--log", str(log), "--tables", str(tables)]
    assert main(argv) == 0
    with_tables = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert with_tables["completed"]
    # the tables give the same buckets as the cards: the same match, chip for chip
    assert main(argv[:-2]) == 0
    without = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert with_tables["players"][0]["chips"] == without["players"][0]["chips"]
    got, want = with_tables["players"][0]["translation"], without["players"][0]["translation"]
    # a directory that is not an abstraction: one line, exit 2, nothing played
    assert main([*argv[:-1], str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no meta.json" in err[0]
    assert got.pop("bucket_tables") is True and want.pop("bucket_tables") is False
    assert got == want
