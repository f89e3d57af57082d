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
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e import console_browser
from tests.e2e.api import DEPLOY_TIMEOUT_S, Http, raw_remove, sign_up
from tests.e2e.console_browser import (
    CSP,
    ROOT,
    SAND_HOME,
    accessible,
    by_id,
    go,
    reloading,
    shoot,
    sign_in,
    text_of,
    type_into_editor,
    wait,
)

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is in the [dev] extras: make install")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402

# the browser's fixtures, shared with test_console_guide_e2e.py (clean_log: no error in the browser's log)
browser = console_browser.browser
console = console_browser.console
clean_log = console_browser.clean_log


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
    # the workflow and settings saved as they are: what the API answers, it takes back
    by_id(d, "save-workflow").click()
    wait(d, lambda d: "saved" in text_of(d, "workflow-message"), why="the workflow saved unchanged")


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


def test_an_operator_disables_an_account(
    browser: WebDriver, base: str, console: str, http: Http, names: dict[str, str]
) -> None:
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
        # the platform as the answering frontend sees it: readiness, Cassandra per store, and charts drawn from
        # two reads of /metrics at least (every 5 s), with the invocations this module made
        go(d, console, "#/admin/platform")
        wait(d, lambda d: "cluster_state" in text_of(d, "platform-stores"), why="Cassandra's stores")
        assert "ready" in text_of(d, "platform-ready").lower()

        def traffic_charted(d: WebDriver) -> bool:
            # requests while the view reads: a rate needs a counter that moved between two reads of one frontend
            for _ in range(4):
                requests.post(f"{base}/app/{names['hello']}", json={"name": "platform"}, timeout=10)
            return len(d.find_elements(By.CSS_SELECTOR, "#platform-charts figure.chart")) >= 2

        wait(d, traffic_charted, 45, "hello's invocations charted from /metrics", every=1)
        shoot(d, "operator-platform")
        accessible(d, "operator platform")
        go(d, console, "#/admin/accounts")
        by_id(d, "account-name").send_keys(victim)
        by_id(d, "account-reason").send_keys("console e2e test")
        by_id(d, "account-disable").click()
        d.switch_to.alert.accept()  # disabling undeploys the account's applications: the console asks first
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
