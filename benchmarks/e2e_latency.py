"""End-to-end request latency: user -> nginx -> frontend -> Kafka -> host agent -> sandbox (2-grain
`examples/hello`) -> back, with a per-hop breakdown read from the records the request left in Kafka.

Baselines measured in the same run: the HTTP floor (nginx -> frontend `GET /healthz`) and the same
workflow in the emulator (the grain worker path without Kafka, the frontend or Docker).
Needs `make up`. Design target: p50 <= 10 ms on 2 cores.

    python benchmarks/e2e_latency.py [--requests 300] [--warmup 200] [--quick]

Writes benchmarks/results/e2e_latency.json.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import BIND, KAFKA, ROOT, machine, summary_ms, write_result  # noqa: E402

NGINX_PORT = int(os.environ.get("SAND_NGINX_PORT", "8080"))


def timed_requests(method: str, path: str, body: bytes | None, n: int) -> tuple[list[int], list[str]]:
    """n sequential requests on one keep-alive connection; (latencies ns, execution ids)."""
    conn = http.client.HTTPConnection(BIND, NGINX_PORT, timeout=60)
    lat, ids = [], []
    for _ in range(n):
        t = time.perf_counter_ns()
        conn.request(method, path, body=body, headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        r.read()
        lat.append(time.perf_counter_ns() - t)
        if r.status >= 400:
            raise RuntimeError(f"{method} {path} answered {r.status}")
        ids.append(r.getheader("X-Sand-Execution-Id") or "")
        if r.getheader("Connection", "").lower() == "close":
            conn.close()
            conn = http.client.HTTPConnection(BIND, NGINX_PORT, timeout=60)
    conn.close()
    return lat, ids


def deploy_hello(cfg: str) -> str:
    env = {**os.environ, "XDG_CONFIG_HOME": cfg}
    sand = str(ROOT / ".venv" / "bin" / "sand")
    url = f"http://{BIND}:{NGINX_PORT}"
    name = "bench" + uuid.uuid4().hex[:8]
    subprocess.run([sand, "signup", url, name], env=env, check=True, capture_output=True)
    subprocess.run([sand, "deploy", str(ROOT / "examples" / "hello"), "--name", f"hello-{name}"], env=env,
                   check=True, capture_output=True)
    return f"hello-{name}"


def app_id(name: str) -> str:
    from cassandra.cluster import Cluster

    cluster = Cluster([BIND], port=int(os.environ.get("SAND_CASSANDRA_PORT", "9042")), protocol_version=5)
    try:
        return cluster.connect("sand").execute("SELECT app_id FROM app_names WHERE name = %s", [name]).one().app_id
    finally:
        cluster.shutdown()


def breakdown(app: str, executions: set[str]) -> dict[str, dict[str, float]]:
    """Per hop, from the Kafka records: frontend send -> grain 1 output (Kafka in, fork, run) -> grain 2
    output (local bus) -> result in Kafka (LQ_HA processing)."""
    from kafka import KafkaConsumer, TopicPartition

    c = KafkaConsumer(bootstrap_servers=KAFKA, group_id=None, consumer_timeout_ms=3000)
    topics = [f"sand.{app}.greet", f"sand.{app}.shout"] + [t for t in c.topics() if t.startswith("sand.response.")]
    tps = [TopicPartition(t, p) for t in topics for p in (c.partitions_for_topic(t) or [])]
    c.assign(tps)
    c.seek_to_beginning(*tps)
    seen: dict[str, dict[str, int]] = {}
    for m in c:
        v = json.loads(m.value)
        ev = v.get("event", v)
        eid = ev.get("execution_id")
        if eid not in executions:
            continue
        row = seen.setdefault(eid, {})
        if m.topic.endswith(".greet") and v.get("flag") == "new":
            row["sent"] = ev["sent_ns"]
        elif m.topic.endswith(".shout") and v.get("flag") == "processing":
            row["greet_out"] = ev["sent_ns"]
        elif m.topic.startswith("sand.response."):
            row["shout_out"] = ev["sent_ns"]
            row["result_in_kafka"] = m.timestamp * 1_000_000
    c.close()
    hops = {"kafka_to_grain1_output": ("sent", "greet_out"), "local_bus_to_grain2_output": ("greet_out", "shout_out"),
            "lq_ha_to_result_in_kafka": ("shout_out", "result_in_kafka")}
    out = {}
    for hop, (a, b) in hops.items():
        vals = [r[b] - r[a] for r in seen.values() if a in r and b in r]
        if vals:
            out[hop] = summary_ms(vals)
    return out


def emulator_baseline(n: int) -> list[int]:
    from grainworker.emulator import Emulator

    with Emulator(ROOT / "examples" / "hello", echo=lambda line: None) as emu:
        for _ in range(20):
            emu.invoke({"name": "warm"})
        lat = []
        for _ in range(n):
            t = time.perf_counter_ns()
            emu.invoke({"name": "x"})
            lat.append(time.perf_counter_ns() - t)
    return lat


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--quick", action="store_true", help="100 requests after 50 of warm-up")
    args = ap.parse_args()
    n, warm = (100, 50) if args.quick else (args.requests, args.warmup)
    with tempfile.TemporaryDirectory() as cfg:
        name = deploy_hello(cfg)
    path, body = f"/app/{name}", b'{"name": "bench"}'
    timed_requests("POST", path, body, warm)
    lat, ids = timed_requests("POST", path, body, n)
    health, _ = timed_requests("GET", "/healthz", None, n)
    emu = emulator_baseline(min(n, 100))
    hops = breakdown(app_id(name), set(ids))
    result = {
        "machine": machine(), "app": name, "requests": n, "warmup": warm,
        "end_to_end": summary_ms(lat), "http_floor_healthz": summary_ms(health),
        "emulator_same_workflow": summary_ms(emu),
        "hops": hops, "design_target_p50_ms": 10.0,
    }
    result["e2e_p50_ms"] = result["end_to_end"]["p50_ms"]
    result["e2e_p99_ms"] = result["end_to_end"]["p99_ms"]
    result["e2e_over_emulator_p50"] = round(result["e2e_p50_ms"] / result["emulator_same_workflow"]["p50_ms"], 2)
    path_out = write_result("e2e_latency", result)
    print(f"end to end (nginx, frontend, Kafka, host agent, sandbox): p50 {result['e2e_p50_ms']} ms, "
          f"p99 {result['e2e_p99_ms']} ms  (design target p50 <= 10 ms)")
    print(f"HTTP floor (GET /healthz via nginx): p50 {result['http_floor_healthz']['p50_ms']} ms")
    emu_p50 = result["emulator_same_workflow"]["p50_ms"]
    print(f"same workflow in the emulator (no Kafka/frontend/Docker): p50 {emu_p50} ms"
          f" -> end to end is {result['e2e_over_emulator_p50']}x")
    for hop, s in hops.items():
        print(f"  {hop:30s} p50 {s['p50_ms']:8.2f} ms  p99 {s['p99_ms']:8.2f} ms")
    print(f"wrote {path_out}")


if __name__ == "__main__":
    main()
