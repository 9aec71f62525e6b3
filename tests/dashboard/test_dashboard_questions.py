"""The operator's questions of issue #31, each answered in at most two clicks from ``/`` in headless
Chromium, on the generated profile of 2,000 sessions (spec 06 BOOK-38..41). A click is a link followed or
a form submitted; typing into a filter field is not a click.

Skipped, with the reason, where Chromium, chromedriver or selenium is missing.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from ._issue_profile import build_issue_profile
from ._profile import serving

pytest.importorskip("hermes_state", reason="hermes-agent 0.19 is not installed (pip install '.[hermes]')")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed "
                                                            "(pip install '.[dashboard-test]')")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
if CHROMIUM is None or DRIVER is None:
    pytest.skip("headless Chromium and chromedriver are not installed", allow_module_level=True)

from selenium.common.exceptions import WebDriverException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return build_issue_profile(tmp_path_factory.mktemp("issue31-browser"))


@pytest.fixture(scope="module")
def base(made: dict[str, Any]) -> Iterator[str]:
    with serving(made["home"]) as server:
        yield server.url.rstrip("/")


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,1000", "--no-first-run", "--disable-extensions",
                f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    home = tmp_path_factory.mktemp("chromium-home")
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache"),
           "XDG_CONFIG_HOME": str(home / "config")}
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=DRIVER, env=env))
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


class Clicks:
    """Follows links and submits forms from ``/``, counting the clicks; each waits for the next page."""

    def __init__(self, browser: Any, base: str) -> None:
        self.browser, self.count = browser, 0
        browser.get(base + "/")
        WebDriverWait(browser, 10).until(EC.presence_of_element_located((By.TAG_NAME, "h1")))
        browser.get_log("browser")

    def _new_page_loaded(self, token: str) -> bool:
        """True once the window holds another document than the one marked with ``token``, fully loaded.
        A marker in the old window's script state is used rather than the staleness of an old element: asking
        Chromium about a node of a document being replaced (or restored from the back-forward cache) can fail
        with an inspector error instead of reporting the node stale. Errors while the document is swapped mean
        "not yet"."""
        try:
            return bool(self.browser.execute_script(
                "return window.__hermes_nav !== arguments[0] && document.readyState === 'complete'"
                " && document.querySelector('h1') !== null;", token))
        except WebDriverException:
            return False

    def click(self, element: Any) -> None:
        token = f"nav-{self.count}-{id(element)}"
        self.browser.execute_script("window.__hermes_nav = arguments[0];", token)
        self.count += 1
        element.click()
        WebDriverWait(self.browser, 10).until(lambda _driver: self._new_page_loaded(token))

    def main(self) -> str:
        text: str = self.browser.find_element(By.TAG_NAME, "main").text
        return text

    def console(self) -> list[Any]:
        return [entry for entry in self.browser.get_log("browser") if entry.get("level") in ("SEVERE", "WARNING")]


def test_why_did_it_fail_in_two_clicks(made: dict[str, Any], base: str, browser: Any) -> None:
    """Q1: from Today to the failures by type, then to the failed step: error type, exit code and message."""
    run = next(r for r in reversed(made["runs"]) if r["error_type"] == "command_failed")
    nav = Clicks(browser, base)
    nav.click(browser.find_element(By.LINK_TEXT, "Failures"))
    text = nav.main()
    assert "command_failed ×" in text and "rate_limited ×" in text and "authentication ×" in text
    # each failure says why: the run's message, the tool's output, the provider's words
    assert "command_failed: RuntimeError: agent gave up: make kept failing" in text
    assert "command_failed: make: *** [all] Error 2" in text
    assert "rate_limited: Error code: 429 - rate limit reached for model-a" in text
    nav.click(browser.find_element(By.CSS_SELECTOR, f"a[href='/trajectories/{run['trajectory_id']}#call-{run['call']}']"))
    tool = browser.find_element(By.ID, f"call-{run['call']}")
    assert tool.get_attribute("open") is not None and tool.is_displayed()
    assert "exit 2 failed" in tool.text and "command_failed: make: *** [all] Error 2" in tool.text
    assert "the turn failed: command_failed: RuntimeError: agent gave up: make kept failing" in nav.main()
    assert nav.count <= 2 and nav.console() == []


def test_a_failed_provider_attempt_in_two_clicks(made: dict[str, Any], base: str, browser: Any) -> None:
    """Q1: a failed provider attempt (retried) and its type, from Today in two clicks."""
    run = next(r for r in reversed(made["runs"]) if r["error_type"] == "upstream_error")
    nav = Clicks(browser, base)
    nav.click(browser.find_element(By.LINK_TEXT, "Failures"))
    nav.click(browser.find_element(By.CSS_SELECTOR, f"a[href^='/trajectories/{run['trajectory_id']}#req-']"))
    text = nav.main()
    assert "attempt 1: upstream_error (HTTP 429): Error code: 503 - the upstream provider is overloaded" in text
    assert "error\nupstream_error: Error code: 503 - the upstream provider is overloaded" in text
    assert nav.count <= 2


def test_any_run_by_its_task_text_in_two_clicks(made: dict[str, Any], base: str, browser: Any) -> None:
    """Q2: the oldest run of the profile, found from Today by searching its task text."""
    run = made["runs"][0]
    nav = Clicks(browser, base)
    nav.click(browser.find_element(By.LINK_TEXT, "Runs"))
    browser.find_element(By.NAME, "q").send_keys(run["task"])
    nav.click(browser.find_element(By.CSS_SELECTOR, "form.filters button"))
    assert "q=" in browser.current_url  # the result is a bookmarkable URL
    assert browser.find_elements(By.CSS_SELECTOR, f"a[href='/trajectories/{run['trajectory_id']}']")
    assert run["task"] in nav.main() and nav.count <= 2 and nav.console() == []


def test_any_session_by_time_range_and_outcome_in_two_clicks(made: dict[str, Any], base: str, browser: Any) -> None:
    """Q2: sessions of one past day that failed, from Today, by time range and outcome."""
    failed = [r for r in made["runs"][:400] if r["error_type"]]
    day = failed[0]["started"][:10]
    started = {r["session_id"]: r["started"] for r in reversed(made["runs"])}  # a session starts with its first run
    expected = {r["session_id"] for r in made["runs"] if r["error_type"] and started[r["session_id"]][:10] == day}
    nav = Clicks(browser, base)
    nav.click(browser.find_element(By.LINK_TEXT, "Sessions"))
    browser.find_element(By.NAME, "since").send_keys(day)
    browser.find_element(By.NAME, "until").send_keys(day + "T23:59:59")
    browser.find_element(By.NAME, "outcome").send_keys("failed")
    nav.click(browser.find_element(By.CSS_SELECTOR, "form.filters button"))
    shown = {a.text for a in browser.find_elements(By.CSS_SELECTOR, "table.sessions td:first-child a")}
    assert shown == expected and nav.count <= 2


def test_a_skill_and_whether_its_self_modification_helped_in_two_clicks(base: str, browser: Any) -> None:
    """Q3: a skill's versions with reasons, runs per version and the comparison of the last two."""
    nav = Clicks(browser, base)
    nav.click(browser.find_element(By.LINK_TEXT, "Skills"))
    nav.click(browser.find_element(By.LINK_TEXT, "skill-7"))
    text = nav.main()
    assert "v8: handle case 8 of skill-7" in text and "v7 compared with v8" in text
    assert "Runs of each version" in text and browser.find_elements(By.CSS_SELECTOR, "p.runs a[href^='/trajectories/']")
    assert nav.count <= 2 and nav.console() == []


def test_a_memory_files_changes_in_two_clicks(base: str, browser: Any) -> None:
    """Q4: every change to a memory file with actor, reason, run and the before/after diff."""
    nav = Clicks(browser, base)
    nav.click(browser.find_element(By.LINK_TEXT, "Memory"))
    nav.click(browser.find_element(By.LINK_TEXT, "memories/USER.md"))
    change = browser.find_elements(By.CSS_SELECTOR, "article.change")[0]
    assert "actor" in change.text and "reason" in change.text and change.find_elements(By.CSS_SELECTOR, ".da")
    assert change.find_elements(By.CSS_SELECTOR, "a[href^='/trajectories/']") and nav.count <= 2


def test_skill_health_has_one_window_stated_in_one_click(base: str, browser: Any) -> None:
    """Q7: the skills page states the window of the Today alarm."""
    nav = Clicks(browser, base)
    nav.click(browser.find_element(By.LINK_TEXT, "Skills"))
    assert "over the last 7 days (the window of the Today alarm too)" in nav.main() and nav.count == 1


def test_compare_a_run_with_the_previous_one_in_two_clicks(made: dict[str, Any], base: str, browser: Any) -> None:
    """Q5: from Today's latest runs to a run, then to its comparison with the previous run of its session;
    the compare form (a GET form the policy allows) reaches any run by id."""
    latest, before = made["runs"][-1], made["runs"][-2]
    nav = Clicks(browser, base)
    nav.click(browser.find_element(By.CSS_SELECTOR, f"a[href='/trajectories/{latest['trajectory_id']}']"))
    nav.click(browser.find_element(By.PARTIAL_LINK_TEXT, "compare with the previous run"))
    assert browser.current_url.endswith(f"/trajectories/{before['trajectory_id']}/diff/{latest['trajectory_id']}")
    assert "Diff of two runs" in browser.title and nav.count <= 2
    browser.back()
    WebDriverWait(browser, 10).until(EC.presence_of_element_located((By.NAME, "b")))
    browser.find_element(By.NAME, "b").send_keys(made["runs"][0]["trajectory_id"][:8])
    nav.click(browser.find_element(By.CSS_SELECTOR, "section.compare button"))
    assert "Diff of two runs" in browser.title and nav.console() == []


def test_a_run_and_its_replay_in_two_clicks(made: dict[str, Any], base: str, browser: Any) -> None:
    """Q5 (issue #28 item 5): from Today to a run that was replayed, then to its comparison with the replay; the
    replay's own page links back to its original."""
    run, replay = made["replayed"][-1], made["replays"][-1]
    nav = Clicks(browser, base)
    nav.click(browser.find_element(By.CSS_SELECTOR, f"a[href='/trajectories/{run['trajectory_id']}']"))
    assert "replays of this run (1):" in nav.main() and "identical" in nav.main()
    nav.click(browser.find_element(By.CSS_SELECTOR, f"a[href='/trajectories/{run['trajectory_id']}/diff/{replay}']"))
    assert "Diff of two runs" in browser.title and nav.count <= 2
    browser.get(f"{base}/trajectories/{replay}")
    WebDriverWait(browser, 10).until(EC.presence_of_element_located((By.TAG_NAME, "h1")))
    back = browser.find_element(By.PARTIAL_LINK_TEXT, "compare with the original")
    assert back.get_attribute("href").endswith(f"/trajectories/{run['trajectory_id']}/diff/{replay}")
    assert nav.console() == []
