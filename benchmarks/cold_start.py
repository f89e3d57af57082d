"""Issue 33's cold path, measured before it is built: how long an application with no sandbox takes to answer its
first request. Scale to zero is not built yet, so "no sandbox" is today's nearest state, an undeployed application,
and the cold path is the deploy call until the first answer:

  deploy -> deployed   POST .../deploy until GET .../apps/{app} says deployed (the host agent creates and starts the
                       sandbox container, the grain workers load the code, the agent reports; the poll adds <= 20 ms)
  first call           the first POST /app/{app} after that: the grain worker's first fork
  cold path            the two together: what a request arriving at a scaled-to-zero application would wait
  warm call            the baseline of the same run: a request to the deployed application (p50 of --warm calls)
  refused              calls made after the status said deployed that were not answered 200 (listed with their answer)

A 1-grain echo, --runs rounds of undeploy, deploy, first call, warm calls. The issue's target for the cold path is
<= 300 ms (ahead of SOCK's 365 ms cold platform latency); benchmarks/results/startup.json's docker_run (container
start alone) is printed beside it for scale.

Needs `make up`.  python benchmarks/cold_start.py [--runs 10] [--warm 20] [--quick]
Writes benchmarks/results/cold_start.json and .png.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._api import Bench, Caller  # noqa: E402
from benchmarks._common import RESULTS, bar_plot, machine, percentile, write_result  # noqa: E402

ECHO = "def handle(event, context):\n    return event\n"
POLL_S = 0.02


def stats(ms: list[float]) -> dict[str, float]:
    return {
        "n": len(ms),
        "p50_ms": round(percentile(ms, 50), 1),
        "p99_ms": round(percentile(ms, 99), 1),
        "min_ms": round(min(ms), 1),
        "max_ms": round(max(ms), 1),
        "stdev_ms": round(statistics.stdev(ms), 1) if len(ms) > 1 else 0.0,
    }


def wait_status(bench: Bench, name: str, want: str, timeout_s: float = 120) -> float:
    """Seconds until the application's status is `want` (polled every 20 ms)."""
    t0 = time.monotonic()
    while True:
        status = bench.api.call("GET", f"/api/v1/apps/{name}").body["status"]
        if status == want:
            return time.monotonic() - t0
        if status == "failed" or time.monotonic() - t0 > timeout_s:
            raise RuntimeError(f"{name} is {status}, not {want}")
        time.sleep(POLL_S)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warm", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="3 runs, 5 warm calls")
    args = ap.parse_args()
    runs, warm_n = (3, 5) if args.quick else (args.runs, args.warm)
    bench = Bench()
    try:
        name, _, _ = bench.deploy("cold", [{"name": "echo", "next": ["end"]}], {"echo": ECHO})
        deployed, first, cold, warm = [], [], [], []
        refused: list[dict[str, object]] = []  # calls after `deployed` that were not answered 200
        for i in range(runs):
            bench.api.call("POST", f"/api/v1/apps/{name}/undeploy")
            wait_status(bench, name, "undeployed")
            caller = Caller(name)
            t0 = time.perf_counter()
            bench.api.call("POST", f"/api/v1/apps/{name}/deploy")
            wait_status(bench, name, "deployed")
            t1 = time.perf_counter()
            # a refused first call is asked again (for up to 5 s), as a client would: the cold path includes it
            while True:
                status, _, _, answer = caller.call(b'{"cold": true}')
                t2 = time.perf_counter()
                if status == 200:
                    break
                said = answer[:300].decode(errors="replace")
                refused.append({"run": i + 1, "call": 0, "status": status, "answer": said})
                if t2 - t1 > 5:
                    raise RuntimeError(f"the first call after the deploy answered {status}: {said}")
                time.sleep(0.05)
            lat = []
            for k in range(warm_n):
                status, ns, _, answer = caller.call(b'{"warm": true}')
                if status == 200:
                    lat.append(ns)
                else:
                    refused.append(
                        {"run": i + 1, "call": k + 1, "status": status, "answer": answer[:300].decode(errors="replace")}
                    )
            deployed.append((t1 - t0) * 1000)
            first.append((t2 - t1) * 1000)
            cold.append((t2 - t0) * 1000)
            warm.append(statistics.median(lat) / 1e6)
            print(
                f"run {i + 1}/{runs}: deployed {deployed[-1]:.0f} ms, first call {first[-1]:.1f} ms, "
                f"cold path {cold[-1]:.0f} ms, warm p50 {warm[-1]:.1f} ms"
            )
    finally:
        bench.cleanup()
    startup = RESULTS / "startup.json"
    docker_run = json.loads(startup.read_text())["cases"]["docker_run"]["p50_ms"] if startup.exists() else None
    result = {
        "machine": machine(),
        "note": "no scale to zero yet: the cold path is an undeployed application's deploy until its first answer",
        "target_cold_path_ms": 300,
        "docker_run_p50_ms_from_startup_json": docker_run,
        "deploy_to_deployed": stats(deployed),
        "first_call": stats(first),
        "cold_path": stats(cold),
        "warm_call_p50_per_run": stats(warm),
        "calls_refused_after_deployed": refused,
        "cold_over_warm_p50": round(percentile(cold, 50) / percentile(warm, 50), 1),
    }
    path = write_result("cold_start", result)
    labels = ["deploy → deployed", "first call", "cold path", "warm call"]
    series = [deployed, first, cold, warm]
    bar_plot(
        path.with_suffix(".png"),
        f"cold path today (deploy → first answer), {runs} runs; target ≤ 300 ms",
        labels,
        [percentile(s, 50) for s in series],
        [percentile(s, 99) for s in series],
    )
    print(json.dumps({k: v for k, v in result.items() if k != "machine"}, indent=1))
    print(f"wrote {path} and {path.with_suffix('.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
