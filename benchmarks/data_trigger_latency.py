"""Data trigger latency (issue 30, docs/data-triggers.md): from a grain's write into a triggerable bucket to the
handler start of the application the write triggers, on the host of the write; and, in the same run, the plain
local-bus hop (a grain's output to the next grain's handler) for comparison.

Both are measured inside the sandboxes on the host's monotonic clock (shared by every process and container on a
host): the writer reads ``time.monotonic_ns()`` just before ``context.put(..., bucketName=...)`` and puts it in the
value; the triggered handler subtracts it from its own start. For the hop, the writer returns its clock as its
output and its next grain subtracts it. Writes are one at a time (latency, not throughput), through nginx.

    python benchmarks/data_trigger_latency.py [--writes 200] [--warmup 20] [--quick]

Needs a running system (`make up`, or a cluster with SAND_NGINX_PORT set). Writes
benchmarks/results/data_trigger_latency.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._api import Bench  # noqa: E402
from benchmarks._common import machine, summary_ms, write_result  # noqa: E402

WRITER = """import json, time
def handle(event, context):
    t0 = time.monotonic_ns()
    context.put(event["key"], json.dumps({"t0": t0}), bucketName=event["bucket"])
    return {"t0": time.monotonic_ns()}
"""
HOP = """import time
def handle(event, context):
    return {"hop_ns": time.monotonic_ns() - event["t0"]}
"""
TARGET = """import json, time
def handle(event, context):
    return {"trigger_ns": time.monotonic_ns() - json.loads(event["value"])["t0"], "key": event["key"]}
"""


def _succeeded(bench: Bench, app: str) -> list[str]:
    """The ids of the application's succeeded executions, every page."""
    ids: list[str] = []
    cursor = None
    while True:
        query = "?status=succeeded&limit=100" + (f"&cursor={cursor}" if cursor else "")
        page = bench.api.call("GET", f"/api/v1/apps/{app}/executions{query}").body
        ids += [e["execution_id"] for e in page["executions"]]
        cursor = page.get("next")
        if not cursor:
            return ids


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--writes", type=int, default=200, help="measured writes (default 200)")
    ap.add_argument("--warmup", type=int, default=20, help="writes before measuring (default 20)")
    ap.add_argument("--quick", action="store_true", help="20 writes after 5 (the smoke test's run)")
    args = ap.parse_args()
    if args.quick:
        args.writes, args.warmup = 20, 5
    bench = Bench()
    try:
        p = bench.prefix
        writer, _, _ = bench.deploy(
            "writer",
            [{"name": f"{p}w", "next": [f"{p}hop"]}, {"name": f"{p}hop", "next": ["end"]}],
            {f"{p}w": WRITER, f"{p}hop": HOP},
        )
        target, _, _ = bench.deploy("target", [{"name": f"{p}t", "next": ["end"]}], {f"{p}t": TARGET})
        bucket = f"{p}-bucket"
        bench.api.call("PUT", f"/api/v1/buckets/{bucket}")
        bench.api.call("PUT", f"/api/v1/buckets/{bucket}/targets/{target}")
        time.sleep(1)  # the host agent hears of the new target
        hops: list[int] = []
        for i in range(args.warmup + args.writes):
            out = bench.api.call("POST", f"/app/{writer}", {"bucket": bucket, "key": f"k{i}"}).body
            if i >= args.warmup:
                hops.append(int(out["hop_ns"]))
            time.sleep(0.02)  # let the triggered execution run before the next write
        want = args.warmup + args.writes
        deadline = time.monotonic() + 120
        results: dict[str, int] = {}
        seen: set[str] = set()
        while len(results) < want and time.monotonic() < deadline:
            for execution_id in _succeeded(bench, target):
                if execution_id in seen:
                    continue
                seen.add(execution_id)
                body = bench.api.call("GET", f"/api/v1/executions/{execution_id}").body
                results[body["result"]["key"]] = int(body["result"]["trigger_ns"])
            if len(results) < want:
                time.sleep(1)
        triggered = [results[f"k{i}"] for i in range(args.warmup, want) if f"k{i}" in results]
        data = {
            "machine": machine(),
            "writes": args.writes,
            "warmup": args.warmup,
            "triggered_executions": len(results),
            "data_write_to_triggered_handler_start": summary_ms(triggered),
            "local_bus_hop_output_to_next_handler_start": summary_ms(hops),
            "note": "one host; both measured in the sandboxes on the host's monotonic clock; writes one at a time",
        }
        path = write_result("data_trigger_latency", data)
        print(json.dumps({k: v for k, v in data.items() if k != "machine"}, indent=2))
        print(f"wrote {path}")
        return 0 if len(triggered) == args.writes else 1
    finally:
        bench.cleanup()


if __name__ == "__main__":
    sys.exit(main())
