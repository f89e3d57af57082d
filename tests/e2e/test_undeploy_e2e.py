"""An undeploy made through one frontend is seen by the others at once (they read sand.control): a request sent to
another frontend right after it gets 409 "not deployed", not a 30 s wait and a 504 (issue 29); a synchronous
request whose event was still queued at the undeploy is answered 409 within the grace, not at request_timeout_s.

Settings (environment): SAND_E2E_FRONTEND_PORTS (8081,8082)."""

from __future__ import annotations

import os
import threading
import time
import uuid

import pytest
import requests

from tests.e2e.api import Http, put_app, raw_remove, sign_up

FRONTEND_PORTS = [int(p) for p in os.environ.get("SAND_E2E_FRONTEND_PORTS", "8081,8082").split(",") if p]
NAP = (
    "import time\n"
    "def handle(event, context):\n"
    "    time.sleep(event.get('s', 0))\n"
    "    return {'slept': event.get('s', 0)}\n"
)


@pytest.fixture(scope="module")
def key(http: Http) -> str:
    return sign_up(http, f"undeploy-{uuid.uuid4().hex[:8]}")


def test_a_request_right_after_an_undeploy_through_another_frontend_is_409_at_once(http: Http, key: str) -> None:
    if len(FRONTEND_PORTS) < 2:
        pytest.skip("needs two frontends")
    first, second = (Http(f"http://127.0.0.1:{p}") for p in FRONTEND_PORTS[:2])
    name = f"undeploy-{uuid.uuid4().hex[:8]}"
    # concurrency 1: a second request queues behind the first, so its event is still queued at the undeploy
    put_app(
        http,
        key,
        name,
        [{"name": "nap", "next": ["end"]}],
        {"nap": NAP},
        settings={"concurrency": 1, "request_timeout_s": 60},
    )
    try:
        # the second frontend has the application cached as deployed
        assert second("POST", f"/app/{name}", json_body={"s": 0}).status_code == 200
        answers: dict[str, tuple[int, float]] = {}

        def call(tag: str, seconds: float) -> None:
            t = time.monotonic()
            r = second("POST", f"/app/{name}", json_body={"s": seconds}, timeout=90)
            answers[tag] = (r.status_code, time.monotonic() - t)

        running = threading.Thread(target=call, args=("running", 2))
        queued = threading.Thread(target=call, args=("queued", 0))
        running.start()
        time.sleep(0.5)
        queued.start()
        time.sleep(0.5)
        assert first("POST", f"/api/v1/apps/{name}/undeploy", key).status_code == 202
        time.sleep(0.3)  # the control event's way through Kafka
        t = time.monotonic()
        r = second("POST", f"/app/{name}", json_body={"s": 0}, timeout=60)
        took = time.monotonic() - t
        assert r.status_code == 409, r.text
        assert "not deployed" in r.json()["error"]["message"], r.text
        assert took < 5, f"409 took {took:.1f} s"
        running.join(90)
        queued.join(90)
        # the running instance finishes in the stop grace; the queued one is answered 409 within the grace
        assert answers["running"][0] == 200, answers
        assert answers["queued"][0] == 409, answers
        assert answers["queued"][1] < 20, answers
    finally:
        try:
            raw_remove(http, key, name)
        except (AssertionError, requests.RequestException):
            pass
