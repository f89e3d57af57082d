"""A grain's management call (issue 30, docs/knix.md "From a grain"): how long ``context._invoke_management_api``
takes from inside a sandbox (grain -> local data layer -> host agent -> gate mailbox -> a frontend's KNIX door as the
owner -> back), against the same KNIX action sent to the management API from outside through nginx with the owner's
key (the baseline: what a KNIX function's HTTP call costs on KNIX, minus KNIX).

The action is ``getTriggerDetails`` (a read of the owner's KNIX records): the channel's cost, not an action's. Both
are timed by the caller (the grain on its monotonic clock, this script on its own), one call at a time, in
``--rounds`` rounds of ``--calls``, the two paths alternating round by round.

    python benchmarks/grain_management_latency.py [--rounds 3] [--calls 50] [--quick]

Needs a running system (`make up`). Writes benchmarks/results/grain_management_latency.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._api import Bench  # noqa: E402
from benchmarks._common import machine, summary_ms, write_result  # noqa: E402

CALLER = """import time
def handle(event, context):
    took = []
    for _ in range(event["calls"]):
        t0 = time.monotonic_ns()
        ok, message, response = context._invoke_management_api({"action": "getTriggerDetails", "data": {}})
        took.append(time.monotonic_ns() - t0)
        if not ok or response.get("status") != "success":
            raise RuntimeError(f"{message}: {response}")
    return took
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3, help="rounds of each path (default 3)")
    ap.add_argument("--calls", type=int, default=50, help="calls per round (default 50)")
    ap.add_argument("--quick", action="store_true", help="2 rounds of 10 calls (the smoke test's run)")
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.calls = 2, 10
    bench = Bench()
    try:
        p = bench.prefix
        app, _, _ = bench.deploy("manager", [{"name": f"{p}m", "next": ["end"]}], {f"{p}m": CALLER})
        bench.api.call("POST", f"/app/{app}", {"calls": 5})  # warm-up: the worker, the gate's connections
        session = requests.Session()
        url = bench.api.url + "/management"
        body = {"action": "getTriggerDetails", "data": {"user": {"token": bench.api.api_key}}}
        for _ in range(5):
            session.post(url, json=body, timeout=30).raise_for_status()
        inside: list[list[int]] = []
        outside: list[list[int]] = []
        for _ in range(args.rounds):
            inside.append([int(x) for x in bench.api.call("POST", f"/app/{app}", {"calls": args.calls}).body])
            took = []
            for _ in range(args.calls):
                t0 = time.monotonic_ns()
                r = session.post(url, json=body, timeout=30)
                took.append(time.monotonic_ns() - t0)
                if r.status_code != 200 or r.json().get("status") != "success":
                    raise RuntimeError(r.text)
            outside.append(took)
        per_round = [{"grain": summary_ms(i), "outside": summary_ms(o)} for i, o in zip(inside, outside, strict=True)]
        grain = summary_ms([x for r in inside for x in r])
        http = summary_ms([x for r in outside for x in r])
        ratios = [r["grain"]["p50_ms"] / r["outside"]["p50_ms"] for r in per_round]
        data = {
            "machine": machine(),
            "rounds": args.rounds,
            "calls": args.calls,
            "from_a_grain": grain,
            "from_outside_through_nginx": http,
            "p50_ratio_grain_over_outside": round(grain["p50_ms"] / http["p50_ms"], 3),
            "p50_ratio_per_round": [round(x, 3) for x in ratios],
            "p50_ratio_spread": round(statistics.pstdev(ratios), 3) if len(ratios) > 1 else 0.0,
            "per_round": per_round,
            "note": "one host; getTriggerDetails; one call at a time; rounds alternate the two paths",
        }
        path = write_result("grain_management_latency", data)
        print(json.dumps({k: v for k, v in data.items() if k not in ("machine", "per_round")}, indent=2))
        print(f"wrote {path}")
        return 0
    finally:
        bench.cleanup()


if __name__ == "__main__":
    sys.exit(main())
