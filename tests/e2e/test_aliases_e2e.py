"""Aliases and invocations that name an alias or a version (issue 29), through nginx on the real system: an alias
on the running version answers through `POST /app/{app}@{alias}` on every frontend; an alias or a version that does
not run answers 409 saying what to do (running a second version beside the current one is not built yet, so a
50/50 split answers 409 too); bad names, unknown versions and other accounts get clear 4xx.

Needs `make up` (nginx, frontends, a host agent, Kafka, Cassandra, Docker)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
import requests

from tests.e2e.api import Http, error_code, put_app, raw_remove, sign_up


def say(word: str) -> str:
    return f"def handle(event, context):\n    return {{'word': {word!r}}}\n"


@pytest.fixture(scope="module")
def key(http: Http) -> str:
    return sign_up(http, f"alias-{uuid.uuid4().hex[:8]}")


@pytest.fixture(scope="module")
def name(http: Http, key: str) -> Iterator[str]:
    """Version 1 answers "one", version 2 (running) "two"."""
    n = f"alias-{uuid.uuid4().hex[:8]}"
    grain = f"say{uuid.uuid4().hex[:6]}"
    functions = [{"name": grain, "next": ["end"]}]
    put_app(http, key, n, functions, {grain: say("one")})
    app = put_app(http, key, n, functions, {grain: say("two")})
    assert app["status"] == "deployed" and app["version"] == 2, app
    yield n
    raw_remove(http, key, n)


def invoke(http: Http, path: str, want: int | None = None) -> requests.Response:
    """An invocation right after an alias changed: every frontend hears of it on sand.control within moments, so
    it is asked again (up to 5 s) until it answers `want` (default: anything but 404 and 409)."""
    deadline = time.monotonic() + 5
    while True:
        r = http("POST", path, json_body={})
        done = r.status_code == want if want is not None else r.status_code not in (404, 409)
        if done or time.monotonic() > deadline:
            return r
        time.sleep(0.2)


def test_an_alias_on_the_running_version_answers_by_name(http: Http, key: str, name: str) -> None:
    r = http("PUT", f"/api/v1/apps/{name}/aliases/prod", key, json_body={"version": 2})
    assert r.status_code == 200, r.text
    assert r.json()["serves"] is True and r.json()["invoke"] == f"/app/{name}@prod"
    for _ in range(6):  # nginx spreads these over the frontends
        r = invoke(http, f"/app/{name}@prod")
        assert r.status_code == 200 and r.json() == {"word": "two"}, r.text
    assert http("POST", f"/app/{name}@2", json_body={}).json() == {"word": "two"}
    listed = http("GET", f"/api/v1/apps/{name}/aliases", key).json()
    assert listed["running_version"] == 2
    assert [(a["name"], a["version"]) for a in listed["aliases"]] == [("prod", 2)]


def test_a_version_that_does_not_run_answers_409_with_what_to_do(http: Http, key: str, name: str) -> None:
    r = http("POST", f"/app/{name}@1", json_body={})
    assert r.status_code == 409 and "sand rollback" in r.text, r.text
    r = http("PUT", f"/api/v1/apps/{name}/aliases/old", key, json_body={"version": 1})
    assert r.status_code == 200 and r.json()["serves"] is False, r.text
    r = invoke(http, f"/app/{name}@old")
    assert r.status_code == 409 and "runs version 2" in r.text, r.text


def test_a_split_over_two_versions(http: Http, key: str, name: str) -> None:
    body = {"version": 1, "weights": {"2": 0.5}}
    r = http("PUT", f"/api/v1/apps/{name}/aliases/half", key, json_body=body)
    assert r.status_code == 200, r.text
    answers = set()
    for _ in range(40):
        r = invoke(http, f"/app/{name}@half")
        if r.status_code == 409:
            # running two versions at once is not built yet: the split says so instead of answering
            assert "not built yet" in r.text, r.text
            return
        assert r.status_code == 200, r.text
        answers.add(r.json()["word"])
    assert answers == {"one", "two"}


def test_bad_aliases_unknown_versions_and_other_accounts(http: Http, key: str, name: str) -> None:
    route = f"/api/v1/apps/{name}/aliases"
    for bad in ("Prod", "x" * 33, "9lives"):
        r = http("PUT", f"{route}/{bad}", key, json_body={"version": 2})
        assert r.status_code == 400 and "alias name" in r.text, (bad, r.text)
    r = http("PUT", f"{route}/prod", key, json_body={"version": 9})
    assert r.status_code == 400 and "has no version 9" in r.text, r.text
    r = http("PUT", f"{route}/prod", key, json_body={"version": 2, "weights": {"1": 3}})
    assert r.status_code == 400, r.text
    assert http("POST", f"/app/{name}@nope", json_body={}).status_code == 404
    assert http("POST", f"/app/{name}@0", json_body={}).status_code == 400
    other = sign_up(http, f"alias-other-{uuid.uuid4().hex[:8]}")
    assert http("GET", route, other).status_code == 404
    r = http("PUT", f"{route}/mine", other, json_body={"version": 2})
    assert r.status_code == 404 and error_code(r) == "not_found", r.text
    assert http("DELETE", f"{route}/prod", other).status_code == 404


def test_after_a_rollback_the_alias_follows_when_pointed(http: Http, key: str, name: str) -> None:
    r = http("POST", f"/api/v1/apps/{name}/rollback", key, json_body={"version": 1})
    assert r.status_code == 202 and r.json()["version"] == 3, r.text
    assert http.wait_status(key, name, "deployed")["version"] == 3
    http("PUT", f"/api/v1/apps/{name}/aliases/prod", key, json_body={"version": 2})
    assert invoke(http, f"/app/{name}@prod", want=409).status_code == 409  # prod still names version 2
    assert http("PUT", f"/api/v1/apps/{name}/aliases/prod", key, json_body={"version": 3}).status_code == 200
    r = invoke(http, f"/app/{name}@prod")
    assert r.status_code == 200 and r.json() == {"word": "one"}, r.text
    assert http("DELETE", f"/api/v1/apps/{name}/aliases/prod", key).status_code == 200
    assert invoke(http, f"/app/{name}@prod", want=404).status_code == 404
