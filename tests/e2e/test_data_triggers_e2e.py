"""Data triggers (issue 30, docs/data-triggers.md) through nginx on the real system: a grain's write into a
triggerable bucket (``context.put(key, value, bucketName=...)``) starts the bucket's target application from the host
of the write; the triggered execution is listed with the target's executions, names its trigger in its timeline and
its log, and has its result (or error) recorded. A bucket is its account's: another account's bucket is not there
(404), nor are another account's applications; an undeployed target is refused (409); bad names get 400.

Needs `make up` (nginx, a frontend, a host agent, Kafka, Cassandra, Docker)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.api import Http, put_app, raw_remove, sign_up

WRITER = (
    "import json\n"
    "def handle(event, context):\n"
    "    context.put(event['key'], json.dumps(event['value']), bucketName=event['bucket'])\n"
    "    return {'wrote': event['key'], 'read_back': context.get(event['key'], bucketName=event['bucket'])}\n"
)
TARGET = (
    "import json, time\n"
    "def handle(event, context):\n"
    "    value = json.loads(event['value'])\n"
    "    context.log('triggered by ' + event['source'] + '/' + event['key'])\n"
    "    if value.get('fail'):\n"
    "        raise ValueError('asked to fail')\n"
    "    return {'got': event, 'handler_started': time.time()}\n"
)

FAILING = (
    "import json, time\n"
    "def handle(event, context):\n"
    "    if json.loads(event['value']).get('hang'):\n"
    "        time.sleep(30)  # killed at the application's timeout_s\n"
    "    raise RuntimeError('the thumbnailer is down: ' + event['key'])\n"
)


@pytest.fixture(scope="module")
def keys(http: Http) -> dict[str, str]:
    tag = uuid.uuid4().hex[:8]
    return {"owner": sign_up(http, f"dtr-{tag}"), "other": sign_up(http, f"dtrx-{tag}")}


@pytest.fixture(scope="module")
def apps(http: Http, keys: dict[str, str]) -> Iterator[dict[str, str]]:
    tag = uuid.uuid4().hex[:8]
    names = {"writer": f"dt-writer-{tag}", "target": f"dt-target-{tag}", "failing": f"dt-failing-{tag}"}
    put_app(http, keys["owner"], names["writer"], [{"name": f"w{tag}", "next": ["end"]}], {f"w{tag}": WRITER})
    # one attempt: its failure is recorded once (retries are test_a_failing_target_is_retried_then_dead_lettered's)
    put_app(
        http,
        keys["owner"],
        names["target"],
        [{"name": f"t{tag}", "next": ["end"]}],
        {f"t{tag}": TARGET},
        settings={"retry": {"attempts": 1}},
    )
    put_app(
        http,
        keys["owner"],
        names["failing"],
        [{"name": f"f{tag}", "next": ["end"]}],
        {f"f{tag}": FAILING},
        settings={"retry": {"attempts": 3, "backoff_s": 0.5}, "timeout_s": 2},
    )
    yield names
    for name in names.values():
        raw_remove(http, keys["owner"], name)


def _executions(http: Http, key: str, app: str) -> list[dict[str, Any]]:
    r = http("GET", f"/api/v1/apps/{app}/executions?limit=100", key)
    assert r.status_code == 200, r.text
    return list(r.json()["executions"])


def _write(http: Http, key: str, writer: str, bucket: str, k: str, value: dict[str, Any]) -> None:
    r = http("POST", f"/app/{writer}", key, json_body={"bucket": bucket, "key": k, "value": value})
    assert r.status_code == 200, r.text
    assert r.json() == {"wrote": k, "read_back": json.dumps(value)}


def _ended(http: Http, key: str, app: str, known: set[str], want: int, timeout: float = 30) -> list[dict[str, Any]]:
    """The app's executions not in `known` once `want` of them have ended, each as GET answers it."""
    deadline = time.monotonic() + timeout
    while True:
        new = [e for e in _executions(http, key, app) if e["execution_id"] not in known]
        bodies = [http("GET", f"/api/v1/executions/{e['execution_id']}", key).json() for e in new]
        ended = [b for b in bodies if b.get("status") in ("succeeded", "failed")]
        if len(ended) >= want:
            return ended
        assert time.monotonic() < deadline, f"{len(ended)} of {want} triggered executions ended: {bodies}"
        time.sleep(0.5)


def test_bad_buckets_and_targets_get_clear_errors(http: Http, keys: dict[str, str], apps: dict[str, str]) -> None:
    key, other = keys["owner"], keys["other"]
    bucket = f"photos-{uuid.uuid4().hex[:6]}"
    assert http("PUT", "/api/v1/buckets/bad%2Fname", key).status_code in (400, 404)
    r = http("PUT", "/api/v1/buckets/" + "x" * 200, key)
    assert r.status_code == 400 and "must match" in r.text, r.text
    r = http("GET", f"/api/v1/buckets/{bucket}", key)
    assert r.status_code == 404 and f"PUT /api/v1/buckets/{bucket}" in r.text, r.text
    assert http("PUT", f"/api/v1/buckets/{bucket}", key).status_code == 201
    assert http("PUT", f"/api/v1/buckets/{bucket}", key).status_code == 200  # it exists: as it is
    # another account: the bucket is not there for it, nor can it bind anything to it
    assert http("GET", f"/api/v1/buckets/{bucket}", other).status_code == 404
    assert http("DELETE", f"/api/v1/buckets/{bucket}", other).status_code == 404
    r = http("PUT", f"/api/v1/buckets/{bucket}/targets/{apps['target']}", other)
    assert r.status_code == 404, r.text
    assert all(b["name"] != bucket for b in http("GET", "/api/v1/buckets", other).json()["buckets"])
    # the owner cannot bind another account's application, nor an undeployed one of its own
    other_app = f"dt-other-{uuid.uuid4().hex[:6]}"
    put_app(http, other, other_app, [{"name": "o", "next": ["end"]}], {"o": TARGET}, deploy=False)
    r = http("PUT", f"/api/v1/buckets/{bucket}/targets/{other_app}", key)
    assert r.status_code == 404 and "in your account" in r.text, r.text
    undeployed = f"dt-undeployed-{uuid.uuid4().hex[:6]}"
    put_app(http, key, undeployed, [{"name": "u", "next": ["end"]}], {"u": TARGET}, deploy=False)
    r = http("PUT", f"/api/v1/buckets/{bucket}/targets/{undeployed}", key)
    assert r.status_code == 409 and "deploy it first" in r.text, r.text
    r = http("PUT", f"/api/v1/buckets/{bucket}/targets/{undeployed}?when_deployed=1", key)
    assert r.status_code == 200 and r.json()["targets"] == [
        {"app": undeployed, "id": r.json()["targets"][0]["id"], "deployed": False}
    ], r.text
    r = http("DELETE", f"/api/v1/buckets/{bucket}/targets/{apps['target']}", key)
    assert r.status_code == 404 and "does not start" in r.text, r.text
    assert http("DELETE", f"/api/v1/buckets/{bucket}", key).status_code == 200
    assert http("GET", f"/api/v1/buckets/{bucket}", key).status_code == 404
    raw_remove(http, key, undeployed)
    raw_remove(http, other, other_app)


def test_a_write_starts_the_target_recorded_with_its_trigger(
    http: Http, keys: dict[str, str], apps: dict[str, str]
) -> None:
    key = keys["owner"]
    bucket = f"uploads-{uuid.uuid4().hex[:6]}"
    assert http("PUT", f"/api/v1/buckets/{bucket}", key).status_code == 201
    r = http("PUT", f"/api/v1/buckets/{bucket}/targets/{apps['target']}", key)
    assert r.status_code == 200 and [t["app"] for t in r.json()["targets"]] == [apps["target"]], r.text
    status = http("GET", f"/api/v1/apps/{apps['target']}", key).json()
    assert status["bucket_triggers"] == [bucket], status
    known = {e["execution_id"] for e in _executions(http, key, apps["target"])}

    _write(http, key, apps["writer"], bucket, "cat.jpg", {"size": 3})
    [run] = _ended(http, key, apps["target"], known, 1)
    assert run["status"] == "succeeded", run
    assert run["result"]["got"] == {
        "trigger_type": "storage",
        "key": "cat.jpg",
        "value": json.dumps({"size": 3}),
        "source": bucket,
    }
    hop = run["timings"]["hops"][0]
    assert hop["step"] == "trigger: event fired" and hop["where"].startswith(f"bucket:{bucket}@"), hop
    # the host agent records the start (and this line) behind the execution, on its own thread: wait a little
    deadline = time.monotonic() + 15
    while True:
        logs = http("GET", f"/api/v1/executions/{run['execution_id']}/logs", key).json()
        texts = [line["text"] for line in logs["logs"]]
        started = any(f"started by the trigger bucket:{bucket}" in t and apps["writer"] in t for t in texts)
        if started or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert started, texts
    assert any(f"triggered by {bucket}/cat.jpg" in t for t in texts), texts
    known.add(run["execution_id"])

    # an error of the triggered execution is recorded as its error
    _write(http, key, apps["writer"], bucket, "bad", {"fail": True})
    [failed] = _ended(http, key, apps["target"], known, 1)
    assert failed["status"] == "failed" and "asked to fail" in json.dumps(failed["error"]), failed
    known.add(failed["execution_id"])

    # a write of the writer's own keys (no bucket) or after the target is unbound starts nothing
    r = http("DELETE", f"/api/v1/buckets/{bucket}/targets/{apps['target']}", key)
    assert r.status_code == 200 and r.json()["targets"] == [], r.text
    assert http("GET", f"/api/v1/apps/{apps['target']}", key).json()["bucket_triggers"] == []
    time.sleep(1)  # host agents hear of the change within tens of milliseconds
    _write(http, key, apps["writer"], bucket, "after", {"size": 1})
    time.sleep(3)
    assert {e["execution_id"] for e in _executions(http, key, apps["target"])} == known
    assert http("DELETE", f"/api/v1/buckets/{bucket}", key).status_code == 200


def test_a_burst_of_writes_each_starts_one_execution(http: Http, keys: dict[str, str], apps: dict[str, str]) -> None:
    key = keys["owner"]
    bucket = f"burst-{uuid.uuid4().hex[:6]}"
    assert http("PUT", f"/api/v1/buckets/{bucket}", key).status_code == 201
    assert http("PUT", f"/api/v1/buckets/{bucket}/targets/{apps['target']}", key).status_code == 200
    known = {e["execution_id"] for e in _executions(http, key, apps["target"])}
    for i in range(20):
        _write(http, key, apps["writer"], bucket, f"k{i}", {"i": i})
    runs = _ended(http, key, apps["target"], known, 20, timeout=60)
    assert sorted(r["result"]["got"]["key"] for r in runs) == sorted(f"k{i}" for i in range(20))
    assert http("DELETE", f"/api/v1/buckets/{bucket}", key).status_code == 200


def _dead_letters(http: Http, key: str, app: str, want: int, timeout: float = 60) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while True:
        r = http("GET", f"/api/v1/apps/{app}/dead-letters", key)
        assert r.status_code == 200, r.text
        letters = list(r.json()["dead_letters"])
        if len(letters) >= want:
            return letters
        assert time.monotonic() < deadline, f"{len(letters)} of {want} dead letters: {letters}"
        time.sleep(0.5)


def test_a_failing_target_is_retried_then_dead_lettered(http: Http, keys: dict[str, str], apps: dict[str, str]) -> None:
    """A triggered execution that raises (or is killed at its timeout) runs settings.retry.attempts times, then its
    event is a dead letter with source bucket:<bucket>, its last error and every execution."""
    key, failing = keys["owner"], apps["failing"]
    bucket = f"retry-{uuid.uuid4().hex[:6]}"
    assert http("PUT", f"/api/v1/buckets/{bucket}", key).status_code == 201
    assert http("PUT", f"/api/v1/buckets/{bucket}/targets/{failing}", key).status_code == 200
    _write(http, key, apps["writer"], bucket, "raises.jpg", {"size": 1})
    [letter] = _dead_letters(http, key, failing, 1)
    assert letter["source"] == f"bucket:{bucket}", letter
    assert letter["attempts"] == 3 and len(letter["executions"]) == 3, letter
    assert letter["event"] == {
        "trigger_type": "storage",
        "key": "raises.jpg",
        "value": json.dumps({"size": 1}),
        "source": bucket,
    }, letter
    assert "the thumbnailer is down: raises.jpg" in json.dumps(letter["error"]), letter
    runs = [http("GET", f"/api/v1/executions/{e}", key).json() for e in letter["executions"]]
    assert [r["status"] for r in runs] == ["failed"] * 3, runs
    wheres = [r["timings"]["hops"][0]["where"] for r in runs]
    assert wheres[0].startswith(f"bucket:{bucket}@"), wheres  # the host of the write
    assert wheres[1].startswith(f"bucket:{bucket}#2@") and wheres[2].startswith(f"bucket:{bucket}#3@"), wheres

    # a grain killed at its timeout_s fails the same way
    _write(http, key, apps["writer"], bucket, "hangs.jpg", {"hang": True})
    letters = _dead_letters(http, key, failing, 2, timeout=90)
    [hung] = [d for d in letters if d["event"]["key"] == "hangs.jpg"]
    assert hung["source"] == f"bucket:{bucket}" and hung["attempts"] == 3, hung
    assert "timeout" in json.dumps(hung["error"]).lower(), hung
    assert http("DELETE", f"/api/v1/buckets/{bucket}", key).status_code == 200
