"""End-to-end request latency: user -> nginx -> frontend -> host agent (its gate; Kafka gets the backup) -> sandbox
(2-grain `examples/hello`) -> back, with the per-hop breakdown every execution keeps (its "timings") and the CPU
every process of the system spent per request (benchmarks/_cpu.py).

Baselines measured in the same run: the HTTP floor (nginx -> frontend `GET /healthz`) and the same
workflow in the emulator (the grain worker path without Kafka, the frontend or Docker).
Needs `make up`. Targets (issue 10): p50 <= 5 ms, p99 <= 20 ms; CPU <= 4 ms per 1-grain request.

    python benchmarks/e2e_latency.py [--requests 300] [--warmup 200] [--quick]

Writes benchmarks/results/e2e_latency.json.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import _cpu  # noqa: E402
from benchmarks._api import Bench, step_breakdown  # noqa: E402
from benchmarks._common import BIND, ROOT, SAND_HOME, machine, summary_ms, write_result  # noqa: E402

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


BACKGROUND = ("kafka", "cassandra")  # what deploy/lib.sh runs below the request path (SAND_BACKGROUND_NICE)


def background_nice(value: int | None = None) -> int | None:
    """The autogroup nice of Kafka and Cassandra (set it when value is given); None where it cannot be read."""
    nice = None
    for comp in BACKGROUND:
        try:
            pid = (SAND_HOME / "run" / f"{comp}.pid").read_text().strip()
            path = Path(f"/proc/{pid}/autogroup")
            if value is not None:
                path.write_text(str(value))
            nice = int(path.read_text().split()[-1])
        except (OSError, ValueError, IndexError):
            return None
    return nice


def priority_ab(path: str, body: bytes, n: int) -> dict[str, object]:
    """The same sequential requests with Kafka and Cassandra at the request path's priority, then at theirs."""
    configured = background_nice()
    if configured is None or configured == 0:
        return {
            "skipped": "Kafka and Cassandra run at the request path's priority (SAND_BACKGROUND_NICE=0 or no "
            "autogroups)"
        }
    try:
        background_nice(0)
        timed_requests("POST", path, body, 50)
        equal, _ = timed_requests("POST", path, body, n)
    finally:
        background_nice(configured)
    timed_requests("POST", path, body, 50)
    lowered, _ = timed_requests("POST", path, body, n)
    return {"nice": configured, "equal_priority": summary_ms(equal), "background_lowered": summary_ms(lowered)}


def emulator_baseline(n: int) -> list[int]:
    from sandemu import Emulator

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
    bench = Bench()
    hello = ROOT / "examples" / "hello"
    wf = json.loads((hello / "workflow.json").read_text())
    grains = {f.get("resource", f["name"]) for f in wf["functions"]}
    name, _, _ = bench.deploy("hello", wf["functions"], {g: (hello / f"{g}.py").read_text() for g in grains})
    echo, _, _ = bench.deploy(
        "echo", [{"name": "echo", "next": ["end"]}], {"echo": "def handle(event, context):\n    return event\n"}
    )
    try:
        path, body = f"/app/{name}", b'{"name": "bench"}'
        timed_requests("POST", path, body, warm)
        lat, ids = timed_requests("POST", path, body, n)
        health, _ = timed_requests("GET", "/healthz", None, n)
        emu = emulator_baseline(min(n, 100))
        priority = priority_ab(path, body, n)
        steps = step_breakdown(bench, ids[-100:])
        timed_requests("POST", f"/app/{echo}", body, 50)
        cpu = _cpu.per_request(lambda: len(timed_requests("POST", f"/app/{echo}", body, n)[0]))
    finally:
        bench.cleanup()
    result = {
        "machine": machine(),
        "app": name,
        "requests": n,
        "warmup": warm,
        "end_to_end": summary_ms(lat),
        "http_floor_healthz": summary_ms(health),
        "emulator_same_workflow": summary_ms(emu),
        "cpu_priority": priority,
        "steps": steps,
        "cpu_per_1_grain_request": cpu,
        "target": {"p50_ms": 5.0, "p99_ms": 20.0, "cpu_ms": 4.0},
    }
    result["e2e_p50_ms"] = result["end_to_end"]["p50_ms"]
    result["e2e_p99_ms"] = result["end_to_end"]["p99_ms"]
    result["e2e_over_emulator_p50"] = round(result["e2e_p50_ms"] / result["emulator_same_workflow"]["p50_ms"], 2)
    path_out = write_result("e2e_latency", result)
    print(
        f"end to end (nginx, frontend, host agent, sandbox; Kafka backups): p50 {result['e2e_p50_ms']} ms, "
        f"p99 {result['e2e_p99_ms']} ms  (target p50 <= 5 ms, p99 <= 20 ms)"
    )
    print(f"HTTP floor (GET /healthz via nginx): p50 {result['http_floor_healthz']['p50_ms']} ms")
    emu_p50 = result["emulator_same_workflow"]["p50_ms"]
    print(
        f"same workflow in the emulator (no Kafka/frontend/Docker): p50 {emu_p50} ms"
        f" -> end to end is {result['e2e_over_emulator_p50']}x"
    )
    if "nice" in priority:
        eq, low = priority["equal_priority"], priority["background_lowered"]
        print(
            f"CPU priority: Kafka and Cassandra at the request path's priority p50 {eq['p50_ms']} ms p99 "
            f"{eq['p99_ms']} ms; at nice {priority['nice']} p50 {low['p50_ms']} ms p99 {low['p99_ms']} ms"
        )
    else:
        print(f"CPU priority: {priority['skipped']}")
    print("per step of the executions' timelines (time since the step before):")
    for step, v in steps.items():
        print(f"  {step:30s} p50 {v['p50_ms']:8.3f} ms  p90 {v['p90_ms']:8.3f} ms  p99 {v['p99_ms']:8.3f} ms")
    _cpu.print_table(cpu)
    print(f"wrote {path_out}")


if __name__ == "__main__":
    main()
