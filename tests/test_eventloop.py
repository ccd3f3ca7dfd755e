"""``agent.eventloop``: polling a socket before sleeping (``busy_read``), and the decision
whether to poll at all (``--spin-us auto``): the rule on measured round trips, the probe
that measures them, and the option that asks for it."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from agent import eventloop
from agent.eventloop import (
    CAN_POLL,
    DEFAULT_SPIN_US,
    POLL_MIN_SAVING_US,
    SPIN_AUTO,
    PollingChoice,
    busy_read,
    choose_polling,
    measure_round_trips,
    polling_rule,
    resolve_spin,
)

pytestmark = pytest.mark.skipif(not CAN_POLL, reason="polling needs POSIX descriptors")


@pytest.fixture
def pair():
    a, b = socket.socketpair()
    a.setblocking(False)
    b.setblocking(False)
    yield a, b
    a.close()
    b.close()


def test_data_already_there_is_returned_at_once(pair):
    a, b = pair
    b.sendall(b"MATCHSTATE:0:0::Ks|\r\n")
    assert busy_read(a.fileno(), 1.0) == b"MATCHSTATE:0:0::Ks|\r\n"


def test_nothing_comes_within_the_budget(pair):
    a, _ = pair
    t0 = time.perf_counter()
    assert busy_read(a.fileno(), 0.002) is None
    assert time.perf_counter() - t0 >= 0.002
    assert busy_read(a.fileno(), 0.0) is None  # no budget: no read at all


def test_data_arriving_while_polling_is_caught(pair):
    a, b = pair
    timer = threading.Timer(0.01, lambda: b.sendall(b"late\n"))
    timer.start()
    try:
        assert busy_read(a.fileno(), 5.0) == b"late\n"
    finally:
        timer.join()


def test_end_of_file_and_a_bad_descriptor(pair):
    a, b = pair
    b.shutdown(socket.SHUT_WR)
    assert busy_read(a.fileno(), 1.0) == b""  # end of file is data too: the loop sees it again
    assert busy_read(a.fileno(), 1.0) == b""
    fd = socket.socket().detach()
    socket.close(fd)
    assert busy_read(fd, 0.01) is None  # a failed read is left to the event loop


# ---------------------------------------------------------------------------- polling or not


def test_the_polling_rule_on_the_machines_measured() -> None:
    # where polling made a call-vs-call match 1.6-1.9x faster: 65 µs asleep, 8 polling
    spin, why = polling_rule(65.0, 8.0, 2)
    assert spin == DEFAULT_SPIN_US and "saves 57.0" in why
    # where it made one 40% slower: a 19.5 µs round trip asleep saves at most 19.5
    assert polling_rule(19.5, 8.0, 2)[0] == 0.0
    assert polling_rule(19.3, 18.9, 2)[0] == 0.0  # (this machine's probe: no saving at all)
    # the threshold, exactly
    assert polling_rule(8.0 + POLL_MIN_SAVING_US, 8.0, 2)[0] == DEFAULT_SPIN_US
    assert polling_rule(7.9 + POLL_MIN_SAVING_US, 8.0, 2)[0] == 0.0
    # one CPU never polls, however slow its wake-ups; no probe, no polling
    spin, why = polling_rule(65.0, 8.0, 1)
    assert spin == 0.0 and "one CPU" in why
    assert polling_rule(None, None, 2) == (0.0, "the loopback probe could not run")
    assert polling_rule(65.0, 8.0, None)[0] == DEFAULT_SPIN_US  # CPUs unknown: the figures decide


@pytest.mark.parametrize("unix", [False, True])
def test_the_probe_times_both_round_trips_quickly(unix: bool) -> None:
    t0 = time.perf_counter()
    measured = measure_round_trips(unix=unix)
    elapsed = time.perf_counter() - t0
    assert measured is not None
    sleeping, polling = measured
    assert 0 < sleeping < 100_000 and 0 < polling < 100_000
    assert elapsed < 1.0  # a few tens of milliseconds on an idle machine


def test_auto_probes_once_and_numbers_are_taken_as_given(monkeypatch) -> None:
    probes: list[int] = []

    def fake_probe(trips: int = eventloop.PROBE_TRIPS, unix: bool = False) -> tuple[float, float]:
        probes.append(trips)
        return (60.0, 5.0) if unix else (70.0, 9.0)

    monkeypatch.setattr(eventloop, "_chosen", {})
    monkeypatch.setattr(eventloop, "measure_round_trips", fake_probe)
    monkeypatch.setattr(eventloop, "_usable_cpus", lambda: 2)
    first = resolve_spin(SPIN_AUTO)
    assert first is choose_polling() and len(probes) == 1  # decided once per process
    assert first.spin_us == DEFAULT_SPIN_US and first.auto
    assert first.to_json()["sleeping_round_trip_us"] == 70.0
    assert first.to_json()["polling_round_trip_us"] == 9.0
    assert resolve_spin(0) == PollingChoice(0.0, False, "polling turned off")
    assert resolve_spin(250.0).spin_us == 250.0 and not resolve_spin(250.0).auto
    with pytest.raises(ValueError, match="polling budget"):
        resolve_spin(-1.0)
    over_unix = resolve_spin(SPIN_AUTO, unix=True)  # a transport of its own: probed apart, once
    assert over_unix is choose_polling(unix=True) and len(probes) == 2
    assert over_unix.to_json()["sleeping_round_trip_us"] == 60.0 and choose_polling() is first
    monkeypatch.setattr(eventloop, "_chosen", {})
    monkeypatch.setattr(eventloop, "_usable_cpus", lambda: 1)
    one = choose_polling()
    assert one.spin_us == 0.0 and len(probes) == 2  # one CPU: no probe at all


def test_spin_us_option(monkeypatch) -> None:
    import argparse

    from agent.commands.options import UserError, add_spin_option, spin_choice, spin_us

    parser = argparse.ArgumentParser()
    add_spin_option(parser)
    monkeypatch.setattr(eventloop, "_chosen", {False: PollingChoice(0.0, True, "measured")})
    assert parser.parse_args([]).spin_us == SPIN_AUTO  # the default
    assert spin_us(parser.parse_args([])) == 0.0 and spin_choice(parser.parse_args([])).reason == "measured"
    assert spin_us(parser.parse_args(["--spin-us", "AUTO"])) == 0.0
    assert spin_us(parser.parse_args(["--spin-us", "150"])) == 150.0
    with pytest.raises(UserError, match="--spin-us"):
        spin_us(parser.parse_args(["--spin-us", "-1"]))
    with pytest.raises(SystemExit):
        parser.parse_args(["--spin-us", "fast"])
