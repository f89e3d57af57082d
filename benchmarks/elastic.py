"""Issue 33: what scale to zero saves, against today's static placement, in the same run. --apps applications (a
1-grain function that counts its runs per request id in the data layer) get one seeded trace twice: bursts on a few
applications at a time, the rest idle. First every application keeps its sandbox (static: no setting), then the same
applications are deployed again with scale_to_zero_after_s = --after (elastic) and the trace is replayed.

  sandboxes        the trace's applications' sandbox containers on this host, sampled every second
  memory           their cgroups' memory (what Docker's limit applies to), summed, sampled every second; idle memory
                   cost = the sum over samples of memory x the time to the next sample (MB.s), the §6.5 metric
  latency          each request's, p50/p99/max: a request that found its application scaled to zero pays a cold start
  lost             requests not answered 200 with their own id: must be 0
  doubled          requests run more than once (the grain's count for the request id, read back at the end): must be 0

Single host (`make up`): each host scales an application to zero on its own (docs/operations.md "Scale to zero").

--cluster: on a cluster (`make cluster`; SAND_NGINX_PORT=<its nginx port>), static placement runs every application on
every host; the elastic phase adds max_hosts (all of them), min_hosts 1 and scale_in_after_s --scale-in, so the
cluster's scheduler places each on one host, adds hosts while its bursts queue and takes them away again
(docs/operations.md "Elastic placement"). Sandboxes are counted per host (Docker's label sand.host).

Needs `make up` (or a cluster).  python benchmarks/elastic.py [--apps 20] [--seconds 60] [--after 3] [--quick]
  [--cluster [--hosts 3] [--scale-in 10]]
Writes benchmarks/results/elastic.json and .png (elastic_cluster.* with --cluster).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._api import Bench, Caller, cgroup_memory_mb  # noqa: E402
from benchmarks._common import machine, percentile, write_result  # noqa: E402

COUNT = """
def handle(event, context):
    if "check" in event:
        return {i: int(context.get("seen-" + i) or 0) for i in event["check"]}
    key = "seen-" + event["id"]
    n = int(context.get(key) or 0) + 1
    context.put(key, str(n))
    return {"id": event["id"], "n": n}
"""
SLOT_S = 5.0


def trace(apps: int, seconds: float, per_slot: int, burst: int, seed: int) -> list[tuple[float, int, int]]:
    """(start s, application index, requests) bursts: per_slot applications each slot of SLOT_S seconds."""
    rnd = random.Random(seed)
    out = []
    t = 0.0
    while t < seconds:
        for a in rnd.sample(range(apps), per_slot):
            out.append((t + rnd.uniform(0, SLOT_S / 2), a, burst))
        t += SLOT_S
    return out


def sandboxes(app_ids: set[str]) -> dict[str, tuple[str, str]]:
    """Container id -> (application id, host) of the running sandboxes of app_ids (one Docker serves every host of a
    cluster on this machine)."""
    out = subprocess.run(
        [
            "docker",
            "ps",
            "--no-trunc",
            "--filter",
            "label=sand.component=sandbox",
            "--format",
            '{{.ID}} {{.Label "sand.app"}} {{.Label "sand.host"}}',
        ],
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout.split("\n")
    rows = (line.split(" ") for line in out if line.count(" ") == 2)
    return {c: (a, h) for c, a, h in rows if a in app_ids}


def memory_mb(cid: str) -> float:
    mb = cgroup_memory_mb(cid)
    return 0.0 if mb is None else mb  # gone between the listing and the read


def phase(bench: Bench, label: str, args: argparse.Namespace, bursts: list[tuple[float, int, int]]) -> dict[str, Any]:
    settings: dict[str, Any] | None = {"scale_to_zero_after_s": args.after} if label == "elastic" else None
    if settings is not None and args.cluster:
        settings |= {"max_hosts": args.hosts, "min_hosts": 1, "scale_in_after_s": args.scale_in}
    names, ids = [], set()
    for i in range(args.apps):
        name, _, app = bench.deploy(f"{label}{i}", [{"name": "count", "next": ["end"]}], {"count": COUNT}, settings)
        names.append(name)
        ids.add(app["id"])
    print(f"{label}: {args.apps} applications deployed")
    samples: list[tuple[float, int, float]] = []
    per_host: list[dict[str, int]] = []
    stop = threading.Event()
    t0 = time.monotonic()

    def sample() -> None:
        while not stop.is_set():
            boxes = sandboxes(ids)
            samples.append((time.monotonic() - t0, len(boxes), sum(memory_mb(c) for c in boxes)))
            hosts: dict[str, int] = {}
            for _, h in boxes.values():
                hosts[h] = hosts.get(h, 0) + 1
            per_host.append(hosts)
            stop.wait(1.0)

    results: list[dict[str, Any]] = []
    lock = threading.Lock()

    def run(at: float, a: int, n: int) -> None:
        time.sleep(max(0.0, at - (time.monotonic() - t0)))
        caller = Caller(names[a])
        for _ in range(n):
            rid = uuid.uuid4().hex
            status, ns, _, answer = caller.call(json.dumps({"id": rid}).encode())
            try:
                body = json.loads(answer)
            except ValueError:
                body = {}
            with lock:
                results.append(
                    {
                        "app": a,
                        "id": rid,
                        "status": status,
                        "ms": ns / 1e6,
                        "n": body.get("n"),
                        "ok": status == 200 and body.get("id") == rid,
                    }
                )

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    threads = [threading.Thread(target=run, args=b) for b in bursts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    time.sleep(max(0.0, args.seconds + SLOT_S - (time.monotonic() - t0)))  # the trace's last idle stretch
    stop.set()
    sampler.join()
    # each request's count, read back: a request run twice shows 2 (the check may itself start a sandbox)
    runs: dict[str, int] = {}
    for a, name in enumerate(names):
        mine = [r["id"] for r in results if r["app"] == a and r["ok"]]
        if mine:
            status, _, _, answer = Caller(name).call(json.dumps({"check": mine}).encode())
            if status != 200:
                raise RuntimeError(f"{name}: the check answered {status}: {answer[:300]!r}")
            runs.update(json.loads(answer))
    lat = [r["ms"] for r in results if r["ok"]]
    mb_s = sum(m * ((samples[i + 1][0] if i + 1 < len(samples) else s) - s) for i, (s, _, m) in enumerate(samples))
    span = samples[-1][0] - samples[0][0] if len(samples) > 1 else 1.0
    out = {
        "requests": len(results),
        "lost": sum(1 for r in results if not r["ok"]),
        "lost_examples": [r for r in results if not r["ok"]][:5],
        "doubled": sum(1 for n in runs.values() if n > 1) + sum(1 for r in results if r["ok"] and r["n"] != 1),
        "latency_ms": {
            "p50": round(percentile(lat, 50), 1),
            "p99": round(percentile(lat, 99), 1),
            "max": round(max(lat), 1),
        },
        "sandboxes_mean": round(sum(n for _, n, _ in samples) / len(samples), 2),
        "memory_mb_mean": round(mb_s / span, 1),
        "idle_memory_cost_mb_s": round(mb_s, 1),
        "samples": [[round(s, 1), n, round(m, 1)] for s, n, m in samples],
        "sandboxes_per_host": per_host,
    }
    for h in sorted({h for d in per_host for h in d}):
        out.setdefault("sandboxes_mean_per_host", {})[h] = round(sum(d.get(h, 0) for d in per_host) / len(per_host), 2)
    print(
        f"{label}: {out['requests']} requests, lost {out['lost']}, doubled {out['doubled']}, latency p50 "
        f"{out['latency_ms']['p50']} ms p99 {out['latency_ms']['p99']} ms; sandboxes {out['sandboxes_mean']} on "
        f"average, memory {out['memory_mb_mean']} MB on average ({out['idle_memory_cost_mb_s']} MB.s)"
    )
    if label == "elastic" and getattr(args, "metrics", ""):
        out["scheduler"] = scheduler_metrics(args.metrics.split(","))
    bench.cleanup()
    bench.apps.clear()
    return out


def scheduler_metrics(urls: list[str]) -> dict[str, Any]:
    """Per host agent: its scale events by direction and its last look's seconds as the scheduler (0: not elected)."""
    import urllib.request

    out: dict[str, Any] = {}
    for url in urls:
        try:
            text = urllib.request.urlopen(url, timeout=10).read().decode()
        except OSError as e:
            out[url] = {"error": str(e)}
            continue
        m: dict[str, Any] = {"scale_events": {}}
        for line in text.splitlines():
            if line.startswith("sand_scale_events_total{"):
                direction = line.split('direction="', 1)[1].split('"', 1)[0]
                m["scale_events"][direction] = float(line.rsplit(" ", 1)[1])
            elif line.startswith("sand_scheduler_look_seconds"):
                m["look_seconds"] = float(line.rsplit(" ", 1)[1])
        out[url] = m
    return out


def plot(path: Path, result: dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for label in ("static", "elastic"):
        s = result[label]["samples"]
        top.plot([x[0] for x in s], [x[1] for x in s], label=label)
        bottom.plot([x[0] for x in s], [x[2] for x in s], label=label)
    if result.get("cluster"):  # where the scheduler put the elastic phase's sandboxes
        e = result["elastic"]
        for h in sorted(e.get("sandboxes_mean_per_host") or {}):
            top.plot(
                [x[0] for x in e["samples"]],
                [d.get(h, 0) for d in e["sandboxes_per_host"]],
                linestyle=":",
                label=f"elastic on {h}",
            )
    top.set_ylabel("sandboxes")
    bottom.set_ylabel("sandboxes' memory (MB)")
    bottom.set_xlabel("seconds into the trace")
    top.set_title(
        f"{result['apps']} applications, the same bursts; elastic = scale_to_zero_after_s {result['after_s']}"
    )
    top.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--apps", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--after", type=float, default=3, help="scale_to_zero_after_s of the elastic phase")
    ap.add_argument("--per-slot", type=int, default=3, help="applications bursting in each 5 s slot")
    ap.add_argument("--burst", type=int, default=10, help="requests per burst, one after another")
    ap.add_argument("--seed", type=int, default=33)
    ap.add_argument("--quick", action="store_true", help="4 applications, 15 s, 2 per slot, bursts of 5")
    ap.add_argument("--cluster", action="store_true", help="elastic = placed by the cluster's scheduler too")
    ap.add_argument("--hosts", type=int, default=3, help="--cluster: max_hosts of the elastic phase")
    ap.add_argument("--scale-in", type=float, default=10, help="--cluster: scale_in_after_s of the elastic phase")
    ap.add_argument(
        "--metrics",
        default="",
        help="--cluster: the host agents' /metrics URLs, comma-separated: the scheduler's decisions and its last look",
    )
    args = ap.parse_args()
    if args.quick:
        args.apps, args.seconds, args.per_slot, args.burst = 4, 15, 2, 5
    bursts = trace(args.apps, args.seconds, args.per_slot, args.burst, args.seed)
    bench = Bench()
    try:
        result: dict[str, Any] = {
            "machine": machine(),
            "apps": args.apps,
            "seconds": args.seconds,
            "after_s": args.after,
            "cluster": {"max_hosts": args.hosts, "scale_in_after_s": args.scale_in} if args.cluster else None,
            "bursts": len(bursts),
            "static": phase(bench, "static", args, bursts),
            "elastic": phase(bench, "elastic", args, bursts),
        }
    finally:
        bench.cleanup()
    s, e = result["static"], result["elastic"]
    result["memory_elastic_over_static"] = round(e["memory_mb_mean"] / s["memory_mb_mean"], 3)
    result["sandboxes_elastic_over_static"] = round(e["sandboxes_mean"] / s["sandboxes_mean"], 3)
    path = write_result("elastic_cluster" if args.cluster else "elastic", result)
    plot(path.with_suffix(".png"), result)
    print(json.dumps({k: v for k, v in result.items() if k not in ("machine", "static", "elastic")}, indent=1))
    print(f"wrote {path} and {path.with_suffix('.png')}")
    return 0 if s["lost"] == e["lost"] == s["doubled"] == e["doubled"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
