"""The web console's browser for the e2e tests (tests/e2e/test_console*_e2e.py): Debian's headless Chromium driven by
Selenium (/usr/bin/chromium, /usr/bin/chromedriver; `make install` installs both), the waits, axe-core's check, the
screenshots into docs/console/ and the browser's log, which must hold no error after each test."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is in the [dev] extras: make install")
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.remote.webelement import WebElement  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SAND_HOME = Path(os.environ.get("SAND_HOME", ROOT / ".sand"))
SHOTS = ROOT / "docs" / "console"
AXE = ROOT / "console" / "node_modules" / "axe-core" / "axe.min.js"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WAIT_S = 20  # a view's calls to the API; deploys have their own, longer, waits

# the console's own CSP, as ConsoleHandler sends it
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
    "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


@pytest.fixture(scope="module")
def console(base: str) -> str:
    r = requests.get(base + "/console/", timeout=10)
    assert r.status_code == 200, f"/console/ answered {r.status_code}: {r.text[:300]} (make up builds the console)"
    return base + "/console/"


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.path.exists(path):
            pytest.fail(f"{path} is missing: apt-get install chromium chromium-driver (make install does)")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(a)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    d.set_page_load_timeout(30)
    d.set_script_timeout(30)
    try:
        yield d
    finally:
        d.quit()


# errors a test provokes on purpose are allowed by its name here: none does today
ALLOWED_ERRORS: dict[str, list[str]] = {}


@pytest.fixture(autouse=True)
def clean_log(browser: WebDriver, request: pytest.FixtureRequest) -> Iterator[None]:
    """The browser's log holds no error after the test (CSP violations, failed loads, uncaught exceptions)."""
    browser.get_log("browser")  # what the test before left
    yield
    allowed = ALLOWED_ERRORS.get(request.node.name, [])
    errors = [
        e["message"]
        for e in browser.get_log("browser")
        if e["level"] == "SEVERE" and not any(a in e["message"] for a in allowed)
    ]
    assert errors == [], f"the browser logged errors during {request.node.name}: {errors}"


def wait(
    d: WebDriver, what: Callable[[WebDriver], Any], timeout: float = WAIT_S, why: str = "", every: float = 0.2
) -> Any:
    """what(d) once it is truthy; views that follow a deploy draw themselves again, so stale elements are retried."""
    try:
        return WebDriverWait(
            d, timeout, poll_frequency=every, ignored_exceptions=[StaleElementReferenceException]
        ).until(what)
    except TimeoutException:
        shot = Path(tempfile.gettempdir()) / "sand-console-failure.png"
        d.save_screenshot(str(shot))
        body = d.find_element(By.TAG_NAME, "body").text[:2000]
        raise AssertionError(
            f"waited {timeout} s for {why or what}; the page says:\n{body}\n(screenshot {shot})"
        ) from None


def reloading(check: Callable[[WebDriver], Any]) -> Callable[[WebDriver], Any]:
    """check, and the page loaded again when it fails: for what the API records just after an answer (an
    execution's record and its log lines)."""

    def again(d: WebDriver) -> Any:
        found = check(d)
        if not found:
            d.refresh()
        return found

    return again


def by_id(d: WebDriver, id_: str, timeout: float = WAIT_S) -> WebElement:
    return wait(d, lambda d: d.find_element(By.ID, id_) if d.find_elements(By.ID, id_) else None, timeout, f"#{id_}")


def text_of(d: WebDriver, id_: str) -> str:
    els = d.find_elements(By.ID, id_)
    return els[0].text if els else ""


def shoot(d: WebDriver, name: str, at: WebElement | None = None) -> None:
    """The whole page (up to 2,400 px high), so a view's lower part (an execution's timeline) is in the picture."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    if at is not None:
        d.execute_script("arguments[0].scrollIntoView()", at)
    size = d.get_window_size()
    height = int(d.execute_script("return document.documentElement.scrollHeight"))
    d.set_window_size(size["width"], max(size["height"], min(height, 2400)))
    try:
        d.save_screenshot(str(SHOTS / f"{name}.png"))
    finally:
        d.set_window_size(size["width"], size["height"])


def accessible(d: WebDriver, view: str) -> None:
    """axe-core's WCAG 2 A and AA rules on the page as it is: no serious or critical violation."""
    assert AXE.exists(), f"{AXE} is missing: cd console && npm ci (make install does)"
    d.execute_script(AXE.read_text())
    found = d.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {runOnly: ['wcag2a', 'wcag2aa']})"
        ".then(r => done(r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, n: v.nodes.length}))))"
        ".catch(e => done([{id: 'axe', impact: 'critical', help: String(e), n: 0}]));"
    )
    bad = [v for v in found if v["impact"] in ("serious", "critical")]
    assert bad == [], f"{view}: accessibility violations {json.dumps(bad)}"


def go(d: WebDriver, console: str, route: str) -> None:
    d.get(console + route)


def type_into_editor(d: WebDriver, host_id: str, text: str) -> None:
    """Replaces a CodeMirror editor's text by typing it (the editor lives in a shadow root: see console/src/editor.js).
    Lines after the first are typed without their indentation: the editor indents after a colon itself."""
    host = by_id(d, host_id)
    content = wait(d, lambda d: host.shadow_root.find_element(By.CSS_SELECTOR, ".cm-content"), why="the editor")
    content.click()
    ActionChains(d).key_down(Keys.CONTROL).send_keys("a").key_up(Keys.CONTROL).send_keys(Keys.DELETE).perform()
    content.send_keys(text)
    typed = d.execute_script("return arguments[0].shadowRoot.querySelector('.cm-content').innerText", host)
    assert typed.split() == text.split(), f"the editor holds {typed!r}, not {text!r}"


def sign_in(d: WebDriver, console: str, secret: str, operator: bool) -> None:
    go(d, console, "#/signin")
    if d.find_elements(By.ID, "sign-out"):
        d.find_element(By.ID, "sign-out").click()
    field = by_id(d, "key")
    field.clear()
    field.send_keys(secret)
    by_id(d, "role-operator" if operator else "role-developer").click()
    by_id(d, "signin").click()
    by_id(d, "admin-hosts-table" if operator else "apps-table")
