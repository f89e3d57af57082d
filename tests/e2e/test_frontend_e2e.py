"""The frontend, its REST API and the `sand` CLI on the real parts (issue 6): through nginx, two accounts
deploy every example (account A with the CLI, account B with raw HTTP), invoke them synchronously and
asynchronously, read logs, cannot see each other's grains, applications, executions or data, and get
each documented error status. Undeploy removes the sandbox; with one of two frontends killed, nginx
keeps serving.

Settings (environment):
  SAND_E2E_URL                 where to send the calls (default: nginx, http://127.0.0.1:8080)
  SAND_E2E_MAX_BODY_BYTES      the frontends' max.body.bytes (default 10 MB)
  SAND_E2E_MAX_CONCURRENT      the frontends' max.concurrent.per.account (default 64)
  SAND_E2E_FRONTEND_PORTS      ports of the frontends behind the URL (default 8081,8082)
  SAND_E2E_PID_DIR             where their pid files frontend-<port>.pid are (default $SAND_HOME/run)
  SAND_E2E_FRONTEND_RESTART    command that starts a stopped frontend again (default deploy/frontend.sh start)
"""

from __future__ import annotations

import base64
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
import uuid
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.api import DEPLOY_TIMEOUT_S, Http, error_code, raw_deploy, raw_remove

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
ONE_G = [{"name": "g", "next": ["end"]}]  # one grain whose value answers the request
SAND_HOME = Path(os.environ.get("SAND_HOME", ROOT / ".sand"))
RUN = uuid.uuid4().hex[:8]  # names are global: every run and account gets its own
MAX_BODY = int(os.environ.get("SAND_E2E_MAX_BODY_BYTES", str(10 * 1024 * 1024)))
MAX_CONCURRENT = int(os.environ.get("SAND_E2E_MAX_CONCURRENT", "64"))
FRONTEND_PORTS = [int(p) for p in os.environ.get("SAND_E2E_FRONTEND_PORTS", "8081,8082").split(",") if p]

EMAIL = {"from": "x@y", "body": "see http://phish.example/login", "attachments": ["invoice.pdf"]}
TWEET = "The cat and the dog: the cat wins! https://t.co/x @bob"


def _webserver_ok(r: Any) -> bool:
    return r["status"] == 200 and "Served by SAND grains" in r["body"]


# example folder -> (input, check of the output)
CASES: dict[str, tuple[Any, Callable[[Any], bool]]] = {
    "hello": ({"name": "e2e"}, lambda r: r["greeting"] == "HELLO, E2E!" and len(r["execution_id"]) == 32),
    "webserver": ({"path": "/"}, _webserver_ok),
    "virus-scan": ({"email": EMAIL}, lambda r: r["infected"] and r["findings"] == {"scan_links": ["phish.example"]}),
    "wordcount": ({"text": TWEET}, lambda r: r["language"] == "en" and r["top"][0] == ["cat", 2]),
}
NAP = {"name": "nap", "entry": "nap", "functions": [{"name": "nap", "next": ["end"]}]}
NAP_CODE = (
    "import time\n"
    "def handle(event, context):\n"
    "    context.log('napping %s s' % event.get('s', 0))\n"
    "    time.sleep(event.get('s', 0))\n"
    "    return {'slept': event.get('s', 0)}\n"
)
NAP_SETTINGS = {"request_timeout_s": 3, "concurrency": 64}  # the cap (limits concurrency.max)


# --- helpers ------------------------------------------------------------------------------------------------------


def sand(
    base: str, key: str | None, *args: str, timeout: float = DEPLOY_TIMEOUT_S + 30, config: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """The CLI of this checkout, as a subprocess of the venv's Python, logged in through the environment."""
    env = {k: v for k, v in os.environ.items() if k not in ("SAND_URL", "SAND_API_KEY")}
    env |= {"PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(config or SAND_HOME / "e2e-cli-config")}
    if key:
        env |= {"SAND_URL": base, "SAND_API_KEY": key}
    return subprocess.run(
        [sys.executable, "-m", "sandclient.cli", *args],
        cwd=ROOT,
        env=env,
        text=True,
        capture_output=True,
        timeout=timeout,
    )


# --- fixtures -----------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def accounts(http: Http) -> dict[str, str]:
    keys = {}
    for who in ("a", "b"):
        r = http("POST", "/api/v1/accounts", json_body={"name": f"e2e-{who}-{RUN}"})
        assert r.status_code in (200, 201), r.text
        assert r.json()["name"] == f"e2e-{who}-{RUN}"
        keys[who] = r.json()["api_key"]
    return keys


@pytest.fixture(scope="module")
def cli_apps(base: str, accounts: dict[str, str]) -> Iterator[dict[str, str]]:
    """Every example deployed by account A with `sand deploy` (example -> app name)."""
    names: dict[str, str] = {}
    try:
        for example in CASES:
            name = f"{example}-a{RUN}"
            p = sand(base, accounts["a"], "deploy", str(EXAMPLES / example), "--name", name)
            assert p.returncode == 0, p.stderr
            assert f"{name}: deployed on " in p.stdout
            names[example] = name
        yield names
    finally:
        for name in names.values():
            if sand(base, accounts["a"], "undeploy", name, "--delete", timeout=120).returncode != 0:
                raw_remove(Http(base), accounts["a"], name)


@pytest.fixture(scope="module")
def raw_apps(http: Http, accounts: dict[str, str]) -> Iterator[dict[str, str]]:
    """Every example deployed by account B with raw HTTP (example -> app name)."""
    names: dict[str, str] = {}
    try:
        for example in CASES:
            names[example] = f"{example}-b{RUN}"
            raw_deploy(http, accounts["b"], EXAMPLES / example, names[example])
        yield names
    finally:
        for name in names.values():
            raw_remove(http, accounts["b"], name)


@pytest.fixture(scope="module")
def nap(http: Http, accounts: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Account A's grain that sleeps event["s"] seconds; request timeout 3 s."""
    folder = tmp_path_factory.mktemp("nap")
    (folder / "workflow.json").write_text(json.dumps(NAP))
    (folder / "nap.py").write_text(NAP_CODE)
    name = f"nap-a{RUN}"
    raw_deploy(http, accounts["a"], folder, name, NAP_SETTINGS)
    yield name
    raw_remove(http, accounts["a"], name)


# --- every example, with the CLI and with raw HTTP ----------------------------------------------------------------


@pytest.mark.parametrize("example", list(CASES))
def test_example_deployed_with_the_cli_answers_through_the_cli(
    base: str, accounts: dict[str, str], cli_apps: dict[str, str], example: str
) -> None:
    value, check = CASES[example]
    p = sand(base, accounts["a"], "invoke", cli_apps[example], json.dumps(value), timeout=60)
    assert p.returncode == 0, p.stderr
    assert check(json.loads(p.stdout)), p.stdout
    execution_id = p.stderr.strip().rsplit(" ", 1)[1]
    assert len(execution_id) == 32
    status = sand(base, accounts["a"], "status", cli_apps[example], timeout=30)
    assert status.returncode == 0 and "status:  deployed" in status.stdout


@pytest.mark.parametrize("example", list(CASES))
def test_example_deployed_with_raw_http_answers_raw_http(http: Http, raw_apps: dict[str, str], example: str) -> None:
    value, check = CASES[example]
    r = http("POST", f"/app/{raw_apps[example]}", json_body=value)
    assert r.status_code == 200, r.text
    assert check(r.json()), r.text
    assert len(r.headers["X-Sand-Execution-Id"]) == 32


def test_webserver_serves_a_binary_file_from_thezip_bytes(http: Http, raw_apps: dict[str, str]) -> None:
    r = http("POST", f"/app/{raw_apps['webserver']}", json_body={"path": "/logo.png"})
    assert r.status_code == 200, r.text
    logo = (EXAMPLES / "webserver" / "site" / "logo.png").read_bytes()
    assert r.json()["content_type"] == "image/png" and base64.b64decode(r.json()["body_base64"]) == logo
    r = http("POST", f"/app/{raw_apps['webserver']}", json_body={"path": "/nope.bin"})
    assert r.status_code == 200 and r.json()["status"] == 404


def test_async_invoke_then_the_result_by_execution_id(
    base: str, http: Http, accounts: dict[str, str], cli_apps: dict[str, str]
) -> None:
    r = http("POST", f"/app/{cli_apps['hello']}?async=1", json_body={"name": "later"})
    assert r.status_code == 202, r.text
    execution_id = r.json()["execution_id"]
    assert r.headers["X-Sand-Execution-Id"] == execution_id
    deadline = time.monotonic() + 30
    while True:
        e = http("GET", f"/api/v1/executions/{execution_id}", accounts["a"]).json()
        if e["status"] != "running" or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert e["status"] == "succeeded", e
    assert e["result"] == {"greeting": "HELLO, LATER!", "execution_id": execution_id}
    assert e["timings"]["started"] and e["timings"]["finished"]
    p = sand(base, accounts["a"], "invoke", cli_apps["hello"], '{"name": "cli"}', "--async", timeout=30)
    assert p.returncode == 0 and len(p.stdout.strip()) == 32, p.stderr
    time.sleep(1)
    p = sand(base, accounts["a"], "execution", p.stdout.strip(), timeout=30)
    assert p.returncode == 0 and json.loads(p.stdout)["execution_id"], p.stderr


def test_an_end_user_fetches_an_async_result_with_no_key(
    http: Http, cli_apps: dict[str, str], raw_apps: dict[str, str]
) -> None:
    app = cli_apps["hello"]
    r = http("POST", f"/app/{app}?async=1", json_body={"name": "user"})
    assert r.status_code == 202, r.text
    execution_id = r.json()["execution_id"]
    deadline = time.monotonic() + 30
    while True:
        got = http("GET", f"/app/{app}/executions/{execution_id}")  # no API key
        if got.status_code != 202 or time.monotonic() > deadline:
            break
        assert got.json() == {"execution_id": execution_id, "status": "running"}
        time.sleep(0.2)
    assert got.status_code == 200, got.text
    assert got.json() == {"greeting": "HELLO, USER!", "execution_id": execution_id}, "what the synchronous call answers"
    assert got.headers["X-Sand-Execution-Id"] == execution_id
    # The id opens its own application's result only.
    other = http("GET", f"/app/{raw_apps['hello']}/executions/{execution_id}")
    assert other.status_code == 404 and error_code(other) == "not_found", other.text


def test_logs_by_execution_id(base: str, http: Http, accounts: dict[str, str], cli_apps: dict[str, str]) -> None:
    r = http("POST", f"/app/{cli_apps['hello']}", json_body={"name": "logs"})
    execution_id = r.headers["X-Sand-Execution-Id"]
    deadline = time.monotonic() + 20
    while True:  # the host agents store logs from LQ_HA reports, possibly after the answer
        logs = http("GET", f"/api/v1/executions/{execution_id}/logs", accounts["a"]).json()["logs"]
        if logs or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert any(line["grain"] == "greet" and line["text"] == "greeting logs" for line in logs), logs
    p = sand(base, accounts["a"], "logs", execution_id, timeout=30)
    assert p.returncode == 0 and "[greet] INFO: greeting logs" in p.stdout, p.stdout + p.stderr


def test_a_grain_error_is_a_500_with_the_error_event(
    base: str, http: Http, accounts: dict[str, str], raw_apps: dict[str, str]
) -> None:
    r = http("POST", f"/app/{raw_apps['virus-scan']}", json_body={"no": "email"})
    assert r.status_code == 500
    assert r.json()["error"]["grain"] == "receive" and r.json()["error"]["type"] == "ValueError"
    p = sand(base, accounts["b"], "invoke", raw_apps["virus-scan"], "{}", timeout=60)
    assert p.returncode == 1 and json.loads(p.stdout)["error"]["type"] == "ValueError"


def test_signup_and_login_with_the_cli(base: str, tmp_path: Path) -> None:
    p = sand(base, None, "signup", base, f"e2e-c-{RUN}", config=tmp_path)
    assert p.returncode == 0, p.stderr
    creds = tmp_path / "sand" / "credentials.json"
    assert oct(creds.stat().st_mode & 0o777) == "0o600"
    key = json.loads(creds.read_text())["api_key"]
    p = sand(base, None, "login", base, key, config=tmp_path)
    assert p.returncode == 0, p.stderr
    p = sand(base, None, "status", f"nothing-{RUN}", config=tmp_path)  # logged in from the file
    assert p.returncode == 1 and p.stderr.startswith("Error: no application"), p.stderr
    p = sand(base, None, "login", base, "sand_wrong", config=tmp_path / "other")
    assert p.returncode == 1 and "refused the API key" in p.stderr


# --- isolation between accounts -----------------------------------------------------------------------------------


def test_accounts_cannot_see_each_others_grains_apps_and_executions(
    http: Http, accounts: dict[str, str], cli_apps: dict[str, str]
) -> None:
    a, b = accounts["a"], accounts["b"]
    secret = f"secret-{RUN}"
    assert http(
        "PUT", f"/api/v1/grains/{secret}", a, data=b"def handle(e, c):\n    return 1\n", content_type="text/x-python"
    ).status_code in (200, 201)
    assert http("GET", f"/api/v1/grains/{secret}", a).status_code == 200
    assert b"return 1" in http("GET", f"/api/v1/grains/{secret}?code=1", a).content
    # Another account's resources answer 404, as for names nobody holds (docs/api.md).
    assert http("GET", f"/api/v1/grains/{secret}", b).status_code == 404
    assert http("DELETE", f"/api/v1/grains/{secret}", b).status_code == 404
    assert secret not in json.dumps(http("GET", "/api/v1/grains", b).json())
    hello = cli_apps["hello"]
    for method, path in (("GET", ""), ("POST", "/deploy"), ("POST", "/undeploy"), ("DELETE", "")):
        r = http(method, f"/api/v1/apps/{hello}{path}", b)
        assert r.status_code == 404 and error_code(r) == "not_found", (method, path, r.text)
    assert hello not in json.dumps(http("GET", "/api/v1/apps", b).json())
    r = http("PUT", f"/api/v1/apps/{hello}", b, json_body={"name": hello, "entry": "g", "functions": ONE_G})
    assert r.status_code == 409 and error_code(r) == "conflict"  # names are global
    execution_id = http("POST", f"/app/{hello}", json_body={}).headers["X-Sand-Execution-Id"]
    assert http("GET", f"/api/v1/executions/{execution_id}", a).status_code == 200
    assert http("GET", f"/api/v1/executions/{execution_id}", b).status_code == 404
    assert http("GET", f"/api/v1/executions/{execution_id}/logs", b).status_code == 404
    assert http("DELETE", f"/api/v1/grains/{secret}", a).status_code in (200, 204)


def test_accounts_do_not_share_data(http: Http, cli_apps: dict[str, str], raw_apps: dict[str, str]) -> None:
    word = "zebra" + RUN.translate(str.maketrans("0123456789", "ghijklmnop"))  # letters only: one word
    text = {"text": f"the {word} and the {word}"}
    first = [http("POST", f"/app/{cli_apps['wordcount']}", json_body=text).json() for _ in range(3)]
    assert [[word, 2 * n] in f["top_all"] for n, f in enumerate(first, 1)] == [True] * 3, first
    other = http("POST", f"/app/{raw_apps['wordcount']}", json_body=text).json()
    assert [word, 2] in other["top_all"], other  # B's application starts from its own, empty data


# --- errors -------------------------------------------------------------------------------------------------------


def test_400_malformed_json_and_bad_workflows(http: Http, accounts: dict[str, str], cli_apps: dict[str, str]) -> None:
    a = accounts["a"]
    r = http("POST", f"/app/{cli_apps['hello']}", data=b'{"name": ', content_type="application/json")
    assert r.status_code == 400 and error_code(r) == "bad_request", r.text
    r = http("PUT", f"/api/v1/apps/bad-{RUN}", a, data=b"{bad", content_type="application/json")
    assert r.status_code == 400, r.text
    r = http(
        "PUT",
        f"/api/v1/apps/bad-{RUN}",
        a,
        json_body={"name": "bad", "entry": "nope", "functions": [{"name": "g", "next": ["end"]}]},
    )
    assert r.status_code == 400 and "nope" in r.json()["error"]["message"], r.text
    r = http(
        "PUT",
        f"/api/v1/apps/bad-{RUN}",
        a,
        json_body={"name": "bad", "entry": "g", "functions": [{"name": "g", "next": ["ghost"]}]},
    )
    assert r.status_code == 400 and "ghost" in r.json()["error"]["message"], r.text
    r = http(
        "PUT",
        f"/api/v1/apps/missing-{RUN}",
        a,
        json_body={"name": "m", "entry": f"ghost{RUN}", "functions": [{"name": f"ghost{RUN}", "next": ["end"]}]},
    )
    assert r.status_code in (200, 201), r.text
    r = http("POST", f"/api/v1/apps/missing-{RUN}/deploy", a)
    assert r.status_code == 400 and f"ghost{RUN}" in r.json()["error"]["message"], r.text
    assert http("DELETE", f"/api/v1/apps/missing-{RUN}", a).status_code in (200, 204)
    r = http("POST", "/api/v1/accounts", json_body={"name": "Not A Name!"})
    assert r.status_code == 400


def test_401_without_or_with_an_unknown_key(http: Http) -> None:
    for key in (None, "sand_" + "0" * 48):
        for method, path in (
            ("GET", "/api/v1/apps"),
            ("GET", "/api/v1/grains"),
            ("PUT", "/api/v1/grains/x"),
            ("GET", "/api/v1/executions/x"),
        ):
            r = http(method, path, key, data=b"x" if method == "PUT" else None)
            assert r.status_code == 401 and error_code(r) == "unauthorized", (key, path, r.text)


def test_404_unknown_app_grain_execution(base: str, http: Http, accounts: dict[str, str]) -> None:
    a = accounts["a"]
    for method, path in (
        ("GET", f"/api/v1/apps/none-{RUN}"),
        ("POST", f"/app/none-{RUN}"),
        ("GET", f"/api/v1/grains/none-{RUN}"),
        ("DELETE", f"/api/v1/grains/none-{RUN}"),
        ("GET", f"/api/v1/executions/{'0' * 32}"),
        ("GET", f"/api/v1/executions/{'0' * 32}/logs"),
    ):
        r = http(method, path, a)
        assert r.status_code == 404 and error_code(r) == "not_found", (path, r.text)
    p = sand(base, a, "status", f"none-{RUN}", timeout=30)
    assert p.returncode == 1 and p.stderr.startswith(f"Error: no application 'none-{RUN}'"), p.stderr


def test_409_deleting_what_a_deployed_app_uses(http: Http, accounts: dict[str, str], cli_apps: dict[str, str]) -> None:
    r = http("DELETE", f"/api/v1/apps/{cli_apps['hello']}/grains/greet", accounts["a"])
    assert r.status_code == 409 and error_code(r) == "conflict", r.text
    r = http("DELETE", f"/api/v1/apps/{cli_apps['hello']}", accounts["a"])
    assert r.status_code == 409 and "undeploy" in r.json()["error"]["message"], r.text


def test_504_when_the_app_does_not_answer_in_its_request_timeout(
    base: str, http: Http, accounts: dict[str, str], nap: str
) -> None:
    r = http("POST", f"/app/{nap}", json_body={"s": 0})
    assert r.status_code == 200 and r.json() == {"slept": 0}
    started = time.monotonic()
    r = http("POST", f"/app/{nap}", json_body={"s": 6})
    assert r.status_code == 504 and error_code(r) == "timeout", r.text
    assert 2.5 < time.monotonic() - started < 6
    execution_id = r.headers["X-Sand-Execution-Id"]
    assert r.json()["error"]["execution_id"] == execution_id
    assert http("GET", f"/api/v1/executions/{execution_id}", accounts["a"]).json()["status"] in ("timeout", "running")
    p = sand(base, accounts["a"], "invoke", nap, '{"s": 6}', timeout=30)
    assert (
        p.returncode == 1
        and p.stderr.startswith(f"Error: application '{nap}' did not answer within 3 s")
        and "`sand logs " in p.stderr
    ), p.stderr


def test_429_above_the_per_account_concurrency_limit(http: Http, nap: str) -> None:
    # The limit is the cluster's (each live frontend admits its share): exceed it through the URL at once.
    n = MAX_CONCURRENT * max(1, len(FRONTEND_PORTS)) + 24
    statuses: list[int] = []
    go = threading.Barrier(n)

    def call() -> None:
        go.wait()
        try:
            statuses.append(requests.post(f"{http.base}/app/{nap}", json={"s": 2}, timeout=30).status_code)
        except requests.RequestException:
            statuses.append(-1)

    threads = [threading.Thread(target=call) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses.count(429) > 0, sorted(statuses)
    assert set(statuses) <= {200, 429, 504}, sorted(statuses)
    assert http("POST", f"/app/{nap}", json_body={"s": 0}).status_code == 200  # the slots are released


# --- deploy failure and undeploy ----------------------------------------------------------------------------------


def test_a_failing_pip_requirement_ends_failed_with_pips_message(
    base: str, http: Http, accounts: dict[str, str], tmp_path: Path
) -> None:
    # pip runs in a throw-away container and asks the package index, which has no such package.
    (tmp_path / "workflow.json").write_text(json.dumps({"name": "pip", "entry": "g", "functions": ONE_G}))
    (tmp_path / "g.py").write_text("def handle(e, c):\n    return e\n")
    (tmp_path / "requirements.txt").write_text(f"sand-e2e-missing-{RUN}==1.0\n")
    name = f"pip-a{RUN}"
    try:
        p = sand(base, accounts["a"], "deploy", str(tmp_path), "--name", name)
        assert p.returncode == 1, p.stdout + p.stderr
        assert f"Error: deploy of {name} failed: " in p.stderr
        assert "No matching distribution found" in p.stderr or "Could not find a version" in p.stderr, p.stderr
        app = http("GET", f"/api/v1/apps/{name}", accounts["a"]).json()
        assert app["status"] == "failed" and f"sand-e2e-missing-{RUN}" in app["error"], app
    finally:
        raw_remove(http, accounts["a"], name)


def test_deploying_a_modified_copy_under_another_name_never_changes_the_original(
    base: str, http: Http, accounts: dict[str, str], tmp_path: Path
) -> None:
    # The first wave's trap: grains were the account's, so the copy's `shout` became the original's at its next
    # deploy. Now each folder's grains are its application's own.
    import shutil

    original, copy = f"orig-a{RUN}", f"copy-a{RUN}"
    shutil.copytree(EXAMPLES / "hello", tmp_path / "copy")
    (tmp_path / "copy" / "shout.py").write_text("def handle(event, context):\n    return {'greeting': 'COPY'}\n")
    try:
        assert sand(base, accounts["a"], "deploy", str(EXAMPLES / "hello"), "--name", original).returncode == 0
        p = sand(base, accounts["a"], "deploy", str(tmp_path / "copy"), "--name", copy)
        assert p.returncode == 0, p.stderr
        assert sand(base, accounts["a"], "deploy", str(EXAMPLES / "hello"), "--name", original).returncode == 0
        assert http("POST", f"/app/{original}", json_body={"name": "x"}).json()["greeting"] == "HELLO, X!"
        assert http("POST", f"/app/{copy}", json_body={"name": "x"}).json() == {"greeting": "COPY"}
        grains = http("GET", f"/api/v1/apps/{original}", accounts["a"]).json()["grains"]
        assert [(g["name"], g["scope"], g["current"]) for g in grains] == [
            ("greet", "application", True),
            ("shout", "application", True),
        ], grains
        listed = sand(base, accounts["a"], "grains", copy)
        assert listed.returncode == 0 and "shout" in listed.stdout, listed.stdout + listed.stderr
    finally:
        raw_remove(http, accounts["a"], copy)
        raw_remove(http, accounts["a"], original)
    assert http("GET", f"/api/v1/apps/{copy}/grains", accounts["a"]).status_code == 404, "gone with the app"


@pytest.mark.parametrize(
    "code, reason",
    [
        ("def handle(e, c)\n    return e\n", "grain g failed to load: SyntaxError: expected ':' (g.py, line 1)"),
        ("import sys\n\nsys.exit(3)\n", "grain g failed to load: SystemExit: 3 (g.py, line 3)"),
        ("import os\nos._exit(4)\n", "grain worker g exited with code 4; 3 times in a row"),
        (
            "hog = bytearray(2048 * 1024 * 1024)\n",
            "grain worker g was killed for memory (the sandbox's limit is 512 MB: raise",
        ),
    ],
    ids=["syntax-error", "sys-exit", "os-exit", "memory"],
)
def test_a_deploy_that_cannot_come_up_ends_failed_at_once_with_why(
    base: str, http: Http, accounts: dict[str, str], tmp_path: Path, code: str, reason: str
) -> None:
    (tmp_path / "workflow.json").write_text(json.dumps({"name": "bad", "entry": "g", "functions": ONE_G}))
    (tmp_path / "g.py").write_text(code if "handle" in code else code + "def handle(e, c):\n    return e\n")
    name = f"bad-{zlib.crc32(code.encode()) % 10_000}-a{RUN}"
    try:
        t0 = time.monotonic()
        p = sand(base, accounts["a"], "deploy", str(tmp_path), "--name", name)
        took = time.monotonic() - t0
        assert p.returncode == 1, p.stdout + p.stderr
        assert f"Error: deploy of {name} failed: " in p.stderr and reason in p.stderr, p.stderr
        assert took < 45, f"not the workers timeout (60 s): {took:.1f} s"
        app = http("GET", f"/api/v1/apps/{name}", accounts["a"]).json()
        assert app["status"] == "failed" and reason in app["error"], app
        assert _sandboxes(app["id"]) == [], "its sandbox is removed"
    finally:
        raw_remove(http, accounts["a"], name)


def test_a_worker_that_crash_loops_after_its_deploy_shows_in_the_apps_status(
    http: Http, accounts: dict[str, str], tmp_path: Path
) -> None:
    # Its worker polls (so the deploy succeeds), then dies 2 s after every start.
    (tmp_path / "workflow.json").write_text(json.dumps({"name": "loop", "entry": "g", "functions": ONE_G}))
    (tmp_path / "g.py").write_text(
        "import os, threading\nthreading.Timer(2.0, lambda: os._exit(1)).start()\ndef handle(e, c):\n    return e\n"
    )
    name = f"loop-a{RUN}"
    try:
        app = raw_deploy(http, accounts["a"], tmp_path, name)
        deadline = time.monotonic() + 90
        while "times in a row" not in json.dumps(app) and time.monotonic() < deadline:
            time.sleep(1)
            app = http("GET", f"/api/v1/apps/{name}", accounts["a"]).json()
        assert app["status"] == "deployed", app
        assert "grain worker g exited with code 1" in app["error"] and "times in a row" in app["error"], app
        assert any("times in a row" in (h["error"] or "") for h in app["hosts"]), app
    finally:
        raw_remove(http, accounts["a"], name)


def _sandboxes(app_id: str) -> list[Any]:
    import docker

    client = docker.from_env()
    try:
        labelled = client.containers.list(all=True, filters={"label": f"sand.app={app_id}"})
        named = client.containers.list(all=True, filters={"name": f"sand-{app_id}-"})
        return labelled + [c for c in named if c.id not in {x.id for x in labelled}]
    finally:
        client.close()


# --- the operator ------------------------------------------------------------------------------------------------


def test_the_operator_sees_every_account_undeploys_any_app_and_disables_an_account(
    base: str, http: Http, accounts: dict[str, str]
) -> None:
    admin = (SAND_HOME / "admin-key").read_text().strip()
    assert (SAND_HOME / "admin-key").stat().st_mode & 0o777 == 0o600
    assert http("GET", "/api/v1/admin/apps").status_code == 401
    refused = http("GET", "/api/v1/admin/apps", accounts["a"])
    assert refused.status_code == 403 and error_code(refused) == "forbidden", refused.text
    name = f"ops-b{RUN}"
    p = sand(base, accounts["b"], "deploy", str(EXAMPLES / "hello"), "--name", name)
    assert p.returncode == 0, p.stderr
    env_free = {"SAND_ADMIN_KEY": admin}
    old = {k: os.environ.get(k) for k in env_free}
    os.environ.update(env_free)
    try:
        listed = sand(base, None, "admin", "--url", base, "apps", "--json")
        assert listed.returncode == 0, listed.stderr
        mine = [a for a in json.loads(listed.stdout) if a["name"] == name]
        assert mine and mine[0]["owner"] == f"e2e-b-{RUN}" and mine[0]["status"] == "deployed", mine
        hosts = sand(base, None, "admin", "--url", base, "hosts")
        assert hosts.returncode == 0 and f"{name}:deployed" in hosts.stdout, hosts.stdout + hosts.stderr
        u = sand(base, None, "admin", "--url", base, "undeploy", name)
        assert u.returncode == 0 and u.stdout.startswith(f"{name} (account e2e-b-{RUN}): "), u.stdout + u.stderr
        deadline = time.monotonic() + 60
        while http("GET", f"/api/v1/apps/{name}", accounts["b"]).json()["status"] != "undeployed":
            assert time.monotonic() < deadline, "the operator's undeploy did not end"
            time.sleep(0.5)
        victim = f"e2e-ops-{RUN}"
        key = http("POST", "/api/v1/accounts", json_body={"name": victim}).json()["api_key"]
        d = sand(base, None, "admin", "--url", base, "disable", victim, "--reason", "abuse, ticket 7")
        assert d.returncode == 0, d.stderr
        assert d.stdout == f"account {victim}: disabled (abuse, ticket 7); undeployed: none\n"
        for _ in range(4):  # both frontends, whichever nginx picks
            r = http("GET", "/api/v1/apps", key)
            assert r.status_code == 403 and error_code(r) == "account_disabled", r.text
            assert "abuse, ticket 7" in r.json()["error"]["message"]
        assert http("GET", "/api/v1/apps", accounts["a"]).status_code == 200, "another account is not touched"
        assert sand(base, None, "admin", "--url", base, "enable", victim).returncode == 0
        missing = sand(base, None, "admin", "--url", base, "disable", f"nobody-{RUN}")
        assert missing.returncode == 1 and f"no account 'nobody-{RUN}'" in missing.stderr, missing.stderr
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        raw_remove(http, accounts["b"], name)


def test_a_developer_deletes_their_account_once_nothing_runs(base: str, http: Http, tmp_path: Path) -> None:
    name = f"leaver-{RUN}"
    key = http("POST", "/api/v1/accounts", json_body={"name": name}).json()["api_key"]
    app = f"leave-{RUN}"
    assert sand(base, key, "deploy", str(EXAMPLES / "hello"), "--name", app).returncode == 0
    p = sand(base, key, "account", "delete", name, config=tmp_path)
    assert p.returncode == 1 and f"still runs {app}" in p.stderr, p.stderr
    assert sand(base, key, "undeploy", app, timeout=120).returncode == 0
    p = sand(base, key, "account", "delete", name, config=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout == f"account {name}: deleted, with its applications ({app}) and grains\n"
    assert http("POST", f"/app/{app}", json_body={}).status_code == 404, "its application is gone"
    # the name is held while a frontend may still remember the old key (docs/security.md, "API keys of deleted
    # accounts"): a newcomer of that name would otherwise be reachable with it
    again = http("POST", "/api/v1/accounts", json_body={"name": name})
    assert again.status_code == 409 and error_code(again) == "conflict", again.text
    assert "free again at" in again.json()["error"]["message"], again.text
    wait = int(again.headers["Retry-After"])
    assert 0 < wait <= 121 and again.json()["error"]["retry_after_s"] == str(wait), again.text


def _worker_pids(container: Any) -> dict[str, str]:
    """grain -> host pid of the sandbox's grain workers: the supervisor's children naming a grain (their own children,
    the standby and the grain instances, carry the same command line)."""
    procs = container.top(ps_args="-eo pid,ppid,args")["Processes"]
    supervisor = next(p[0] for p in procs if "grainworker.supervisor" in p[2])
    return {p[2].split("--grain ")[1].split()[0]: p[0] for p in procs if "--grain " in p[2] and p[1] == supervisor}


def test_sand_update_swaps_one_grains_code_in_the_running_sandbox(
    base: str, http: Http, accounts: dict[str, str], tmp_path: Path
) -> None:
    import shutil

    name = f"upd-a{RUN}"
    folder = tmp_path / "hello"
    shutil.copytree(EXAMPLES / "hello", folder)
    try:
        assert sand(base, accounts["a"], "deploy", str(folder), "--name", name).returncode == 0
        app = http("GET", f"/api/v1/apps/{name}", accounts["a"]).json()
        [box] = _sandboxes(app["id"])
        before = _worker_pids(box)
        (folder / "greet.py").write_text("def handle(event, context):\n    return {'greeting': 'bonjour'}\n")
        p = sand(base, accounts["a"], "update", name, "greet", "--dir", str(folder), timeout=120)
        assert p.returncode == 0, p.stdout + p.stderr
        assert f"{name}: greet updated on " in p.stdout, p.stdout
        assert http("POST", f"/app/{name}", json_body={"name": "x"}).json()["greeting"] == "BONJOUR!"
        [same] = _sandboxes(app["id"])
        after = _worker_pids(same)
        assert same.id == box.id, "no new sandbox"
        assert after["greet"] != before["greet"] and after["shout"] == before["shout"], (before, after)
        grains = http("GET", f"/api/v1/apps/{name}", accounts["a"]).json()["grains"]
        assert [(g["name"], g["version"], g["current"]) for g in grains] == [("greet", 2, True), ("shout", 1, True)]

        # New code that does not load: the update fails with why, and the previous code answers on.
        (folder / "greet.py").write_text("import no_such_module_sand\ndef handle(event, context):\n    return 1\n")
        p = sand(base, accounts["a"], "update", name, "greet", "--dir", str(folder), timeout=120)
        assert p.returncode == 1, p.stdout + p.stderr
        assert (
            f"Error: update of {name} failed: " in p.stderr
            and "grain greet failed to load: ModuleNotFoundError: "
            "No module named 'no_such_module_sand' (greet.py, line 1)"
            in p.stderr
            and "run their previous code here" in p.stderr
        ), p.stderr
        assert http("POST", f"/app/{name}", json_body={"name": "x"}).json()["greeting"] == "BONJOUR!"
        assert [c.id for c in _sandboxes(app["id"])] == [box.id]

        # A grain the workflow does not have, an application not deployed: clear errors, nothing sent or changed.
        p = sand(base, accounts["a"], "update", name, "nope", "--dir", str(folder), timeout=30)
        assert p.returncode == 1 and "the workflow has no grain 'nope'" in p.stderr, p.stderr
        assert sand(base, accounts["a"], "undeploy", name, timeout=120).returncode == 0
        r = http("POST", f"/api/v1/apps/{name}/update", accounts["a"], json_body={"grains": ["greet"]})
        assert r.status_code == 409 and "not deployed" in r.json()["error"]["message"], r.text
    finally:
        raw_remove(http, accounts["a"], name)


def test_undeploy_removes_the_sandbox(base: str, http: Http, accounts: dict[str, str]) -> None:
    name = f"gone-a{RUN}"
    p = sand(base, accounts["a"], "deploy", str(EXAMPLES / "hello"), "--name", name)
    assert p.returncode == 0, p.stderr
    app = http("GET", f"/api/v1/apps/{name}", accounts["a"]).json()
    assert app["hosts"] and all(h["status"] == "deployed" for h in app["hosts"]), app
    running = _sandboxes(app["id"])
    assert len(running) == len(app["hosts"]) and all(c.status == "running" for c in running), running
    p = sand(base, accounts["a"], "undeploy", name, "--delete", timeout=120)
    assert p.returncode == 0 and p.stdout == f"{name}: undeployed and deleted\n", p.stderr
    assert _sandboxes(app["id"]) == []
    assert http("GET", f"/api/v1/apps/{name}", accounts["a"]).status_code == 404
    assert http("POST", f"/app/{name}", json_body={}).status_code == 404


# --- several frontends behind nginx -------------------------------------------------------------------------------


def _served_by(http: Http, key: str, app: str, calls: int, lost: int = 0) -> list[str]:
    """The frontends that took `calls` invocations in a row (each execution records its frontend). The
    invocations go first: alternating them with the GETs would hand every POST to the same frontend.
    Up to `lost` calls may answer 502 (nginx does not retry a POST it already sent)."""
    ids = []
    while len(ids) < calls:
        r = http("POST", f"/app/{app}", json_body={"name": "lb"})
        if r.status_code == 502 and lost > 0:
            lost -= 1
            continue
        assert r.status_code == 200, r.text
        ids.append(r.headers["X-Sand-Execution-Id"])
    return [http("GET", f"/api/v1/executions/{i}", key).json()["frontend"] for i in ids]


def test_two_frontends_both_serve_and_nginx_survives_one_dying(
    http: Http, accounts: dict[str, str], cli_apps: dict[str, str]
) -> None:
    a, hello = accounts["a"], cli_apps["hello"]
    pid_dir = Path(os.environ.get("SAND_E2E_PID_DIR", SAND_HOME / "run"))
    pid_files = [pid_dir / f"frontend-{port}.pid" for port in FRONTEND_PORTS]
    if len(pid_files) < 2 or not all(f.is_file() for f in pid_files):
        pytest.skip(f"needs two frontends started by `make up` (pid files {[str(f) for f in pid_files]})")
    restart = shlex.split(os.environ.get("SAND_E2E_FRONTEND_RESTART", "deploy/frontend.sh start"))
    if not (ROOT / restart[0]).is_file() and not Path(restart[0]).is_file():
        pytest.skip(f"cannot restart a frontend after killing it: {restart[0]} is missing")
    _until_both_serve(http, a, hello)  # round robin over both
    victim = int(pid_files[0].read_text().strip())
    try:
        os.killpg(victim, signal.SIGKILL)
    except ProcessLookupError:
        os.kill(victim, signal.SIGKILL)
    try:
        # The one call nginx had already sent on a kept-alive connection to the killed frontend is lost
        # (502); after that nginx leaves it out and every call is served.
        survivors = _served_by(http, a, hello, 8, lost=1)
        assert len(set(survivors)) == 1, survivors
    finally:
        subprocess.run(restart, cwd=ROOT, check=True, timeout=180)
    _until_both_serve(http, a, hello)


def _until_both_serve(http: Http, key: str, app: str, timeout: float = 60) -> None:
    # nginx leaves a frontend out for fail_timeout (10 s) after an error on it (e.g. an earlier test's).
    deadline = time.monotonic() + timeout
    while len(set(_served_by(http, key, app, 6))) < 2:
        assert time.monotonic() < deadline, "nginx does not hand calls to both frontends"
        time.sleep(1)


# Last: while a frontend refuses an oversized body before reading it, nginx may see a broken pipe,
# answer 502 and leave that frontend out for 10 s (fail_timeout), which would fail the tests after it.
def test_413_too_large(http: Http, accounts: dict[str, str], cli_apps: dict[str, str]) -> None:
    big = b'"' + b"x" * MAX_BODY + b'"'
    r = http("POST", f"/app/{cli_apps['hello']}", data=big, content_type="application/json")
    assert r.status_code == 413 and error_code(r) == "too_large", r.text[:300]
    r = http("PUT", f"/api/v1/grains/big-{RUN}", accounts["a"], data=big, content_type="text/x-python")
    assert r.status_code == 413, r.text[:300]
