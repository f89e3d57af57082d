"""A real Prometheus (Debian's /usr/bin/prometheus) scrapes the running system: the host agent's and the frontends'
/metrics, with deploy/prometheus/rules.yml loaded by the server itself. Checked through its HTTP API: every target
is up, a quantile of the request histogram has a value after some invocations, every alert and recording rule
evaluates without error, and so does every expression of the Grafana dashboard (deploy/grafana/sand.json).

Settings (environment): SAND_E2E_URL (default nginx), SAND_BIND, SAND_HOSTAGENT_METRICS_PORT (9100),
SAND_E2E_FRONTEND_PORTS (8081,8082), SAND_HOME (its admin-key authorizes the frontends' /metrics).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.api import Http, free_port, put_app, raw_remove, sign_up

ROOT = Path(__file__).resolve().parents[2]
SAND_HOME = Path(os.environ.get("SAND_HOME", ROOT / ".sand"))
BIND = os.environ.get("SAND_BIND", "127.0.0.1")
HOSTAGENT = f"{BIND}:{os.environ.get('SAND_HOSTAGENT_METRICS_PORT', '9100')}"
FRONTENDS = [f"{BIND}:{p}" for p in os.environ.get("SAND_E2E_FRONTEND_PORTS", "8081,8082").split(",") if p]
PROMETHEUS = "/usr/bin/prometheus"
RULES = ROOT / "deploy" / "prometheus" / "rules.yml"
DASHBOARD = ROOT / "deploy" / "grafana" / "sand.json"
ECHO = "def handle(event, context):\n    return event\n"


def config(admin_key: Path) -> str:
    """The sample deploy/prometheus/prometheus.yml's jobs, aimed at this system, scraped every second."""
    return json.dumps(  # JSON is YAML
        {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(RULES)],
            "scrape_configs": [
                {"job_name": "sand-hostagent", "static_configs": [{"targets": [HOSTAGENT]}]},
                {
                    "job_name": "sand-frontend",
                    "authorization": {"type": "Bearer", "credentials_file": str(admin_key)},
                    "static_configs": [{"targets": FRONTENDS}],
                },
            ],
        }
    )


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not Path(PROMETHEUS).is_file():
        pytest.fail(f"{PROMETHEUS} is missing: deploy/install.sh installs Debian's prometheus package")
    admin = SAND_HOME / "admin-key"
    if not admin.is_file():
        pytest.fail(f"{admin} is missing: the frontends' /metrics need the admin key `make up` writes")
    work = tmp_path_factory.mktemp("prometheus")
    (work / "prometheus.yml").write_text(config(admin))
    port = free_port()
    log = (work / "prometheus.log").open("w")
    proc = subprocess.Popen(
        [
            PROMETHEUS,
            f"--config.file={work / 'prometheus.yml'}",
            f"--storage.tsdb.path={work / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if requests.get(url + "/-/ready", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"prometheus did not become ready:\n{(work / 'prometheus.log').read_text()[-2000:]}")
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        shutil.rmtree(work / "data", ignore_errors=True)


def api(url: str, path: str, **params: str) -> Any:
    r = requests.get(url + "/api/v1/" + path, params=params, timeout=10)
    body = r.json()
    assert r.status_code == 200 and body["status"] == "success", f"{path} {params}: {r.status_code} {r.text[:500]}"
    return body["data"]


def query(url: str, expr: str) -> list[dict[str, Any]]:
    data = api(url, "query", query=expr)
    result: list[dict[str, Any]] = data["result"]
    return result


def wait_for(what: str, check: Any, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(1)


def test_every_target_is_up(prometheus: str) -> None:
    def all_up() -> list[dict[str, Any]] | None:
        targets = api(prometheus, "targets")["activeTargets"]
        return targets if targets and all(t["health"] == "up" for t in targets) else None

    targets = wait_for("every target scraped", all_up)
    assert {t["labels"]["job"] for t in targets} == {"sand-hostagent", "sand-frontend"}, targets
    assert len(targets) == 1 + len(FRONTENDS), targets
    up = query(prometheus, "up")
    assert sorted(float(s["value"][1]) for s in up) == [1.0] * len(targets), up
    build = query(prometheus, "sand_build_info")
    assert {s["metric"]["component"] for s in build} == {"hostagent", "frontend"}, build


def test_request_quantile_after_invocations(prometheus: str, http: Http) -> None:
    key = sign_up(http, f"prom-{uuid.uuid4().hex[:8]}")
    name = f"prom-echo-{uuid.uuid4().hex[:6]}"
    app = put_app(http, key, name, [{"name": "echo", "next": ["end"]}], {"echo": ECHO})
    try:
        assert app["status"] == "deployed", app
        seen = 'sand_frontend_request_duration_seconds_count{route="/app/{app}"}'
        for i in range(40):
            r = http("POST", f"/app/{name}", json_body={"n": i})
            assert r.status_code == 200, r.text
            if i == 9:  # a rate needs an increase between two scrapes: the series scraped first, then more requests
                wait_for("the request histogram scraped", lambda: query(prometheus, seen))
        expr = (
            "histogram_quantile(0.9, sum by (le) "
            '(rate(sand_frontend_request_duration_seconds_bucket{route="/app/{app}"}[1m])))'
        )

        def p90() -> float | None:
            result = query(prometheus, expr)
            value = float(result[0]["value"][1]) if result else float("nan")
            return value if value == value else None  # NaN: no request in the window yet

        assert 0 < wait_for("a p90 of the invocations' latency", p90) < 30
        # the same application under one name on both sides: the frontend's invocations, the host agent's instances
        inv = query(prometheus, f'sum by (app, account) (sand_frontend_invocations_total{{app="{name}"}})')
        ran = wait_for(
            "the host agent's instances of the app",
            lambda: query(prometheus, f'sum by (app, account) (sand_instances_total{{app="{name}"}})'),
        )
        assert inv and inv[0]["metric"] == ran[0]["metric"], (inv, ran)
        assert ran[0]["metric"]["account"], ran
        hops = f'sum by (app) (sand_hop_duration_seconds_count{{app="{name}"}})'

        def all_hops() -> list[dict[str, Any]] | None:
            result = query(prometheus, hops)
            return result if result and float(result[0]["value"][1]) >= 40 else None

        wait_for("a hop latency of each of the 40 invocations", all_hops)
        cgroups = query(prometheus, "sand_sandbox_cgroups_available")
        if all(float(s["value"][1]) == 1 for s in cgroups):
            cpu = wait_for(
                "the sandbox's cgroup CPU",
                lambda: query(prometheus, f'sand_sandbox_cpu_seconds_total{{app="{name}"}}'),
            )
            assert float(cpu[0]["value"][1]) > 0, cpu
            mem = query(prometheus, f'sand_sandbox_memory_bytes{{app="{name}"}}')
            assert mem and float(mem[0]["value"][1]) > 1 << 20, mem
        else:  # a host agent in `ip netns exec` (deploy/cluster.sh) has a /sys without the cgroup filesystem
            assert query(prometheus, f'sand_sandbox_cpu_seconds_total{{app="{name}"}}') == [], cgroups
        lag = wait_for(
            "the Kafka lag of the app's topic", lambda: query(prometheus, f'sand_kafka_consumer_lag{{app="{name}"}}')
        )
        assert lag[0]["metric"]["topic"], lag
    finally:
        raw_remove(http, key, name)


def test_every_rule_loads_and_evaluates(prometheus: str) -> None:
    def evaluated() -> list[dict[str, Any]] | None:
        groups = api(prometheus, "rules")["groups"]
        rules = [r for g in groups for r in g["rules"]]
        return rules if rules and all(r.get("lastEvaluation", "").startswith("20") for r in rules) else None

    rules = wait_for("every rule evaluated once", evaluated)
    assert {r["name"] for r in rules} >= {
        "SandHostDown",
        "SandTakeoverRunning",
        "SandKafkaLagGrowing",
        "SandQuotaNear",
        "SandCassandraUnavailable",
        "SandErrorRateHigh",
    }, [r["name"] for r in rules]
    bad = [(r["name"], r.get("lastError")) for r in rules if r["health"] != "ok"]
    assert not bad, bad
    for r in rules:
        query(prometheus, r["query"])  # and through the query API too


def test_every_dashboard_expression_evaluates(prometheus: str) -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    assert len(exprs) >= 20, exprs
    for expr in exprs:
        query(prometheus, expr)  # a 400 (bad_data) fails here with the expression
    # and the metrics they name exist: each is scraped from some target
    names = {m for m in api(prometheus, "label/__name__/values") if m.startswith("sand_")}
    for want in ("sand_frontend_request_duration_seconds_bucket", "sand_cassandra_up", "sand_takeovers_total"):
        assert want in names, sorted(names)
