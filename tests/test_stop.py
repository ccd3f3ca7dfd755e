"""poker._stop: a signal stops a compiled kernel mid-run, and its progress is seen from outside."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest
from numba import njit

from poker._stop import Interrupted, Stop, counter, run_stoppable, signals_stop_kernels, stop_all, stoppable


@njit(cache=True, nogil=True)
def _spin(flag: np.ndarray, done: np.ndarray, steps: int) -> float:
    """A kernel of ``steps`` units of busy work, reading the flag after each unit."""
    acc = 0.0
    for i in range(steps):
        if flag[0] != 0:
            return acc
        for j in range(20_000):
            acc += (i ^ j) * 1e-9
        done[0] += 1
    return acc


def _signal_later(signum: int, after: float) -> threading.Thread:
    t = threading.Timer(after, os.kill, (os.getpid(), signum))
    t.start()
    return t


def test_ctrl_c_stops_a_kernel_run_from_the_main_thread() -> None:
    _spin(np.zeros(1, np.int64), counter(), 1)  # compile first
    done = counter()
    seen: list[int] = []
    with stoppable() as stop:
        _signal_later(signal.SIGINT, 0.3)
        t0 = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            run_stoppable(lambda: _spin(stop.flag, done, 10**9), stop, on_poll=lambda: seen.append(int(done[0])))
        assert time.monotonic() - t0 < 2.0
    assert stop.signum == signal.SIGINT
    assert 0 < done[0] < 10**9
    assert seen and seen[-1] > 0  # progress was read while the kernel ran


def test_sigterm_under_the_command_lines_handlers_raises_interrupted_with_its_number() -> None:
    _spin(np.zeros(1, np.int64), counter(), 1)
    done = counter()
    before = signal.getsignal(signal.SIGTERM)
    with signals_stop_kernels(), stoppable() as stop:
        _signal_later(signal.SIGTERM, 0.3)
        with pytest.raises(Interrupted) as info:
            run_stoppable(lambda: _spin(stop.flag, done, 10**9), stop)
    assert info.value.signum == signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is before  # handlers put back


def test_stop_all_reaches_kernels_on_other_threads_and_ones_started_later() -> None:
    _spin(np.zeros(1, np.int64), counter(), 1)
    results: list[object] = []
    with stoppable() as stop:

        def walk() -> None:
            try:
                results.append(run_stoppable(lambda: _spin(stop.flag, counter(), 10**9), stop))
            except Interrupted as exc:
                results.append(exc.signum)

        first = threading.Thread(target=walk)
        first.start()
        time.sleep(0.2)
        stop_all(signal.SIGTERM)
        first.join(2.0)
        assert not first.is_alive()
        late = threading.Thread(target=walk)  # starts after the stop: returns at once
        late.start()
        late.join(2.0)
        assert not late.is_alive()
    assert results == [signal.SIGTERM, signal.SIGTERM]


def test_a_finished_kernel_returns_its_value_and_a_stop_outside_the_scope_does_not_reach_it() -> None:
    done = counter()
    with stoppable() as stop:
        out = run_stoppable(lambda: _spin(stop.flag, done, 50), stop)
    assert done[0] == 50 and out > 0
    other = Stop()
    stop_all()  # not registered: untouched
    assert not other
    with pytest.raises(ValueError, match="boom"):
        run_stoppable(lambda: (_ for _ in ()).throw(ValueError("boom")), other)
