"""How soon a trigger's event reaches its handler (issue 30, docs/triggers.md "Latency"), against the baseline of a
plain request in the same run: a timer's tick -> the handler started; a Kafka record (its CreateTime) -> the
handler started; a client's synchronous request sent -> the handler started. One clock (this machine's) on both
sides; repeated rounds, p50/p99 each, and the spread.

python benchmarks/trigger_latency.py [--quick] [--rounds N] [--ticks N] [--records N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._api import Bench  # noqa: E402
from benchmarks._common import KAFKA, machine, percentile, write_result  # noqa: E402

HANDLER = "import time\ndef handle(event, context):\n    return {'started': time.time(), 'event': event}\n"


def stats(ms: list[float]) -> dict[str, float]:
    return {
        "n": len(ms),
        "p50_ms": round(percentile(ms, 50), 3),
        "p99_ms": round(percentile(ms, 99), 3),
        "mean_ms": round(statistics.fmean(ms), 3) if ms else float("nan"),
    }


def outputs(bench: Bench, app: str, since: float, want: int, timeout_s: float = 120) -> list[dict[str, Any]]:
    """The outputs of the app's succeeded executions whose handler started after `since`, once `want` are there."""
    deadline = time.monotonic() + timeout_s
    while True:
        rows: list[dict[str, Any]] = []
        query = {"limit": "100", "since": str(int(since * 1000) - 1000)}
        while True:
            page = bench.api.call("GET", f"/api/v1/apps/{app}/executions", query=query).body
            rows += page["executions"]
            if not page.get("next"):
                break
            query = {**query, "cursor": page["next"]}
        done = [r for r in rows if r["status"] == "succeeded"]
        if len(done) >= want or time.monotonic() > deadline:
            break
        time.sleep(1)
    outs = [bench.api.execution(r["execution_id"])["result"] for r in done]
    return [o for o in outs if o["started"] >= since]


def timer_round(bench: Bench, app: str, ticks: int) -> list[float]:
    since = time.time()
    bench.api.call("PUT", f"/api/v1/apps/{app}/triggers/tick", {"every": "1s"})
    time.sleep(ticks + 1.5)
    bench.api.call("DELETE", f"/api/v1/apps/{app}/triggers/tick")
    outs = [o for o in outputs(bench, app, since, ticks) if o["event"].get("trigger") == "tick"]
    tick_at = [time.mktime(time.strptime(o["event"]["time"], "%Y-%m-%dT%H:%M:%SZ")) - time.timezone for o in outs]
    return [(o["started"] - t) * 1000 for o, t in zip(outs, tick_at, strict=True)]


def queue_round(bench: Bench, app: str, records: int) -> list[float]:
    topic = f"events.bench-{uuid.uuid4().hex[:8]}"
    KafkaAdminClient(bootstrap_servers=KAFKA).create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
    bench.api.call("PUT", f"/api/v1/apps/{app}/triggers/q", {"topic": topic, "start": "earliest", "batch_size": 1})
    time.sleep(8)  # the frontends joined the group
    since = time.time()
    producer = KafkaProducer(bootstrap_servers=KAFKA, linger_ms=0)
    for i in range(records):
        producer.send(topic, json.dumps({"n": i}).encode())
        producer.flush()
        time.sleep(0.1)  # paced: the latency of one record, not of a queue
    outs = [o for o in outputs(bench, app, since, records) if o["event"].get("topic") == topic]
    bench.api.call("DELETE", f"/api/v1/apps/{app}/triggers/q")
    return [(o["started"] - o["event"]["timestamp"] / 1000) * 1000 for o in outs]


def request_round(bench: Bench, app: str, n: int) -> list[float]:
    out = []
    for i in range(n):
        sent = time.time()
        r = bench.api.invoke(app, {"n": i})
        out.append((r.output["started"] - sent) * 1000)
        time.sleep(0.1)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1 round, 5 ticks, 10 records, 10 requests")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ticks", type=int, default=30)
    ap.add_argument("--records", type=int, default=100)
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.ticks, args.records = 1, 5, 10
    bench = Bench()
    app, _, _ = bench.deploy("trig", [{"name": "started", "next": ["end"]}], {"started": HANDLER})
    rounds = []
    for r in range(args.rounds):
        one = {
            "request": stats(request_round(bench, app, args.records)),
            "timer": stats(timer_round(bench, app, args.ticks)),
            "queue": stats(queue_round(bench, app, args.records)),
        }
        rounds.append(one)
        print(
            f"round {r + 1}: request->handler p50 {one['request']['p50_ms']} ms p99 {one['request']['p99_ms']} | "
            f"tick->handler p50 {one['timer']['p50_ms']} p99 {one['timer']['p99_ms']} | "
            f"record->handler p50 {one['queue']['p50_ms']} p99 {one['queue']['p99_ms']}"
        )
    result: dict[str, Any] = {"machine": machine(), "rounds": rounds}
    for kind in ("request", "timer", "queue"):
        p50s = [x[kind]["p50_ms"] for x in rounds]
        result[f"{kind}_p50_ms"] = round(statistics.median(p50s), 3)
        result[f"{kind}_p50_spread_ms"] = [min(p50s), max(p50s)]
        result[f"{kind}_p99_ms"] = round(statistics.median([x[kind]["p99_ms"] for x in rounds]), 3)
    result["ratio_timer_to_request_p50"] = round(result["timer_p50_ms"] / result["request_p50_ms"], 2)
    result["ratio_queue_to_request_p50"] = round(result["queue_p50_ms"] / result["request_p50_ms"], 2)
    path = write_result("trigger_latency", result)
    print(json.dumps({k: v for k, v in result.items() if k != "rounds" and k != "machine"}, indent=1))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
