"""pokerbot web in a real browser: Debian's headless Chromium driven by selenium through
Debian's chromedriver (nothing is downloaded at run time).

A person plays whole hands by clicking and typing against ``call`` and against a shipped
strategy, an illegal amount is refused on the page, the result shown at the end is the
dealer log's SCORE, the Watch view shows a running match's hands as they finish, and a
phone-sized window needs no horizontal scrolling and keeps every control visible and
large enough to tap. The screenshots in the README come from this run:
``scripts/make-screenshots`` sets ``POKERBOT_SCREENSHOTS`` to the folder to write.

Without Chromium and chromedriver these tests skip, unless ``POKERBOT_REQUIRE_BROWSER``
is set (as ``.ci/run`` does), where a missing browser is a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from poker.log import parse_log

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
LEDUC_STRATEGY = ROOT / "strategies" / "leduc.nolimit.2p.strategy"
HANDS = 3  # hands in a match at the table: each test plays its matches to the end
#: The desktop viewport (and the screenshots' size).
DESKTOP = {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False}

# Without the browser each test is skipped by name (tests/conftest.py), unless
# POKERBOT_REQUIRE_BROWSER is set: then they fail.
pytestmark = pytest.mark.needs_browser
selenium = pytest.importorskip("selenium")
pytest.importorskip("aiohttp")

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

os.environ.setdefault("SE_OFFLINE", "true")  # selenium must never look for a driver online


# ---------------------------------------------------------------- fixtures


class WebServer:
    """``pokerbot web`` in a process of its own, on a free port."""

    def __init__(self, match_dir: Path) -> None:
        self.match_dir = match_dir
        self.err = open(match_dir.parent / "web.err", "w+b")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agent", "web", "--port", "0", "--matches", str(match_dir),
             "--strategies", str(ROOT / "strategies"), "--hands", str(HANDS), "--seed", "7"],
            stdout=subprocess.DEVNULL, stderr=self.err, cwd=ROOT)
        deadline = time.monotonic() + 60
        while True:
            text = (match_dir.parent / "web.err").read_text(errors="replace")
            m = re.search(r"serving (http://\S+/)", text)
            if m:
                self.url = m.group(1)
                return
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"pokerbot web did not start: {text}")
            time.sleep(0.1)

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.err.close()


@pytest.fixture(scope="module")
def server() -> Iterator[WebServer]:
    with tempfile.TemporaryDirectory() as tmp:
        match_dir = Path(tmp) / "matches"
        match_dir.mkdir()
        srv = WebServer(match_dir)
        try:
            yield srv
        finally:
            srv.close()


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    profile = tempfile.mkdtemp(prefix="pokerbot-chromium-")
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-quic", f"--user-data-dir={profile}", "--window-size=1280,800"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=opts)
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", DESKTOP)
    try:
        yield d
    finally:
        d.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _shot(d: Any, name: str, tmp_path: Path) -> None:
    """A screenshot in the test's folder, and in ``POKERBOT_SCREENSHOTS`` when set."""
    d.save_screenshot(str(tmp_path / name))
    folder = os.environ.get("POKERBOT_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(tmp_path / name, Path(folder) / name)


def _wait(d: Any, what: Callable[[Any], Any], timeout: float = 30, why: str = "") -> Any:
    return WebDriverWait(d, timeout, poll_frequency=0.05).until(what, why)


def _body(d: Any, key: str) -> str:
    return d.execute_script(f"return document.body.dataset.{key} || ''")


def _no_console_errors(d: Any) -> None:
    severe = [e for e in d.get_log("browser") if e["level"] == "SEVERE" and "favicon" not in e["message"]]
    assert not severe, severe


def _sit_down(d: Any, server: WebServer, game: str, opponent: str) -> None:
    d.get(server.url + "#play")
    _wait(d, lambda d: len(Select(d.find_element(By.ID, "game")).options) > 0, why="the hello")
    Select(d.find_element(By.ID, "game")).select_by_value(game)
    _wait(d, lambda d: opponent in [o.get_attribute("value") for o in Select(d.find_element(By.ID, "opponent")).options])
    Select(d.find_element(By.ID, "opponent")).select_by_value(opponent)
    before = d.find_element(By.ID, "log-path").text
    d.find_element(By.ID, "start").click()
    # the page shows the new match (its own log), not the one that ended before it
    _wait(d, lambda d: d.find_element(By.ID, "log-path").text not in ("", before)
          and d.find_element(By.ID, "status").get_attribute("data-status") in ("starting", "playing"),
          60, "the new match")


def _my_turn_or_over(d: Any) -> str | None:
    if _body(d, "toAct") == "you" and d.find_element(By.ID, "call").is_enabled():
        return "turn"
    status = d.find_element(By.ID, "status").get_attribute("data-status")
    return "over" if status in ("finished", "aborted") else None


def _play_to_the_end(d: Any, act: Callable[[Any, int], None]) -> int:
    """Answer each decision with ``act(driver, n)`` until the match is over; decisions made."""
    n = 0
    while True:
        state = _wait(d, _my_turn_or_over, 60, "the person's turn or the end")
        if state == "over":
            return n
        before = d.execute_script("return document.body.dataset.hand + '/' + "
                                  "document.getElementById('street-log').textContent")
        act(d, n)
        n += 1
        # the page shows the action taken before the next decision is read
        _wait(d, lambda d: d.execute_script("return document.body.dataset.hand + '/' + "
                                            "document.getElementById('street-log').textContent") != before
              or _my_turn_or_over(d) == "over", 30, "the action reached the table")


def _log_score(d: Any) -> tuple[float, Path]:
    """The person's total in the dealer log's SCORE line, and the log."""
    text = d.find_element(By.ID, "log-path").text
    path = Path(re.search(r"(\S+\.log)", text).group(1))
    log = parse_log(path.read_text())
    assert log.score is not None, "the match is over: the log has its SCORE line"
    return log.score.values[log.score.names.index("you")], path


# ---------------------------------------------------------------- the tests


def test_the_page_loads_with_both_views(driver: Any, server: WebServer) -> None:
    d = driver
    d.get(server.url)
    _wait(d, lambda d: len(Select(d.find_element(By.ID, "game")).options) >= 5, why="games offered")
    assert d.find_element(By.ID, "view-play").is_displayed()
    d.find_element(By.ID, "tab-watch").click()
    _wait(d, lambda d: d.find_element(By.ID, "view-watch").is_displayed())
    d.find_element(By.ID, "tab-play").click()
    _wait(d, lambda d: d.find_element(By.ID, "view-play").is_displayed())
    opponents = [o.get_attribute("value") for o in Select(d.find_element(By.ID, "opponent")).options]
    assert "call" in opponents
    _no_console_errors(d)


def test_a_person_plays_against_call_and_the_page_shows_the_logs_score(driver: Any, server: WebServer,
                                                                       tmp_path: Path) -> None:
    """Clicking check/call, typing amounts and using the shortcuts, through every hand;
    an amount outside the legal range is refused on the page."""
    d = driver
    _sit_down(d, server, "holdem.nolimit.2p.reverse_blinds", "call")
    _wait(d, _my_turn_or_over, 60)
    amount = d.find_element(By.ID, "amount")
    lo, hi = int(amount.get_attribute("min")), int(amount.get_attribute("max"))
    streets_before = d.find_element(By.ID, "street-log").text
    amount.clear()
    amount.send_keys(str(lo - 1))
    d.find_element(By.ID, "raise").click()
    message = _wait(d, lambda d: d.find_element(By.ID, "message").text, 5, "the refusal")
    assert str(lo) in message and str(hi) in message
    assert _body(d, "toAct") == "you" and d.find_element(By.ID, "street-log").text == streets_before

    shot = []

    def act(d: Any, n: int) -> None:
        # the README's picture: a later hand under way with a board, the last hand beside it
        if not shot and int(_body(d, "hand") or 0) >= 2 and len(d.find_elements(By.CSS_SELECTOR, "#board .card")) >= 3:
            d.execute_script("window.scrollTo(0, 0)")
            _shot(d, "play.png", tmp_path)
            shot.append(n)
        raise_ok = d.find_element(By.ID, "raise").is_enabled()
        if n % 3 == 1 and raise_ok:
            box = d.find_element(By.ID, "amount")
            lo = int(box.get_attribute("min"))
            box.clear()
            box.send_keys(str(lo))
            d.find_element(By.ID, "raise").click()
        elif n % 3 == 2 and raise_ok and d.find_elements(By.CSS_SELECTOR, "button.shortcut"):
            d.find_elements(By.CSS_SELECTOR, "button.shortcut")[0].click()
            d.find_element(By.ID, "raise").click()
        else:
            d.find_element(By.ID, "call").click()

    assert _play_to_the_end(d, act) >= HANDS
    if not shot:  # no later hand reached the flop: the table as the match ended
        _shot(d, "play.png", tmp_path)
    chips, log = _log_score(d)
    score = d.find_element(By.ID, "score")
    assert float(score.get_attribute("data-chips")) == pytest.approx(chips)
    assert int(score.get_attribute("data-hands")) == HANDS
    rows = d.find_elements(By.CSS_SELECTOR, "#history tbody tr")
    assert len(rows) == HANDS
    assert d.find_element(By.ID, "last-hand").text
    _no_console_errors(d)


def test_a_person_plays_a_shipped_strategy_with_the_keyboard(driver: Any, server: WebServer) -> None:
    d = driver
    _sit_down(d, server, "leduc.nolimit.2p", f"strategy:{LEDUC_STRATEGY}")

    def act(d: Any, n: int) -> None:
        body = d.find_element(By.TAG_NAME, "body")
        if n % 2 == 1 and d.find_element(By.ID, "raise").is_enabled():
            body.send_keys("r")
        else:
            body.send_keys("c")

    assert _play_to_the_end(d, act) >= HANDS
    chips, _ = _log_score(d)
    assert float(d.find_element(By.ID, "score").get_attribute("data-chips")) == pytest.approx(chips)
    _no_console_errors(d)


def test_the_watch_view_shows_a_running_match_hand_by_hand(driver: Any, server: WebServer, tmp_path: Path) -> None:
    d = driver
    d.get(server.url + "#watch")
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent", "match", "leduc.nolimit.2p", "--players", f"strategy:{LEDUC_STRATEGY}",
         "random", "--hands", "4000", "--seed", "2", "--watch", "--log", str(server.match_dir / "watched.log"),
         "--quiet", "--no-aivat"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    try:
        # (read and chosen in one script: the list is drawn again whenever the matches change)
        _wait(d, lambda d: d.execute_script(
            "const s = document.getElementById('watch-match');"
            "if (![...s.options].some(o => o.value === 'watched')) return false;"
            "if (s.value !== 'watched') { s.value = 'watched'; s.dispatchEvent(new Event('change')); }"
            "return true;"), 30, "the match listed")
        first = _wait(d, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#watch-hands li.hand")), 30, "hands shown")
        _wait(d, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#watch-hands li.hand")) > first, 30, "more hands")
        assert proc.poll() is None, "the hands were shown while the match ran"
        _wait(d, lambda d: d.find_element(By.ID, "watch-actions").text.strip(), 30, "decisions shown")
        _shot(d, "watch.png", tmp_path)
        assert d.find_element(By.ID, "bankroll-text").text
    finally:
        proc.terminate()  # the match's end is test_web.py's; here only the live view counts
        proc.wait(60)
    _no_console_errors(d)


def test_a_phone_sized_window_keeps_every_control_reachable(driver: Any, server: WebServer, tmp_path: Path) -> None:
    d = driver
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                      {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
    try:
        _sit_down(d, server, "holdem.nolimit.2p.reverse_blinds", "call")
        _wait(d, _my_turn_or_over, 60)
        _shot(d, "phone.png", tmp_path)
        width = d.execute_script("return window.innerWidth")
        assert width == 390
        assert d.execute_script("return document.documentElement.scrollWidth") <= width
        controls = [d.find_element(By.ID, i) for i in ("call", "raise", "amount", "start")]
        controls += d.find_elements(By.CSS_SELECTOR, "button.shortcut")
        if d.find_element(By.ID, "fold").is_displayed():
            controls.append(d.find_element(By.ID, "fold"))
        for el in controls:
            r = d.execute_script("const r = arguments[0].getBoundingClientRect();"
                                 "return [r.left, r.right, r.width, r.height];", el)
            name = el.get_attribute("id") or el.text
            assert el.is_displayed(), name
            assert r[0] >= 0 and r[1] <= width, (name, r)
            assert r[2] >= 44 and r[3] >= 44, (name, r)
        before = d.find_element(By.ID, "street-log").text
        d.find_element(By.ID, "call").click()  # a tap plays
        _wait(d, lambda d: d.find_element(By.ID, "street-log").text != before, 30, "the tap reached the table")
    finally:
        d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", DESKTOP)
