"""Events from the world (issue 30, docs/triggers.md) through nginx on the real system: a timer's ticks each run
once although both frontends schedule it; a Kafka topic's records each run once and the group's offsets are
committed after; an event that always fails lands in the dead letters after the stated attempts and can be run
again; Idempotency-Key answers a repeat with the first execution; settings.triggers declares triggers with the
workflow; bad schedules, missing topics, SAND's own topics, undeployed and other accounts' applications get clear
errors.

Needs `make up` (nginx, two frontends, a host agent, Kafka, Cassandra, Docker)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.structs import TopicPartition

from tests.e2e.api import Http, error_code, put_app, raw_remove, sign_up

ECHO = (
    "import time\n"
    "def handle(event, context):\n"
    "    if isinstance(event, dict) and event.get('fail'):\n"
    "        raise ValueError('asked to fail')\n"
    "    return {'got': event, 'handler_started': time.time()}\n"
)


@pytest.fixture(scope="module")
def keys(http: Http) -> dict[str, str]:
    tag = uuid.uuid4().hex[:8]
    return {"owner": sign_up(http, f"trg-{tag}"), "other": sign_up(http, f"trgx-{tag}")}


@pytest.fixture(scope="module")
def app(http: Http, keys: dict[str, str]) -> Iterator[str]:
    name = f"triggers-{uuid.uuid4().hex[:8]}"
    grain = f"echo{uuid.uuid4().hex[:6]}"
    put_app(
        http,
        keys["owner"],
        name,
        [{"name": grain, "next": ["end"]}],
        {grain: ECHO},
        settings={"retry": {"attempts": 2, "backoff_s": 0.2}},
    )
    yield name
    raw_remove(http, keys["owner"], name)


def _executions(http: Http, key: str, app: str, limit: int = 100) -> list[dict[str, Any]]:
    r = http("GET", f"/api/v1/apps/{app}/executions?limit={limit}", key)
    assert r.status_code == 200, r.text
    return list(r.json()["executions"])


def _outputs(http: Http, key: str, app: str, since: float) -> list[dict[str, Any]]:
    """The outputs of the app's executions started after `since` (epoch s) that succeeded."""
    out = []
    for e in _executions(http, key, app):
        if e["status"] == "succeeded":
            body = http("GET", f"/api/v1/executions/{e['execution_id']}", key).json()
            if body["result"]["handler_started"] >= since:
                out.append(body)
    return out


def test_bad_triggers_get_clear_errors(http: Http, keys: dict[str, str], app: str) -> None:
    key = keys["owner"]
    cases: list[tuple[dict[str, Any], int, str]] = [
        ({"cron": "61 * * * *"}, 400, "does not parse"),
        ({"cron": "* * *"}, 400, "5 fields"),
        ({"every": "0s"}, 400, "between 1s and 7d"),
        ({"every": "soon"}, 400, "not a duration"),
        ({"every": "1m", "topic": "x"}, 400, "exactly one of"),
        ({"topic": f"events.none-{uuid.uuid4().hex[:6]}"}, 404, "create it first"),
        ({"topic": "sand.control"}, 400, "SAND's or Kafka's own"),
        ({"topic": "events.x", "batch_size": 1000}, 400, "batch_size"),
        ({"every": "1m", "colour": "red"}, 400, "has no field 'colour'"),
    ]
    for spec, status, words in cases:
        r = http("PUT", f"/api/v1/apps/{app}/triggers/bad", key, json_body=spec)
        assert r.status_code == status and words in r.text, (spec, r.status_code, r.text)
    r = http("PUT", f"/api/v1/apps/{app}/triggers/bad", keys["other"], json_body={"every": "1m"})
    assert r.status_code == 404, r.text  # another account's application is not there
    assert http("GET", f"/api/v1/apps/{app}/dead-letters", keys["other"]).status_code == 404
    undeployed = f"undeployed-{uuid.uuid4().hex[:6]}"
    put_app(http, key, undeployed, [{"name": "u", "next": ["end"]}], {"u": ECHO}, deploy=False)
    r = http("PUT", f"/api/v1/apps/{undeployed}/triggers/t", key, json_body={"every": "1m"})
    assert r.status_code == 409 and "deploy it first" in r.text, r.text
    r = http(
        "PUT",
        f"/api/v1/apps/{undeployed}",
        key,
        json_body={
            "name": undeployed,
            "entry": "u",
            "functions": [{"name": "u", "next": ["end"]}],
            "settings": {"triggers": [{"name": "t", "cron": "bad"}]},
        },
    )
    assert r.status_code == 400 and "settings.triggers" in r.text, r.text
    raw_remove(http, key, undeployed)


def test_each_timer_tick_runs_once_with_the_trigger_in_its_timeline(http: Http, keys: dict[str, str], app: str) -> None:
    key = keys["owner"]
    since = time.time()
    r = http("PUT", f"/api/v1/apps/{app}/triggers/tick", key, json_body={"every": "1s"})
    assert r.status_code == 201, r.text
    assert r.json()["schedule"] == "every 1s" and r.json()["next"]
    time.sleep(7)
    assert http("DELETE", f"/api/v1/apps/{app}/triggers/tick", key).status_code == 200
    time.sleep(2)  # the last tick's execution ends
    outs = [o for o in _outputs(http, key, app, since) if o["result"]["got"].get("trigger") == "tick"]
    ticks = [o["result"]["got"]["time"] for o in outs]
    assert len(ticks) >= 4, ticks  # two frontends schedule it; 1 s ticks for ~7 s
    assert len(ticks) == len(set(ticks)), f"a tick ran twice: {sorted(ticks)}"
    hop = outs[0]["timings"]["hops"][0]
    assert hop["step"] == "trigger: event fired" and hop["where"].startswith("timer:tick@"), hop
    status = http("GET", f"/api/v1/apps/{app}", key).json()
    assert all(t["name"] != "tick" for t in status["triggers"])


def test_a_topics_records_each_run_once_and_are_committed(
    http: Http, keys: dict[str, str], app: str, kafka_bootstrap: str
) -> None:
    key = keys["owner"]
    topic = f"events.e2e-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)])
    r = http(
        "PUT",
        f"/api/v1/apps/{app}/triggers/orders",
        key,
        json_body={"topic": topic, "start": "earliest", "batch_size": 4},
    )
    assert r.status_code == 201, r.text
    group = r.json()["group"]
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    for i in range(12):
        producer.send(topic, json.dumps({"order": i}).encode(), key=str(i).encode())
    producer.send(topic, b"not json")
    producer.flush()
    deadline = time.monotonic() + 60
    seen: list[Any] = []
    while time.monotonic() < deadline:
        seen = []
        for e in _executions(http, key, app):
            if e["status"] == "succeeded":
                got = http("GET", f"/api/v1/executions/{e['execution_id']}", key).json()["result"]["got"]
                if got.get("topic") == topic:
                    seen.append(got)
        if len(seen) >= 13:
            break
        time.sleep(1)
    values = [s["value"] for s in seen]
    assert sorted(v["order"] for v in values if isinstance(v, dict)) == list(range(12)), values
    assert "not json" in values  # a record that is not JSON comes as text
    assert len({(s["partition"], s["offset"]) for s in seen}) == len(seen) == 13
    # committed once the results were stored: the group has nothing left to read
    consumer = KafkaConsumer(bootstrap_servers=kafka_bootstrap, group_id=group, enable_auto_commit=False)
    time.sleep(2)
    parts = [TopicPartition(topic, p) for p in range(2)]
    committed = sum(consumer.committed(tp) or 0 for tp in parts)
    consumer.close()
    assert committed == 13, committed
    assert http("DELETE", f"/api/v1/apps/{app}/triggers/orders", key).status_code == 200


def test_an_event_that_always_fails_is_dead_lettered_and_can_run_again(
    http: Http, keys: dict[str, str], app: str
) -> None:
    key = keys["owner"]
    marker = uuid.uuid4().hex
    r = http("POST", f"/app/{app}?async=1", key, json_body={"fail": True, "marker": marker})
    assert r.status_code == 202, r.text
    first = r.json()["execution_id"]
    letter = None
    deadline = time.monotonic() + 60
    while letter is None and time.monotonic() < deadline:
        body = http("GET", f"/api/v1/apps/{app}/dead-letters", key).json()
        letter = next((d for d in body["dead_letters"] if d["event"].get("marker") == marker), None)
        time.sleep(0.5)
    assert letter is not None, "no dead letter within 60 s"
    assert letter["attempts"] == 2 and letter["source"] == "async"  # settings.retry.attempts
    assert letter["executions"][0] == first and len(letter["executions"]) == 2
    assert letter["error"]["type"] == "ValueError" and "asked to fail" in letter["error"]["message"]
    assert http("GET", f"/api/v1/apps/{app}/dead-letters/{letter['id']}", key).json()["id"] == letter["id"]
    r = http("POST", f"/api/v1/apps/{app}/dead-letters/{letter['id']}/redrive", key)
    assert r.status_code == 202 and r.json()["execution_id"], r.text
    assert http("GET", f"/api/v1/apps/{app}/dead-letters/{letter['id']}", key).status_code == 404
    assert http("GET", f"/api/v1/apps/{app}/dead-letters/not-an-id", key).status_code == 404


def test_an_idempotency_key_answers_its_first_execution(http: Http, keys: dict[str, str], app: str) -> None:
    key = keys["owner"]
    idem = f"k-{uuid.uuid4().hex}"
    headers = {"Authorization": f"Bearer {key}", "Idempotency-Key": idem}
    r1 = requests.post(f"{http.base}/app/{app}", json={"n": 1}, headers=headers, timeout=60)
    r2 = requests.post(f"{http.base}/app/{app}", json={"n": 1}, headers=headers, timeout=60)
    assert r1.status_code == r2.status_code == 200, (r1.text, r2.text)
    assert r1.headers["X-Sand-Execution-Id"] == r2.headers["X-Sand-Execution-Id"]
    assert r2.headers.get("Idempotent-Replayed") == "true" and r2.json() == r1.json()
    r3 = requests.post(f"{http.base}/app/{app}", json={"n": 2}, headers=headers, timeout=60)
    assert r3.status_code == 422 and error_code(r3) == "idempotency_key_reused", r3.text
    r4 = requests.post(f"{http.base}/app/{app}?async=1", json={"n": 1}, headers=headers, timeout=60)
    assert r4.status_code == 202 and r4.json()["execution_id"] == r1.headers["X-Sand-Execution-Id"]
    bad = {**headers, "Idempotency-Key": "x" * 300}
    r5 = requests.post(f"{http.base}/app/{app}", json={"n": 1}, headers=bad, timeout=60)
    assert r5.status_code == 400 and "Idempotency-Key" in r5.text


def test_the_workflow_declares_its_triggers(http: Http, keys: dict[str, str]) -> None:
    key = keys["owner"]
    name = f"declared-{uuid.uuid4().hex[:6]}"
    settings = {"triggers": [{"name": "nightly", "cron": "0 3 * * *", "input": {"job": "report"}}]}
    put_app(http, key, name, [{"name": "d", "next": ["end"]}], {"d": ECHO}, settings=settings, deploy=False)
    got = http("GET", f"/api/v1/apps/{name}", key).json()["triggers"]
    assert [(t["name"], t["origin"], t["schedule"]) for t in got] == [("nightly", "workflow", "cron 0 3 * * *")]
    assert got[0]["next"].endswith("T03:00:00Z")
    body = {"name": name, "entry": "d", "functions": [{"name": "d", "next": ["end"]}], "settings": {}}
    assert http("PUT", f"/api/v1/apps/{name}", key, json_body=body).status_code == 200
    assert http("GET", f"/api/v1/apps/{name}/triggers", key).json()["triggers"] == []
    raw_remove(http, key, name)
