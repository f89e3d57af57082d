"""Readiness (issue 31): every frontend of `make up` answers GET /readyz with its checks, and nginx, when no
frontend takes a request (each down, stopping or not ready), says so in the API's JSON rather than its HTML page.
The cluster suite cuts one frontend off from Kafka and the gates and sees nginx leave it out and take it back
(tests/cluster/test_faults.py)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.e2e.api import free_port

ROOT = Path(__file__).resolve().parents[2]
FRONTEND_PORTS = [int(p) for p in os.environ.get("SAND_E2E_FRONTEND_PORTS", "8081,8082").split(",") if p]


def test_every_frontend_is_ready_with_its_checks(base: str) -> None:
    for port in FRONTEND_PORTS:
        r = requests.get(f"http://127.0.0.1:{port}/readyz", timeout=10)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["status"] == "ready" and body["frontend"], body
        checks = body["checks"]
        assert checks["stopping"] is False and checks["response_topic_polled"] is True, body
        assert checks["cluster_state_answered"] is True, body


@pytest.fixture
def nginx_without_frontends(tmp_path: Path) -> Iterator[str]:
    """A private nginx (deploy/nginx.sh, the real template) whose two upstreams are ports nobody listens on."""
    port = free_port()
    env = {
        **os.environ,
        "SAND_HOME": str(tmp_path),
        "SAND_NGINX_PORT": str(port),
        "SAND_NGINX_UPSTREAMS": f"127.0.0.1:{free_port()} 127.0.0.1:{free_port()}",
    }
    subprocess.run(["bash", str(ROOT / "deploy" / "nginx.sh"), "start"], env=env, check=True, timeout=60)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        subprocess.run(["bash", str(ROOT / "deploy" / "nginx.sh"), "stop"], env=env, check=False, timeout=60)


def test_nginx_says_in_json_that_no_frontend_took_the_request(nginx_without_frontends: str) -> None:
    for method, path in (("POST", "/app/hello"), ("GET", "/api/v1/apps")):
        r = requests.request(method, nginx_without_frontends + path, json={}, timeout=30)
        assert r.status_code == 502, r.text
        assert r.headers["Content-Type"] == "application/json" and r.headers["Retry-After"] == "1", r.headers
        error = r.json()["error"]
        assert error["code"] == "unavailable" and "no frontend took this request" in error["message"], error
