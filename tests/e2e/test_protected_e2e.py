"""Protected end-user endpoints (issue 29), through nginx on the real system: an application in `key` mode answers
401 without or with a wrong invoke key and runs with a right one; a revoked key is refused by every frontend within
app.cache.ms (polled); `hmac` mode wants a fresh signature of the exact body; the async result route and the KNIX door
follow the same rule; another account cannot list, create or revoke the keys. The attack
(test_a_protected_app_is_not_reachable_without_credentials) passes on no code before issue 29: there every app was
reachable by anyone.

Needs `make up` (nginx, frontends, a host agent, Kafka, Cassandra, Docker)."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.e2e.api import Http, put_app, raw_remove, sign_up

ECHO = "def handle(event, context):\n    return {'got': event}\n"
REVOKE_BOUND_S = 15  # app.cache.ms (1 s by default) plus one read, with room for a loaded machine
# AppDirectory.IDLE_FACTOR * app.cache.ms (5 s by default) + margin: after it, every frontend's next request
# reads the changed rule, whatever its cache held
SETTLE_S = 6.5


@pytest.fixture(scope="module")
def keys(http: Http) -> dict[str, str]:
    tag = uuid.uuid4().hex[:8]
    return {"owner": sign_up(http, f"prot-{tag}"), "other": sign_up(http, f"protx-{tag}")}


@pytest.fixture(scope="module")
def app(http: Http, keys: dict[str, str]) -> Iterator[str]:
    name = f"prot-{uuid.uuid4().hex[:8]}"
    app = put_app(http, keys["owner"], name, [{"name": "echo", "next": ["end"]}], {"echo": ECHO})
    assert app["status"] == "deployed", app
    yield name
    raw_remove(http, keys["owner"], name)


def end_user(
    http: Http, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
) -> requests.Response:
    """An end user's call: no Authorization header, only the endpoint's credentials."""
    h = {"Content-Type": "application/json"} | (headers or {})
    return http.s.request(method, http.base + path, data=body, headers=h, timeout=60)


def signed(secret: str, body: bytes, ts: int | None = None) -> dict[str, str]:
    ts = int(time.time()) if ts is None else ts
    mac = hmac.new(secret.encode(), f"{ts}.".encode() + body, hashlib.sha256).hexdigest()
    return {"X-Sand-Timestamp": str(ts), "X-Sand-Signature": f"sha256={mac}"}


def set_mode(http: Http, key: str, app: str, mode: str) -> dict[str, Any]:
    """Set the mode and wait until every frontend behind nginx applies it."""
    r = http("PUT", f"/api/v1/apps/{app}/endpoint", key, json_body={"auth": mode})
    assert r.status_code == 200, r.text
    time.sleep(SETTLE_S)
    return r.json()


def poll_status(http: Http, path: str, headers: dict[str, str], want: int, body: bytes = b"{}") -> int:
    """The status `path` answers once it is `want`, or the last one after REVOKE_BOUND_S (nginx spreads calls over
    the frontends, each with its own application cache)."""
    deadline = time.monotonic() + REVOKE_BOUND_S
    while True:
        status = end_user(http, "POST", path, body, headers).status_code
        if status == want or time.monotonic() > deadline:
            return status
        time.sleep(0.3)


def test_a_public_app_answers_anyone(http: Http, keys: dict[str, str], app: str) -> None:
    assert http("GET", f"/api/v1/apps/{app}/endpoint", keys["owner"]).json()["auth"] == "public"
    r = end_user(http, "POST", f"/app/{app}", b'{"n": 1}')
    assert r.status_code == 200, r.text
    assert r.json() == {"got": {"n": 1}}


def test_a_protected_app_is_not_reachable_without_credentials(http: Http, keys: dict[str, str], app: str) -> None:
    owner = keys["owner"]
    set_mode(http, owner, app, "key")
    created = http("POST", f"/api/v1/apps/{app}/keys", owner, json_body={"name": "e2e"})
    assert created.status_code == 201, created.text
    key = created.json()["key"]
    try:
        # every frontend behind nginx refuses within the cache bound, and keeps refusing
        assert poll_status(http, f"/app/{app}", {}, 401) == 401
        for _ in range(6):
            r = end_user(http, "POST", f"/app/{app}", b"{}")
            assert r.status_code == 401, r.text
            assert "X-Sand-Key" in r.headers.get("WWW-Authenticate", "")
            assert r.json()["error"]["code"] == "unauthorized"
        r = end_user(http, "POST", f"/app/{app}", b"{}", {"X-Sand-Key": "sik_" + "x" * 43})
        assert r.status_code == 401 and r.json()["error"]["reason"] == "bad_key", r.text
        # the account's API key is no invoke key
        r = end_user(http, "POST", f"/app/{app}", b"{}", {"X-Sand-Key": owner})
        assert r.status_code == 401, r.text
        for _ in range(6):
            r = end_user(http, "POST", f"/app/{app}", b'{"n": 2}', {"X-Sand-Key": key})
            assert r.status_code == 200, r.text
            assert r.json() == {"got": {"n": 2}}
    finally:
        set_mode(http, owner, app, "public")


def test_the_async_result_and_the_knix_door_follow_the_rule(http: Http, keys: dict[str, str], app: str) -> None:
    owner = keys["owner"]
    key = http("POST", f"/api/v1/apps/{app}/keys", owner).json()["key"]
    set_mode(http, owner, app, "key")
    try:
        assert poll_status(http, f"/app/{app}?async=1", {"X-Sand-Key": key}, 202) == 202
        r = end_user(http, "POST", f"/app/{app}?async=1", b'{"n": 3}', {"X-Sand-Key": key})
        assert r.status_code == 202, r.text
        exec_id = r.json()["execution_id"]
        assert end_user(http, "GET", f"/app/{app}/executions/{exec_id}").status_code == 401
        deadline = time.monotonic() + 60
        while True:
            r = end_user(http, "GET", f"/app/{app}/executions/{exec_id}", headers={"X-Sand-Key": key})
            if r.status_code != 202 or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        assert r.status_code == 200 and r.json() == {"got": {"n": 3}}, r.text
        assert end_user(http, "POST", f"/app/{app}/knix", b"{}").status_code == 401
        assert end_user(http, "POST", f"/app/{app}/knix?executionId={exec_id}").status_code == 401
        r = end_user(http, "POST", f"/app/{app}/knix", b'{"n": 4}', {"X-Sand-Key": key})
        assert r.status_code == 200 and r.json() == {"got": {"n": 4}}, r.text
    finally:
        set_mode(http, owner, app, "public")


def test_a_revoked_key_is_refused_within_the_bound(http: Http, keys: dict[str, str], app: str) -> None:
    owner = keys["owner"]
    k = http("POST", f"/api/v1/apps/{app}/keys", owner, json_body={"name": "revoked"}).json()
    set_mode(http, owner, app, "key")
    try:
        assert poll_status(http, f"/app/{app}", {"X-Sand-Key": k["key"]}, 200) == 200
        listed = http("GET", f"/api/v1/apps/{app}/keys", owner).json()["keys"]
        assert k["id"] in [x["id"] for x in listed] and k["key"] not in json.dumps(listed)
        assert http("DELETE", f"/api/v1/apps/{app}/keys/{k['id']}", owner).status_code == 200
        assert poll_status(http, f"/app/{app}", {"X-Sand-Key": k["key"]}, 401) == 401
        time.sleep(SETTLE_S)
        for _ in range(6):  # every frontend, not just one
            assert end_user(http, "POST", f"/app/{app}", b"{}", {"X-Sand-Key": k["key"]}).status_code == 401
    finally:
        set_mode(http, owner, app, "public")


def test_hmac_wants_a_fresh_signature_of_the_body(http: Http, keys: dict[str, str], app: str) -> None:
    owner = keys["owner"]
    r = http("POST", f"/api/v1/apps/{app}/signing-secret", owner)
    assert r.status_code == 201, r.text
    secret = r.json()["secret"]
    assert secret not in http("GET", f"/api/v1/apps/{app}/endpoint", owner).text
    set_mode(http, owner, app, "hmac")
    body = b'{"n": 5}'
    try:
        assert poll_status(http, f"/app/{app}", {}, 401, body) == 401
        r = end_user(http, "POST", f"/app/{app}", body, signed(secret, body))
        assert r.status_code == 200 and r.json() == {"got": {"n": 5}}, r.text
        r = end_user(http, "POST", f"/app/{app}", b'{"n": 6}', signed(secret, body))
        assert r.status_code == 401 and r.json()["error"]["reason"] == "bad_signature", r.text
        r = end_user(http, "POST", f"/app/{app}", body, signed("sss_wrong", body))
        assert r.status_code == 401, r.text
        r = end_user(http, "POST", f"/app/{app}", body, signed(secret, body, int(time.time()) - 600))
        assert r.status_code == 401 and r.json()["error"]["reason"] == "stale_timestamp", r.text
    finally:
        set_mode(http, owner, app, "public")


def test_another_account_cannot_see_or_change_the_protection(http: Http, keys: dict[str, str], app: str) -> None:
    other = keys["other"]
    k = http("POST", f"/api/v1/apps/{app}/keys", keys["owner"]).json()
    assert http("GET", f"/api/v1/apps/{app}/keys", other).status_code == 404
    assert http("POST", f"/api/v1/apps/{app}/keys", other).status_code == 404
    assert http("DELETE", f"/api/v1/apps/{app}/keys/{k['id']}", other).status_code == 404
    assert http("PUT", f"/api/v1/apps/{app}/endpoint", other, json_body={"auth": "public"}).status_code == 404
    assert http("POST", f"/api/v1/apps/{app}/signing-secret", other).status_code == 404
    assert k["id"] in [x["id"] for x in http("GET", f"/api/v1/apps/{app}/keys", keys["owner"]).json()["keys"]]
