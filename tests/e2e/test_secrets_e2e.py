"""Configuration and secrets per application (issue 29), through nginx on the real system: settings.env and a
secret reach every grain instance in os.environ and through the grain API; a secret is never answered, never in
the host agent's log, the container's configuration (`docker inspect`) or a process's command line; another account
cannot touch them; bad names and values are 400 with the rule; a change takes effect at the next deploy.

Needs `make up` (nginx, frontends, a host agent, Kafka, Cassandra, Docker); reads the host agent's log under
$SAND_HOME/logs (deploy/lib.sh)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import docker
import pytest

from tests.conftest import SAND_HOME
from tests.e2e.api import Http, put_app, raw_remove, sign_up

SECRET = f"s3cr3t-{uuid.uuid4().hex}"  # unique, so finding it anywhere is this test's leak
SHOW = (
    "import os\n"
    "AT_LOAD = os.environ.get('API_TOKEN')\n"
    "def handle(event, context):\n"
    "    return {'greeting': os.environ.get('GREETING'), 'config': context.get_config('GREETING'),\n"
    "            'token_env': os.environ.get('API_TOKEN'), 'token': context.get_secret('API_TOKEN'),\n"
    "            'token_at_load': AT_LOAD, 'missing': context.get_secret('NOPE', 'default')}\n"
)


@pytest.fixture(scope="module")
def keys(http: Http) -> dict[str, str]:
    tag = uuid.uuid4().hex[:8]
    return {"owner": sign_up(http, f"sec-{tag}"), "other": sign_up(http, f"secx-{tag}")}


@pytest.fixture(scope="module")
def app(http: Http, keys: dict[str, str]) -> Iterator[str]:
    name = f"secrets-{uuid.uuid4().hex[:8]}"
    key = keys["owner"]
    put_app(
        http,
        key,
        name,
        [{"name": "show", "next": ["end"]}],
        {"show": SHOW},
        settings={"env": {"GREETING": "hello"}},
        deploy=False,
    )
    r = http("PUT", f"/api/v1/apps/{name}/secrets/API_TOKEN", key, json_body={"value": SECRET})
    assert r.status_code == 200, r.text
    assert SECRET not in r.text and "next deploy" in r.json()["note"]
    assert http("POST", f"/api/v1/apps/{name}/deploy", key).status_code == 202
    assert http.wait_status(key, name, "deployed")["status"] == "deployed"
    yield name
    raw_remove(http, key, name)


def _invoke(http: Http, name: str) -> Any:
    r = http("POST", f"/app/{name}", json_body={})
    assert r.status_code == 200, r.text
    return r.json()


def test_grains_see_settings_env_and_the_secret(http: Http, app: str) -> None:
    out = _invoke(http, app)
    assert out == {
        "greeting": "hello",
        "config": "hello",
        "token_env": SECRET,
        "token": SECRET,
        "token_at_load": SECRET,
        "missing": "default",
    }


def test_the_list_and_the_app_show_names_never_values(http: Http, keys: dict[str, str], app: str) -> None:
    r = http("GET", f"/api/v1/apps/{app}/secrets", keys["owner"])
    assert r.status_code == 200
    assert [s["name"] for s in r.json()["secrets"]] == ["API_TOKEN"]
    assert r.json()["secrets"][0]["bytes"] == len(SECRET)
    assert SECRET not in r.text
    got = http("GET", f"/api/v1/apps/{app}", keys["owner"])
    assert SECRET not in got.text and got.json()["settings"]["env"] == {"GREETING": "hello"}


def test_the_secret_is_not_in_the_host_agents_log_the_container_or_a_command_line(
    http: Http, keys: dict[str, str], app: str
) -> None:
    _invoke(http, app)
    logs = sorted((SAND_HOME / "logs").glob("hostagent*.log*"))
    assert logs, f"no host agent log under {SAND_HOME / 'logs'}"
    for f in logs:
        assert SECRET not in f.read_text(errors="replace"), f
    app_id = http("GET", f"/api/v1/apps/{app}", keys["owner"]).json()["id"]
    sandboxes = docker.from_env().containers.list(filters={"label": f"sand.app={app_id}"})
    assert sandboxes, "the application's sandbox runs"
    for c in sandboxes:
        assert SECRET not in str(c.attrs), "docker inspect shows the secret"
        assert SECRET not in str(c.top(ps_args="-eo pid,args")["Processes"]), "a command line shows the secret"


def test_another_account_cannot_read_list_set_or_delete(http: Http, keys: dict[str, str], app: str) -> None:
    other = keys["other"]
    assert http("GET", f"/api/v1/apps/{app}/secrets", other).status_code == 404
    assert http("PUT", f"/api/v1/apps/{app}/secrets/API_TOKEN", other, json_body={"value": "x"}).status_code == 404
    assert http("DELETE", f"/api/v1/apps/{app}/secrets/API_TOKEN", other).status_code == 404
    assert _invoke(http, app)["token"] == SECRET


def test_bad_names_and_values_are_400_with_the_rule(http: Http, keys: dict[str, str], app: str) -> None:
    key = keys["owner"]
    r = http("PUT", f"/api/v1/apps/{app}/secrets/SAND_TOKEN", key, json_body={"value": "x"})
    assert r.status_code == 400 and "reserved" in r.json()["error"]["message"]
    r = http("PUT", f"/api/v1/apps/{app}/secrets/1BAD", key, json_body={"value": "x"})
    assert r.status_code == 400 and "must match" in r.json()["error"]["message"]
    r = http("PUT", f"/api/v1/apps/{app}/secrets/BIG", key, json_body={"value": "x" * 5000})
    assert r.status_code == 400 and "at most 4096" in r.json()["error"]["message"]
    r = http("PUT", f"/api/v1/apps/{app}/secrets/OK", key, json_body={"nope": "x"})
    assert r.status_code == 400
    wf = {"name": app, "entry": "show", "functions": [{"name": "show", "next": ["end"]}]}
    r = http("PUT", f"/api/v1/apps/{app}", key, json_body=wf | {"settings": {"env": {"SAND_X": "1"}}})
    assert r.status_code == 400 and "reserved" in r.text
    r = http("PUT", f"/api/v1/apps/{app}", key, json_body=wf | {"settings": {"nope": 1}})
    assert r.status_code == 400
    for k in ("env", "hosts", "request_timeout_s", "timeout_s"):
        assert k in r.json()["error"]["message"]


def test_a_changed_secret_takes_effect_at_the_next_deploy(http: Http, keys: dict[str, str], app: str) -> None:
    key = keys["owner"]
    newer = SECRET + "-2"
    assert http("PUT", f"/api/v1/apps/{app}/secrets/API_TOKEN", key, json_body={"value": newer}).status_code == 200
    assert _invoke(http, app)["token"] == SECRET, "the running sandbox keeps what it was deployed with"
    assert http("POST", f"/api/v1/apps/{app}/deploy", key).status_code == 202
    assert http.wait_status(key, app, "deployed")["status"] == "deployed"
    assert _invoke(http, app)["token"] == newer
    assert http("DELETE", f"/api/v1/apps/{app}/secrets/API_TOKEN", key).status_code == 200
    assert http("DELETE", f"/api/v1/apps/{app}/secrets/API_TOKEN", key).status_code == 404
