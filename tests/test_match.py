"""``pokerbot match``: dealer + bot processes over loopback, results, and live telemetry."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import aiomqtt
import pytest

from agent.cli import main
from agent.commands.match import parse_cpus
from poker.game import load_game
from poker.log import parse_log
from poker.state import State
from tests.mqtt_broker import Broker

ROOT = Path(__file__).resolve().parents[1]
LEDUC_STRATEGY = ROOT / "strategies" / "leduc.nolimit.2p.strategy"


def run_match(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agent", "match", *argv], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def match_here(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """``pokerbot match`` run in this process (its dealer and players are still processes
    of their own; only the interpreter start-up of ``run_match`` is saved): its output."""
    rc = main(["match", *argv])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return out


@pytest.mark.skipif(sys.platform == "win32", reason="RUSAGE_CHILDREN is POSIX")
def test_match_json_gives_each_process_cpu(tmp_path, capsys):
    # The equity bot computes an equity at every decision, the call bot nothing: each
    # seat's CPU must be charged to its own process, in seat order.
    import resource

    def reaped() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    before = reaped()
    out = match_here(capsys, "holdem.nolimit.2p.reverse_blinds", "--players", "equity", "call",
                     "--hands", "200", "--seed", "2", "--spin-us", "0", "--json", "--quiet",
                     "--log", str(tmp_path / "m.log"))
    total = reaped() - before
    cpu = json.loads(out.strip().splitlines()[-1])["cpu_s"]
    dealer, (equity, call) = cpu["dealer"], cpu["players"]
    assert min(dealer, equity, call) > 0
    assert equity > 1.5 * call
    # every reaped child of this process is one of the three (no probe: polling is off)
    assert dealer + equity + call == pytest.approx(total, abs=0.01)


def test_match_json_matches_the_log(tmp_path, capsys):
    log = tmp_path / "m.log"
    assert main(["match", "holdem.nolimit.2p.reverse_blinds", "--players", "random", "call",
                 "--hands", "150", "--seed", "5", "--log", str(log), "--json"]) == 0
    out = capsys.readouterr()
    res = json.loads(out.out.strip().splitlines()[-1])
    assert {"game", "hands", "seed", "duplicate", "log", "players"} <= set(res)
    assert res["hands"] == 150 and res["seed"] == 5 and res["duplicate"] is False
    assert Path(res["log"]) == log
    parsed = parse_log(log.read_text())
    assert parsed.score is not None
    by_name = dict(zip(parsed.score.names, parsed.score.values))
    for p in res["players"]:
        assert p["chips"] == pytest.approx(by_name[p["name"]])
        assert p["mbb_per_game"] == pytest.approx(1000 * p["chips"] / 100 / 150)
        lo, hi = p["ci95"]
        assert lo <= p["mbb_per_game"] <= hi
        assert "aivat" not in p  # no strategy, no AIVAT
    assert "match [" in out.err  # the progress bar


def test_duplicate_three_players(tmp_path, capsys):
    log = tmp_path / "k.log"
    out = match_here(capsys, "kuhn.limit.3p", "--players", "random", "call", "raise", "--hands", "30",
                     "--seed", "9", "--duplicate", "--json", "--quiet", "--log", str(log))
    res = json.loads(out.strip().splitlines()[-1])
    assert res["duplicate"] is True and res["hands"] == 90  # 3 passes of 30 deals
    assert [p["hands"] for p in res["players"]] == [90, 90, 90]
    assert sum(p["chips"] for p in res["players"]) == pytest.approx(0)
    # Every deal was played once from each seat: the cards by position repeat per pass.
    hands = parse_log(log.read_text()).hands
    for h in hands[:30]:
        twins = [x for x in hands if x.hand_no % 30 == h.hand_no]
        assert len({x.holes for x in twins}) == 1

def _deal_sums(log: Path, name: str, per_pass: int) -> list[float]:
    """``name``'s winnings over each deal's passes, deal by deal (a duplicate match's log)."""
    sums = [0.0] * per_pass
    for hand in parse_log(log.read_text()).hands:
        sums[hand.hand_no % per_pass] += hand.values[hand.names.index(name)]
    return sums


@pytest.mark.parametrize("common", [True, False])
def test_common_draws_cancel_a_strategy_against_itself(tmp_path, capsys, common):
    """A duplicate match of a mixed strategy against itself: with common draws (the
    default) the seat's player draws on each deal what the seat's player drew in the other
    pass, so every deal's two passes cancel to the chip; with independent draws they do
    not, and the interval is wide. Each player's AIVAT knows the other's strategy and
    corrects every decision of the hand, so with common draws its deals cancel too."""
    log = tmp_path / "d.log"
    f = f"strategy:{LEDUC_STRATEGY}"
    out = match_here(capsys, "leduc.nolimit.2p", "--players", f, f, "--hands", "300", "--seed", "4",
                     "--duplicate", "--json", "--quiet", "--log", str(log),
                     "--common-draws" if common else "--no-common-draws")
    res = json.loads(out.strip().splitlines()[-1])
    assert res["common_draws"] is common and res["hands"] == 600
    first = res["players"][0]
    sums = _deal_sums(log, first["name"], 300)
    assert all(p["aivat"]["opponent_known"] and p["aivat"]["interval_over"] == "deals" for p in res["players"])
    aivat = first["aivat"]
    if common:
        assert sums == [0.0] * 300 and first["chips"] == 0 and first["ci95"] == [0.0, 0.0]
        assert abs(aivat["aivat_mbb_per_game"]) < 1e-6 and aivat["aivat_ci95"] == pytest.approx([0, 0], abs=1e-6)
    else:
        assert sum(s != 0 for s in sums) > 30 and first["ci95"][1] - first["ci95"][0] > 20
        assert aivat["aivat_ci95"][1] - aivat["aivat_ci95"][0] > 5



@pytest.mark.parametrize(
    "argv,message",
    [
        (["leduc.limit.2p", "--players", "call", "--hands", "5"], "has 2 seats, but 1 players"),
        (["nope", "--players", "call", "call", "--hands", "5"], "unknown game 'nope'"),
        (["leduc.limit.2p", "--players", "call", "call", "--hands", "0"], "--hands must be positive"),
        (["leduc.limit.2p", "--players", "call", "call", "--hands", "5", "--mqtt", "h:0"], "port 0"),
        (["leduc.limit.2p", "--players", "call", "call", "--hands", "5", "--cpus", "x"], "not a CPU number"),
        (["leduc.limit.2p", "--players", "call", "call", "--hands", "5", "--cpus", "3-1"], "not a CPU number"),
        (["leduc.limit.2p", "--players", "call", "call", "--hands", "5", "--cpus", "4096"], "are not available"),
    ],
)
def test_bad_input_is_one_line(argv, message, capsys):
    assert main(["match", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_parse_cpus():
    assert parse_cpus("0") == {0}
    assert parse_cpus("0,2-4, 7") == {0, 2, 3, 4, 7}


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="CPU affinity is Linux-only")
def test_match_on_one_cpu(tmp_path):
    cpu = min(os.sched_getaffinity(0))
    log = tmp_path / "one.log"
    out = run_match("holdem.nolimit.2p.reverse_blinds", "--players", "call", "random", "--hands", "200",
                    "--seed", "3", "--cpus", str(cpu), "--json", "--quiet", "--log", str(log))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1])["hands"] == 200
    assert len(parse_log(log.read_text()).hands) == 200
    # The pinning is the match process's own, and every process it starts inherits it.
    code = ("import os, subprocess, sys; from agent.commands.match import _pin; _pin(sys.argv[1]); "
            "print(subprocess.run([sys.executable, '-c', 'import os; print(sorted(os.sched_getaffinity(0)))'], "
            "capture_output=True, text=True).stdout.strip())")
    child = subprocess.run([sys.executable, "-c", code, str(cpu)], cwd=ROOT, capture_output=True, text=True)
    assert child.stdout.strip() == f"[{cpu}]", child.stderr


@pytest.mark.parametrize("game,bots", [
    ("holdem.nolimit.2p.reverse_blinds", ("call", "random")),
    ("holdem.nolimit.3p", ("random", "random", "raise")),
])
def test_polling_changes_nothing_but_speed(tmp_path, capsys, game, bots):
    """Dealer and players that poll their sockets (the default, and a long budget) play
    the very match they play without polling, over Unix sockets (the default) and TCP."""
    logs = []
    for spin, transport in (("0", None), ("5000", None), ("auto", None), ("auto", "tcp")):
        log = tmp_path / f"spin{spin}{transport}.log"
        out = match_here(capsys, game, "--players", *bots, "--hands", "300", "--seed", "11", "--spin-us", spin,
                         "--json", "--quiet", "--log", str(log), *(["--transport", transport] if transport else []))
        logs.append([ln for ln in log.read_text().splitlines() if not ln.startswith("#")])
        # the --json report says how the match polled: as given, or what the probe decided
        report = json.loads(out.strip().splitlines()[-1])
        polling = report["polling"]
        assert report["transport"] == (transport or ("unix" if hasattr(socket, "AF_UNIX") else "tcp"))
        assert polling["auto"] == (spin == "auto")
        if spin == "auto":
            assert polling["spin_us"] in (0.0, 100.0) and polling["reason"]
        else:
            assert polling["spin_us"] == float(spin)
    assert logs[0] == logs[1] == logs[2] == logs[3] and len(logs[0]) == 301  # 300 STATE lines + SCORE


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix sockets on this system")
def test_unix_sockets_live_in_a_private_directory_removed_after(tmp_path, capsys, monkeypatch):
    import tempfile

    seen: list[tuple[str, int]] = []
    real = tempfile.TemporaryDirectory

    def watched(*args, **kwargs):
        made = real(*args, **kwargs)
        seen.append((made.name, os.stat(made.name).st_mode & 0o777))
        return made

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(tempfile, "TemporaryDirectory", watched)
    match_here(capsys, "kuhn.limit.2p", "--players", "call", "raise", "--hands", "20", "--seed", "1", "--quiet",
               "--log", str(tmp_path / "m.log"))
    assert len(seen) == 1 and seen[0][1] == 0o700  # only this user can connect to the seats
    assert not Path(seen[0][0]).exists()


def test_spin_us_is_checked(capsys):
    assert main(["match", "leduc.limit.2p", "--players", "call", "call", "--hands", "3",
                 "--spin-us", "-1"]) == 2
    assert "--spin-us" in capsys.readouterr().err


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_no_process_outlives_the_match(tmp_path, how):
    import signal

    log = tmp_path / "long.log"
    proc = subprocess.Popen([sys.executable, "-m", "agent", "match", "holdem.nolimit.2p.reverse_blinds",
                             "--players", "call", "call", "--hands", "10000000", "--seed", "1",
                             "--quiet", "--log", str(log)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (log.exists() and log.stat().st_size > 2000):
            time.sleep(0.05)
        kids = _children(proc.pid)
        assert len(kids) == 3, kids  # the dealer and two players, all playing
        proc.send_signal(getattr(signal, how))
        proc.wait(timeout=30)
        if how == "SIGTERM":  # stopped like Ctrl-C: children stopped, one line, status 130
            assert proc.returncode == 130 and "interrupted" in proc.stderr.read()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(_alive(k) for k in kids):
            time.sleep(0.05)
        assert not any(_alive(k) for k in kids)
        # Nothing writes to the log any more, and every hand in it is whole.
        size = log.stat().st_size
        time.sleep(0.3)
        assert log.stat().st_size == size
        assert parse_log(log.read_text()).hands
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _subscribe(port: int, topic: str, got: list, ready: threading.Event, stop: threading.Event) -> None:
    async def go():
        async with aiomqtt.Client("127.0.0.1", port) as sub:
            await sub.subscribe(topic, qos=1)
            ready.set()
            async with asyncio.timeout(120):
                async for msg in sub.messages:
                    got.append((str(msg.topic), json.loads(msg.payload)))
                    if stop.is_set():
                        return

    try:
        asyncio.run(go())
    except (TimeoutError, aiomqtt.MqttError):
        pass


@pytest.mark.needs_broker
def test_match_publishes_telemetry(tmp_path, capsys):
    broker = Broker(tmp_path)
    broker.start()
    got: list = []
    ready, stop = threading.Event(), threading.Event()
    t = threading.Thread(target=_subscribe, args=(broker.port, "pokerbot/#", got, ready, stop), daemon=True)
    t.start()
    assert ready.wait(10)
    try:
        out = match_here(capsys, "leduc.limit.2p", "--players", "call", "random", "--hands", "40", "--seed", "3",
                         "--mqtt", f"127.0.0.1:{broker.port}", "--json", "--quiet", "--watch",
                         "--log", str(tmp_path / "l.log"))
        events = [json.loads(line) for seat in (1, 2)
                  for line in (tmp_path / f"l.player{seat}.events.jsonl").read_text().splitlines()]
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (sum(t.endswith("/hand") for t, _ in got) < 80
                                               or sum(t.endswith("/decision") for t, _ in got) < len(events)):
            time.sleep(0.05)
    finally:
        stop.set()
        broker.kill()
    res = json.loads(out.strip().splitlines()[-1])
    for player in res["players"]:
        name = player["name"]
        hands = [p for t, p in got if t == f"pokerbot/{name}/hand"]
        assert [h["hand"] for h in hands] == list(range(40))
        assert sum(h["chips"] for h in hands) == pytest.approx(player["chips"])
        scores = [p for t, p in got if t == f"pokerbot/{name}/score"]
        assert scores[-1]["hands"] == 40 and scores[-1]["chips"] == pytest.approx(player["chips"])
        states = [p["state"] for t, p in got if t == f"pokerbot/{name}/status"]
        assert states[0] == "online" and states[-1] == "finished"
        # one decision message per action of the player in the log, the same as --watch's file
        decisions = [p for t, p in got if t == f"pokerbot/{name}/decision"]
        log = parse_log((tmp_path / "l.log").read_text())
        acted = sum(1 for h in log.hands for a in State.from_betting(load_game("leduc.limit.2p"), h.betting).history
                    if h.names[a.actor] == name)
        assert len(decisions) == acted
        assert decisions == [e for e in events if e["player"] == name]
        assert all(d["distribution"] is None for d in decisions)  # bots have no blueprint to show


@pytest.mark.needs_broker
def test_broker_dying_mid_match_costs_no_hand(tmp_path):
    broker = Broker(tmp_path)
    broker.start()
    log = tmp_path / "d.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent", "match", "holdem.nolimit.2p.reverse_blinds",
         "--players", "random", "call", "--hands", "2000", "--seed", "4", "--quiet", "--json",
         "--mqtt", f"127.0.0.1:{broker.port}", "--log", str(log)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not log.exists() or log.read_text().count("STATE:") < 20):
            time.sleep(0.05)
        broker.kill()  # mid-match
        out, err = proc.communicate(timeout=180)
    finally:
        proc.kill()
        broker.kill()
    assert proc.returncode == 0, err
    res = json.loads(out.strip().splitlines()[-1])
    assert res["hands"] == 2000
    assert parse_log(log.read_text()).score is not None
    warnings = "".join((tmp_path / f"d.player{i}.err").read_text() for i in (1, 2))
    assert "unavailable" in warnings  # each bot warned instead of failing
    assert "never retrieved" not in warnings and "Traceback" not in warnings  # and said no more


def _eval_aivat(log: Path, capsys) -> dict:
    assert main(["eval", "aivat", str(log), "--strategy", str(LEDUC_STRATEGY), "--json"]) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


@pytest.mark.parametrize("duplicate", [False, True])
def test_match_estimates_a_strategy_by_aivat(tmp_path, capsys, duplicate):
    """A strategy player's entry carries AIVAT's estimate from the match's own hands: the
    estimate 'pokerbot eval aivat' gives on the match's log; with --duplicate the
    intervals are over deals, the plain one then being the match's own."""
    log = tmp_path / "m.log"
    argv = ["leduc.nolimit.2p", "--players", f"strategy:{LEDUC_STRATEGY}", "equity", "--hands", "150",
            "--seed", "8", "--log", str(log), "--json", "--quiet", *(["--duplicate"] if duplicate else [])]
    res = json.loads(match_here(capsys, *argv).strip().splitlines()[-1])
    me, bot = res["players"]
    assert "aivat" not in bot
    block = me["aivat"]
    assert set(block) == {"player", "hands", "mbb_per_game", "ci95", "aivat_mbb_per_game", "aivat_ci95",
                          "variance_reduction", "sd_ratio", "opponent_known", "interval_over", "seconds"}
    assert block["opponent_known"] is False  # a bot's decisions are not corrected
    want = _eval_aivat(log, capsys)
    assert block["player"] == want["player"] == me["name"]
    assert block["hands"] == want["hands"] == me["hands"] == (300 if duplicate else 150)
    assert block["aivat_mbb_per_game"] == want["aivat_mbb_per_game"]
    assert block["mbb_per_game"] == want["mbb_per_game"] == pytest.approx(me["mbb_per_game"])
    lo, hi = block["aivat_ci95"]
    assert lo < block["aivat_mbb_per_game"] < hi and block["seconds"] > 0
    if duplicate:
        assert block["interval_over"] == "deals"
        assert block["ci95"] == pytest.approx(me["ci95"])  # the match's interval over deals
        assert block["sd_ratio"] == pytest.approx((hi - lo) / (block["ci95"][1] - block["ci95"][0]))
        assert block["variance_reduction"] == pytest.approx(1 - block["sd_ratio"] ** 2)
    else:
        assert block["interval_over"] == "hands"
        for key in ("ci95", "aivat_ci95", "variance_reduction", "sd_ratio"):
            assert block[key] == want[key]
        # the text output says it in one line when asked (--aivat), and not by default
        text = match_here(capsys, *[a for a in argv if a != "--json"], "--aivat")
        line = [ln for ln in text.splitlines() if "AIVAT" in ln]
        assert len(line) == 1
        assert "AIVAT" not in match_here(capsys, *[a for a in argv if a != "--json"])
        assert line[0].startswith(f"{me['name']}: AIVAT {block['aivat_mbb_per_game']:.1f} mbb/g")


def test_no_aivat_and_a_failing_estimate_leave_the_match_as_it_was(tmp_path, capsys, monkeypatch):
    argv = ["match", "leduc.nolimit.2p", "--players", "call", f"strategy:{LEDUC_STRATEGY}", "--hands", "40",
            "--seed", "2", "--quiet", "--json", "--log", str(tmp_path / "m.log")]
    assert main([*argv, "--no-aivat"]) == 0
    plain = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert all("aivat" not in p for p in plain["players"])

    import solver.evaluation.aivat

    def cannot(*args, **kwargs):
        raise ValueError("AIVAT here is heads-up")

    monkeypatch.setattr(solver.evaluation.aivat, "aivat", cannot)
    assert main(argv) == 0
    failed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert failed["completed"] and failed["players"][1]["aivat"] == {"error": "AIVAT here is heads-up"}
    for p in failed["players"]:
        p.pop("aivat", None)
    for report in (failed, plain):
        report.pop("cpu_s")  # the operating system's clock: no two runs agree
    assert failed == plain
    assert main([*(a for a in argv if a != "--json"), "--aivat"]) == 0
    assert "leduc.nolimit.2p: no AIVAT estimate: AIVAT here is heads-up" in capsys.readouterr().out


def test_aivat_uses_the_players_translation():
    """A seat plays what its spec says (every option is on its command line), and the
    policy AIVAT reads is that of the player opened from the same spec."""
    from agent.cli import build_parser
    from agent.commands.play import player_spec
    from agent.players import PlayerSpec, open_for_play

    for options in ({}, {"purify": 0.05, "mapping": "geometric", "tables": "cached"}):
        spec = PlayerSpec.parse(f"strategy:{LEDUC_STRATEGY}", **options)
        args = build_parser().parse_args(["play", "--port", "1", *spec.play_args()])
        assert player_spec(args) == spec
        policy = open_for_play(spec).policy
        assert (policy.mapping, policy.purify) == (spec.mapping, spec.purify)


def test_a_strategy_players_repairs_are_counted_and_reported(tmp_path, capsys):
    """A blueprint whose sizes the real game clamps (0.1 pots is below the minimum raise,
    a pot raise after random's big bets above the stack; no all-in in the tree, so random's
    shoves are mapped to a size where the real game allows no raise): every repair is
    counted in the player's --summary and in the match's JSON, and the client legalized
    nothing after the player."""
    import numpy as np

    from poker.game import load_game
    from solver.strategy_io import dumps_policy
    from solver.tree import build_tree, table_offsets

    game = load_game("leduc.nolimit.2p")
    path = tmp_path / "small.strategy"
    _, size = table_offsets(build_tree(game, "0.1p,1p"), [3, 15])
    path.write_bytes(dumps_policy(game, "0.1p,1p", np.random.default_rng(2).random(size)))
    log = tmp_path / "m.log"
    argv = ["match", "leduc.nolimit.2p", "--players", f"strategy:{path}", "random", "--hands", "200",
            "--seed", "1", "--quiet", "--no-aivat", "--log", str(log)]
    assert main([*argv, "--json"]) == 0
    me, bot = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["players"]
    repaired = me["translation"]["repaired"]
    assert repaired["min_raise"] > 0 and repaired["all_in"] > 0 and repaired["raise_to_call"] > 0
    assert set(repaired) == {"min_raise", "all_in", "fold_to_check", "raise_to_call"}
    assert me["legalized"] == 0
    assert "translation" not in bot and "legalized" not in bot
    written = json.loads(log.with_suffix(".player1.json").read_text())  # the player's own --summary
    assert written["translation"]["repaired"] == repaired and written["legalized"] == 0
    # the text report says it in one line
    assert main(argv) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "repaired" in ln]
    assert lines == [f"{me['name']}: {sum(repaired.values())} of its actions repaired to be legal "
                     f"({repaired['min_raise']} raised to the minimum, {repaired['all_in']} lowered to all-in, "
                     f"{repaired['fold_to_check']} folds made checks, {repaired['raise_to_call']} raises made "
                     "calls); 0 changed by the client"]


def test_aivat_line_says_when_the_opponent_was_corrected():
    from agent.commands.match import _aivat_line

    doc = {"aivat_mbb_per_game": 1.0, "aivat_ci95": [0.0, 2.0], "mbb_per_game": 3.0, "ci95": [-1.0, 7.0],
           "variance_reduction": 0.5, "interval_over": "deals", "seconds": 0.1}
    assert "opponent" not in _aivat_line("a", doc)
    assert "the opponent corrected too" in _aivat_line("a", {**doc, "opponent_known": True})
