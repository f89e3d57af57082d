"""The public Python client, `sandclient.Client`, against the fake REST API of test_cli.py: what each call
sends and returns; and that the `sand` CLI sends every REST request through it."""

from __future__ import annotations

import io
import json
import stat
import zipfile
from pathlib import Path
from typing import Any

import pytest

from sandclient import ApiError, Client, Deployment, Invocation
from sandclient import client as sand_client
from sandclient.cli import main as sand
from tests import test_cli
from tests.test_cli import EXAMPLES, FakeApi, _deployable, creds_file

api = test_cli.api  # the same fake API fixtures
logged_in = test_cli.logged_in


def test_signup_login_and_from_login(api: FakeApi, tmp_path: Path) -> None:
    api.on("POST", "/api/v1/accounts", 201, {"name": "alice", "api_key": "sk-alice"})
    api.on("GET", "/api/v1/apps", 200, {"apps": []})
    account = Client(api.url + "/", "admin-key").signup("alice")
    assert account == {"name": "alice", "api_key": "sk-alice"}
    assert api.requests[0].headers["Authorization"] == "Bearer admin-key"
    with pytest.raises(ApiError, match="not logged in"):
        Client.from_login()
    path = Client(api.url, account["api_key"]).login()
    assert path == creds_file(tmp_path) and stat.S_IMODE(path.stat().st_mode) == 0o600
    client = Client.from_login()
    assert (client.url, client.api_key) == (api.url, "sk-alice")
    assert client.apps() == [] and api.requests[-1].headers["Authorization"] == "Bearer sk-alice"
    assert client.apps(raw=True) == {"apps": []}


def test_a_refused_login_stores_nothing(api: FakeApi, tmp_path: Path) -> None:
    api.on("GET", "/api/v1/apps", 401, {"error": {"code": "unauthorized", "message": "unknown API key"}})
    with pytest.raises(ApiError) as e:
        Client(api.url, "wrong").login()
    assert (e.value.status, e.value.code, str(e.value)) == (401, "unauthorized", "unknown API key")
    assert (e.value.method, e.value.path) == ("GET", "/api/v1/apps")
    assert not creds_file(tmp_path).exists()


def test_invoking_needs_only_the_url(api: FakeApi, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SAND_URL", api.url)
    with pytest.raises(ApiError, match="not logged in"):
        Client.from_login()
    assert Client.from_login(need_key=False).api_key is None


def test_deploy_a_folder_then_invoke_read_the_execution_and_its_logs(logged_in: FakeApi) -> None:
    api = logged_in
    client = Client.from_login()
    _deployable(api, "hello", ["greet", "shout"])
    lines: list[tuple[str, float | None]] = []
    d = client.deploy(EXAMPLES / "hello", progress=lambda line, waited: lines.append((line, waited)))
    assert isinstance(d, Deployment)
    assert (d.name, d.version, d.status, d.hosts) == ("hello", 2, "deployed", [("h1", "deployed", "")])
    assert d.seconds >= 0
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
    assert api.requests[0].json() == json.loads((EXAMPLES / "hello" / "workflow.json").read_text())
    assert api.requests[1].body == (EXAMPLES / "hello" / "greet.py").read_bytes()
    # the workflow is saved first, but its progress line still follows the grains'
    steps = [line for line, waited in lines if waited is None]
    assert len(steps) == 3 and steps[0].startswith("grain greet: version 3 (greet.py")
    assert steps[1].startswith("grain shout: version 3 (shout.py")
    assert steps[2] == "workflow hello: entry greet, grains greet, shout"
    assert [line for line, waited in lines if waited is not None] == [
        "hello: waiting for version 2",
        "hello: deploying (0/1 hosts)",
        "hello: deployed (1/1 hosts)",
    ]

    api.on("POST", "/app/hello", 200, {"greeting": "HELLO, SAND!"}, {"X-Sand-Execution-Id": "e1"})
    run = client.invoke("hello", {"name": "sand"})
    assert isinstance(run, Invocation)
    assert (run.status, run.output, run.execution_id, run.error) == (200, {"greeting": "HELLO, SAND!"}, "e1", None)
    assert api.requests[-1].json() == {"name": "sand"} and api.requests[-1].query == {}

    execution = {"execution_id": "e1", "status": "succeeded", "result": {"greeting": "HELLO, SAND!"}}
    api.on("GET", "/api/v1/executions/e1", 200, execution)
    assert client.execution("e1") == execution
    lines_body = {"execution_id": "e1", "logs": [{"ts": "t", "grain": "greet", "level": "INFO", "text": "hi"}]}
    api.on("GET", "/api/v1/executions/e1/logs", 200, lines_body)
    assert client.logs("e1") == lines_body["logs"]
    assert client.logs("e1", raw=True) == lines_body
    assert all(r.headers["Authorization"] == "Bearer key-a" for r in api.requests)


def test_deploy_with_a_name_settings_and_no_wait(logged_in: FakeApi) -> None:
    api = logged_in
    _deployable(api, "hello-2", ["greet", "shout"])
    d = Client.from_login().deploy(EXAMPLES / "hello", name="hello-2", settings={"timeout_s": 5}, wait=False)
    assert (d.name, d.version, d.status) == ("hello-2", 2, "deploying")
    put = next(r for r in api.requests if r.method == "PUT" and r.path == "/api/v1/apps/hello-2")
    assert put.json()["name"] == "hello-2" and put.json()["settings"] == {"timeout_s": 5}
    assert api.calls()[:3] == [
        "PUT /api/v1/apps/hello-2",
        "PUT /api/v1/apps/hello-2/grains/greet",
        "PUT /api/v1/apps/hello-2/grains/shout",
    ]  # the grains are hello-2's own
    assert api.calls()[-1] == "POST /api/v1/apps/hello-2/deploy"


def test_deploy_webserver_zip(logged_in: FakeApi) -> None:
    api = logged_in
    _deployable(api, "webserver", ["parse", "serve_text", "serve_binary", "not_found"])
    Client.from_login().deploy(EXAMPLES / "webserver")
    assert api.calls()[0] == "PUT /api/v1/apps/webserver"
    parse = api.requests[1]
    assert parse.path == "/api/v1/apps/webserver/grains/parse" and parse.headers["Content-Type"] == "application/zip"
    assert "site/index.html" in zipfile.ZipFile(io.BytesIO(parse.body)).namelist()


def test_deploy_failures_are_api_errors(logged_in: FakeApi, tmp_path: Path) -> None:
    api = logged_in
    client = Client.from_login()
    with pytest.raises(ApiError, match="workflow.json is missing") as e:
        client.deploy(tmp_path)
    assert (e.value.status, e.value.code) == (0, "usage") and api.requests == []
    _deployable(
        api,
        "hello",
        ["greet", "shout"],
        {
            "name": "hello",
            "status": "failed",
            "version": 2,
            "hosts": [{"host": "h1", "status": "failed", "error": "pip"}],
        },
    )
    with pytest.raises(ApiError, match="deploy of hello failed: h1: pip") as e:
        client.deploy(EXAMPLES / "hello")
    assert e.value.code == "failed" and e.value.body["status"] == "failed"
    api.routes[("PUT", "/api/v1/apps/hello")] = [(409, {"error": {"code": "conflict", "message": "taken"}}, {})]
    sent = len(api.requests)
    with pytest.raises(ApiError, match="taken") as e:
        client.deploy(EXAMPLES / "hello")
    assert (e.value.status, e.value.method, e.value.path) == (409, "PUT", "/api/v1/apps/hello")
    assert api.calls()[sent:] == ["PUT /api/v1/apps/hello"]  # refused first: no grain is uploaded


def test_an_end_users_async_result_running_done_or_failed(logged_in: FakeApi) -> None:
    api = logged_in
    client = Client.from_login()
    api.on("GET", "/app/hello/executions/e1", 202, {"execution_id": "e1", "status": "running"})
    api.on("GET", "/app/hello/executions/e1", 200, {"greeting": "HI"}, {"X-Sand-Execution-Id": "e1"})
    assert client.result("hello", "e1").status == 202
    done = client.result("hello", "e1")
    assert (done.status, done.output, done.execution_id) == (200, {"greeting": "HI"}, "e1")
    event = {"error": {"type": "KeyError", "message": "'x'", "grain": "g"}}
    api.on("GET", "/app/hello/executions/e2", 500, event)
    assert client.result("hello", "e2").error == event["error"]
    api.on("GET", "/app/hello/executions/nope", 404, {"error": {"code": "not_found", "message": "no execution"}})
    with pytest.raises(ApiError, match="no execution"):
        client.result("hello", "nope")


def test_invoke_async_grain_error_and_platform_errors(logged_in: FakeApi) -> None:
    api = logged_in
    client = Client.from_login()
    api.on("POST", "/app/hello", 202, {"execution_id": "e2"})
    run = client.invoke("hello", async_=True)
    assert (run.status, run.execution_id) == (202, "e2")
    assert api.requests[-1].query == {"async": ["1"]} and api.requests[-1].body == b""
    event = {"error": {"type": "ZeroDivisionError", "message": "division by zero", "grain": "g"}}
    api.on("POST", "/app/err", 500, event, {"X-Sand-Execution-Id": "e9"})
    run = client.invoke("err", None)
    assert (run.status, run.output, run.error, run.execution_id) == (500, event, event["error"], "e9")
    assert api.requests[-1].body == b"null"
    api.on("POST", "/app/x", 500, {"error": {"code": "internal", "message": "Kafka is down"}})
    with pytest.raises(ApiError) as e:
        client.invoke("x", {})
    assert (e.value.status, e.value.code, str(e.value)) == (500, "internal", "Kafka is down (HTTP 500)")
    api.on("POST", "/app/slow", 504, {"error": {"code": "timeout", "message": "no answer", "execution_id": "e3"}})
    with pytest.raises(ApiError) as e:
        client.invoke("slow", {})
    assert (e.value.status, e.value.execution_id) == (504, "e3")


def test_status_undeploy_and_delete(logged_in: FakeApi) -> None:
    api = logged_in
    client = Client.from_login()
    api.on("GET", "/api/v1/apps/hello", 200, {"name": "hello", "status": "deployed"})
    assert client.status("hello")["status"] == "deployed"
    api.on("POST", "/api/v1/apps/hello/undeploy", 202, {})
    api.on("GET", "/api/v1/apps/hello", 200, {"name": "hello", "status": "undeployed"})
    api.on("DELETE", "/api/v1/apps/hello", 204)
    assert client.undeploy("hello")["status"] == "undeployed"
    client.delete("hello")
    assert api.calls() == ["GET /api/v1/apps/hello", "POST /api/v1/apps/hello/undeploy"] + [
        "GET /api/v1/apps/hello"
    ] * 2 + ["DELETE /api/v1/apps/hello"]  # deployed, then undeployed
    api.routes[("GET", "/api/v1/apps/hello")] = [(200, {"name": "hello", "status": "undeploying"}, {})]
    with pytest.raises(ApiError, match="hello is still undeploying after 0.05s") as e:
        client.undeploy("hello", timeout_s=0.05)
    assert (e.value.status, e.value.code) == (0, "timeout")


def test_apps_grains_and_deleting_a_grain(logged_in: FakeApi) -> None:
    api = logged_in
    client = Client.from_login()
    apps = [{"name": "hello-alice", "status": "deployed", "version": 1, "error": None}]
    grains = [
        {
            "name": "greet",
            "version": 1,
            "kind": "py",
            "sha256": "7fe7",
            "size": 266,
            "created": "2026-11-21T21:13:55.964Z",
        }
    ]
    api.on("GET", "/api/v1/apps", 200, {"apps": apps})
    api.on("GET", "/api/v1/grains", 200, {"grains": grains})
    api.on("DELETE", "/api/v1/grains/greet", 200, {"name": "greet", "deleted": True})
    assert client.apps() == apps and client.apps(raw=True) == {"apps": apps}
    assert client.grains() == grains and client.grains(raw=True) == {"grains": grains}
    assert client.delete_grain("greet") == {"name": "greet", "deleted": True}
    api.routes[("DELETE", "/api/v1/grains/greet")] = [(409, {"error": {"code": "conflict", "message": "in use"}}, {})]
    with pytest.raises(ApiError, match="in use") as e:
        client.delete_grain("greet")
    assert (e.value.status, e.value.code, e.value.method, e.value.url) == (409, "conflict", "DELETE", api.url)
    api.routes[("GET", "/api/v1/grains")] = [(200, [], {})]
    with pytest.raises(ApiError, match="no 'grains' list") as e:
        client.grains()
    assert e.value.code == "bad_answer"


@pytest.mark.parametrize(
    ("text", "named"),
    [
        (
            "vm: application a4d6165d9e101: its requirements could not be installed",
            "vm: application hello: its requirements could not be installed",
        ),
        (
            "QUOTA_EXCEEDED: [app a4d6165d9e101] cannot store key 'k'",
            "QUOTA_EXCEEDED: [app hello] cannot store key 'k'",
        ),
        ("greeting a4d6165d9e101; key a4d6165d9e1012345", "greeting a4d6165d9e101; key a4d6165d9e1012345"),
    ],
)
def test_errors_name_the_application_not_its_internal_id(text: str, named: str) -> None:
    assert sand_client.without_app_ids(text, "hello") == named
    assert sand_client.names_app_id(text) == (text != named)


def test_the_cli_sends_every_rest_request_through_the_client(
    logged_in: FakeApi, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    api = logged_in
    sent: list[str] = []
    call = Client.call

    def spy(self: Client, method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        sent.append(f"{method} {path}")
        return call(self, method, path, *args, **kwargs)

    monkeypatch.setattr(Client, "call", spy)
    monkeypatch.setattr(sand_client, "POLL_S", 0.01)
    _deployable(api, "hello", ["greet", "shout"])
    api.on("POST", "/app/hello", 200, {"greeting": "HELLO, SAND!"}, {"X-Sand-Execution-Id": "e1"})
    api.on("GET", "/api/v1/executions/e1", 200, {"execution_id": "e1", "status": "succeeded"})
    api.on("GET", "/api/v1/executions/e1/logs", 200, {"logs": []})
    api.on("POST", "/api/v1/apps/hello/undeploy", 202, {})
    api.on("DELETE", "/api/v1/apps/hello", 204)
    api.on("GET", "/api/v1/apps", 200, {"apps": []})
    api.on("GET", "/api/v1/grains", 200, {"grains": []})
    api.on("GET", "/api/v1/apps/hello/grains", 200, {"grains": []})
    api.on("GET", "/api/v1/apps/hello/logs", 200, {"app": "hello", "executions": []})
    api.on("DELETE", "/api/v1/accounts/bob", 200, {"name": "bob", "deleted": True, "applications": []})
    api.on("DELETE", "/api/v1/grains/greet", 200, {"name": "greet", "deleted": True})
    api.on("DELETE", "/api/v1/apps/hello/grains/greet", 200, {"name": "greet", "deleted": True})
    api.on("POST", "/api/v1/accounts", 201, {"name": "bob", "api_key": "sk-bob"})
    for argv in (
        ["deploy", str(EXAMPLES / "hello")],
        ["invoke", "hello", "{}"],
        ["invoke", "hello", "--async"],
        ["execution", "e1"],
        ["logs", "e1"],
        ["status", "hello"],
        ["undeploy", "hello", "--no-wait", "--delete"],
        ["apps"],
        ["grains"],
        ["grains", "hello"],
        ["grain", "delete", "greet"],
        ["grain", "delete", "greet", "--app", "hello"],
        ["logs", "hello"],
        ["account", "delete", "bob"],
        ["login", api.url, "key-a"],
        ["signup", api.url, "bob"],
    ):
        assert sand(argv) == 0, argv
    assert sent == api.calls() and len(sent) == 24


def test_the_progress_of_an_undeploy_counts_a_host_where_the_application_failed_as_done() -> None:
    from sandclient.client import _progress

    app = {
        "status": "undeployed",
        "hosts": [
            {"host": "h1", "status": "failed", "error": "pip"},
            {"host": "h2", "status": "stopped"},
            {"host": "h3", "status": "deployed"},
        ],
    }
    assert _progress(app, "undeployed") == "undeployed (2/3 hosts)"
    assert _progress(app, "deployed") == "undeployed (1/3 hosts)"
