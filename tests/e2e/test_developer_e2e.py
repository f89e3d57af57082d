"""What a developer expects (issue 29), through nginx on the real system: versions and a rollback (timed), a zip
grain that opens a file beside its code by a relative path after its init() ran once in its worker, and the
execution list with its filters and pages."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest

from tests.e2e.api import Http, put_app, raw_remove, sign_up, zip_bytes


def say(word: str) -> str:
    return f"def handle(event, context):\n    return {{'word': {word!r}}}\n"


WARM_ZIP = zip_bytes(
    {
        "warm.py": b"import os\n"
        b"WARM = []\n"
        b"def init():\n"
        b"    WARM.append(os.getpid())\n"
        b"def handle(event, context):\n"
        b"    if event.get('fail'):\n"
        b"        raise ValueError('asked to fail')\n"
        b"    return {'data': open('data.txt').read(), 'cwd': os.getcwd(), 'warm_in_worker': WARM == [os.getppid()]}\n",
        "data.txt": b"beside the code",
    }
)


@pytest.fixture(scope="module")
def key(http: Http) -> str:
    return sign_up(http, f"dev-{uuid.uuid4().hex[:8]}")


@pytest.fixture
def name(http: Http, key: str) -> Iterator[str]:
    n = f"dev-{uuid.uuid4().hex[:8]}"
    yield n
    raw_remove(http, key, n)


def test_a_rollback_runs_an_old_version_again_as_a_new_one_in_seconds(http: Http, key: str, name: str) -> None:
    grain = f"say{uuid.uuid4().hex[:6]}"
    functions = [{"name": grain, "next": ["end"]}]
    put_app(http, key, name, functions, {grain: say("one")})
    put_app(http, key, name, functions, {grain: say("two")})
    assert http("POST", f"/app/{name}", json_body={}).json()["word"] == "two"

    versions = http("GET", f"/api/v1/apps/{name}/versions", key).json()
    assert [v["version"] for v in versions["versions"]] == [2, 1] and versions["running"] == 2

    t0 = time.monotonic()
    r = http("POST", f"/api/v1/apps/{name}/rollback", key, json_body={"version": 1})
    assert r.status_code == 202, r.text
    assert r.json()["version"] == 3
    app = http.wait_status(key, name, "deployed")
    took = time.monotonic() - t0
    assert app["status"] == "deployed" and app["version"] == 3, app
    print(f"\nrollback to version 1: deployed again in {took:.2f} s")
    assert http("POST", f"/app/{name}", json_body={}).json()["word"] == "one"
    v3 = http("GET", f"/api/v1/apps/{name}/versions/3", key).json()
    assert v3["description"] == "rollback to version 1" and v3["running"] is True
    assert http("GET", f"/api/v1/apps/{name}/versions/9", key).status_code == 404
    other = sign_up(http, f"dev-other-{uuid.uuid4().hex[:8]}")
    assert http("GET", f"/api/v1/apps/{name}/versions", other).status_code == 404
    assert http("POST", f"/api/v1/apps/{name}/rollback", other).status_code == 404


def test_a_zip_grain_opens_files_beside_its_code_after_its_init(http: Http, key: str, name: str) -> None:
    grain = f"warm{uuid.uuid4().hex[:6]}"
    # the zip's module is warm.py: the grain's resource
    put_app(http, key, name, [{"name": grain, "resource": "warm", "next": ["end"]}], {"warm": WARM_ZIP})
    out = http("POST", f"/app/{name}", json_body={}).json()
    assert out["data"] == "beside the code", out
    assert out["cwd"] == "/sand/app/code", out
    assert out["warm_in_worker"] is True, out


def test_executions_are_listed_filtered_and_paged(http: Http, key: str, name: str) -> None:
    put_app(http, key, name, [{"name": "warm", "next": ["end"]}], {"warm": WARM_ZIP})
    for i in range(5):
        r = http("POST", f"/app/{name}", json_body={"fail": i % 2 == 1})
        assert r.status_code == (500 if i % 2 == 1 else 200), r.text
    time.sleep(1)  # the records are written behind the answers
    page = http("GET", f"/api/v1/apps/{name}/executions?limit=2", key).json()
    assert len(page["executions"]) == 2 and page["next"]
    seen = [e["execution_id"] for e in page["executions"]]
    while page["next"]:
        page = http("GET", f"/api/v1/apps/{name}/executions?limit=2&cursor={page['next']}", key).json()
        seen += [e["execution_id"] for e in page["executions"]]
    assert len(seen) == 5 and len(set(seen)) == 5
    failed = http("GET", f"/api/v1/apps/{name}/executions?status=failed", key).json()["executions"]
    assert len(failed) == 2 and all("asked to fail" in (e["error"] or "") for e in failed), failed
    assert http("GET", f"/api/v1/apps/{name}/executions?status=done", key).status_code == 400
    other = sign_up(http, f"dev-other-{uuid.uuid4().hex[:8]}")
    assert http("GET", f"/api/v1/apps/{name}/executions", other).status_code == 404
