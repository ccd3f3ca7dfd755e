"""Player specs (agent.players): parsed once from the command line, opened once per process."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import solver.strategy_io as strategy_io
from agent.bots import CallBot, UnknownBotError
from agent.cli import build_parser, main
from agent.commands.play import player_spec
from agent.players import PlayerSpec, PlayerSpecError, ResolveSpec, open_for_play
from agent.strategy_player import StrategyPlayer
from poker.game import load_game
from solver.strategy_io import StrategyFileError, dumps_policy
from solver.tree import build_tree, table_offsets

ROOT = Path(__file__).resolve().parents[1]
LEDUC = ROOT / "strategies" / "leduc.nolimit.2p.strategy"
SHORT20 = ROOT / "strategies" / "holdem.nolimit.2p.short20.strategy"


def test_a_bot_or_a_strategy_file():
    call = PlayerSpec.parse("call")
    assert call == PlayerSpec(bot="call") and not call.is_strategy
    assert (call.text, call.name, call.play_args()) == ("call", "call", ["--bot=call"])
    s = PlayerSpec.parse(f"strategy:{LEDUC}")
    assert s.is_strategy and s.strategy == LEDUC and s.bot is None
    assert (s.purify, s.tables, s.mapping) == (0.0, None, "pseudo_harmonic")
    assert s.text == f"strategy:{LEDUC}" and s.name == "leduc.nolimit.2p"
    assert PlayerSpec.parse(s.text) == s
    # options are the spec's; a bot keeps the defaults (its options mean nothing to it)
    opts = PlayerSpec.parse(f"strategy:{LEDUC}", purify=0.2, tables="auto", mapping="nearest")
    assert (opts.purify, opts.tables, opts.mapping) == (0.2, "auto", "nearest") and opts != s
    assert PlayerSpec.parse("call", purify=0.2, tables="auto") == call
    # where arguments name files, a bare file is a strategy too
    assert PlayerSpec.parse(str(LEDUC), bots=(), bare_files=True) == s
    with pytest.raises(PlayerSpecError, match="^call: cannot read"):
        PlayerSpec.parse("call", bots=(), bare_files=True)  # no bots: a file named call, which is not there


@pytest.mark.parametrize("text,options,message", [
    ("nope", {}, "unknown bot 'nope'; choose one of allin, call, equity, raise, random or strategy:FILE"),
    ("strategy:", {}, "strategy: needs a file, as in strategy:FILE"),
    ("strategy:MISSING", {}, "MISSING: cannot read (No such file or directory)"),
    ("strategy:DIR", {}, "DIR: cannot read (Is a directory)"),
    ("strategy:LEDUC", {"purify": 1.0}, "--purify 1: the threshold must be in [0, 1)"),
    ("strategy:LEDUC", {"purify": -0.1}, "--purify -0.1: the threshold must be in [0, 1)"),
    ("strategy:LEDUC", {"mapping": "closest"}, "--mapping closest: choose one of pseudo_harmonic, nearest, geometric"),
    ("strategy:LEDUC", {"tables": "DIR"}, "--tables DIR: no meta.json, not a card abstraction directory"),
    ("call", {"tables": "DIR"}, "--tables DIR: no meta.json, not a card abstraction directory"),
])
def test_a_bad_spec_is_one_line(text, options, message, tmp_path):
    names = {"MISSING": str(tmp_path / "missing.strategy"), "DIR": str(tmp_path), "LEDUC": str(LEDUC)}

    def fill(s: str) -> str:
        for k, v in names.items():
            s = s.replace(k, v)
        return s

    options = {k: fill(v) if isinstance(v, str) else v for k, v in options.items()}
    with pytest.raises(PlayerSpecError) as exc:
        PlayerSpec.parse(fill(text), **options)
    assert str(exc.value) == fill(message) and "\n" not in str(exc.value)
    assert isinstance(exc.value, ValueError)  # the command line prints it as one line


def test_card_blind_bots_of_lbr():
    blind = ("fold", "call", "raise", "allin", "random")
    assert PlayerSpec.parse("fold", bots=blind, bare_files=True) == PlayerSpec(bot="fold")
    with pytest.raises(PlayerSpecError, match=r"^'nope' is neither a bot \(fold, call, raise, allin, random\) "
                                              "nor a strategy file$"):
        PlayerSpec.parse("nope", bots=blind, bare_files=True)


@pytest.mark.parametrize("options", [
    {},
    {"purify": 0.123456789012, "mapping": "geometric", "tables": "auto"},
    {"tables": "cached"},
    {"tables": "none"},
    {"tables": "DIR"},
])
def test_the_play_command_line_reads_back_the_spec(options, tmp_path, monkeypatch):
    """``pokerbot match`` hands each seat its spec as ``pokerbot play`` flags: the seat's
    own parse gives the very spec back, every option exact."""
    (tmp_path / "meta.json").write_text("{}")
    options = {k: str(tmp_path) if v == "DIR" else v for k, v in options.items()}
    monkeypatch.chdir(tmp_path)
    Path("-dashed.strategy").write_bytes(LEDUC.read_bytes())  # a file name that looks like a flag
    resolving = ResolveSpec(iterations=37, seconds=0.25, sizes=(0.33, 1.5), at=(2, 3), first=3, max_nodes=777)
    for text in ("random", f"strategy:{LEDUC}", "strategy:-dashed.strategy", f"resolve:{LEDUC}"):
        for how in (None, resolving):
            spec = PlayerSpec.parse(text, resolve=how, **options)
            args = build_parser().parse_args(["play", "--port", "1", *spec.play_args()])
            assert player_spec(args) == spec
            assert (spec.resolve is not None) == text.startswith("resolve:")
    assert PlayerSpec.parse(f"resolve:{LEDUC}").resolve == ResolveSpec()
    assert PlayerSpec.parse(f"resolve:{LEDUC}").name.endswith("+resolve")
    # the 'auto' tables are built by the match before the seats start: they look in the cache
    spec = PlayerSpec.parse(f"strategy:{LEDUC}", **options)
    assert spec.cached().tables == ("cached" if spec.tables == "auto" else spec.tables)


def test_open_for_play_gives_the_bot_or_the_strategy_player():
    bot = open_for_play(PlayerSpec.parse("call"), seed=3)
    assert isinstance(bot, CallBot)
    with pytest.raises(UnknownBotError):
        open_for_play(PlayerSpec(bot="nope"))
    spec = PlayerSpec.parse(f"strategy:{LEDUC}", purify=0.1, mapping="geometric")
    player = open_for_play(spec, seed=5)
    assert isinstance(player, StrategyPlayer) and player.seed == 5
    assert player.strategy.game == load_game("leduc.nolimit.2p")  # no game given: the file's own
    assert (player.policy.mapping, player.policy.purify) == ("geometric", 0.1)
    with pytest.raises(StrategyFileError, match="the strategy is for leduc.nolimit.2p, not leduc.limit.2p"):
        open_for_play(spec, load_game("leduc.limit.2p"))
    short = open_for_play(PlayerSpec.parse(f"strategy:{SHORT20}", tables="none"))
    assert isinstance(short, StrategyPlayer) and not short.summary()["bucket_tables"]


@pytest.mark.parametrize("argv,message", [
    (["match", "leduc.nolimit.2p", "--players", "strategy:MISSING", "call", "--hands", "2"], "cannot read"),
    (["match", "leduc.nolimit.2p", "--players", "strategy:", "call", "--hands", "2"], "strategy: needs a file"),
    (["match", "leduc.nolimit.2p", "--players", "nope", "call", "--hands", "2"], "unknown bot 'nope'"),
    (["match", "leduc.limit.2p", "--players", "strategy:LEDUC", "call", "--hands", "2"],
     "the strategy is for leduc.nolimit.2p, not leduc.limit.2p"),
    (["play", "--port", "1", "--bot", "nope"], "unknown bot 'nope'"),
    (["play", "--port", "1", "--bot", "random", "--resolve"], "--resolve needs a strategy file"),
    (["play", "--port", "1", "--strategy", "LEDUC", "--resolve", "--resolve-sizes", "x"], "--resolve-sizes 'x'"),
    (["play", "--port", "1", "--strategy", "LEDUC", "--resolve-at", "sunday"], "--resolve-at 'sunday'"),
    (["play", "--port", "1", "--strategy", "LEDUC", "--resolve-from", "x"], "--resolve-from 'x'"),
    (["match", "leduc.nolimit.2p", "--players", "resolve:", "call", "--hands", "2"], "resolve: needs a file"),
    (["play", "--port", "1", "--strategy", "LEDUC", "--purify", "2"], "--purify 2: the threshold"),
    (["play", "--port", "1", "--strategy", "MISSING"], "cannot read"),
    (["play", "--port", "1", "--strategy", "LEDUC", "--game", "kuhn.limit.2p"], "not kuhn.limit.2p"),
    (["eval", "lbr", "nope"], "is neither a bot"),
    (["eval", "h2h", "LEDUC", "MISSING"], "cannot read"),
    (["eval", "h2h", "LEDUC", "LEDUC", "--mapping", "closest"], "--mapping closest"),
])
def test_bad_players_on_the_command_line_are_one_line(argv, message, tmp_path, capsys):
    argv = [str(LEDUC) if a == "LEDUC" else str(tmp_path / "missing.strategy") if a == "MISSING"
            else a.replace("LEDUC", str(LEDUC)).replace("MISSING", str(tmp_path / "missing.strategy"))
            for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


# ---------------------------------------------------------------------------- opened once


@pytest.fixture
def reads(monkeypatch) -> Counter:
    """Every strategy file read in this process (each read goes through one of these two)."""
    seen: Counter = Counter()
    for name in ("_from_v3", "_from_legacy"):
        real = getattr(strategy_io, name)

        def counted(data, source, *args, _real=real, **kwargs):
            seen[Path(source).name] += 1
            return _real(data, source, *args, **kwargs)

        monkeypatch.setattr(strategy_io, name, counted)
    return seen


def _other(tmp_path: Path) -> Path:
    game = load_game("leduc.nolimit.2p")
    path = tmp_path / "other.strategy"
    _, size = table_offsets(build_tree(game, "0.5p,1p,a"), [3, 15])
    path.write_bytes(dumps_policy(game, "0.5p,1p,a", np.random.default_rng(1).random(size)))
    return path


@pytest.mark.parametrize("tables", ["auto", "cached"])
def test_a_match_opens_each_strategy_file_once(tables, reads, tmp_path, capsys, monkeypatch):
    """The match process reads each file once: the game check, the tables ('auto' builds
    them there) and AIVAT share it; a file in two seats is read once too. (Each seat's
    process reads its own file once: test_play_cli.)"""
    monkeypatch.setenv("POKERBOT_CACHE", str(tmp_path / "cache"))
    other = _other(tmp_path)
    for players, want in (([f"strategy:{LEDUC}", f"strategy:{other}"], {LEDUC.name: 1, other.name: 1}),
                          ([f"strategy:{LEDUC}", f"strategy:{LEDUC}"], {LEDUC.name: 1})):
        reads.clear()
        argv = ["match", "leduc.nolimit.2p", "--players", *players, "--hands", "20", "--seed", "3", "--quiet",
                "--json", "--tables", tables, "--log", str(tmp_path / "m.log")]
        assert main(argv) == 0
        doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert all("aivat_mbb_per_game" in p["aivat"] for p in doc["players"])  # AIVAT ran on both
        assert dict(reads) == want


def test_eval_h2h_of_a_file_against_itself_opens_it_once(reads, capsys):
    assert main(["eval", "h2h", str(LEDUC), str(LEDUC), "--boards", "2", "--quiet", "--json"]) == 0
    assert dict(reads) == {LEDUC.name: 1}
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["mbb_per_game"] == pytest.approx(0.0)


def test_a_match_that_builds_tables_reads_the_file_once(reads, tmp_path, capsys, monkeypatch):
    """'auto' on a model that needs tables (made to need them here): the match process
    reads the file once, builds the tables into the cache from it and estimates AIVAT
    with them; the seat then finds them in the cache."""
    import abstraction.table_cache as tc

    monkeypatch.setenv("POKERBOT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(tc, "COMPUTE_MAX_HANDS", 0)
    argv = ["match", "holdem.nolimit.2p.short20", "--players", f"strategy:{SHORT20}", "call", "--hands", "20",
            "--seed", "3", "--quiet", "--json", "--tables", "auto", "--log", str(tmp_path / "m.log")]
    assert main(argv) == 0
    me = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["players"][0]
    assert dict(reads) == {SHORT20.name: 1}
    assert any((tmp_path / "cache" / "tables").iterdir())
    assert me["translation"]["bucket_tables"] is True and "aivat_mbb_per_game" in me["aivat"]
