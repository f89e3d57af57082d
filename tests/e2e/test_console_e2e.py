"""The web console (issue 32, docs/console.md) in a real browser against the running system: Debian's headless
Chromium driven by Selenium (/usr/bin/chromium, /usr/bin/chromedriver; `make install` installs both), through nginx.

One browser for the module; the tests run in order, as one developer would: sign in, deploy examples/hello from its
files, see its graph, invoke it, open the execution and find every grain on the timeline with its log line, edit a
grain and see the new output, see a deploy error on the node of the grain that failed, and an operator disabling an
account. Each view is checked with axe-core (no serious or critical violation) and screenshotted into docs/console/
(docs/console.md shows them); after every test the browser's log must hold no error (a Content-Security-Policy
violation would be one).

Needs `make up` (nginx, frontends, a host agent, Kafka, Cassandra, Docker) and the console built (the install step
builds it; console/node_modules has axe-core)."""

from __future__ import annotations

import json
import os
import re
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.api import DEPLOY_TIMEOUT_S, Http, raw_remove, sign_up

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


@pytest.fixture(scope="module")
def key(http: Http) -> str:
    return sign_up(http, f"console-{uuid.uuid4().hex[:8]}")


@pytest.fixture(scope="module")
def names(http: Http, key: str) -> Iterator[dict[str, str]]:
    n = {name: f"c{name}-{uuid.uuid4().hex[:8]}" for name in ("hello", "broken", "orders")}
    yield n
    for name in n.values():
        raw_remove(http, key, name)


@pytest.fixture(scope="module")
def state() -> dict[str, Any]:
    """What one test leaves for the next (the execution id)."""
    return {}


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


def test_console_is_served_with_a_strict_policy(base: str, console: str) -> None:
    r = requests.get(console, timeout=10)
    assert r.headers["Content-Security-Policy"] == CSP
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert r.headers["Cache-Control"] == "no-cache"
    asset = re.search(r'src="(assets/main-[^"]+\.js)"', r.text)
    assert asset, r.text
    a = requests.get(console + asset.group(1), timeout=10)
    assert a.status_code == 200 and a.headers["Content-Type"].startswith("text/javascript"), a.headers
    assert "immutable" in a.headers["Cache-Control"]
    moved = requests.get(base + "/console", timeout=10, allow_redirects=False)
    assert moved.status_code == 301 and moved.headers["Location"] == "/console/"
    assert requests.get(console + "%2e%2e/README.md", timeout=10).status_code in (400, 404)


def test_sign_in_and_deploy_an_example(browser: WebDriver, console: str, key: str, names: dict[str, str]) -> None:
    d = browser
    go(d, console, "")
    by_id(d, "key")
    shoot(d, "sign-in")
    accessible(d, "sign in")
    sign_in(d, console, key, operator=False)
    # the key is in the tab's sessionStorage, never in a cookie
    assert d.get_cookies() == []
    assert d.execute_script("return sessionStorage.getItem('sand.console.key')") == key
    by_id(d, "new-app-name").send_keys(names["hello"])
    folder = ROOT / "examples" / "hello"
    by_id(d, "new-app-files").send_keys("\n".join(str(folder / f) for f in ("workflow.json", "greet.py", "shout.py")))
    by_id(d, "new-app-create").click()
    # the form follows the deploy ("deploying (k/n hosts)") and shows the overview once it is deployed
    by_id(d, "app-status", DEPLOY_TIMEOUT_S)
    wait(d, lambda d: "deployed" == text_of(d, "app-status"), DEPLOY_TIMEOUT_S, f"{names['hello']} deployed")
    assert "deployed" in by_id(d, "hosts-table").text
    shoot(d, "application")
    accessible(d, "application overview")
    go(d, console, "#/apps")
    wait(d, lambda d: names["hello"] in text_of(d, "apps-table"), why="the new application in the list")
    shoot(d, "applications")
    accessible(d, "applications")


def test_its_graph(browser: WebDriver, console: str, names: dict[str, str]) -> None:
    d = browser
    go(d, console, f"#/apps/{names['hello']}/overview")
    graph = by_id(d, "app-graph")
    nodes = {e.get_attribute("data-node") for e in graph.find_elements(By.CSS_SELECTOR, "g.node")}
    assert {"start", "f:greet", "f:shout", "end"} <= nodes, nodes
    edges = {
        (e.get_attribute("data-from"), e.get_attribute("data-to"))
        for e in graph.find_elements(By.CSS_SELECTOR, "g.edge")
    }
    assert {("start", "f:greet"), ("f:greet", "f:shout"), ("f:shout", "end")} <= edges, edges
    assert graph.find_elements(By.CSS_SELECTOR, "g.node.error") == []


def test_invoke_it(browser: WebDriver, console: str, names: dict[str, str], state: dict[str, Any]) -> None:
    d = browser
    go(d, console, f"#/apps/{names['hello']}/run")
    type_into_editor(d, "run-input", '{"name": "console"}')
    by_id(d, "invoke").click()
    wait(d, lambda d: "HELLO, CONSOLE!" in text_of(d, "run-result"), why="the output of the invocation")
    assert text_of(d, "run-status") == "200"
    state["execution"] = by_id(d, "run-execution").text
    assert re.fullmatch(r"[0-9a-f]{32}", state["execution"]), state
    shoot(d, "run")
    accessible(d, "run")
    # asynchronously: the result comes by polling
    by_id(d, "invoke-async").click()
    wait(d, lambda d: "HELLO, CONSOLE!" in text_of(d, "run-result") and text_of(d, "run-status") == "200", 60)


def test_the_execution_on_its_timeline(
    browser: WebDriver, console: str, names: dict[str, str], state: dict[str, Any]
) -> None:
    d = browser
    go(d, console, f"#/apps/{names['hello']}/executions")
    wait(
        d,
        reloading(lambda d: state["execution"] in text_of(d, "executions-table")),
        why="the execution in the list",
        every=1,
    )
    shoot(d, "executions")
    d.find_element(By.LINK_TEXT, state["execution"]).click()
    by_id(d, "exec-graph")

    def logged(d: WebDriver) -> bool:
        lines = d.find_elements(By.CSS_SELECTOR, '.wf-row[data-grain="greet"] .wf-logs')
        return bool(lines) and "greeting console" in lines[0].text

    wait(d, reloading(logged), why="greet's log line beside its bar", every=1)
    who = [r.get_attribute("data-row") for r in d.find_elements(By.CSS_SELECTOR, ".wf-row[data-row]")]
    for row in ("frontend", "host agent", "greet", "shout"):
        assert row in who, who
    visited = {e.get_attribute("data-node") for e in d.find_elements(By.CSS_SELECTOR, "#exec-graph g.node.visited")}
    assert {"f:greet", "f:shout"} <= visited, visited
    assert "succeeded" in text_of(d, "exec-status-badge")
    shoot(d, "execution")
    accessible(d, "execution")


def test_edit_a_grain_and_see_the_new_output(browser: WebDriver, console: str, names: dict[str, str]) -> None:
    d = browser
    go(d, console, f"#/apps/{names['hello']}/grains/shout")
    by_id(d, "grain-editor")
    shoot(d, "grain")
    accessible(d, "grain editor")
    type_into_editor(
        d, "grain-editor", 'def handle(event, context):\nreturn {"greeting": event["greeting"].upper() + "?!"}\n'
    )
    by_id(d, "grain-save-update").click()
    wait(d, lambda d: "done" in text_of(d, "grain-message"), DEPLOY_TIMEOUT_S, "the update of the grain")
    go(d, console, f"#/apps/{names['hello']}/run")
    type_into_editor(d, "run-input", '{"name": "again"}')
    by_id(d, "invoke").click()
    wait(d, lambda d: "HELLO, AGAIN" in text_of(d, "run-result"), why="an output")
    assert "HELLO, AGAIN?!" in text_of(d, "run-result"), "the update was done but the old code answered"


def test_an_asl_graph(browser: WebDriver, console: str, names: dict[str, str]) -> None:
    """examples/asl-orders, created without a deploy: Choice branches, a Map's iterator, a Parallel's branches and a
    Catch edge, each where it belongs."""
    d = browser
    folder = ROOT / "examples" / "asl-orders"
    go(d, console, "#/apps")
    by_id(d, "new-app-name").send_keys(names["orders"])
    by_id(d, "new-app-files").send_keys(
        "\n".join(str(f) for f in sorted(folder.glob("*")) if f.suffix in (".json", ".py"))
    )
    by_id(d, "new-app-deploy").click()  # off: the graph needs no sandbox
    by_id(d, "new-app-create").click()
    graph = by_id(d, "app-graph")
    nodes = {e.get_attribute("data-node") for e in graph.find_elements(By.CSS_SELECTOR, "g.node")}
    want = {"s:Check", "s:Empty", "s:Price", "s:Price/it/PriceItem", "s:Sum", "s:Settle", "s:Settle/b0/Charge"}
    assert want | {"s:Settle/b1/Reserve", "s:Declined"} <= nodes, nodes
    kinds = {
        (e.get_attribute("data-from"), e.get_attribute("data-to")): e.get_attribute("class")
        for e in graph.find_elements(By.CSS_SELECTOR, "g.edge")
    }
    assert "choice" in kinds[("s:Check", "s:Empty")] and "choice" in kinds[("s:Check", "s:Price")], kinds
    assert "fanout" in kinds[("s:Price", "s:Price/it/PriceItem")], kinds
    assert "fanout" in kinds[("s:Settle", "s:Settle/b1/Reserve")], kinds
    assert "catch" in kinds[("s:Settle/join", "s:Declined")], kinds
    assert {c.get_attribute("data-cluster") for c in graph.find_elements(By.CSS_SELECTOR, "g.cluster")} == {
        "c:Price",
        "c:Settle",
    }
    shoot(d, "asl-graph", at=graph)


@pytest.mark.parametrize(
    ("tab", "element", "text"),
    [
        ("versions", "versions-table", "running"),
        ("secrets", "secrets-table", ""),
        ("keys", "keys-table", ""),
        ("triggers", "triggers-table", ""),
        ("dead-letters", "dead-letters-table", ""),
        ("logs", "live-logs", "greeting console"),
        ("metrics", "metrics", ""),
    ],
)
def test_the_other_tabs(
    browser: WebDriver, console: str, names: dict[str, str], tab: str, element: str, text: str
) -> None:
    """Each of the application's other views answers from the API, passes axe, and is screenshotted."""
    d = browser
    go(d, console, f"#/apps/{names['hello']}/{tab}")
    wait(d, lambda d: text in text_of(d, element), why=f"{text!r} in #{element}")
    shoot(d, tab)
    accessible(d, tab)


def test_a_deploy_error_on_its_node(browser: WebDriver, console: str, names: dict[str, str], tmp_path: Path) -> None:
    d = browser
    wf = {
        "name": "broken",
        "entry": "fine",
        "functions": [{"name": "fine", "next": ["bad"]}, {"name": "bad", "next": ["end"]}],
    }
    (tmp_path / "workflow.json").write_text(json.dumps(wf))
    (tmp_path / "fine.py").write_text("def handle(event, context):\n    return event\n")
    (tmp_path / "bad.py").write_text("def handle(event, context)\n    return event\n")  # no colon: a SyntaxError
    go(d, console, "#/apps")
    by_id(d, "new-app-name").send_keys(names["broken"])
    by_id(d, "new-app-files").send_keys("\n".join(str(tmp_path / f) for f in ("workflow.json", "fine.py", "bad.py")))
    by_id(d, "new-app-create").click()
    # a failed deploy stays on the form with the whole error and a link to the application
    wait(d, lambda d: "SyntaxError" in text_of(d, "new-app-error"), DEPLOY_TIMEOUT_S, f"{names['broken']} failed")
    by_id(d, "new-app-link").click()
    wait(d, lambda d: text_of(d, "app-status") == "failed", why=f"{names['broken']}'s overview")
    graph = by_id(d, "app-graph")
    failed = {e.get_attribute("data-node") for e in graph.find_elements(By.CSS_SELECTOR, "g.node.error")}
    assert failed == {"f:bad"}, failed
    assert "SyntaxError" in graph.find_element(By.CSS_SELECTOR, '[data-error-node="f:bad"]').text
    shoot(d, "deploy-error", at=graph)


def test_an_operator_disables_an_account(browser: WebDriver, console: str, http: Http, names: dict[str, str]) -> None:
    d = browser
    admin = (SAND_HOME / "admin-key").read_text().strip()
    victim = f"console-off-{uuid.uuid4().hex[:6]}"
    victim_key = sign_up(http, victim)
    try:
        sign_in(d, console, admin, operator=True)
        assert "alive" in by_id(d, "admin-hosts-table").text
        shoot(d, "operator-hosts")
        accessible(d, "operator hosts")
        go(d, console, "#/admin/apps")
        wait(d, lambda d: names["hello"] in text_of(d, "admin-apps-table"), why="every account's applications")
        shoot(d, "operator-applications")
        go(d, console, "#/admin/accounts")
        by_id(d, "account-name").send_keys(victim)
        by_id(d, "account-reason").send_keys("console e2e test")
        by_id(d, "account-disable").click()
        wait(d, lambda d: f"account {victim}: disabled" in text_of(d, "admin-message"), why="the account disabled")
        shoot(d, "operator-accounts")
        accessible(d, "operator accounts")
        r = http("GET", "/api/v1/apps", victim_key)
        assert r.status_code == 403 and r.json()["error"]["code"] == "account_disabled", r.text
        by_id(d, "account-enable").click()
        wait(d, lambda d: f"account {victim}: enabled" in text_of(d, "admin-message"), why="the account enabled")
    finally:
        http("POST", f"/api/v1/admin/accounts/{victim}/enable", admin)
        d.execute_script("sessionStorage.clear()")
