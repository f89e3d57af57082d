"""Host-failure recovery (paper §3.2 "Coordination", §4.2.1): what the condition flags buy when a host dies.

Two runs, each on a fresh 3-host cluster of this machine (deploy/cluster.sh, hosts in network namespaces, 3 Kafka
brokers): a stream of numbered requests to the ledger (3 grains that write to the data layer, tests/cluster/
workload.py), and h3 lost (kill -9 of everything on it, its sandboxes removed, its link cut) once `--kill-at`
requests are answered.
  flags     the paper's recovery: a survivor that takes over h3's partitions processes again only the events
            whose latest flag is not `finished` (a `data` flag is checked against the global data layer);
  no-flags  the baseline, the same recovery with the flags ignored (bridge.recovery.flags=false): every event
            of the taken-over range is processed again, as with a global bus that has no condition flags.

Per run: requests lost or answered twice (settled by execution id, as the fault tests do), events of the
taken-over ranges processed again and those the flags saved from it (the host agents' recovery logs), `audit`
grains that ran more than once (keys in Cassandra: ground truth), and the takeover times from the kill:
the survivors' first assignment of h3's partitions, the last taken-over range done, the last answer.
Goal (issue 12): 0 lost, 0 duplicate results, takeover <= 10 s.

    python benchmarks/recovery.py [--requests 600] [--kill-at 200] [--threads 16] [--sleep-s 0.5]

Needs root (network namespaces) and deploy/install.sh's build; nothing of `make up` may use port 8090.
Writes benchmarks/results/recovery.json and recovery.png.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import RESULTS, machine, percentile, write_result  # noqa: E402
from tests.cluster.workload import (  # noqa: E402
    Cluster,
    Outcome,
    Stream,
    deploy_ledger,
    ledger_in_cassandra,
    settle,
    signup,
    wrong_results,
)

MODES = {"flags": {}, "no-flags": {"SAND_HOSTAGENT_BRIDGE_RECOVERY_FLAGS": "false"}}
LOST = "h3"
SURVIVORS = ("h1", "h2")

# Recovery's log lines (hostagent/.../bridge/Recovery.java, GlobalBusBridge.java).
TIME = r"^(\d\d:\d\d:\d\d\.\d{3}) "
ASSIGNED = re.compile(TIME + r".*\] assigned: replaying offsets \[(\d+), (\d+)\)")
RANGE = re.compile(
    TIME + r".*replay range \[\d+, \d+\) read: (\d+) records, (\d+) events: (\d+) to process again, "
    r"(\d+) data flags to check, (\d+) finished"
)
DONE = re.compile(TIME + r".*replay done: taking new messages")
DATA_SKIPPED = re.compile(TIME + r".*its data is in the global data layer; writing its missing finished flag")


def log_time(hhmmss: str, day: dt.date) -> float:
    """A log line's time of day (this machine's local time) as a Unix time."""
    t = dt.datetime.strptime(hhmmss, "%H:%M:%S.%f").time()
    return dt.datetime.combine(day, t).timestamp()


def recovery_from_logs(cluster: Cluster, killed_at: float) -> dict[str, Any]:
    """What the survivors' recoveries after the kill did, from their host agents' logs."""
    day = dt.date.fromtimestamp(killed_at)
    firsts, dones = [], []
    totals = {
        "ranges": 0,
        "records": 0,
        "events": 0,
        "processed_again": 0,
        "data_flags": 0,
        "finished": 0,
        "data_flags_skipped": 0,
    }
    for host in SURVIVORS:
        log = cluster.home / "cluster" / host / "logs" / "hostagent.log"
        for line in log.read_text(errors="replace").splitlines():
            for pattern in (ASSIGNED, RANGE, DONE, DATA_SKIPPED):
                m = pattern.match(line)
                if not m or log_time(m.group(1), day) < killed_at:
                    continue
                at = log_time(m.group(1), day) - killed_at
                if pattern is ASSIGNED:
                    firsts.append(at)
                elif pattern is DONE:
                    dones.append(at)
                elif pattern is DATA_SKIPPED:
                    totals["data_flags_skipped"] += 1
                else:
                    totals["ranges"] += 1
                    for key, g in zip(
                        ("records", "events", "processed_again", "data_flags", "finished"), m.groups()[1:], strict=True
                    ):
                        totals[key] += int(g)
    totals["saved_by_flags"] = totals["finished"] + totals["data_flags_skipped"]
    totals["takeover_first_assignment_s"] = round(min(firsts), 2) if firsts else None
    totals["takeover_all_ranges_done_s"] = round(max(dones), 2) if dones else None
    return totals


def run(mode: str, args: argparse.Namespace) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix=f"sand-recovery-{mode}-"))
    cluster = Cluster(home, prefix="sandr-", subnet="10.81.0", nginx_port=8091)
    cluster.env.update(MODES[mode])
    print(f"[{mode}] starting a 3-host cluster in {home} ...", flush=True)
    try:
        cluster.run("up", "3", timeout=900)
        client = signup(cluster.url)
        deploy_ledger(client, "ledger", home / "apps")
        killed: dict[str, float] = {}

        def on_progress(done: int) -> None:
            if done == args.kill_at and "t" not in killed:
                killed["wall"], killed["t"] = time.time(), time.monotonic()
                cluster.run("kill", LOST)

        outcomes = Stream(
            client,
            "ledger",
            args.requests,
            threads=args.threads,
            sleep_s=args.sleep_s,
            on_progress=on_progress,
            timeout_s=120,
        ).run()
        results = settle(client, outcomes, 300)
        bad = wrong_results(outcomes, results)
        time.sleep(3)  # the last recovery lines are written
        baseline = "recovery ignores condition flags" in (home / "cluster" / "h1" / "logs" / "hostagent.log").read_text(
            errors="replace"
        )
        if baseline != (mode == "no-flags"):
            raise SystemExit(f"[{mode}] the host agents did not take bridge.recovery.flags as asked")
        rec = recovery_from_logs(cluster, killed["wall"])
        orders, audits, _ = ledger_in_cassandra(cluster.addr("h1"), client.status("ledger")["id"], args.requests)
        return {
            "requests": len(outcomes),
            "killed_after_answers": args.kill_at,
            "wrong_or_lost": len(bad),
            "wrong_examples": bad[:5],
            "http_status": {
                str(s): sum(1 for o in outcomes if o.status == s) for s in sorted({o.status for o in outcomes})
            },
            "orders_in_cassandra": len(orders),
            "audit_reruns": sum(1 for v in audits.values() if v > 1),
            "last_answer_after_kill_s": round(max(o.answered for o in outcomes) - killed["t"], 2),
            "latency": latency(outcomes),
            "latency_sent_after_kill": latency([o for o in outcomes if o.sent >= killed["t"]]),
            "timeline": [[round(o.sent - killed["t"], 3), round((o.answered - o.sent) * 1000, 1)] for o in outcomes],
            **rec,
        }
    finally:
        cluster.run("down", check=False, timeout=300)


def latency(outcomes: list[Outcome]) -> dict[str, float]:
    ms = [(o.answered - o.sent) * 1000 for o in outcomes]
    return {"n": len(ms), "p50_ms": round(percentile(ms, 50), 1), "p99_ms": round(percentile(ms, 99), 1)}


def plot(path: Path, runs: dict[str, dict[str, Any]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2))
    labels = ["processed again", "saved by flags", "audit re-runs"]
    keys = ["processed_again", "saved_by_flags", "audit_reruns"]
    width = 0.38
    for i, (mode, r) in enumerate(runs.items()):
        xs = [k + (i - 0.5) * width for k in range(len(keys))]
        bars = left.bar(xs, [r[k] for k in keys], width=width, label=mode)
        left.bar_label(bars, fontsize=8)
    left.set_xticks(range(len(keys)), labels)
    left.set_ylabel("events")
    left.set_title(f"h3 killed after {next(iter(runs.values()))['killed_after_answers']} answers")
    left.legend()
    for mode, r in runs.items():
        sent = [t for t, _ in r["timeline"]]
        lat = [v for _, v in r["timeline"]]
        right.scatter(sent, lat, s=4, label=f"{mode} (last answer {r['last_answer_after_kill_s']} s after the kill)")
    right.axvline(0, color="red", linewidth=1)
    right.set_yscale("log")
    right.set_xlabel("request sent (s after the kill)")
    right.set_ylabel("latency (ms)")
    right.set_title("each request's latency")
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=600)
    ap.add_argument("--kill-at", type=int, default=200)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument(
        "--sleep-s",
        type=float,
        default=0.5,
        help="how long `receipt` runs: events in flight at the kill, finished ones not yet committed",
    )
    ap.add_argument("--modes", default="flags,no-flags")
    args = ap.parse_args()
    runs = {mode: run(mode, args) for mode in args.modes.split(",")}
    for mode, r in runs.items():
        print(
            f"{mode:9} lost/wrong {r['wrong_or_lost']}/{r['requests']}  processed again {r['processed_again']}  "
            f"saved by flags {r['saved_by_flags']}  audit re-runs {r['audit_reruns']}  takeover: first assignment "
            f"{r['takeover_first_assignment_s']} s, all ranges done {r['takeover_all_ranges_done_s']} s, last "
            f"answer {r['last_answer_after_kill_s']} s  latency p50 {r['latency']['p50_ms']} ms p99 "
            f"{r['latency']['p99_ms']} ms"
        )
    if {"flags", "no-flags"} <= runs.keys() and runs["flags"]["processed_again"]:
        print(
            f"without flags {runs['no-flags']['processed_again'] / runs['flags']['processed_again']:.1f}x the "
            f"events processed again"
        )
    out = write_result("recovery", {"machine": machine(), "args": vars(args), "runs": runs})
    plot(RESULTS / "recovery.png", runs)
    print(f"wrote {out} and {RESULTS / 'recovery.png'}")
    return 0 if all(r["wrong_or_lost"] == 0 for r in runs.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
