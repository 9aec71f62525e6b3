"""The local dashboard in a real browser: headless Chromium driven by selenium (spec 06 BOOK-38..41).

Skipped, with the reason, where Chromium, chromedriver or selenium is missing (``scripts/test`` installs
them: ``apt-get install chromium chromium-driver`` and ``pip install '.[dashboard-test]'``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ._profile import HOSTILE_SKILL, SESSION_ID, FixtureProfile, build_profile, serving

pytest.importorskip("hermes_state", reason="hermes-agent 0.19 is not installed (pip install '.[hermes]')")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed "
                                                            "(pip install '.[dashboard-test]')")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
if CHROMIUM is None or DRIVER is None:
    pytest.skip("headless Chromium and chromedriver are not installed (scripts/test installs them with apt-get "
                "when run as root: apt-get install -y chromium chromium-driver)", allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> FixtureProfile:
    return build_profile(tmp_path_factory.mktemp("dash-browser"))


@pytest.fixture(scope="module")
def base(profile: FixtureProfile) -> Iterator[str]:
    with serving(profile.home) as server:
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
    home = tmp_path_factory.mktemp("chromium-home")  # the browser's caches and config stay under the tmp dir
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache"),
           "XDG_CONFIG_HOME": str(home / "config")}
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=DRIVER, env=env))
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def _open(browser: Any, url: str) -> None:
    browser.get(url)
    WebDriverWait(browser, 10).until(EC.presence_of_element_located((By.TAG_NAME, "h1")))


def _console(browser: Any) -> list[dict[str, Any]]:
    return [entry for entry in browser.get_log("browser") if entry.get("level") in ("SEVERE", "WARNING")]


def test_every_route_renders_without_console_errors_and_is_screenshotted(profile: FixtureProfile, base: str,
                                                                         browser: Any, tmp_path: Path) -> None:
    """BOOK-38, BOOK-40: each route loads in Chromium with no console error or CSP violation; a
    screenshot of each is kept under the test's temporary directory."""
    a, b = profile.trajectories
    pages = {"today": "/", "sessions": "/sessions", "session": f"/sessions/{SESSION_ID}", "skills": "/skills",
             "memory": "/memory", "trajectory": f"/trajectories/{a}", "diff": f"/trajectories/{a}/diff/{b}"}
    browser.get_log("browser")
    for name, route in pages.items():
        _open(browser, base + route)
        assert _console(browser) == [], route
        # The stylesheet applied (same-origin CSS is allowed by the policy): the header is dark.
        header = browser.find_element(By.TAG_NAME, "header")
        assert header.value_of_css_property("background-color") == "rgba(29, 35, 48, 1)", route
        path = tmp_path / f"{name}.png"
        assert browser.save_screenshot(str(path)) and path.stat().st_size > 5000


def test_planted_script_never_runs(base: str, browser: Any) -> None:
    """BOOK-38: a planted <script> (and an onerror handler) in messages, skill names, file names and
    changes is shown as text; it would have set document.title."""
    for route in (f"/sessions/{SESSION_ID}", "/skills", "/memory", "/"):
        _open(browser, base + route)
        assert browser.title.endswith("hermes-pipeline dashboard") and "pwned" not in browser.title
        assert browser.find_elements(By.TAG_NAME, "script") == []
        assert browser.find_elements(By.CSS_SELECTOR, "main img") == []
    _open(browser, base + f"/sessions/{SESSION_ID}")
    assert "<script>document.title='pwned'</script>" in browser.find_element(By.TAG_NAME, "main").text
    _open(browser, base + "/skills")
    assert HOSTILE_SKILL in browser.find_element(By.CSS_SELECTOR, "table.skills").text


def test_an_inline_script_would_be_blocked_by_the_policy(base: str, browser: Any) -> None:
    """The Content-Security-Policy itself: a script injected into the page is refused by the browser."""
    _open(browser, base + "/")
    browser.get_log("browser")
    browser.execute_script("var s = document.createElement('script'); s.textContent = \"document.title='pwned'\";"
                           "document.body.appendChild(s);")
    assert "pwned" not in browser.title
    logs = browser.get_log("browser")
    assert any("Content Security Policy" in entry.get("message", "") for entry in logs), logs


def test_navigation_between_views_by_clicking_links(profile: FixtureProfile, base: str, browser: Any) -> None:
    """BOOK-40: the navigation bar and the links between views work."""
    _open(browser, base + "/")
    browser.find_element(By.LINK_TEXT, "Sessions").click()
    WebDriverWait(browser, 10).until(EC.url_to_be(base + "/sessions"))
    browser.find_element(By.LINK_TEXT, SESSION_ID).click()
    WebDriverWait(browser, 10).until(EC.url_contains(f"/sessions/{SESSION_ID}"))
    assert "What do my notes say?" in browser.find_element(By.TAG_NAME, "main").text
    browser.find_element(By.CSS_SELECTOR, f"a[href='/trajectories/{profile.trajectories[0]}']").click()
    WebDriverWait(browser, 10).until(EC.url_contains(f"/trajectories/{profile.trajectories[0]}"))
    step = browser.find_element(By.CSS_SELECTOR, "details.step")
    assert step.get_attribute("open") is None
    step.find_element(By.TAG_NAME, "summary").click()
    WebDriverWait(browser, 5).until(lambda d: step.get_attribute("open") is not None)
    for text, url in (("Skills", "/skills"), ("Memory", "/memory"), ("Today", "/")):
        browser.find_element(By.LINK_TEXT, text).click()
        WebDriverWait(browser, 10).until(EC.url_to_be(base + url))
        assert browser.find_element(By.CSS_SELECTOR, "header nav a.on").text == text
    assert _console(browser) == []


def test_the_failing_skill_row_is_red(base: str, browser: Any) -> None:
    """BOOK-40: failure rate >= 50 % over >= 5 runs shown in red."""
    _open(browser, base + "/skills")
    red = browser.find_element(By.CSS_SELECTOR, "tr.red td")
    assert red.text == "flaky-skill" and red.value_of_css_property("color") == "rgba(201, 42, 42, 1)"
