"""Tenants are contained (issue 9), on the real system through nginx: each attack a tenant could try fails with a
clear error and leaves the platform working for everybody else.

- requirements that are not plain package pins never reach pip, and what pip installs it installs inside a
  throw-away container, never on the host;
- settings above the operator's caps are refused, naming the cap;
- a crash-looping and a pip-failing application do not hold up another account's deploy;
- an application flooding its queues and its data hits its own quota while another application keeps working;
- a grain cannot answer another application's caller, nor make Kafka topics by naming made-up grains.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import requests
from kafka.admin import KafkaAdminClient

from tests.e2e.api import Http, error_code, put_app, raw_remove, sign_up, zip_bytes

RUN = uuid.uuid4().hex[:8]
METRICS = f"http://{os.environ.get('SAND_BIND', '127.0.0.1')}:{os.environ.get('SAND_HOSTAGENT_METRICS_PORT', '9100')}"
ECHO = "def handle(event, context):\n    return event\n"
ONE = [{"name": "g", "next": ["end"]}]


@pytest.fixture(scope="module")
def tenants(http: Http) -> dict[str, str]:
    return {who: sign_up(http, f"contain-{who}-{RUN}") for who in ("mallory", "alice")}


def metric(name: str, labels: str = "") -> float:
    """The host agent's Prometheus value of ``name``, summed over its series whose labels contain ``labels``."""
    total = 0.0
    for line in requests.get(METRICS + "/metrics", timeout=10).text.splitlines():
        head, _, value = line.rpartition(" ")
        if not line.startswith("#") and head.split("{")[0] == name and labels in head:
            total += float(value)
    return total


# --- requirements ---------------------------------------------------------------------------------------------

BAD_REQUIREMENT_LINES = [
    "-e .",
    "--index-url http://evil.example/simple",
    "-r /etc/passwd",
    "./pkg",
    "/etc/passwd",
    "../pkg",
    "file:///etc/passwd",
    "pkg @ https://evil.example/pkg-1.0-py3-none-any.whl",
    "git+https://evil.example/pkg.git",
]


@pytest.mark.parametrize("line", BAD_REQUIREMENT_LINES)
def test_a_requirement_that_is_not_a_package_pin_is_refused_at_upload(
    http: Http, tenants: dict[str, str], line: str
) -> None:
    # a local package whose setup.py would write on the host if pip ever ran it there
    marker = Path(f"/tmp/sand-e2e-pwned-{RUN}")
    setup = f"open({str(marker)!r}, 'w').write('ran on the host')\nfrom setuptools import setup\nsetup(name='pkg')\n"
    grain = f"req{BAD_REQUIREMENT_LINES.index(line)}"
    zipped = zip_bytes({f"{grain}.py": ECHO, "requirements.txt": f"six==1.17.0\n{line}\n", "pkg/setup.py": setup})
    r = http("PUT", f"/api/v1/grains/{grain}", tenants["mallory"], data=zipped, content_type="application/zip")
    assert r.status_code == 400, r.text
    message = r.json()["error"]["message"]
    assert "requirements.txt line 2" in message and "is not accepted" in message, message
    assert "root:" not in message, "nothing of the host's files leaks into the error"
    assert not marker.exists()


def test_requirements_are_installed_in_a_container_from_the_package_index(http: Http, tenants: dict[str, str]) -> None:
    code = (
        "import os\nimport idna\n"
        "def handle(event, context):\n"
        "    return {'idna': idna.__version__, 'uid': os.getuid(), 'file': idna.__file__}\n"
    )
    name = f"deps-{RUN}"
    try:
        app = put_app(
            http,
            tenants["alice"],
            name,
            [{"name": "deps", "next": ["end"]}],
            {"deps": zip_bytes({"deps.py": code, "requirements.txt": "idna==3.10\n"})},
        )
        assert app["status"] == "deployed", app
        r = http("POST", f"/app/{name}", json_body={})
        assert r.status_code == 200, r.text
        assert r.json()["idna"] == "3.10" and r.json()["uid"] == 1000, r.json()
        assert r.json()["file"].startswith("/sand/app/lib/"), r.json()
    finally:
        raw_remove(http, tenants["alice"], name)


def test_a_requirement_pip_cannot_find_fails_the_deploy_with_pips_own_error(
    http: Http, tenants: dict[str, str]
) -> None:
    name = f"nopkg-{RUN}"
    missing = f"sand-e2e-missing-{RUN}"
    try:
        app = put_app(
            http,
            tenants["mallory"],
            name,
            [{"name": "nopkg", "next": ["end"]}],
            {"nopkg": zip_bytes({"nopkg.py": ECHO, "requirements.txt": f"{missing}==1.0\n"})},
        )
        assert app["status"] == "failed", app
        assert missing in app["error"] and (
            "No matching distribution" in app["error"] or "Could not find a version" in app["error"]
        ), app["error"]
    finally:
        raw_remove(http, tenants["mallory"], name)


# --- caps -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "setting,value,cap",
    [
        ("timeout_s", 301, "timeout.s.max"),
        ("instance_memory_mb", 2049, "instance.memory.mb.max"),
        ("concurrency", 65, "concurrency.max"),
        ("sandbox_memory_mb", 2049, "sandbox.memory.mb.max"),
        ("sandbox_cpus", 2.5, "sandbox.cpus.max"),
        ("sandbox_pids", 1025, "sandbox.pids.max"),
    ],
)
def test_a_setting_above_the_operators_cap_is_a_400_naming_the_cap(
    http: Http, tenants: dict[str, str], setting: str, value: float, cap: str
) -> None:
    r = http(
        "PUT",
        f"/api/v1/apps/capped-{RUN}",
        tenants["mallory"],
        json_body={"name": "c", "entry": "g", "functions": ONE, "settings": {setting: value}},
    )
    assert r.status_code == 400 and error_code(r) == "bad_request", r.text
    assert f"limits {cap}" in r.json()["error"]["message"], r.text


def test_more_grains_than_the_cap_is_a_400(http: Http, tenants: dict[str, str]) -> None:
    functions = [{"name": f"g{i}", "next": [f"g{i + 1}" if i < 999 else "end"]} for i in range(1000)]
    r = http(
        "PUT",
        f"/api/v1/apps/many-{RUN}",
        tenants["mallory"],
        json_body={"name": "m", "entry": "g0", "functions": functions},
    )
    assert r.status_code == 400, r.text
    assert "limits grains.max" in r.json()["error"]["message"], r.text


# --- the control path -----------------------------------------------------------------------------------------


def test_broken_applications_do_not_hold_up_another_accounts_deploy(http: Http, tenants: dict[str, str]) -> None:
    crash, pipfail, good = f"crash-{RUN}", f"pipfail-{RUN}", f"good-{RUN}"
    try:
        put_app(
            http,
            tenants["mallory"],
            crash,
            [{"name": "crash", "next": ["end"]}],
            {"crash": "import os\nos._exit(3)\n"},
            wait=False,
        )
        put_app(
            http,
            tenants["mallory"],
            pipfail,
            [{"name": "pipfail", "next": ["end"]}],
            {"pipfail": zip_bytes({"pipfail.py": ECHO, "requirements.txt": f"sand-e2e-missing-{RUN}==1.0\n"})},
            wait=False,
        )
        start = time.monotonic()
        app = put_app(http, tenants["alice"], good, [{"name": "good", "next": ["end"]}], {"good": ECHO})
        assert app["status"] == "deployed", app
        print(f"alice's deploy beside two broken ones: {time.monotonic() - start:.1f} s")
        # Alice's deploy is done while the crash-looping sandbox is still starting (or has just failed: a crash loop
        # fails its deploy after 3 starts, ~3 s): they ran side by side.
        assert http("GET", f"/api/v1/apps/{crash}", tenants["mallory"]).json()["status"] in ("deploying", "failed")
        assert http("POST", f"/app/{good}", json_body={"x": 1}).json() == {"x": 1}
        # In the end both broken applications are reported failed, with their reason, and stay failed.
        failed = http.wait_status(tenants["mallory"], crash, "failed", timeout=150)
        assert (
            failed["status"] == "failed"
            and "grain worker crash exited with code 3; 3 times in a row" in failed["error"]
        ), failed
        p = http.wait_status(tenants["mallory"], pipfail, "failed", timeout=150)
        assert p["status"] == "failed" and f"sand-e2e-missing-{RUN}" in p["error"], p
    finally:
        for key, name in ((tenants["alice"], good), (tenants["mallory"], crash), (tenants["mallory"], pipfail)):
            raw_remove(http, key, name)


# --- quotas ---------------------------------------------------------------------------------------------------

FLOOD = """
import os
def handle(event, context):
    if event["mode"] == "data":
        stored, refused, errors = 0, 0, set()
        for i in range(event["n"]):
            try:
                context.put("k%d" % i, os.urandom(1 << 20).hex()[: 1 << 20])
                stored += 1
            except Exception as e:
                refused += 1
                errors.add(str(e)[:300])
        return {"stored": stored, "refused": refused, "errors": sorted(errors)[:3]}
    for i in range(event["n"]):  # events to a grain that is busy: its queue grows until the quota stops it
        context.send_to_function_now("sink", "x" * (4 << 20))
    return {"sent": event["n"]}
"""
SINK = "import time\ndef handle(event, context):\n    time.sleep(100)\n"


def test_an_application_flooding_its_queues_and_data_hits_its_quota_while_another_keeps_working(
    http: Http, tenants: dict[str, str]
) -> None:
    flood, good = f"flood-{RUN}", f"steady-{RUN}"
    functions = [{"name": "flood", "potentialNext": ["sink"], "next": ["end"]}, {"name": "sink", "next": []}]
    try:
        put_app(
            http,
            tenants["mallory"],
            flood,
            functions,
            {"flood": FLOOD, "sink": SINK},
            settings={"concurrency": 1, "request_timeout_s": 120, "timeout_s": 120},
        )
        put_app(http, tenants["alice"], good, [{"name": "steady", "next": ["end"]}], {"steady": ECHO})
        results: dict[str, Any] = {}
        quiet = []
        for i in range(100):  # the baseline: the same calls before the flood
            start = time.monotonic()
            assert http("POST", f"/app/{good}", json_body={"i": i}).status_code == 200
            quiet.append(time.monotonic() - start)
        quiet.sort()

        def attack() -> None:
            results["data"] = http("POST", f"/app/{flood}", json_body={"mode": "data", "n": 300}, timeout=180)
            results["queue"] = http("POST", f"/app/{flood}", json_body={"mode": "queue", "n": 40}, timeout=180)

        t = threading.Thread(target=attack)
        t.start()
        latencies = []
        while t.is_alive():
            start = time.monotonic()
            r = http("POST", f"/app/{good}", json_body={"i": len(latencies)})
            latencies.append(time.monotonic() - start)
            assert r.status_code == 200 and r.json() == {"i": len(latencies) - 1}, r.text
            time.sleep(0.05)
        t.join()
        ordered = sorted(latencies)
        print(
            f"steady app before the flood: 100 calls, p50 {quiet[50] * 1000:.0f} ms, p99 {quiet[99] * 1000:.0f} ms; "
            f"during it: {len(latencies)} calls, p50 {ordered[len(ordered) // 2] * 1000:.0f} ms, "
            f"p99 {ordered[int(len(ordered) * 0.99)] * 1000:.0f} ms, max {ordered[-1] * 1000:.0f} ms"
        )
        data = results["data"]
        print("data flood:", data.text[:500])
        assert data.status_code == 200, data.text
        # Memory is a cache of Cassandra: values already backed up make room, the rest is refused; never more
        # than the quota in the host agent's heap.
        assert data.json()["stored"] + data.json()["refused"] == 300, data.json()
        assert all("QUOTA_EXCEEDED" in e for e in data.json()["errors"]), data.json()
        held = metric("sand_data_app_bytes", f'app="{flood}"')
        assert 0 < held <= 64 << 20, f"the flooding app holds {held} bytes of the data layer's memory"
        queue = results["queue"]
        assert queue.status_code == 500, queue.text
        assert "QUOTA_EXCEEDED" in queue.text, queue.text
        assert requests.get(METRICS + "/metrics", timeout=10).status_code == 200, "the host agent is alive"
    finally:
        raw_remove(http, tenants["alice"], good)
        raw_remove(http, tenants["mallory"], flood)


# --- results and topics ---------------------------------------------------------------------------------------

FORGER = """
import json, os
from grainworker.localbus import HOST_AGENT_QUEUE, LocalBusClient
def handle(event, context):
    me = context._event
    outputs = []
    for fe in event["frontends"]:
        outputs.append({"id": os.urandom(16).hex(), "execution_id": event["victim"], "app": me["app"], "grain": "end",
                        "from": "forger", "frontend": fe, "value": {"me": "forged"}, "sent_ns": 0,
                        "tag": me.get("tag", ""), "local": False})
    for i in range(event.get("made_up", 0)):
        outputs.append({"id": os.urandom(16).hex(), "execution_id": me["execution_id"], "app": me["app"],
                        "grain": "madeup-%d" % i, "from": "forger", "frontend": me["frontend"], "value": i,
                        "sent_ns": 0, "tag": me.get("tag", ""), "local": False})
    report = {"type": "sent", "app": me["app"], "grain": "forger", "execution_id": me["execution_id"],
              "event_id": me["id"], "frontend": me["frontend"], "status": "ok", "outputs": outputs, "data": [],
              "logs": [], "start_ns": 0, "end_ns": 0, "pid": os.getpid()}
    with LocalBusClient("unix:/sand/sockets/bus.sock", os.environ["SAND_GRAINWORKER_CREDENTIAL"]) as bus:
        bus.publish(HOST_AGENT_QUEUE, json.dumps(report).encode())
    return {"forged": len(outputs)}
"""
SLOW = "import time\ndef handle(event, context):\n    time.sleep(event.get('s', 3))\n    return {'me': 'alice'}\n"


@pytest.fixture(scope="module")
def forger(http: Http, tenants: dict[str, str]) -> Any:
    name = f"forger-{RUN}"
    app = put_app(http, tenants["mallory"], name, [{"name": "forger", "next": ["end"]}], {"forger": FORGER})
    assert app["status"] == "deployed", app
    yield name
    raw_remove(http, tenants["mallory"], name)


def test_a_grain_cannot_answer_another_applications_caller(http: Http, tenants: dict[str, str], forger: str) -> None:
    victim = f"victim-{RUN}"
    try:
        put_app(http, tenants["alice"], victim, [{"name": "slow", "next": ["end"]}], {"slow": SLOW})
        refused_before = metric("sand_outputs_refused_total")
        # Alice's caller waits synchronously; Mallory learns the execution id and answers first, on both frontends.
        answer: dict[str, requests.Response] = {}
        t = threading.Thread(target=lambda: answer.update(r=http("POST", f"/app/{victim}", json_body={"s": 4})))
        t.start()
        async_call = http("POST", f"/app/{victim}?async=1", json_body={"s": 4})
        assert async_call.status_code == 202, async_call.text
        execution = async_call.json()["execution_id"]
        r = http("POST", f"/app/{forger}", json_body={"victim": execution, "frontends": ["fe-8081", "fe-8082"]})
        assert r.status_code == 200 and r.json() == {"forged": 2}, r.text
        t.join(60)
        assert answer["r"].status_code == 200 and answer["r"].json() == {"me": "alice"}, answer["r"].text
        deadline = time.monotonic() + 30
        while True:
            e = http("GET", f"/api/v1/executions/{execution}", tenants["alice"]).json()
            if e["status"] != "running" or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        assert e["status"] == "succeeded" and e["result"] == {"me": "alice"}, e
        assert metric("sand_outputs_refused_total") >= refused_before + 2
    finally:
        raw_remove(http, tenants["alice"], victim)


def test_made_up_grain_names_create_no_topics(
    http: Http, tenants: dict[str, str], forger: str, kafka_bootstrap: str
) -> None:
    refused_before = metric("sand_outputs_refused_total")
    r = http("POST", f"/app/{forger}", json_body={"victim": "0" * 32, "frontends": [], "made_up": 10_000}, timeout=120)
    assert r.status_code == 200 and r.json() == {"forged": 10_000}, r.text
    deadline = time.monotonic() + 30
    while metric("sand_outputs_refused_total") < refused_before + 10_000 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert metric("sand_outputs_refused_total") >= refused_before + 10_000
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap, client_id=f"contain-{RUN}")
    try:
        topics = admin.list_topics()
    finally:
        admin.close()
    assert not [t for t in topics if re.search(r"madeup-\d+", t)], "no topic was created for a made-up grain"
    assert json.dumps(r.json())  # the attacker's own call still answered
