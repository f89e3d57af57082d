"""The fake API's ``GET /readyz`` and ``GET /metrics``: two frontends answering in turn, as behind nginx, with
counters that grow at rates that swing over a couple of minutes, and fe-8082 restarting every 5 minutes (its counters
start again, and it is not ready for its first 15 s). The names, labels and HELP texts are the frontend's
(frontend/.../FrontendMetrics.java, cluster/.../StoreHealth.java, ProcessMetrics.java); the numbers are made up."""

from __future__ import annotations

import itertools
import math
import time
from typing import Any

START = time.time() - 600
RESTART_EVERY_S = 300
NOT_READY_S = 15
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)
# application, account, invocations per second (mean), share of them failing, median latency in seconds
APPS = (
    ("hello", "dev", 4.0, 0.01, 0.02),
    ("orders", "dev", 2.5, 0.08, 0.12),
    ("thumbs", "bob", 1.5, 0.02, 0.4),
    ("billing", "carol", 1.2, 0.0, 0.05),
    ("search", "carol", 1.0, 0.03, 0.03),
    ("mailer", "bob", 0.8, 0.1, 0.2),
    ("etl-nightly", "dev", 0.5, 0.0, 1.5),
    ("webhook", "erin", 0.4, 0.2, 0.01),
    ("reports", "erin", 0.2, 0.0, 0.8),
    ("chat", "frank", 0.1, 0.0, 0.005),
)
TURN = itertools.count()
READY_TURN = itertools.count()


def _started(frontend: str, now: float) -> float:
    if frontend == "fe-8081":
        return START
    return START + (now - START) // RESTART_EVERY_S * RESTART_EVERY_S


def _count(rate: float, phase: float, t: float) -> float:
    """Invocations in t seconds at rate·(1 + 0.6·sin(t/40 + phase)): the integral, so it only grows."""
    return rate * (t + 0.6 * 40 * (math.cos(phase) - math.cos(t / 40 + phase)))


def readyz() -> tuple[int, dict[str, Any]]:
    frontend = ("fe-8081", "fe-8082")[next(READY_TURN) % 2]
    now = time.time()
    ready = now - _started(frontend, now) > NOT_READY_S
    checks = {
        "stopping": False,
        "response_topic_polled": ready,
        "gates_connected": 1 if ready else 0,
        "cluster_state_answered": True,
        "global_data_answered": True,
    }
    return (200 if ready else 503), {
        "status": "ready" if ready else "not ready",
        "frontend": frontend,
        "checks": checks,
    }


def _labels(**kv: str) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in sorted(kv.items())) + "}"


def metrics() -> str:
    frontend = ("fe-8081", "fe-8082")[next(TURN) % 2]
    now = time.time()
    started = _started(frontend, now)
    t = now - started
    fe = {"frontend": frontend}
    out = [
        "# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.",
        "# TYPE process_start_time_seconds gauge",
        f"process_start_time_seconds{_labels(**fe)} {started:.3f}",
        "# HELP jvm_memory_used_bytes Used bytes of a given JVM memory area.",
        "# TYPE jvm_memory_used_bytes gauge",
        f"jvm_memory_used_bytes{_labels(**fe, area='heap')} {4.2e7 + 1e7 * math.sin(now / 30):.6E}",
        "# HELP sand_build_info the build this process runs (always 1)",
        "# TYPE sand_build_info gauge",
        f"sand_build_info{_labels(**fe, component='frontend', java_version='17.0.15', version='0.1.0-SNAPSHOT')} 1",
        "# HELP sand_frontend_ready 1 while this frontend takes invocations (GET /readyz), 0 while it declines them",
        "# TYPE sand_frontend_ready gauge",
        f"sand_frontend_ready{_labels(**fe)} {1.0 if t > NOT_READY_S else 0.0}",
        "# HELP sand_cassandra_calls_total calls to Cassandra by this process, by store and outcome "
        "(error: Cassandra did not answer)",
        "# TYPE sand_cassandra_calls_total counter",
    ]
    for store, per_s in (("cluster_state", 3), ("global_data", 1)):
        out.append(f"sand_cassandra_calls_total{_labels(**fe, store=store, outcome='ok')} {int(t * per_s)}.0")
        out.append(f"sand_cassandra_calls_total{_labels(**fe, store=store, outcome='error')} 0.0")
    out += [
        "# HELP sand_cassandra_up 1 when this process' last call to the store was answered, 0 when it failed",
        "# TYPE sand_cassandra_up gauge",
        f"sand_cassandra_up{_labels(**fe, store='cluster_state')} 1.0",
        f"sand_cassandra_up{_labels(**fe, store='global_data')} 1.0",
        "# HELP sand_cassandra_last_success_timestamp_seconds Unix time of this process' last answered call to the "
        "store (its start before the first)",
        "# TYPE sand_cassandra_last_success_timestamp_seconds gauge",
        f"sand_cassandra_last_success_timestamp_seconds{_labels(**fe, store='cluster_state')} {now - 0.4:.3f}",
        f"sand_cassandra_last_success_timestamp_seconds{_labels(**fe, store='global_data')} {now - 7 - now % 20:.3f}",
        "# HELP sand_frontend_invocations_total application invocations by outcome (ok, error, timeout, async, "
        "rejected, replayed, unauthorized)",
        "# TYPE sand_frontend_invocations_total counter",
    ]
    totals = []
    for i, (app, account, rate, fail, _) in enumerate(APPS):
        n = int(_count(rate / 2, i, t))  # two frontends share the traffic
        errors = int(n * fail)
        timeouts = errors // 5
        totals.append(n)
        for outcome, k in (("ok", n - errors), ("error", errors - timeouts), ("timeout", timeouts)):
            out.append(
                f"sand_frontend_invocations_total{_labels(**fe, app=app, account=account, outcome=outcome)} {k}.0"
            )
    out += [
        "# HELP sand_frontend_request_duration_seconds time to answer an HTTP request, by method and route "
        "(a synchronous invocation waits for its result)",
        "# TYPE sand_frontend_request_duration_seconds histogram",
    ]
    route = _labels(**fe, method="POST", route="/app/{app}")[:-1]
    for le in (*BUCKETS, math.inf):
        # a log-logistic latency per application: the share of its invocations within le
        k = sum(
            n if le == math.inf else round(n / (1 + (app[4] / le) ** 2.5)) for n, app in zip(totals, APPS, strict=True)
        )
        out.append(
            f'sand_frontend_request_duration_seconds_bucket{route},le="{"+Inf" if le == math.inf else float(le)}"}} {k}'
        )
    out.append(f"sand_frontend_request_duration_seconds_count{route}}} {sum(totals)}")
    mean = sum(n * app[4] for n, app in zip(totals, APPS, strict=True))
    out.append(f"sand_frontend_request_duration_seconds_sum{route}}} {mean:.3f}")
    out += [
        "# HELP sand_frontend_trigger_lag records of a queue trigger's topic not yet consumed by this frontend",
        "# TYPE sand_frontend_trigger_lag gauge",
    ]
    if frontend == "fe-8081":
        lag = max(0, int(120 * math.sin(now / 45)))
        out.append(
            f"sand_frontend_trigger_lag{_labels(**fe, app='etl-nightly', account='dev', trigger='uploads')} {lag}.0"
        )
    return "\n".join(out) + "\n"
