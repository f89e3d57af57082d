"""Scale to zero on the real system (docs/operations.md "Scale to zero"): an application with
scale_to_zero_after_s loses its sandbox (a Docker container) once it has had no event that long, the host shows it
idle and still serves it; the next request starts a sandbox and is answered by it, with the data the grain kept
in the data layer before. An application without the setting keeps its sandbox."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.api import Http, put_app, raw_remove, sandbox_ids, sign_up

COUNT = """
import os
def handle(event, context):
    n = int(context.get("calls") or 0) + 1
    context.put("calls", str(n))
    return {"calls": n, "pid": os.getpid()}
"""


SAND_HOME = Path(os.environ.get("SAND_HOME", Path(__file__).resolve().parents[2] / ".sand"))


def host_load(http: Http, app_id: str) -> dict[str, Any]:
    """What the host agents last reported of the application (GET /api/v1/admin/hosts: each host's load)."""
    admin = (SAND_HOME / "admin-key").read_text().strip()
    hosts = http("GET", "/api/v1/admin/hosts", admin).json()["hosts"]
    return {h["host"]: h.get("load", {}).get("apps", {}).get(app_id) for h in hosts if h["alive"]}


def host_states(app: dict[str, Any]) -> list[str]:
    return [h["status"] for h in app.get("hosts") or []]


@pytest.fixture(scope="module")
def key(http: Http) -> str:
    return sign_up(http, f"zero-{uuid.uuid4().hex[:8]}")


def test_an_idle_application_scales_to_zero_and_its_next_request_is_answered_by_a_new_sandbox(
    http: Http, key: str
) -> None:
    name = f"zero-{uuid.uuid4().hex[:8]}"
    steady = f"steady-{uuid.uuid4().hex[:8]}"
    app = put_app(http, key, name, [{"name": "count", "next": ["end"]}], {"count": COUNT}, {"scale_to_zero_after_s": 2})
    other = put_app(http, key, steady, [{"name": "count", "next": ["end"]}], {"count": COUNT})
    try:
        first = http("POST", f"/app/{name}", json_body={})
        assert first.status_code == 200, first.text
        assert first.json()["calls"] == 1
        assert len(sandbox_ids(app["id"])) == 1

        deadline = time.monotonic() + 30
        while True:
            seen = http("GET", f"/api/v1/apps/{name}", key).json()
            if host_states(seen) and set(host_states(seen)) == {"idle"} and not sandbox_ids(app["id"]):
                break
            assert time.monotonic() < deadline, f"not scaled to zero within 30 s: {seen}"
            time.sleep(0.5)
        assert seen["status"] == "deployed", "an idle application is still deployed"
        deadline = time.monotonic() + 10  # the next heartbeat's load report (every 2 s)
        while not (loads := host_load(http, app["id"])) or not all((x or {}).get("idle") for x in loads.values()):
            assert time.monotonic() < deadline, f"the hosts' load does not show it idle: {host_load(http, app['id'])}"
            time.sleep(0.5)
        assert len(sandbox_ids(other["id"])) == 1, "an application without the setting keeps its sandbox"

        t0 = time.monotonic()
        second = http("POST", f"/app/{name}", json_body={}, timeout=60)
        cold_ms = (time.monotonic() - t0) * 1000
        assert second.status_code == 200, second.text
        assert second.json()["calls"] == 2, "the data layer kept what the grain stored before"
        assert second.json()["pid"] != first.json()["pid"] or len(sandbox_ids(app["id"])) == 1
        assert len(sandbox_ids(app["id"])) == 1, "the request started one sandbox"
        print(f"\ncold start after scale to zero: the request answered in {cold_ms:.0f} ms")
        deadline = time.monotonic() + 10
        while set(host_states(http("GET", f"/api/v1/apps/{name}", key).json())) != {"deployed"}:
            assert time.monotonic() < deadline, "not deployed again"
            time.sleep(0.2)
        warm = http("POST", f"/app/{name}", json_body={})
        assert warm.status_code == 200 and warm.json()["calls"] == 3, warm.text
    finally:
        for n in (name, steady):
            raw_remove(http, key, n)


def test_a_bad_scale_to_zero_setting_is_refused_with_what_to_write(http: Http, key: str) -> None:
    for bad in ("soon", -1, 0.5):
        name = f"zero-bad-{uuid.uuid4().hex[:6]}"
        r = http(
            "PUT",
            f"/api/v1/apps/{name}",
            key,
            json_body={
                "name": name,
                "entry": "count",
                "functions": [{"name": "count", "next": ["end"]}],
                "settings": {"scale_to_zero_after_s": bad},
            },
        )
        assert r.status_code == 400, r.text
        assert "scale_to_zero_after_s" in r.json()["error"]["message"], r.text
