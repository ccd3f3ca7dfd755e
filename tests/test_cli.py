"""The command line's registry: every listed command exists, and a missing one is loud."""

from __future__ import annotations

import pytest

import agent.cli as cli


def test_every_listed_command_registers() -> None:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert list(sub.choices) == list(cli.COMMANDS)


def test_a_missing_command_module_fails_loudly(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(cli, "COMMANDS", ("game", "replay"))
    with pytest.raises(cli.MissingCommandError, match="agent/commands/replay.py"):
        cli.build_parser()
    for argv in (["replay"], ["--help"]):  # the command itself, or the full list of commands
        assert cli.main(argv) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "'replay'" in err and "missing" in err


def test_a_command_parses_with_its_own_parser_alone(capsys: pytest.CaptureFixture[str]) -> None:
    """``pokerbot game`` builds only its own parser, and its errors and help read as with
    the full parser."""
    only = cli.build_parser("game")
    sub = next(a for a in only._actions if a.dest == "command")
    assert list(sub.choices) == ["game"]
    assert cli.main(["game", "no-such-game"]) == 2
    assert capsys.readouterr().err.startswith("pokerbot game: error:")
    with pytest.raises(SystemExit):
        cli.main(["game", "--help"])
    assert capsys.readouterr().out.startswith("usage: pokerbot game")


def test_an_import_error_inside_a_command_is_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    """A command module that exists but fails to import raises its own error."""
    import importlib

    real = importlib.import_module

    def fake(name: str, *a: object, **k: object) -> object:
        if name == "agent.commands.game":
            raise ModuleNotFoundError("No module named 'nosuchdependency'", name="nosuchdependency")
        return real(name, *a, **k)

    monkeypatch.setattr(cli.importlib, "import_module", fake)
    with pytest.raises(ModuleNotFoundError, match="nosuchdependency"):
        cli.build_parser()


def _helps(parser: "object", prefix: list[str]) -> list[list[str]]:
    """Every command line whose --help argparse can print: each subcommand, recursively."""
    import argparse

    out = [prefix]
    for action in parser._actions:  # type: ignore[attr-defined]
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += _helps(sub, [*prefix, name])
    return out


def test_every_help_text_reads_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    """No help shows a doubled percent sign (argparse interpolates help strings, not
    descriptions, so '%%' in a description is printed as it is)."""
    lines = _helps(cli.build_parser(), [])
    assert ["eval", "h2h"] in lines and ["match"] in lines
    for argv in lines:
        with pytest.raises(SystemExit):
            cli.main([*argv, "--help"])
        out = capsys.readouterr().out
        assert out.startswith("usage: pokerbot") and "%%" not in out, argv
