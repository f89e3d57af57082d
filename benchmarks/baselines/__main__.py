"""A quick look at both baselines: F1 -> F2 sequences, the time from the end of F1 to the start of F2 (paper Fig 5c,
both stamps taken in the functions) and where a hop's time goes (ServerlessBench TC6's phases). Needs `make up`
(Kafka and Docker). The full comparison with SAND is benchmarks/interaction_latency.py.

    python -m benchmarks.baselines [--warm-calls 20] [--cold-calls 5] [--warmup 5] [--transport tcp|unix]
                                   [--pause-after-ms 50 | --no-pause] [--gap-ms 0] [--json FILE]

--gap-ms spaces the calls: with a gap above the pause grace (50 ms) every hop finds its container paused, so F2's
unpause is on the F1 -> F2 path (ServerlessBench's "warm start"); with none, F2's container is still running ("hot").
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks._common import KAFKA, percentile, summary_ms
from benchmarks.baselines import ColdContainerPlatform, Result, WarmContainerPlatform
from benchmarks.interaction_latency import F1, F2  # Fig 5c's two functions

PHASES = [
    "kafka_to_invoker",
    "acquire",
    "create",
    "start",
    "unpause",
    "ready",
    "init",
    "run",
    "handler",
    "kafka_to_controller",
    "hop",
]


def measure(platform: Any, calls: int, warmup: int, gap_s: float = 0.0) -> dict[str, Any]:
    platform.deploy("f1", F1)
    platform.deploy("f2", F2)
    results: list[Result] = []
    failed: list[str] = []
    for i in range(warmup + calls):
        time.sleep(gap_s)
        r = platform.invoke(["f1", "f2"], {}, timeout_s=120)
        if not r.ok:
            failed.append(r.error or "?")
        elif i >= warmup:
            results.append(r)
    gaps = [r.output["f2_start_ns"] - r.output["f1_end_ns"] for r in results]
    phases: dict[str, dict[str, float]] = {}
    for name in PHASES:  # F2's hop: the one the interaction latency waits for
        values = [r.hops[1].durations_ms()[name] for r in results if name in r.hops[1].durations_ms()]
        if values:
            phases[name] = {"p50_ms": round(percentile(values, 50), 3), "n": len(values)}
    starts: dict[str, int] = {}
    for r in results:
        starts[r.hops[1].start] = starts.get(r.hops[1].start, 0) + 1
    return {
        "f1_end_to_f2_start": summary_ms(gaps),
        "f2_hop_phases": phases,
        "f2_start_kinds": starts,
        "failed": len(failed),
        "first_error": failed[0][:500] if failed else None,
        "containers": platform.containers(),
        "memory_mb": round(platform.memory_mb(), 2),
    }


def show(name: str, m: dict[str, Any]) -> None:
    g = m["f1_end_to_f2_start"]
    print(
        f"{name}: F1 end -> F2 start  p50 {g['p50_ms']:.3f} ms  p90 {g['p90_ms']:.3f} ms  min {g['min_ms']:.3f} ms"
        f"  (n={g['n']}, failed {m['failed']}; F2 started {m['f2_start_kinds']})"
    )
    print("   F2's hop, p50 ms: " + ", ".join(f"{k} {v['p50_ms']}" for k, v in m["f2_hop_phases"].items()))
    print(f"   after the calls: {m['containers']} container(s), {m['memory_mb']} MB")
    if m["first_error"]:
        print(f"   first error: {m['first_error']}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warm-calls", type=int, default=20)
    ap.add_argument("--cold-calls", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=5, help="warm calls not measured (cold: 1)")
    ap.add_argument("--transport", choices=["tcp", "unix"], default="tcp")
    ap.add_argument("--pause-after-ms", type=float, default=50.0)
    ap.add_argument("--no-pause", action="store_true", help="never pause idle warm containers")
    ap.add_argument("--gap-ms", type=float, default=0.0, help="pause between two calls")
    ap.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("kafka").setLevel(logging.ERROR)  # kafka-python warns of slow polls on a loaded machine
    pause = None if args.no_pause else args.pause_after_ms / 1000
    out: dict[str, Any] = {
        "settings": {"transport": args.transport, "pause_after_s": pause, "bootstrap": KAFKA, "gap_ms": args.gap_ms},
        "loadavg_1m_start": round(os.getloadavg()[0], 2),
    }
    with WarmContainerPlatform(bootstrap=KAFKA, transport=args.transport, pause_after_s=pause) as warm:
        out["warm"] = measure(warm, args.warm_calls, args.warmup, args.gap_ms / 1000)
    show("warm container per function", out["warm"])
    with ColdContainerPlatform(bootstrap=KAFKA, transport=args.transport) as cold:
        out["cold"] = measure(cold, args.cold_calls, 1, args.gap_ms / 1000)
    show("cold container per call     ", out["cold"])
    out["loadavg_1m_end"] = round(os.getloadavg()[0], 2)
    print(f"load average (1 min) {out['loadavg_1m_start']} at the start, {out['loadavg_1m_end']} at the end")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0 if not out["warm"]["failed"] and not out["cold"]["failed"] else 1


if __name__ == "__main__":
    sys.exit(main())
