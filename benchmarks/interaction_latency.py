"""Function interaction latency (paper Fig 5c): two Python grains F1 -> F2, the time from the end of F1 to the start
of F2, both timestamps taken inside the grains (time.time_ns(): one clock for the host and its containers).

Measured in the same run, on the same machine:
  - SAND: F1 and F2 in one sandbox, the event handed over through the local bus (the hierarchical bus's shortcut);
  - SAND without the local shortcut: the same deployment with every hop through Kafka and back (the host agent
    restarted with SAND_HOSTAGENT_SANDBOX_LOCAL_SHORTCUT=false, then restored);
  - warm container per function (a model of OpenWhisk, benchmarks/baselines): the controller forwards the hop
    through Kafka to an invoker that calls F2's warm container;
  - cold container per call (benchmarks/baselines): a new container for F2's call.
Paper: 8.32x (warm) and 562x (cold) lower for SAND. Needs `make up`.

    python benchmarks/interaction_latency.py [--calls 200] [--cold-calls 20] [--quick] [--skip-no-shortcut]

Writes benchmarks/results/interaction_latency.json and .png.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._api import Bench, Caller  # noqa: E402
from benchmarks._common import RESULTS, ROOT, bar_plot, machine, summary_ms, write_result  # noqa: E402

# F1 stamps its end as the last thing it does; F2 stamps its start as the first. The difference is the platform's
# hand-over: F1's output leaving its instance, the bus (or Kafka, or a controller), F2's instance starting.
F1 = """import time


def handle(event, context):
    return {"f1_end_ns": time.time_ns()}
"""
F2 = """import time


def handle(event, context):
    start = time.time_ns()
    return {"f1_end_ns": event["f1_end_ns"], "f2_start_ns": start}
"""
FUNCTIONS = [{"name": "f1", "next": ["f2"]}, {"name": "f2", "next": ["end"]}]


def gaps_ns(outputs: list[Any]) -> list[int]:
    """F2's start minus F1's end, per call whose output carries both."""
    return [
        o["f2_start_ns"] - o["f1_end_ns"]
        for o in outputs
        if isinstance(o, dict) and "f2_start_ns" in o and "f1_end_ns" in o
    ]


def sand_gaps(bench: Bench, label: str, calls: int, warmup: int, pace_s: float = 0.0) -> tuple[list[int], int]:
    name, _, _ = bench.deploy(label, FUNCTIONS, {"f1": F1, "f2": F2})
    caller = Caller(name)
    for _ in range(warmup):
        caller.call(b"{}")
    outputs, failed = [], 0
    for _ in range(calls):
        time.sleep(pace_s)
        status, _, _, body = caller.call(b"{}")
        if status == 200:
            outputs.append(json.loads(body))
        else:
            failed += 1
    return gaps_ns(outputs), failed


def restart_host_agent(env: dict[str, str]) -> None:
    """Restart the single host's agent with `env` added (it redeploys its applications when it is back)."""
    full = os.environ | env
    subprocess.run(["bash", str(ROOT / "deploy/hostagent.sh"), "stop"], check=True, env=full, capture_output=True)
    subprocess.run(["bash", str(ROOT / "deploy/hostagent.sh"), "start"], check=True, env=full, capture_output=True)


def baseline_gaps(platform: Any, calls: int, warmup: int, pace_s: float = 0.0) -> tuple[list[int], int]:
    platform.deploy("f1", F1)
    platform.deploy("f2", F2)
    for _ in range(warmup):
        platform.invoke(["f1", "f2"], {})
    outputs, failed = [], 0
    for _ in range(calls):
        time.sleep(pace_s)
        r = platform.invoke(["f1", "f2"], {})
        out = getattr(r, "output", r)
        if isinstance(out, dict) and "f2_start_ns" in out:
            outputs.append(out)
        else:
            failed += 1
    return gaps_ns(outputs), failed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=200, help="measured calls per platform (cold: --cold-calls)")
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--cold-calls", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="a smoke run: few calls")
    ap.add_argument("--full", action="store_true", help="paper scale: 1000 calls, 100 cold")
    ap.add_argument("--skip-no-shortcut", action="store_true", help="do not restart the host agent")
    ap.add_argument(
        "--pace-ms",
        type=float,
        default=0.0,
        help="a pause before each measured call, SAND's and the warm baseline's alike (0: back to back, "
        "each call's hop then overlaps the bookkeeping the previous call left: Kafka flags, records)",
    )
    args = ap.parse_args()
    pace_s = args.pace_ms / 1000
    if args.quick:
        args.calls, args.warmup, args.cold_calls = 20, 5, 3
    if args.full:
        args.calls, args.cold_calls = 1000, 100

    from benchmarks.baselines import ColdContainerPlatform, WarmContainerPlatform

    cases: dict[str, dict[str, Any]] = {}
    bench = Bench()
    try:
        g, failed = sand_gaps(bench, "interact", args.calls, args.warmup, pace_s)
        cases["sand"] = summary_ms(g) | {"failed": failed}
        print(f"SAND (local bus)        p50 {cases['sand']['p50_ms']:.3f} ms  p99 {cases['sand']['p99_ms']:.3f} ms")
        if not args.skip_no_shortcut:
            restart_host_agent({"SAND_HOSTAGENT_SANDBOX_LOCAL_SHORTCUT": "false"})
            try:
                g, failed = sand_gaps(bench, "interact-far", args.calls, args.warmup)
                cases["no_shortcut"] = summary_ms(g) | {"failed": failed}
                print(
                    f"SAND, every hop Kafka   p50 {cases['no_shortcut']['p50_ms']:.3f} ms  "
                    f"p99 {cases['no_shortcut']['p99_ms']:.3f} ms"
                )
            finally:
                restart_host_agent({})
    finally:
        bench.cleanup()

    warm = WarmContainerPlatform()
    try:
        g, failed = baseline_gaps(warm, args.calls, args.warmup, pace_s)
        cases["warm"] = summary_ms(g) | {"failed": failed}
    finally:
        warm.close()
    print(f"warm container/function p50 {cases['warm']['p50_ms']:.3f} ms  p99 {cases['warm']['p99_ms']:.3f} ms")
    cold = ColdContainerPlatform()
    try:
        g, failed = baseline_gaps(cold, args.cold_calls, 1)
        cases["cold"] = summary_ms(g) | {"failed": failed}
    finally:
        cold.close()
    print(f"cold container per call p50 {cases['cold']['p50_ms']:.3f} ms  p99 {cases['cold']['p99_ms']:.3f} ms")

    sand = cases["sand"]["p50_ms"]
    result: dict[str, Any] = {
        "machine": machine(),
        "calls": args.calls,
        "pace_ms": args.pace_ms,
        "cold_calls": args.cold_calls,
        "cases": cases,
        "sand_p50_ms": sand,
        "sand_p99_ms": cases["sand"]["p99_ms"],
        "no_shortcut_p50_ms": cases.get("no_shortcut", {}).get("p50_ms"),
        "warm_p50_ms": cases["warm"]["p50_ms"],
        "cold_p50_ms": cases["cold"]["p50_ms"],
        "ratio_warm": round(cases["warm"]["p50_ms"] / sand, 2) if sand > 0 else None,
        "ratio_cold": round(cases["cold"]["p50_ms"] / sand, 2) if sand > 0 else None,
        "ratio_no_shortcut": (
            round(cases["no_shortcut"]["p50_ms"] / sand, 2) if "no_shortcut" in cases and sand > 0 else None
        ),
        "paper": {"ratio_warm": 8.32, "ratio_cold": 562},
    }
    print(
        f"ratios (p50): warm/SAND {result['ratio_warm']}x (paper 8.32x), cold/SAND {result['ratio_cold']}x "
        f"(paper 562x), no-shortcut/SAND {result['ratio_no_shortcut']}x"
    )
    path = write_result("interaction_latency", result)
    labels = {
        "sand": "SAND",
        "no_shortcut": "SAND, hops via Kafka",
        "warm": "warm container/fn",
        "cold": "cold container/call",
    }
    keys = [k for k in labels if k in cases]
    bar_plot(
        RESULTS / "interaction_latency.png",
        "Function interaction latency (F1 end -> F2 start), Fig 5c",
        [labels[k] for k in keys],
        [cases[k]["p50_ms"] for k in keys],
        [cases[k]["p99_ms"] for k in keys],
    )
    print(f"wrote {path}")
    return 0 if all(c.get("n", 0) > 0 for c in cases.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
