"""The `sand` CLI against a fake REST API (http.server in a thread) that records every request: what
each command sends (method, path, headers, body, zip contents), what it prints and its exit code."""

from __future__ import annotations

import io
import json
import stat
import threading
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from sandclient import client as sand_client
from sandclient.cli import main as sand

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class FakeApi:
    """Answers scripted responses per (method, path); the last response of a route repeats."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.routes: dict[tuple[str, str], list[tuple[int, Any, dict[str, str]]]] = {}
        self.url = ""

    def on(self, method: str, path: str, status: int = 200, body: Any = None, headers: dict | None = None) -> None:
        self.routes.setdefault((method, path), []).append((status, body, headers or {}))

    def answer(self, req: Request) -> tuple[int, Any, dict[str, str]]:
        self.requests.append(req)
        queue = self.routes.get((req.method, req.path))
        if not queue:
            return 404, {"error": {"code": "not_found", "message": f"fake: no route {req.method} {req.path}"}}, {}
        return queue.pop(0) if len(queue) > 1 else queue[0]

    def calls(self) -> list[str]:
        return [f"{r.method} {r.path}" for r in self.requests]


def _handler(api: FakeApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _any(self) -> None:
            url = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            req = Request(
                self.command, url.path, parse_qs(url.query), dict(self.headers.items()), self.rfile.read(length)
            )
            status, body, headers = api.answer(req)
            raw = body.encode() if isinstance(body, str) else json.dumps(body).encode() if body is not None else b""
            self.send_response(status)
            self.send_header("Content-Type", "text/html" if isinstance(body, str) else "application/json")
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        do_GET = do_PUT = do_POST = do_DELETE = _any  # noqa: N815

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApi]:
    fake = FakeApi()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("SAND_URL", raising=False)
    monkeypatch.delenv("SAND_API_KEY", raising=False)
    monkeypatch.delenv("SAND_ADMIN_KEY", raising=False)
    monkeypatch.setattr(sand_client, "POLL_S", 0.01)
    yield fake
    server.shutdown()
    server.server_close()


@pytest.fixture
def logged_in(api: FakeApi, monkeypatch: pytest.MonkeyPatch) -> FakeApi:
    monkeypatch.setenv("SAND_URL", api.url)
    monkeypatch.setenv("SAND_API_KEY", "key-a")
    return api


def creds_file(tmp_path: Path) -> Path:
    return tmp_path / "config" / "sand" / "credentials.json"


# --- accounts ---------------------------------------------------------------------------------------------------


def test_signup_stores_the_key_readable_by_the_owner_only(api: FakeApi, tmp_path: Path, capsys) -> None:
    api.on("POST", "/api/v1/accounts", 201, {"name": "alice", "api_key": "sk-alice"})
    assert sand(["signup", api.url + "/", "alice"]) == 0
    [req] = api.requests
    assert req.json() == {"name": "alice"} and "Authorization" not in req.headers
    assert req.headers["Content-Type"] == "application/json"
    f = creds_file(tmp_path)
    assert json.loads(f.read_text()) == {"url": api.url, "api_key": "sk-alice"}
    assert stat.S_IMODE(f.stat().st_mode) == 0o600 and stat.S_IMODE(f.parent.stat().st_mode) == 0o700
    out = capsys.readouterr().out
    assert "Account alice created" in out and "API key: sk-alice" in out


def test_signup_with_admin_key_and_a_taken_name(api: FakeApi, capsys) -> None:
    api.on("POST", "/api/v1/accounts", 409, {"error": {"code": "conflict", "message": "account alice exists"}})
    assert sand(["signup", api.url, "alice", "--admin-key", "adm"]) == 1
    assert api.requests[0].headers["Authorization"] == "Bearer adm"
    assert capsys.readouterr().err == "Error: account alice exists\n"


def test_login_checks_the_key_then_stores_it(api: FakeApi, tmp_path: Path, capsys) -> None:
    api.on("GET", "/api/v1/apps", 200, {"apps": []})
    creds_file(tmp_path).parent.mkdir(parents=True)
    creds_file(tmp_path).write_text("{}")
    creds_file(tmp_path).chmod(0o644)  # an older, too open file gets 0600 too
    assert sand(["login", api.url, "sk-1"]) == 0
    assert api.requests[0].headers["Authorization"] == "Bearer sk-1"
    assert json.loads(creds_file(tmp_path).read_text()) == {"url": api.url, "api_key": "sk-1"}
    assert stat.S_IMODE(creds_file(tmp_path).stat().st_mode) == 0o600
    assert "Logged in to" in capsys.readouterr().out


def test_login_refused_key_is_not_stored(api: FakeApi, tmp_path: Path, capsys) -> None:
    api.on("GET", "/api/v1/apps", 401, {"error": {"code": "unauthorized", "message": "unknown API key"}})
    assert sand(["login", api.url, "wrong"]) == 1
    assert not creds_file(tmp_path).exists()
    assert capsys.readouterr().err == (
        f"Error: {api.url} refused the API key: unknown API key; create an account "
        f"with `sand signup {api.url} <name>` or check the key\n"
    )


def test_env_overrides_the_stored_login(api: FakeApi, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    api.on("GET", "/api/v1/apps", 200, [])
    api.on("GET", "/api/v1/apps/hello", 200, {"name": "hello", "status": "undeployed"})
    assert sand(["login", "http://127.0.0.1:9/", "stored-key"]) == 1  # unreachable: nothing stored
    assert "cannot reach http://127.0.0.1:9" in capsys.readouterr().err
    assert sand(["login", api.url, "stored-key"]) == 0
    assert sand(["status", "hello"]) == 0
    assert api.requests[-1].headers["Authorization"] == "Bearer stored-key"
    monkeypatch.setenv("SAND_API_KEY", "env-key")
    assert sand(["status", "hello"]) == 0
    assert api.requests[-1].headers["Authorization"] == "Bearer env-key"


def test_not_logged_in(api: FakeApi, capsys) -> None:
    assert sand(["status", "hello"]) == 1
    assert "Error: not logged in: run `sand login" in capsys.readouterr().err
    assert api.requests == []


# --- deploy -----------------------------------------------------------------------------------------------------


def _deployable(api: FakeApi, app: str, grains: list[str], final: dict[str, Any] | None = None) -> None:
    for g in grains:
        api.on("PUT", f"/api/v1/apps/{app}/grains/{g}", 200, {"name": g, "version": 3, "sha256": "x", "size": 1})
    api.on("PUT", f"/api/v1/apps/{app}", 200, {"name": app})
    api.on("POST", f"/api/v1/apps/{app}/deploy", 202, {"name": app, "status": "deploying", "version": 2})
    api.on("GET", f"/api/v1/apps/{app}", 200, {"name": app, "status": "deployed", "version": 1})  # the old one
    api.on(
        "GET",
        f"/api/v1/apps/{app}",
        200,
        {"name": app, "status": "deploying", "version": 2, "hosts": [{"host": "h1", "status": "deploying"}]},
    )
    api.on(
        "GET",
        f"/api/v1/apps/{app}",
        200,
        final or {"name": app, "status": "deployed", "version": 2, "hosts": [{"host": "h1", "status": "deployed"}]},
    )


def test_deploy_hello_uploads_each_grain_as_python(logged_in: FakeApi, capsys) -> None:
    api = logged_in
    _deployable(api, "hello", ["greet", "shout"])
    assert sand(["deploy", str(EXAMPLES / "hello")]) == 0
    # the workflow first (it claims the name), then each grain as one of the application's own
    assert (
        api.calls()
        == [
            "PUT /api/v1/apps/hello",
            "PUT /api/v1/apps/hello/grains/greet",
            "PUT /api/v1/apps/hello/grains/shout",
            "POST /api/v1/apps/hello/deploy",
        ]
        + ["GET /api/v1/apps/hello"] * 3
    )
    app, greet, shout = api.requests[:3]
    assert greet.headers["Content-Type"] == "text/x-python"
    assert greet.body == (EXAMPLES / "hello" / "greet.py").read_bytes()
    assert shout.body == (EXAMPLES / "hello" / "shout.py").read_bytes()
    assert app.headers["Content-Type"] == "application/json"
    assert app.json() == json.loads((EXAMPLES / "hello" / "workflow.json").read_text())
    assert all(r.headers["Authorization"] == "Bearer key-a" for r in api.requests)
    out, err = capsys.readouterr()
    assert "hello: deployed on h1 (version 2)" in out
    assert "grain greet: version 3 (greet.py" in err
    assert "hello: deploying (0/1 hosts)\nhello: deployed (1/1 hosts)\n" in err


def _updatable(api: FakeApi, final: dict[str, Any]) -> None:
    api.on("PUT", "/api/v1/apps/hello/grains/greet", 200, {"name": "greet", "version": 4, "sha256": "x", "size": 1})
    api.on("POST", "/api/v1/apps/hello/update", 200, {"name": "hello", "dry_run": True, "accepted": True})
    api.on("POST", "/api/v1/apps/hello/update", 202, {"name": "hello", "status": "deploying", "version": 3})
    api.on(
        "GET",
        "/api/v1/apps/hello",
        200,
        {"name": "hello", "status": "deploying", "version": 3, "hosts": [{"host": "h1", "status": "deploying"}]},
    )
    api.on("GET", "/api/v1/apps/hello", 200, final)


def test_update_uploads_only_the_grain_and_asks_for_its_swap(logged_in: FakeApi, capsys) -> None:
    api = logged_in
    _updatable(
        api, {"name": "hello", "status": "deployed", "version": 3, "hosts": [{"host": "h1", "status": "deployed"}]}
    )
    assert sand(["update", "hello", "greet", "--dir", str(EXAMPLES / "hello")]) == 0
    assert api.calls() == [
        "POST /api/v1/apps/hello/update",
        "PUT /api/v1/apps/hello/grains/greet",
        "POST /api/v1/apps/hello/update",
        "GET /api/v1/apps/hello",
        "GET /api/v1/apps/hello",
    ]
    assert api.requests[0].json() == {"grains": ["greet"], "dry_run": True, "requirements": {"greet": ""}}
    assert api.requests[1].body == (EXAMPLES / "hello" / "greet.py").read_bytes()
    assert api.requests[2].json() == {"grains": ["greet"]}
    assert "hello: greet updated on h1 (version 3)" in capsys.readouterr().out


def test_update_the_platform_would_refuse_uploads_nothing(logged_in: FakeApi, capsys) -> None:
    why = "the requirements of grain [greet] changed: they are installed with a new sandbox; deploy the application"
    logged_in.on("POST", "/api/v1/apps/hello/update", 409, {"error": {"code": "conflict", "message": why}})
    assert sand(["update", "hello", "greet", "--dir", str(EXAMPLES / "hello")]) == 1
    assert logged_in.calls() == ["POST /api/v1/apps/hello/update"]
    assert why in capsys.readouterr().err


def test_update_whose_code_does_not_load_fails_with_the_hosts_reason(logged_in: FakeApi, capsys) -> None:
    api = logged_in
    why = (
        "the update to version 3 failed: grain greet failed to load: NameError: name 'x' is not defined "
        "(greet.py, line 1); grain(s) [greet] run their previous code here"
    )
    _updatable(
        api,
        {
            "name": "hello",
            "status": "deployed",
            "version": 3,
            "error": f"h1: {why}",
            "hosts": [{"host": "h1", "status": "deployed", "error": why}],
        },
    )
    assert sand(["update", "hello", "greet", "--dir", str(EXAMPLES / "hello")]) == 1
    assert capsys.readouterr().err.endswith(f"Error: update of hello failed: h1: {why}\n")


def test_update_of_a_grain_the_workflow_does_not_have_sends_nothing(logged_in: FakeApi, capsys) -> None:
    assert sand(["update", "hello", "nope", "--dir", str(EXAMPLES / "hello")]) == 1
    assert logged_in.calls() == []
    assert "the workflow has no grain 'nope' (its grains: greet, shout)" in capsys.readouterr().err


def _zip_names(body: bytes) -> list[str]:
    return sorted(zipfile.ZipFile(io.BytesIO(body)).namelist())


def test_deploy_webserver_ships_the_site_in_the_entry_grains_zip(logged_in: FakeApi) -> None:
    api = logged_in
    _deployable(api, "webserver", ["parse", "serve_text", "serve_binary", "not_found"])
    assert sand(["deploy", str(EXAMPLES / "webserver")]) == 0
    uploads = {r.path.rsplit("/", 1)[1]: r for r in api.requests if r.path.startswith("/api/v1/apps/webserver/grains/")}
    assert list(uploads) == ["parse", "not_found", "serve_binary", "serve_text"]  # entry first
    parse = uploads["parse"]
    assert parse.headers["Content-Type"] == "application/zip"
    assert _zip_names(parse.body) == ["parse.py", "site/index.html", "site/logo.png", "site/style.css"]
    logo = zipfile.ZipFile(io.BytesIO(parse.body)).read("site/logo.png")
    assert logo == (EXAMPLES / "webserver" / "site" / "logo.png").read_bytes()
    # Every zip unpacks into one code folder on a host: a shared file may come from one resource only.
    assert {r.headers["Content-Type"] for n, r in uploads.items() if n != "parse"} == {"text/x-python"}


def test_deploy_wordcount_and_a_package_grain(logged_in: FakeApi, tmp_path: Path) -> None:
    api = logged_in
    _deployable(api, "wordcount", ["identify_language", "clean", "count"])
    assert sand(["deploy", str(EXAMPLES / "wordcount")]) == 0
    assert api.calls()[:2] == ["PUT /api/v1/apps/wordcount", "PUT /api/v1/apps/wordcount/grains/identify_language"]
    first = api.requests[1]
    assert _zip_names(first.body) == ["identify_language.py", "stopwords.py"]
    app = tmp_path / "pkg"
    (app / "tool").mkdir(parents=True)
    (app / "workflow.json").write_text(
        '{"name": "pkg", "entry": "tool", "functions": [{"name": "tool", "next": ["end"]}]}'
    )
    (app / "tool" / "__init__.py").write_text("def handle(e, c):\n    return e\n")
    (app / "tool" / "__pycache__").mkdir()
    (app / "tool" / "__pycache__" / "x.pyc").write_bytes(b"junk")
    (app / "README.md").write_text("not uploaded")
    _deployable(api, "pkg", ["tool"])
    assert sand(["deploy", str(app)]) == 0
    tool = next(r for r in api.requests if r.path == "/api/v1/apps/pkg/grains/tool")
    assert tool.headers["Content-Type"] == "application/zip" and _zip_names(tool.body) == ["tool/__init__.py"]


def _failing_app(tmp_path: Path) -> Path:
    app = tmp_path / "needs"
    app.mkdir()
    (app / "workflow.json").write_text(
        '{"name": "needs", "entry": "a", "functions": [{"name": "a", "next": ["b"]}, {"name": "b", "next": ["end"]}]}'
    )
    (app / "a.py").write_text("import helper\ndef handle(e, c):\n    return helper.f(e)\n")
    (app / "b.py").write_text("def handle(e, c):\n    return e\n")
    (app / "helper.py").write_text("def f(x):\n    return x\n")
    (app / "requirements.txt").write_text("no-such-package-sand==9.9\n")
    return app


def test_deploy_requirements_zip_and_failed_status_prints_pips_error(
    logged_in: FakeApi, tmp_path: Path, capsys
) -> None:
    api = logged_in
    pip = "h1: pip failed: ERROR: No matching distribution found for no-such-package-sand==9.9"
    _deployable(
        api,
        "needs",
        ["a", "b"],
        {
            "name": "needs",
            "status": "failed",
            "version": 2,
            "error": pip,
            "hosts": [{"host": "h1", "status": "failed", "error": pip}],
        },
    )
    assert sand(["deploy", str(_failing_app(tmp_path))]) == 1
    a, b = api.requests[1:3]
    assert (a.path, b.path) == ("/api/v1/apps/needs/grains/a", "/api/v1/apps/needs/grains/b")
    assert _zip_names(a.body) == ["a.py", "helper.py", "requirements.txt"]
    assert zipfile.ZipFile(io.BytesIO(a.body)).read("requirements.txt") == b"no-such-package-sand==9.9\n"
    assert b.headers["Content-Type"] == "text/x-python"
    assert capsys.readouterr().err.endswith(f"Error: deploy of needs failed: {pip}\n")


def test_deploy_zips_are_reproducible(logged_in: FakeApi, tmp_path: Path) -> None:
    api = logged_in
    app = _failing_app(tmp_path)
    _deployable(api, "needs", ["a", "b"])
    assert sand(["deploy", str(app), "--no-wait"]) == 0
    assert sand(["deploy", str(app), "--no-wait"]) == 0
    zips = [r.body for r in api.requests if r.path == "/api/v1/apps/needs/grains/a"]
    assert len(zips) == 2 and zips[0] == zips[1]


def test_deploy_under_another_name_with_settings(logged_in: FakeApi, tmp_path: Path) -> None:
    api = logged_in
    (tmp_path / "s.json").write_text('{"timeout_s": 5}')
    _deployable(api, "hello-2", ["greet", "shout"])
    assert (
        sand(
            [
                "deploy",
                str(EXAMPLES / "hello"),
                "--name",
                "hello-2",
                "--settings",
                "@" + str(tmp_path / "s.json"),
                "--no-wait",
            ]
        )
        == 0
    )
    put = next(r for r in api.requests if r.method == "PUT" and r.path == "/api/v1/apps/hello-2")
    assert put.json()["name"] == "hello-2" and put.json()["settings"] == {"timeout_s": 5}
    assert api.calls()[:3] == [
        "PUT /api/v1/apps/hello-2",
        "PUT /api/v1/apps/hello-2/grains/greet",
        "PUT /api/v1/apps/hello-2/grains/shout",
    ]  # the grains are hello-2's own
    assert api.calls()[-1] == "POST /api/v1/apps/hello-2/deploy"


def test_deploy_of_a_name_another_account_holds_suggests_another(logged_in: FakeApi, capsys) -> None:
    api = logged_in
    for g in ("greet", "shout"):
        api.on("PUT", f"/api/v1/apps/hello/grains/{g}", 200, {"name": g, "version": 1})
    api.on("PUT", "/api/v1/apps/hello", 409, {"error": {"code": "conflict", "message": "hello is taken"}})
    assert sand(["deploy", str(EXAMPLES / "hello")]) == 1
    assert capsys.readouterr().err.endswith(
        f"Error: hello is taken; deploy under another name with `sand deploy {EXAMPLES / 'hello'} --name <name>`\n"
    )
    assert api.calls() == ["PUT /api/v1/apps/hello"]  # refused first: no grain is uploaded


def test_deploy_gives_up_after_the_timeout(logged_in: FakeApi, capsys) -> None:
    api = logged_in
    _deployable(api, "hello", ["greet", "shout"], {"name": "hello", "status": "deploying", "version": 2})
    assert sand(["deploy", str(EXAMPLES / "hello"), "--timeout", "0.2"]) == 1
    assert "Error: hello is still deploying after 0.2s" in capsys.readouterr().err


def test_deploy_checks_the_folder_before_sending_anything(logged_in: FakeApi, tmp_path: Path, capsys) -> None:
    assert sand(["deploy", str(tmp_path)]) == 1
    assert "workflow.json is missing" in capsys.readouterr().err
    (tmp_path / "workflow.json").write_text(
        '{"name": "x", "entry": "g", "functions": [{"name": "g", "next": ["end"]}]}'
    )
    assert sand(["deploy", str(tmp_path)]) == 1
    assert "grain(s) g run code 'g' but neither" in capsys.readouterr().err
    (tmp_path / "workflow.json").write_text('{"name": "x", "entry": "nope", "functions": [{"name": "g"}]}')
    assert sand(["deploy", str(tmp_path)]) == 1
    assert "entry 'nope' is not a grain" in capsys.readouterr().err
    assert logged_in.requests == []


def test_deploy_reports_the_apis_refusal(logged_in: FakeApi, capsys) -> None:
    api = logged_in
    api.on("PUT", "/api/v1/apps/hello", 200, {"name": "hello"})
    api.on(
        "PUT",
        "/api/v1/apps/hello/grains/greet",
        413,
        {"error": {"code": "too_large", "message": "body over 10485760 bytes"}},
    )
    assert sand(["deploy", str(EXAMPLES / "hello")]) == 1
    assert capsys.readouterr().err == "Error: body over 10485760 bytes\n"
    assert api.calls() == ["PUT /api/v1/apps/hello", "PUT /api/v1/apps/hello/grains/greet"]  # then no more


# --- invoke -----------------------------------------------------------------------------------------------------


def test_invoke_prints_the_output_and_the_execution_id(logged_in: FakeApi, capsys) -> None:
    api = logged_in
    api.on("POST", "/app/hello", 200, {"greeting": "HELLO, SAND!"}, {"X-Sand-Execution-Id": "e1"})
    assert sand(["invoke", "hello", '{"name": "sand"}']) == 0
    [req] = api.requests
    assert req.json() == {"name": "sand"} and req.headers["Content-Type"] == "application/json"
    assert req.query == {}
    out, err = capsys.readouterr()
    assert json.loads(out) == {"greeting": "HELLO, SAND!"} and err == "execution id: e1\n"


def test_invoke_input_from_a_file_and_none(logged_in: FakeApi, tmp_path: Path, capsys) -> None:
    api = logged_in
    api.on("POST", "/app/hello", 200, {"ok": True}, {"X-Sand-Execution-Id": "e1"})
    (tmp_path / "in.json").write_text('[1, 2, {"a": null}]')
    assert sand(["invoke", "hello", "@" + str(tmp_path / "in.json")]) == 0
    assert sand(["invoke", "hello"]) == 0
    assert api.requests[0].json() == [1, 2, {"a": None}] and api.requests[1].body == b""


def test_invoke_bad_json_input_sends_nothing(logged_in: FakeApi, tmp_path: Path, capsys) -> None:
    assert sand(["invoke", "hello", "{bad"]) == 1
    assert capsys.readouterr().err.startswith("Error: the input is not valid JSON: Expecting property name")
    (tmp_path / "bad.json").write_text("[1,")
    assert sand(["invoke", "hello", "@" + str(tmp_path / "bad.json")]) == 1
    assert f"Error: {tmp_path / 'bad.json'} is not valid JSON" in capsys.readouterr().err
    assert sand(["invoke", "hello", "@" + str(tmp_path / "missing.json")]) == 1
    assert "No such file" in capsys.readouterr().err
    assert logged_in.requests == []


def test_invoke_grain_error_event_exits_1(logged_in: FakeApi, capsys) -> None:
    event = {"error": {"type": "ZeroDivisionError", "message": "division by zero", "grain": "g"}}
    logged_in.on("POST", "/app/err", 500, event, {"X-Sand-Execution-Id": "e9"})
    assert sand(["invoke", "err", "{}"]) == 1
    out, err = capsys.readouterr()
    assert json.loads(out) == event and "execution id: e9" in err


def test_invoke_platform_500_is_an_error_message(logged_in: FakeApi, capsys) -> None:
    logged_in.on("POST", "/app/x", 500, {"error": {"code": "internal", "message": "Kafka is down"}})
    assert sand(["invoke", "x", "{}"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == "Error: Kafka is down (HTTP 500)\n"


def test_invoke_async_prints_the_execution_id(logged_in: FakeApi, capsys) -> None:
    logged_in.on("POST", "/app/hello", 202, {"execution_id": "e2"})
    assert sand(["invoke", "hello", "{}", "--async"]) == 0
    assert logged_in.requests[0].query == {"async": ["1"]}
    assert capsys.readouterr().out == "e2\n"


def test_invoke_timeout_names_the_execution(logged_in: FakeApi, capsys) -> None:
    message = "application 'slow' did not answer within 2 s; the result, if it comes, is at GET /api/v1/executions/e3"
    logged_in.on(
        "POST",
        "/app/slow",
        504,
        {"error": {"code": "timeout", "message": message, "execution_id": "e3"}},
        {"X-Sand-Execution-Id": "e3"},
    )
    assert sand(["invoke", "slow", "{}"]) == 1
    assert capsys.readouterr().err == (
        "Error: application 'slow' did not answer within 2 s; its result, if it comes, "
        "is shown by `sand execution e3`, its logs by `sand logs e3`\n"
    )


def test_an_error_naming_an_execution_without_a_hint_says_how_to_read_its_logs(logged_in: FakeApi, capsys) -> None:
    logged_in.on(
        "POST",
        "/app/slow",
        502,
        {"error": {"code": "unavailable", "message": "Kafka did not answer"}},
        {"X-Sand-Execution-Id": "e4"},
    )
    assert sand(["invoke", "slow", "{}"]) == 1
    assert capsys.readouterr().err == "Error: Kafka did not answer (execution id e4; `sand logs e4`)\n"


def test_invoke_needs_only_the_url(api: FakeApi, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setenv("SAND_URL", api.url)
    api.on("POST", "/app/hello", 200, {"ok": 1})
    assert sand(["invoke", "hello", "{}"]) == 0
    assert "Authorization" not in api.requests[0].headers


def test_a_non_json_error_page_is_shown_with_its_status(logged_in: FakeApi, capsys) -> None:
    logged_in.on("POST", "/app/hello", 502, "<html>502 Bad Gateway</html>")
    assert sand(["invoke", "hello", "{}"]) == 1
    assert capsys.readouterr().err == "Error: <html>502 Bad Gateway</html> (HTTP 502)\n"


# --- status, logs, executions, undeploy ---------------------------------------------------------------------------


def test_status(logged_in: FakeApi, capsys) -> None:
    app = {
        "name": "hello",
        "status": "failed",
        "version": 4,
        "error": "h2: pip failed",
        "workflow": json.loads((EXAMPLES / "hello" / "workflow.json").read_text()),
        "shape": {
            "format": "sand",
            "entry": "greet",
            "grains": [{"name": "greet", "resource": "greet"}, {"name": "shout", "resource": "shout"}],
        },
        "hosts": [{"host": "h1", "status": "deployed"}, {"host": "h2", "status": "failed", "error": "pip failed"}],
    }
    logged_in.on("GET", "/api/v1/apps/hello", 200, app)
    assert sand(["status", "hello"]) == 0
    out = capsys.readouterr().out
    assert "entry:   greet\n" in out
    assert "status:  failed (version 4)" in out and "grains:  greet, shout" in out
    assert "host:    h1 deployed" in out and "host:    h2 failed: pip failed" in out
    assert "error:" not in out  # the application's error is h2's: said once
    assert sand(["status", "hello", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == app


def test_status_of_an_application_placed_by_the_scheduler_says_where_and_why(logged_in: FakeApi, capsys) -> None:
    placement = {"hosts": ["h2", "h1"], "reason": "9 events queued on 1 host(s): h1 added", "by": "h1", "at": "T"}
    logged_in.on("GET", "/api/v1/apps/busy", 200, {"name": "busy", "status": "deployed", "placement": placement})
    assert sand(["status", "busy"]) == 0
    assert "placed:  h2, h1 (9 events queued on 1 host(s): h1 added, by h1 at T)\n" in capsys.readouterr().out


def test_status_of_an_asl_application_names_its_start_state_and_states(logged_in: FakeApi, capsys) -> None:
    shape = {
        "format": "asl",
        "entry": "Fetch",
        "grains": [{"name": "Fetch", "resource": "fetch"}, {"name": "Each", "resource": None}],
    }
    logged_in.on("GET", "/api/v1/apps/flow", 200, {"name": "flow", "status": "deployed", "version": 1, "shape": shape})
    assert sand(["status", "flow"]) == 0
    out = capsys.readouterr().out
    assert "entry:   Fetch (Amazon States Language)" in out
    assert "grains:  Fetch (fetch), Each" in out


def test_unknown_app_says_to_deploy_it_with_sand(logged_in: FakeApi, capsys) -> None:
    message = "no application 'nope' in your account; create it with PUT /api/v1/apps/nope"
    logged_in.on("GET", "/api/v1/apps/nope", 404, {"error": {"code": "not_found", "message": message}})
    assert sand(["status", "nope"]) == 1
    assert capsys.readouterr().err == (
        "Error: no application 'nope' in your account; deploy it with "
        "`sand deploy <folder> --name nope`, or list yours with `sand apps`\n"
    )
    logged_in.on("POST", "/api/v1/apps/nope/undeploy", 404, {"error": {"code": "not_found", "message": message}})
    assert sand(["undeploy", "nope"]) == 1
    assert capsys.readouterr().err == "Error: no application 'nope' in your account; list yours with `sand apps`\n"


def test_logs(logged_in: FakeApi, capsys) -> None:
    lines = [
        {"ts": "2026-01-01T00:00:00.001Z", "grain": "greet", "level": "INFO", "text": "greeting sand"},
        {"ts": "2026-01-01T00:00:00.002Z", "grain": "shout", "level": "STDOUT", "text": "hi"},
    ]
    logged_in.on("GET", "/api/v1/executions/e1/logs", 200, {"execution_id": "e1", "logs": lines})
    assert sand(["logs", "e1"]) == 0
    assert capsys.readouterr().out == (
        "2026-01-01T00:00:00.001Z [greet] INFO: greeting sand\n2026-01-01T00:00:00.002Z [shout] STDOUT: hi\n"
    )
    assert logged_in.requests[0].headers["Authorization"] == "Bearer key-a"


def test_executions_follows_the_pages_and_prints_a_table(logged_in: FakeApi, capsys) -> None:
    one = {"execution_id": "a" * 32, "status": "failed", "started": "2026-11-26T21:00:01Z", "duration_ms": 12.5}
    two = {"execution_id": "b" * 32, "status": "failed", "started": "2026-11-26T21:00:00Z", "duration_ms": None}
    one["error"] = '{"type": "ValueError", "message": "bad input"}'
    route = "/api/v1/apps/hello/executions"
    logged_in.on("GET", route, 200, {"app": "hello", "executions": [one], "next": "c1"})
    logged_in.on("GET", route, 200, {"app": "hello", "executions": [two], "next": None})
    assert sand(["executions", "hello", "--status", "failed", "--limit", "5"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["EXECUTION", "STATUS", "STARTED", "TOOK", "ERROR"]
    assert out[1].startswith("a" * 32 + "  failed     2026-11-26T21:00:01Z")
    assert "12.5ms" in out[1] and out[1].endswith("ValueError: bad input")
    assert out[2].split()[:4] == ["b" * 32, "failed", "2026-11-26T21:00:00Z", "-"]
    first, second = logged_in.requests
    assert first.query["status"] == ["failed"] and first.query["limit"] == ["5"] and "cursor" not in first.query
    assert second.query["cursor"] == ["c1"] and second.query["limit"] == ["4"]


def test_executions_refuses_a_bad_since_before_calling(logged_in: FakeApi, capsys) -> None:
    assert sand(["executions", "hello", "--since", "yesterday"]) == 1
    assert logged_in.requests == []
    assert "write a duration like 30s" in capsys.readouterr().err


def test_versions_marks_the_running_one(logged_in: FakeApi, capsys) -> None:
    vs = [
        {"version": 3, "created": "2026-11-26T22:00:02Z", "description": "rollback to version 1", "running": True},
        {"version": 2, "created": "2026-11-26T22:00:01Z", "description": "deploy", "running": False},
    ]
    logged_in.on("GET", "/api/v1/apps/hello/versions", 200, {"app": "hello", "running": 3, "versions": vs})
    assert sand(["versions", "hello"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split() == ["3*", "2026-11-26T22:00:02Z", "rollback", "to", "version", "1"]
    assert out[2].split() == ["2", "2026-11-26T22:00:01Z", "deploy"]


def test_rollback_asks_for_the_version_and_waits(logged_in: FakeApi, capsys) -> None:
    api = logged_in
    api.on("POST", "/api/v1/apps/hello/rollback", 202, {"name": "hello", "status": "deploying", "version": 4})
    api.on("GET", "/api/v1/apps/hello", 200, {"name": "hello", "status": "deploying", "version": 4, "hosts": []})
    done = {"name": "hello", "status": "deployed", "version": 4, "hosts": [{"host": "h1", "status": "deployed"}]}
    api.on("GET", "/api/v1/apps/hello", 200, done)
    assert sand(["rollback", "hello", "2"]) == 0, capsys.readouterr().err
    assert api.requests[0].json() == {"version": 2}
    assert capsys.readouterr().out.startswith("hello: version 2 runs again as version 4 on h1 in ")


def test_data_lists_keys_by_prefix_and_prints_a_value(logged_in: FakeApi, capsys) -> None:
    route = "/api/v1/apps/hello/data"
    logged_in.on("GET", route, 200, {"app": "hello", "keys": ["order:1", "order:2"], "next": None})
    assert sand(["data", "hello", "--prefix", "order:"]) == 0
    assert capsys.readouterr().out == "order:1\norder:2\n"
    assert logged_in.requests[0].query["prefix"] == ["order:"]
    logged_in.routes.clear()
    logged_in.on("GET", route, 200, {"key": "order:1", "bytes": 3, "encoding": "utf-8", "value": "abc"})
    assert sand(["data", "hello", "order:1"]) == 0
    assert capsys.readouterr().out == "abc\n"
    assert logged_in.requests[1].query["key"] == ["order:1"]


def test_execution(logged_in: FakeApi, capsys) -> None:
    body = {"execution_id": "e1", "status": "succeeded", "result": {"a": 1}, "error": None, "timings": {}}
    logged_in.on("GET", "/api/v1/executions/e1", 200, body)
    assert sand(["execution", "e1"]) == 0
    assert json.loads(capsys.readouterr().out) == body


def test_execution_instances(logged_in: FakeApi, capsys) -> None:
    rows = [
        {"instance": 0, "grain": "Fan", "polled_ms": 1.0, "started_ms": 1.5, "ended_ms": 2.0, "parent": None},
        {"instance": 1, "grain": "Fan.it.D", "polled_ms": 3.0, "started_ms": 3.1, "ended_ms": 4.25, "parent": 0}
        | {"state": "Fan", "item": 5, "host": "vm"},
    ]
    logged_in.on("GET", "/api/v1/executions/e1", 200, {"execution_id": "e1", "instances": rows})
    assert sand(["execution", "e1", "--instances"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["0", "-", "1.000", "2.000", "-", "Fan"]
    assert lines[2].split() == ["1", "0", "3.000", "4.250", "vm", "Fan.it.D", "(Fan", "item", "5)"]


def test_undeploy_waits_then_deletes(logged_in: FakeApi, capsys) -> None:
    api = logged_in
    api.on("POST", "/api/v1/apps/hello/undeploy", 202, {})
    api.on("GET", "/api/v1/apps/hello", 200, {"name": "hello", "status": "deployed"})
    api.on("GET", "/api/v1/apps/hello", 200, {"name": "hello", "status": "undeployed"})
    api.on("DELETE", "/api/v1/apps/hello", 204)
    assert sand(["undeploy", "hello", "--delete"]) == 0
    assert api.calls() == [
        "POST /api/v1/apps/hello/undeploy",
        "GET /api/v1/apps/hello",
        "GET /api/v1/apps/hello",
        "DELETE /api/v1/apps/hello",
    ]
    assert capsys.readouterr().out == "hello: undeployed and deleted\n"


def test_usage_errors_exit_2(capsys) -> None:
    for argv in (["invoke"], ["deploy"], ["login", "http://x"], ["nope"], ["invoke", "a", "{}", "--bad"]):
        with pytest.raises(SystemExit) as e:
            sand(argv)
        assert e.value.code == 2
    assert sand([]) == 2


def test_admin_commands_send_the_admin_key_from_its_file(
    api: FakeApi, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SAND_ADMIN_KEY", raising=False)
    monkeypatch.setenv("SAND_HOME", str(tmp_path))
    (tmp_path / "admin-key").write_text("sandadm_0123\n")
    api.on(
        "GET",
        "/api/v1/admin/apps",
        200,
        {
            "apps": [
                {
                    "name": "shop",
                    "owner": "bob",
                    "status": "failed",
                    "version": 2,
                    "error": "h1: grain g failed to load\nmore",
                    "hosts": [{"host": "h1", "status": "failed"}],
                }
            ]
        },
    )
    api.on(
        "POST",
        "/api/v1/admin/accounts/bob/disable",
        200,
        {"account": "bob", "disabled": True, "reason": "abuse", "undeployed": ["shop"]},
    )
    assert sand(["admin", "--url", api.url, "apps"]) == 0
    assert api.requests[0].headers["Authorization"] == "Bearer sandadm_0123"
    out = capsys.readouterr().out.splitlines()
    assert out[1].split() == ["shop", "bob", "failed", "2", "h1:failed", "h1:", "grain", "g", "failed", "to", "load"]
    assert sand(["admin", "--url", api.url, "disable", "bob", "--reason", "abuse"]) == 0
    assert json.loads(api.requests[1].body) == {"reason": "abuse"}
    assert capsys.readouterr().out == "account bob: disabled (abuse); undeployed: shop\n"


def test_admin_hosts_shows_each_hosts_sandbox_limits_against_its_memory_and_cpus(
    api: FakeApi, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SAND_ADMIN_KEY", "sandadm_0123")
    host = {"host": "h1", "alive": True, "schedule": "schedulable", "heartbeat": "2026-11-27T12:00:00Z"}
    sandboxes = [{"app": "shop", "owner": "bob", "status": "deployed", "error": None}]
    use = {"sandboxes": 2, "grains": 4, "sandbox_memory_mb": 768, "sandbox_cpus": 1.5}
    resources = {"cpus": 2, "memory_mb": 4096}
    old = {"host": "h2", "alive": False, "heartbeat": None, "sandboxes": []}  # a host agent older than `use`
    api.on(
        "GET",
        "/api/v1/admin/hosts",
        200,
        {"hosts": [host | {"sandboxes": sandboxes, "use": use, "resources": resources}, old]},
    )
    assert sand(["admin", "--url", api.url, "hosts"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["HOST", "ALIVE", "SCHEDULE", "HEARTBEAT", "MEMORY", "(MB)", "CPUS", "SANDBOXES"]
    assert out[1].split() == ["h1", "yes", "schedulable", "2026-11-27T12:00:00Z", "768/4096", "1.5/2", "shop:deployed"]
    assert out[2].split() == ["h2", "NO", "-", "-", "-", "-", "-"]


def test_admin_without_a_key_says_where_to_find_it(
    api: FakeApi, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SAND_ADMIN_KEY", raising=False)
    monkeypatch.setenv("SAND_HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert sand(["admin", "--url", api.url, "hosts"]) == 1
    assert "no admin key" in capsys.readouterr().err and api.requests == []


# --- the account's applications and grains ------------------------------------------------------------------------

PIP = (
    "application a4d6165d9e101: its requirements could not be installed: pip install exited with 1:\n"
    "ERROR: No matching distribution found for no-such-package==1.0"
)


def test_apps_one_line_each_with_the_first_line_of_the_error(logged_in: FakeApi, capsys) -> None:
    body = {
        "apps": [
            {"name": "boom-alice", "status": "failed", "version": 2, "error": "vm: " + PIP},
            {"name": "hello-alice", "status": "deployed", "version": 1, "error": None},
        ]
    }
    logged_in.on("GET", "/api/v1/apps", 200, body)
    assert sand(["apps"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "APP                      STATUS       VER  ERROR",
        "boom-alice               failed         2  vm: application boom-alice: its requirements could not be "
        "installed: pip install exited with 1:",
        "hello-alice              deployed       1",
    ]
    assert err == "the whole error: `sand status boom-alice`\n"
    assert logged_in.requests[0].headers["Authorization"] == "Bearer key-a"
    assert sand(["apps", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == body


def test_apps_and_grains_of_a_new_account_say_how_to_start(logged_in: FakeApi, capsys) -> None:
    logged_in.on("GET", "/api/v1/apps", 200, {"apps": []})
    logged_in.on("GET", "/api/v1/grains", 200, {"grains": []})
    assert sand(["apps"]) == 0
    assert capsys.readouterr() == ("", "no applications yet: deploy one with `sand deploy <folder>`\n")
    assert sand(["grains"]) == 0
    assert capsys.readouterr() == ("", "no grains yet: `sand deploy <folder>` uploads an application's grains\n")


def test_grains_newest_version_kind_size_created(logged_in: FakeApi, capsys) -> None:
    body = {
        "grains": [
            {
                "name": "greet",
                "version": 3,
                "kind": "py",
                "sha256": "7fe7",
                "size": 266,
                "created": "2026-11-21T21:13:55.964Z",
            },
            {
                "name": "parse",
                "version": 1,
                "kind": "zip",
                "sha256": "4f6b",
                "size": 15872,
                "created": "2026-11-21T21:13:55.995Z",
            },
        ]
    }
    logged_in.on("GET", "/api/v1/grains", 200, body)
    assert sand(["grains"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "GRAIN                    VER  KIND    BYTES  CREATED",
        "greet                      3  py        266  2026-11-21T21:13:55.964Z",
        "parse                      1  zip     15872  2026-11-21T21:13:55.995Z",
    ]
    assert sand(["grains", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == body


def test_grain_delete(logged_in: FakeApi, capsys) -> None:
    logged_in.on("DELETE", "/api/v1/grains/greet", 200, {"name": "greet", "deleted": True})
    assert sand(["grain", "delete", "greet"]) == 0
    assert logged_in.calls() == ["DELETE /api/v1/grains/greet"]
    assert capsys.readouterr().out == "grain greet: deleted (every version)\n"


def test_grains_of_an_application(logged_in: FakeApi, capsys) -> None:
    body = {
        "grains": [
            {
                "name": "greet",
                "version": 2,
                "kind": "py",
                "sha256": "7fe7",
                "size": 266,
                "created": "2026-11-21T21:13:55.964Z",
            }
        ]
    }
    logged_in.on("GET", "/api/v1/apps/hello/grains", 200, body)
    assert sand(["grains", "hello"]) == 0
    assert logged_in.calls() == ["GET /api/v1/apps/hello/grains"]
    assert capsys.readouterr().out.splitlines() == [
        "GRAIN                    VER  KIND    BYTES  CREATED",
        "greet                      2  py        266  2026-11-21T21:13:55.964Z",
    ]


def test_grain_delete_of_an_applications_own_grain(logged_in: FakeApi, capsys) -> None:
    logged_in.on("DELETE", "/api/v1/apps/hello/grains/greet", 200, {"name": "greet", "deleted": True})
    assert sand(["grain", "delete", "greet", "--app", "hello"]) == 0
    assert logged_in.calls() == ["DELETE /api/v1/apps/hello/grains/greet"]
    assert capsys.readouterr().out == "grain greet of hello: deleted (every version)\n"


def test_grain_delete_while_deployed_says_to_undeploy_first(logged_in: FakeApi, capsys) -> None:
    message = (
        "grain greet is used by deployed application 'hello-alice'; undeploy it first "
        "(POST /api/v1/apps/hello-alice/undeploy)"
    )
    logged_in.on("DELETE", "/api/v1/grains/greet", 409, {"error": {"code": "conflict", "message": message}})
    assert sand(["grain", "delete", "greet"]) == 1
    assert capsys.readouterr().err == (
        "Error: grain greet is used by deployed application 'hello-alice'; undeploy "
        "it first with `sand undeploy hello-alice`, then run `sand grain delete greet` "
        "again\n"
    )


def test_grain_delete_of_an_unknown_grain_lists_yours(logged_in: FakeApi, capsys) -> None:
    message = "no grain 'gret' in your account; upload it with PUT /api/v1/grains/gret"
    logged_in.on("DELETE", "/api/v1/grains/gret", 404, {"error": {"code": "not_found", "message": message}})
    assert sand(["grain", "delete", "gret"]) == 1
    assert capsys.readouterr().err == "Error: no grain 'gret' in your account; list them with `sand grains`\n"
    logged_in.on("DELETE", "/api/v1/apps/hello/grains/gret", 404, {"error": {"code": "not_found", "message": message}})
    assert sand(["grain", "delete", "gret", "--app", "hello"]) == 1
    assert capsys.readouterr().err.endswith("list them with `sand grains hello`\n")


def test_grain_needs_a_subcommand(capsys) -> None:
    with pytest.raises(SystemExit) as e:
        sand(["grain"])
    assert e.value.code == 2


# --- errors: the `sand` command to run, not a REST call -------------------------------------------------------------


def test_an_unknown_key_names_signup_and_login(logged_in: FakeApi, capsys) -> None:
    message = "unknown API key: sign up with POST /api/v1/accounts or check the key you were given"
    logged_in.on("GET", "/api/v1/grains", 401, {"error": {"code": "unauthorized", "message": message}})
    assert sand(["grains"]) == 1
    url = logged_in.url
    assert capsys.readouterr().err == (
        f"Error: unknown API key; create an account with `sand signup {url} <name>`, "
        f"or store the key you were given with `sand login {url} <api-key>`\n"
    )


def test_a_missing_key_names_signup_and_login(api: FakeApi, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setenv("SAND_URL", api.url)
    message = "this call needs an API key: send 'Authorization: Bearer <api key>' (POST /api/v1/accounts gives one)"
    api.on("POST", "/app/hello", 401, {"error": {"code": "unauthorized", "message": message}})
    assert sand(["invoke", "hello"]) == 1
    assert capsys.readouterr().err.startswith("Error: this call needs an API key; create an account with `sand signup")


def test_a_name_the_url_cannot_hold_is_said_without_rest_advice(logged_in: FakeApi, capsys) -> None:
    message = (
        "bad request: Ambiguous URI path separator: names in the URL are letters, digits, '_', '.', '-' (the "
        "routes and their patterns are in GET /api/v1/openapi.json)"
    )
    logged_in.on("GET", "/api/v1/apps/a%2Fb", 400, {"error": {"code": "bad_request", "message": message}})
    assert sand(["status", "a/b"]) == 1
    assert capsys.readouterr().err == (
        "Error: bad request: Ambiguous URI path separator: names in the URL are letters, digits, '_', '.', '-'\n"
    )


def test_closed_signup_says_to_ask_the_operator(api: FakeApi, capsys) -> None:
    message = (
        "sign-up is closed on this platform: the operator creates accounts with the admin key "
        "(Authorization: Bearer <admin key>)"
    )
    api.on("POST", "/api/v1/accounts", 401, {"error": {"code": "unauthorized", "message": message}})
    assert sand(["signup", api.url, "alice"]) == 1
    assert capsys.readouterr().err == (
        f"Error: sign-up is closed on this platform; ask the operator for an API key "
        f"and store it with `sand login {api.url} <api-key>` (the operator runs "
        f"`sand signup {api.url} <name> --admin-key <admin key>`)\n"
    )


def test_the_admin_keys_401_keeps_its_own_advice(api: FakeApi, capsys) -> None:
    message = (
        "this call needs the operator's admin key: send 'Authorization: Bearer <admin key>' (make up writes "
        "it to $SAND_HOME/admin-key)"
    )
    api.on("GET", "/api/v1/admin/hosts", 401, {"error": {"code": "unauthorized", "message": message}})
    assert sand(["admin", "--url", api.url, "--admin-key", "k", "hosts"]) == 1
    assert capsys.readouterr().err == f"Error: {message}\n"


def test_deploy_missing_grain_names_the_file_to_add(logged_in: FakeApi, capsys) -> None:
    api = logged_in
    _deployable(api, "hello", ["greet", "shout"])
    message = (
        "application 'hello' needs grain 'shout', which it does not have; upload it with "
        "PUT /api/v1/apps/hello/grains/shout (or share one across your applications with "
        "PUT /api/v1/grains/shout)"
    )
    api.routes[("POST", "/api/v1/apps/hello/deploy")] = [
        (400, {"error": {"code": "missing_grain", "message": message}}, {})
    ]
    folder = EXAMPLES / "hello"
    assert sand(["deploy", str(folder)]) == 1
    assert capsys.readouterr().err.endswith(
        f"Error: application 'hello' needs grain 'shout', which it does not have; add shout.py (or "
        f"shout/__init__.py) to {folder} and run `sand deploy {folder}` again\n"
    )


def test_invoking_an_undeployed_app_says_to_deploy_it(logged_in: FakeApi, capsys) -> None:
    message = "application 'boom' is not deployed; its developer deploys it with POST /api/v1/apps/boom/deploy"
    logged_in.on("POST", "/app/boom", 409, {"error": {"code": "conflict", "message": message}})
    assert sand(["invoke", "boom", "{}"]) == 1
    assert capsys.readouterr().err == (
        "Error: application 'boom' is not deployed; deploy it with `sand deploy <folder> --name boom`\n"
    )


def test_undeploy_delete_before_undeployed_says_to_run_it_again(logged_in: FakeApi, capsys) -> None:
    api = logged_in
    message = (
        "application 'hello' is undeploying; undeploy it first (POST /api/v1/apps/hello/undeploy) and wait "
        "for status undeployed"
    )
    api.on("POST", "/api/v1/apps/hello/undeploy", 202, {})
    api.on("GET", "/api/v1/apps/hello", 200, {"name": "hello", "status": "undeployed"})
    api.on("DELETE", "/api/v1/apps/hello", 409, {"error": {"code": "conflict", "message": message}})
    assert sand(["undeploy", "hello", "--delete"]) == 1
    assert capsys.readouterr().err.endswith(
        "Error: application 'hello' is undeploying; once `sand status hello` "
        "says undeployed, run `sand undeploy hello --delete` again\n"
    )


@pytest.mark.parametrize(
    ("message", "said"),
    [
        ("no application 'x' in your account; create it with PUT /api/v1/apps/x", "no application 'x' in your account"),
        ("no grain 'g' in your account; upload it with PUT /api/v1/grains/g", "no grain 'g' in your account"),
        ("unknown API key: sign up with POST /api/v1/accounts or check the key you were given", "unknown API key"),
        (
            "this call needs an API key: send 'Authorization: Bearer <api key>' (POST /api/v1/accounts gives one)",
            "this call needs an API key: send 'Authorization: Bearer <api key>'",
        ),
        (
            "bad request: Ambiguous URI path separator: names in the URL are letters, digits, '_', '.', '-' (the "
            "routes and their patterns are in GET /api/v1/openapi.json)",
            "bad request: Ambiguous URI path separator: names in the URL are letters, digits, '_', '.', '-'",
        ),
        ("no such route (the routes are listed at GET /api/v1/openapi.json)", "no such route"),
        (
            "grain g is used by deployed application 'a'; undeploy it first (POST /api/v1/apps/a/undeploy)",
            "grain g is used by deployed application 'a'",
        ),
        (
            "application 'x' did not answer within 30 s; the result, if it comes, is at GET /api/v1/executions/e1",
            "application 'x' did not answer within 30 s",
        ),
        ("body over 10485760 bytes", "body over 10485760 bytes"),
    ],
)
def test_the_rest_advice_is_cut_from_the_apis_messages(message: str, said: str) -> None:
    from sandclient._hints import without_rest_advice

    assert without_rest_advice(message) == said


# --- errors said once, with the application's name ------------------------------------------------------------------


def test_status_prints_pips_error_once_with_the_apps_name(logged_in: FakeApi, capsys) -> None:
    app = {
        "name": "needs",
        "id": "a4d6165d9e101",
        "status": "failed",
        "version": 1,
        "error": "vm: " + PIP,
        "hosts": [{"host": "vm", "status": "failed", "error": PIP}],
    }
    logged_in.on("GET", "/api/v1/apps/needs", 200, app)
    assert sand(["status", "needs"]) == 0
    out = capsys.readouterr().out
    assert out.count("No matching distribution") == 1 and "a4d6165d9e101" not in out
    assert "host:    vm failed: application needs: its requirements could not be installed" in out
    assert sand(["status", "needs", "--json"]) == 0  # the API's JSON, as it is
    assert json.loads(capsys.readouterr().out) == app


def test_status_prints_an_error_beyond_the_hosts_errors(logged_in: FakeApi, capsys) -> None:
    app = {
        "name": "x",
        "status": "deploying",
        "version": 1,
        "hosts": [],
        "error": "no live host agent to deploy on; start one (deploy/hostagent.sh start)",
    }
    logged_in.on("GET", "/api/v1/apps/x", 200, app)
    assert sand(["status", "x"]) == 0
    assert "error:   no live host agent to deploy on" in capsys.readouterr().out


def test_a_failed_deploy_names_the_app_not_its_id(logged_in: FakeApi, tmp_path: Path, capsys) -> None:
    _deployable(
        logged_in,
        "needs",
        ["a", "b"],
        {
            "name": "needs",
            "id": "a4d6165d9e101",
            "status": "failed",
            "version": 2,
            "error": "vm: " + PIP,
            "hosts": [{"host": "vm", "status": "failed", "error": PIP}],
        },
    )
    assert sand(["deploy", str(_failing_app(tmp_path))]) == 1
    err = capsys.readouterr().err
    assert "Error: deploy of needs failed: vm: application needs: its requirements" in err
    assert "a4d6165d9e101" not in err


DATA_ERROR = {
    "error": {
        "type": "DataLayerError",
        "grain": "count",
        "message": "QUOTA_EXCEEDED: [app a4d6165d9e101] cannot store key 'k' (70 bytes with its "
        "bookkeeping): ...; retry later",
    }
}


def test_a_grains_data_layer_error_names_the_app_not_its_id(logged_in: FakeApi, capsys) -> None:
    api = logged_in
    api.on("POST", "/app/wordcount", 500, DATA_ERROR, {"X-Sand-Execution-Id": "e5"})
    api.on(
        "GET",
        "/api/v1/executions/e5",
        200,
        {
            "execution_id": "e5",
            "app": "wordcount",
            "status": "failed",
            "result": None,
            "error": DATA_ERROR["error"],
            "timings": {},
        },
    )
    api.on(
        "GET",
        "/api/v1/executions/e5/logs",
        200,
        {
            "execution_id": "e5",
            "logs": [
                {
                    "time": "2026-11-21T21:14:05.901Z",
                    "grain": "count",
                    "level": "ERROR",
                    "text": "grainworker.datalayer.DataLayerError: QUOTA_EXCEEDED: [app a4d6165d9e101] "
                    "cannot store key 'k'",
                }
            ],
        },
    )
    assert sand(["invoke", "wordcount", "{}"]) == 1
    out = capsys.readouterr().out
    assert "[app wordcount] cannot store key 'k'" in out and "a4d6165d9e101" not in out
    assert sand(["execution", "e5"]) == 0
    out = capsys.readouterr().out
    assert "[app wordcount] cannot store key 'k'" in out and "a4d6165d9e101" not in out
    assert sand(["logs", "e5"]) == 0
    assert capsys.readouterr().out == (
        "2026-11-21T21:14:05.901Z [count] ERROR: grainworker.datalayer.DataLayerError: "
        "QUOTA_EXCEEDED: [app wordcount] cannot store key 'k'\n"
    )


def test_logs_without_an_app_id_read_no_execution(logged_in: FakeApi, capsys) -> None:
    logged_in.on(
        "GET",
        "/api/v1/executions/e1/logs",
        200,
        {
            "execution_id": "e1",
            "logs": [{"time": "t", "grain": "greet", "level": "INFO", "text": "greeting a4d6165d9e101"}],
        },
    )
    assert sand(["logs", "e1"]) == 0
    assert capsys.readouterr().out == "t [greet] INFO: greeting a4d6165d9e101\n"  # a grain's own text stays
    assert logged_in.calls() == ["GET /api/v1/apps/e1/logs", "GET /api/v1/executions/e1/logs"], (
        "not an execution id's form: an application's logs are asked first"
    )


def test_account_delete_needs_the_name_and_forgets_the_stored_key(logged_in: FakeApi, tmp_path: Path, capsys) -> None:
    logged_in.on("DELETE", "/api/v1/accounts/alice", 200, {"name": "alice", "deleted": True, "applications": ["hello"]})
    with pytest.raises(SystemExit):
        sand(["account", "delete"])  # the name, typed out, is the confirmation
    capsys.readouterr()
    assert sand(["account", "delete", "alice"]) == 0
    assert capsys.readouterr().out == "account alice: deleted, with its applications (hello) and grains\n"
    assert logged_in.calls() == ["DELETE /api/v1/accounts/alice"]
    assert not creds_file(tmp_path).exists(), "its key is no longer stored"


def test_account_delete_while_an_app_runs_says_which(logged_in: FakeApi, capsys) -> None:
    message = (
        "account 'alice' still runs hello; undeploy them first (POST /api/v1/apps/{app}/undeploy) and wait for "
        "status undeployed"
    )
    logged_in.on("DELETE", "/api/v1/accounts/alice", 409, {"error": {"code": "conflict", "message": message}})
    assert sand(["account", "delete", "alice"]) == 1
    assert capsys.readouterr().err == (
        "Error: account 'alice' still runs hello; undeploy each with `sand undeploy "
        "<app>`, then run `sand account delete alice` again\n"
    )


def test_logs_of_an_application_its_recent_executions_oldest_first(logged_in: FakeApi, capsys) -> None:
    logged_in.on(
        "GET",
        "/api/v1/apps/hello/logs",
        200,
        {
            "app": "hello",
            "executions": [
                {
                    "execution_id": "0123456789abcdef0123456789abcdef",
                    "status": "ok",
                    "started": "2026-11-23T17:00:00Z",
                    "logs": [
                        {"time": "2026-11-23T17:00:00.1Z", "grain": "greet", "level": "INFO", "text": "greeting a"}
                    ],
                },
                {
                    "execution_id": "fedcba9876543210fedcba9876543210",
                    "status": "error",
                    "started": "2026-11-23T17:00:01Z",
                    "finished": "2026-11-23T17:00:02Z",
                    "error": "ValueError: no name",
                    "logs": [],
                },
            ],
        },
    )
    assert sand(["logs", "hello", "--since", "10m"]) == 0
    assert capsys.readouterr().out == (
        "2026-11-23T17:00:00.1Z [01234567 greet] INFO: greeting a\n"
        "2026-11-23T17:00:02Z [fedcba98] error: ValueError: no name\n"
    )
    since = int(logged_in.requests[0].query["since"][0])
    assert abs(since - (time.time() - 600) * 1000) < 5000, "10 minutes ago"
    assert sand(["logs", "hello", "--since", "yesterday"]) == 1
    assert "write a duration like 30s, 10m, 2h or 1d" in capsys.readouterr().err
