"""Suite-wide settings: the tests never read or write the user's bucket-table cache, and
tests that need a program the machine lacks are skipped by name (or fail where it is
required)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.mqtt_broker import MOSQUITTO

#: Programs some tests need, by marker: (present?, what, the variable that makes it
#: required, how to get it). Without one, its tests are skipped by name with how to get
#: it, unless the variable is set (CI sets them all): then they run and fail.
NEEDS = {
    "needs_broker": (
        MOSQUITTO is not None,
        "the mosquitto MQTT broker",
        "POKERBOT_REQUIRE_BROKER",
        "apt-get install mosquitto",
    ),
    "needs_browser": (
        Path("/usr/bin/chromium").exists() and Path("/usr/bin/chromedriver").exists(),
        "Debian's chromium and chromedriver (/usr/bin/chromium, /usr/bin/chromedriver)",
        "POKERBOT_REQUIRE_BROWSER",
        "apt-get install chromium chromium-driver",
    ),
}


def pytest_configure(config: pytest.Config) -> None:
    for marker, (_, what, _, _) in NEEDS.items():
        config.addinivalue_line("markers", f"{marker}: the test needs {what}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for marker, (present, what, required, how) in NEEDS.items():
        if present or os.environ.get(required):
            continue
        skip = pytest.mark.skip(reason=f"needs {what}: {how}")
        for item in items:
            if item.get_closest_marker(marker) is not None:
                item.add_marker(skip)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    """Name every skipped test with its reason (pytest's own summary groups them by line)."""
    skipped = terminalreporter.stats.get("skipped", [])
    if not skipped:
        return
    terminalreporter.section("skipped tests, by name")
    for rep in skipped:
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        terminalreporter.write_line(f"SKIPPED {rep.nodeid}: {reason.removeprefix('Skipped: ')}")


@pytest.fixture(autouse=True, scope="session")
def _private_table_cache(tmp_path_factory: pytest.TempPathFactory):
    """Point ``POKERBOT_CACHE`` (abstraction.table_cache) at an empty directory for the
    session, so a test behaves as on a fresh machine (and subprocesses inherit it)."""
    old = os.environ.get("POKERBOT_CACHE")
    os.environ["POKERBOT_CACHE"] = str(tmp_path_factory.mktemp("pokerbot-cache"))
    yield
    if old is None:
        os.environ.pop("POKERBOT_CACHE", None)
    else:
        os.environ["POKERBOT_CACHE"] = old


# Kernels nearly every worker needs, by (algorithm, table dtype): vector CFR's (14 s from
# an empty numba cache) and the sampled kernel's four variants (dtype x plain/general, see
# solver.training._sampling_kernels.run_iterations; 30-60 s each). Left to the tests, the
# two xdist workers met the float32 variants at about the same time and both compiled
# them: 271 CPU-s of run_iterations compiles against 205 now. Each worker compiles every
# n-th first instead (the order balances two workers), and finds the others' in the
# on-disk cache.
_SHARED_KERNELS = (("cfr", None), ("os", "float64"), ("es", "float64"), ("es", "float32"), ("os", "float32"))


#: A run over fewer test modules than this compiles only what its tests use.
_SUITE_MODULES = 20


@pytest.fixture(autouse=True, scope="session")
def _compile_shared_kernels_once(request: pytest.FixtureRequest) -> None:
    """Under xdist, over (most of) the suite, compile worker i's share (every n-th) of the
    kernels every worker needs, before its first test. Alone (no xdist), or over a few
    modules, nothing: the tests compile what they use."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if not worker.startswith("gw") or count < 2:
        return
    if len({item.nodeid.split("::")[0] for item in request.session.items}) < _SUITE_MODULES:
        return
    from solver.problem import make_problem
    from solver.training.algorithms import make_training_solver
    from solver.training.sampled import SamplingOptions

    kuhn = make_problem("kuhn.limit.2p")
    for algo, dtype in _SHARED_KERNELS[int(worker[2:]) :: count]:
        sampling = None if dtype is None else SamplingOptions(dtype=dtype)
        make_training_solver(kuhn, algo, sampling).iterate(1)
