"""The running system as the benchmarks use it: an account that deploys applications over the REST API (through
nginx), keep-alive callers, executions' per-hop timings, a sandbox's memory."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from benchmarks._common import BIND, summary_ms
from sandclient import Client

NGINX_PORT = int(os.environ.get("SAND_NGINX_PORT", "8080"))
URL = f"http://{BIND}:{NGINX_PORT}"


class Bench:
    """One account on the running system; deploys applications and calls them."""

    def __init__(self) -> None:
        self.prefix = "sb" + uuid.uuid4().hex[:6]
        key = Client(URL).call("POST", "/api/v1/accounts", {"name": self.prefix}).body["api_key"]
        self.api = Client(URL, key, timeout_s=120)
        self.apps: list[str] = []

    def deploy(
        self,
        name: str,
        functions: list[dict[str, Any]],
        grains: dict[str, str],
        settings: dict[str, Any] | None = None,
        timeout_s: float = 600,
    ) -> tuple[str, float, dict[str, Any]]:
        """Upload, save, deploy, wait until deployed; (name, seconds from the deploy call to deployed, app)."""
        name = f"{self.prefix}-{name}"
        for grain, code in grains.items():
            self.api.call("PUT", f"/api/v1/grains/{grain}", code, content_type="text/x-python")
        body = {"name": name, "entry": functions[0]["name"], "functions": functions} | (
            {"settings": settings} if settings else {}
        )
        self.api.call("PUT", f"/api/v1/apps/{name}", body)
        t0 = time.monotonic()
        self.api.call("POST", f"/api/v1/apps/{name}/deploy")
        self.apps.append(name)
        while True:
            app = self.api.call("GET", f"/api/v1/apps/{name}").body
            if app["status"] in ("deployed", "failed") or time.monotonic() - t0 > timeout_s:
                break
            time.sleep(0.2)
        if app["status"] != "deployed":
            raise RuntimeError(f"{name} did not deploy: {json.dumps(app)[:2000]}")
        return name, time.monotonic() - t0, app

    def timings(self, execution_id: str) -> list[dict[str, Any]]:
        body = self.api.call("GET", f"/api/v1/executions/{execution_id}").body
        return body.get("timings", {}).get("hops", [])

    def cleanup(self) -> None:
        """Undeploy and delete what this run deployed (best effort: the account's apps are named after the run).
        Their Kafka topics stay: SAND does not delete topics yet (docs/benchmarks.md)."""
        for name in self.apps:
            try:
                self.api.call("POST", f"/api/v1/apps/{name}/undeploy", ok=(404, 409))
            except Exception as e:  # noqa: BLE001
                print(f"  (could not undeploy {name}: {e})", file=sys.stderr)
        deadline = time.monotonic() + 60
        for name in self.apps:
            try:
                while (
                    self.api.call("GET", f"/api/v1/apps/{name}").body["status"] != "undeployed"
                    and time.monotonic() < deadline
                ):
                    time.sleep(0.3)
                self.api.call("DELETE", f"/api/v1/apps/{name}", ok=(404, 409))
            except Exception as e:  # noqa: BLE001
                print(f"  (could not delete {name}: {e})", file=sys.stderr)


class Caller:
    """Sequential requests to one application on one keep-alive connection."""

    def __init__(self, app: str) -> None:
        self.path = f"/app/{app}"
        self.conn = http.client.HTTPConnection(BIND, NGINX_PORT, timeout=120)

    def call(self, body: bytes) -> tuple[int, int, str, bytes]:
        """(status, latency ns, execution id, answer)"""
        t = time.perf_counter_ns()
        try:
            self.conn.request("POST", self.path, body=body, headers={"Content-Type": "application/json"})
            r = self.conn.getresponse()
            data = r.read()
        except (OSError, http.client.HTTPException):
            self.conn.close()
            self.conn = http.client.HTTPConnection(BIND, NGINX_PORT, timeout=120)
            return 0, time.perf_counter_ns() - t, "", b""
        if r.getheader("Connection", "").lower() == "close":
            self.conn.close()
            self.conn = http.client.HTTPConnection(BIND, NGINX_PORT, timeout=120)
        return r.status, time.perf_counter_ns() - t, r.getheader("X-Sand-Execution-Id") or "", data

    def run(self, body: bytes, n: int) -> tuple[list[int], list[str], int]:
        lat, ids, failed = [], [], 0
        for _ in range(n):
            status, ns, eid, _ = self.call(body)
            if status == 200:
                lat.append(ns)
                ids.append(eid)
            else:
                failed += 1
        return lat, ids, failed


def sandbox_container(app_id: str) -> str:
    """The id of the one sandbox of application ``app_id`` on this host."""
    ids = subprocess.run(
        ["docker", "ps", "-q", "--no-trunc", "--filter", f"label=sand.app={app_id}"],
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout.split()
    if len(ids) != 1:
        raise RuntimeError(f"expected one sandbox of application {app_id} on this host, found {ids}")
    return ids[0]


def cgroup_memory_mb(container_id: str) -> float | None:
    """Memory a container uses now (its cgroup: the number Docker's limit applies to); None if it is gone."""
    for path in (
        f"/sys/fs/cgroup/memory/docker/{container_id}/memory.usage_in_bytes",
        f"/sys/fs/cgroup/system.slice/docker-{container_id}.scope/memory.current",
        f"/sys/fs/cgroup/docker/{container_id}/memory.current",
    ):
        try:
            return int(Path(path).read_text()) / 2**20
        except OSError:
            continue
    return None


def container_memory_mb(app: dict[str, Any]) -> float:
    """Memory the application's sandbox on this host uses now."""
    ids = subprocess.run(
        ["docker", "ps", "-q", "--no-trunc", "--filter", f"label=sand.app={app['id']}"], capture_output=True, text=True
    ).stdout.split()
    for cid in ids:
        mb = cgroup_memory_mb(cid)
        if mb is not None:
            return mb
    return float("nan")


def step_breakdown(bench: Bench, execution_ids: list[str]) -> dict[str, dict[str, float]]:
    """Per step of the executions' timelines (GET /api/v1/executions/{id} "timings"): how long since the step before,
    p50/p90/p99 over the executions. A grain's steps are named without the grain, so a chain's hops pool."""
    deltas: dict[str, list[int]] = {}
    totals: list[int] = []
    for eid in execution_ids:
        steps = bench.timings(eid)
        for s in steps:
            step = s["step"].split(": ", 1)[1] if s["step"].startswith(s["where"] + ": ") else s["step"]
            deltas.setdefault(step, []).append(int(s["delta_ms"] * 1e6))
        if steps:
            totals.append(int(steps[-1]["at_ms"] * 1e6))
    out = {step: summary_ms(v) for step, v in deltas.items()}
    out["(request received -> reply sent)"] = summary_ms(totals)  # the timeline's whole: what the steps add up to
    return out
