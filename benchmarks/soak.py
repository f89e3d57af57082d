"""Soak: mixed traffic at a fixed rate for a long time, looking for failures and leaks (issue 26).

    python benchmarks/soak.py [--minutes 30] [--rate 15] [--quick]

Three applications of one account take turns: a 1-grain echo, a 2-grain chain through the data layer (the first
grain writes a key, the second reads it back and deletes it), and an ASL machine (Pass, Task, a Map of three items,
Choice). Requests are sent open-loop at `--rate` per second by a few client threads, so a slow system is not given a
lighter load. Each minute it records, per application, requests, failures, p50 and p99; and for each platform process
(host agent, frontends, Kafka, Cassandra, nginx, the sandboxes' grain workers) its RSS, threads and open files. The
growth of each after the first fifth of the run (the warm-up) is fitted per hour: a leak shows as growth that does not
level off. Target: 0 failed and no growth after warm-up. Writes results/soak.json and soak.png.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._api import Bench, Caller  # noqa: E402
from benchmarks._common import RESULTS, machine, percentile, write_result  # noqa: E402
from benchmarks._cpu import component  # noqa: E402

ECHO = "def handle(event, context):\n    return event\n"
WRITE = (
    "def handle(event, context):\n"
    "    key = 'soak.' + context.get_execution_id()\n"
    "    context.put(key, str(event['n']))\n"
    "    return {'key': key, 'n': event['n']}\n"
)
READ = (
    "def handle(event, context):\n"
    "    value = context.get(event['key'])\n"
    "    context.delete(event['key'])\n"
    "    if value != str(event['n']):\n"
    "        raise ValueError(f'read {value!r}, wrote {event[\"n\"]!r}')\n"
    "    return {'n': event['n']}\n"
)
DOUBLE = "def handle(event, context):\n    return {'n': event['n'] * 2, 'items': [1, 2, 3]}\n"
ADD = "def handle(event, context):\n    return event + 1\n"
MACHINE = {
    "StartAt": "Start",
    "States": {
        "Start": {"Type": "Pass", "Next": "Double"},
        "Double": {"Type": "Task", "Resource": "soakdouble", "Next": "Each"},
        "Each": {
            "Type": "Map",
            "ItemsPath": "$.items",
            "MaxConcurrency": 2,
            "ResultPath": "$.items",
            "Iterator": {"StartAt": "Add", "States": {"Add": {"Type": "Task", "Resource": "soakadd", "End": True}}},
            "Next": "Check",
        },
        "Check": {
            "Type": "Choice",
            "Choices": [{"Variable": "$.n", "NumericGreaterThanEquals": 0, "Next": "Done"}],
            "Default": "Done",
        },
        "Done": {"Type": "Succeed"},
    },
}
# What each application must answer for an input n (anything else is a failure, not only a non-200).
EXPECTED = {
    "echo": lambda n: {"n": n},
    "data": lambda n: {"n": n},
    "asl": lambda n: {"n": 2 * n, "items": [2, 3, 4]},
}
PLATFORM = ("host agent", "frontend", "kafka", "cassandra", "nginx", "sandbox")


def deploy_asl(bench: Bench) -> str:
    name = f"{bench.prefix}-asl"
    for grain, code in (("soakdouble", DOUBLE), ("soakadd", ADD)):
        bench.api.call("PUT", f"/api/v1/grains/{grain}", code, content_type="text/x-python")
    bench.api.call("PUT", f"/api/v1/apps/{name}", MACHINE | {"name": name})
    bench.api.call("POST", f"/api/v1/apps/{name}/deploy")
    bench.apps.append(name)
    deadline = time.monotonic() + 600
    while (status := bench.api.call("GET", f"/api/v1/apps/{name}").body["status"]) not in ("deployed", "failed"):
        if time.monotonic() > deadline:
            break
        time.sleep(0.3)
    if status != "deployed":
        raise RuntimeError(f"{name} did not deploy: {status}")
    return name


def processes() -> dict[str, dict[str, float]]:
    """Per platform component: summed RSS (MB), threads and open files of its processes now."""
    out = {c: {"rss_mb": 0.0, "threads": 0, "open_files": 0, "processes": 0} for c in PLATFORM}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            name = component(cmd) if cmd.strip() else ""
            if name not in out:
                continue
            status = Path(f"/proc/{entry}/status").read_text()
            fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
            files = len(os.listdir(f"/proc/{entry}/fd"))
        except OSError:
            continue  # it ended while we looked
        row = out[name]
        row["rss_mb"] += int(fields.get("VmRSS", "0 kB").split()[0]) / 1024
        row["threads"] += int(fields.get("Threads", "0"))
        row["open_files"] += files
        row["processes"] += 1
    return {c: {k: round(v, 1) for k, v in row.items()} for c, row in out.items()}


def slope_per_hour(samples: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, value) in value per hour; 0 for fewer than two samples."""
    if len(samples) < 2:
        return 0.0
    n = len(samples)
    mx = sum(t for t, _ in samples) / n
    my = sum(v for _, v in samples) / n
    var = sum((t - mx) ** 2 for t, _ in samples)
    return 0.0 if var == 0 else sum((t - mx) * (v - my) for t, v in samples) / var * 3600


class Load:
    """Open-loop requests at a fixed rate over the applications, round robin; results bucketed per minute."""

    def __init__(self, apps: dict[str, str], rate: float, clients: int) -> None:
        self.apps = apps
        self.rate = rate
        self.clients = clients
        self.lock = threading.Lock()
        self.buckets: dict[int, dict[str, dict[str, Any]]] = {}
        self.errors: list[str] = []
        self.t0 = 0.0

    def record(self, minute: int, kind: str, ms: float | None, error: str | None) -> None:
        with self.lock:
            b = self.buckets.setdefault(minute, {}).setdefault(kind, {"lat": [], "failed": 0})
            if error is None and ms is not None:
                b["lat"].append(ms)
            else:
                b["failed"] += 1
                if len(self.errors) < 50:
                    self.errors.append(f"{kind}: {error}")

    def client(self, index: int, seconds: float) -> None:
        callers = {kind: Caller(app) for kind, app in self.apps.items()}
        kinds = list(self.apps)
        k = index
        while True:
            due = self.t0 + k * (1 / self.rate)  # request k of the whole run, this client takes every clients-th
            if due - self.t0 >= seconds:
                return
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            kind = kinds[k % len(kinds)]
            n = k
            status, ns, _, body = callers[kind].call(json.dumps({"n": n}).encode())
            minute = int((due - self.t0) // 60)
            error = None
            if status != 200:
                error = f"HTTP {status}: {body[:200]!r}"
            else:
                try:
                    got = json.loads(body)
                except ValueError:
                    got = body[:200]
                if got != EXPECTED[kind](n):
                    error = f"wrong answer {got!r:.200}"
            self.record(minute, kind, ns / 1e6, error)
            k += self.clients

    def run(self, seconds: float, on_minute: Any) -> None:
        self.t0 = time.monotonic()
        threads = [threading.Thread(target=self.client, args=(i, seconds), daemon=True) for i in range(self.clients)]
        for t in threads:
            t.start()
        minute = 0
        while any(t.is_alive() for t in threads):
            time.sleep(min(1.0, max(0.0, self.t0 + (minute + 1) * 60 - time.monotonic())))
            if time.monotonic() >= self.t0 + (minute + 1) * 60:
                minute += 1
                on_minute(minute)
        for t in threads:
            t.join()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--rate", type=float, default=15, help="requests per second, all applications together")
    ap.add_argument("--clients", type=int, default=8, help="client threads sending the requests")
    ap.add_argument("--quick", action="store_true", help="1 minute at 6 requests per second (the smoke test)")
    args = ap.parse_args()
    if args.quick:
        args.minutes, args.rate = 1.0, 6.0
    seconds = args.minutes * 60

    bench = Bench()
    try:
        apps = {
            "echo": bench.deploy(
                "echo", [{"name": "echo", "resource": "soakecho", "next": ["end"]}], {"soakecho": ECHO}
            )[0],
            "data": bench.deploy(
                "data",
                [
                    {"name": "write", "resource": "soakwrite", "next": ["read"]},
                    {"name": "read", "resource": "soakread", "next": ["end"]},
                ],
                {"soakwrite": WRITE, "soakread": READ},
            )[0],
            "asl": deploy_asl(bench),
        }
        for kind, app in apps.items():  # warm each once; a wrong answer here is a broken setup, not a soak result
            status, _, _, body = Caller(app).call(json.dumps({"n": 1}).encode())
            if status != 200 or json.loads(body) != EXPECTED[kind](1):
                raise RuntimeError(f"{kind} answered {status} {body[:300]!r}")

        load = Load(apps, args.rate, args.clients)
        samples: list[dict[str, Any]] = [{"minute": 0, "t_s": 0.0, "processes": processes()}]
        print(
            f"soak: {args.minutes:g} min at {args.rate:g} req/s over {', '.join(apps)}; "
            f"start {json.dumps(samples[0]['processes'])}",
            flush=True,
        )

        def on_minute(minute: int) -> None:
            procs = processes()
            samples.append({"minute": minute, "t_s": round(time.monotonic() - load.t0, 1), "processes": procs})
            with load.lock:
                b = load.buckets.get(minute - 1, {})
                line = ", ".join(
                    f"{k} {len(v['lat'])} ok {v['failed']} failed p50 "
                    f"{percentile(v['lat'], 50):.1f} p99 {percentile(v['lat'], 99):.1f} ms"
                    for k, v in sorted(b.items())
                )
            print(
                f"  minute {minute}: {line}; host agent {procs['host agent']['rss_mb']} MB "
                f"{procs['host agent']['threads']} threads, frontends {procs['frontend']['rss_mb']} MB",
                flush=True,
            )

        load.run(seconds, on_minute)
        time.sleep(2)
        samples.append({"minute": len(samples), "t_s": round(time.monotonic() - load.t0, 1), "processes": processes()})
    finally:
        bench.cleanup()

    per_minute = []
    total_ok = total_failed = 0
    for minute in sorted(load.buckets):
        row: dict[str, Any] = {"minute": minute}
        for kind, b in sorted(load.buckets[minute].items()):
            row[kind] = {
                "ok": len(b["lat"]),
                "failed": b["failed"],
                "p50_ms": round(percentile(b["lat"], 50), 2),
                "p99_ms": round(percentile(b["lat"], 99), 2),
            }
            total_ok += len(b["lat"])
            total_failed += b["failed"]
        per_minute.append(row)
    warm = samples[max(1, len(samples) // 5) :]
    growth = {
        c: {
            m: round(slope_per_hour([(s["t_s"], s["processes"][c][m]) for s in warm]), 2)
            for m in ("rss_mb", "threads", "open_files")
        }
        for c in PLATFORM
    }
    result = {
        "benchmark": "soak",
        "machine": machine(),
        "minutes": args.minutes,
        "rate_rps": args.rate,
        "apps": list(apps),
        "requests": total_ok + total_failed,
        "failed": total_failed,
        "errors": load.errors,
        "per_minute": per_minute,
        "processes_start": samples[0]["processes"],
        "processes_end": samples[-1]["processes"],
        "growth_per_hour_after_warmup": growth,
        "samples": samples,
        "target": {"failed": 0, "growth": "none after warm-up"},
    }
    path = write_result("soak", result)
    plot(result, RESULTS / "soak.png")
    print(f"soak: {total_ok + total_failed} requests, {total_failed} failed")
    for c in PLATFORM:
        s, e, g = samples[0]["processes"][c], samples[-1]["processes"][c], growth[c]
        print(
            f"  {c:10s} RSS {s['rss_mb']:8.1f} -> {e['rss_mb']:8.1f} MB ({g['rss_mb']:+.1f}/h after warm-up), "
            f"threads {s['threads']} -> {e['threads']} ({g['threads']:+.1f}/h), "
            f"open files {s['open_files']} -> {e['open_files']} ({g['open_files']:+.1f}/h)"
        )
    for err in load.errors[:10]:
        print(f"  error: {err}")
    print(f"results: {path}")
    return 0


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (lat, mem) = plt.subplots(1, 2, figsize=(12, 4))
    for kind in result["apps"]:
        rows = [r for r in result["per_minute"] if kind in r]
        xs = [r["minute"] + 1 for r in rows]
        lat.plot(xs, [r[kind]["p50_ms"] for r in rows], marker="o", label=f"{kind} p50")
        lat.plot(xs, [r[kind]["p99_ms"] for r in rows], marker="x", linestyle="--", label=f"{kind} p99")
    lat.set_xlabel("minute")
    lat.set_ylabel("latency (ms)")
    lat.set_yscale("log")
    lat.set_title(f"latency per minute ({result['failed']} of {result['requests']} failed)")
    lat.legend(fontsize=7)
    for c in PLATFORM:
        xs = [s["t_s"] / 60 for s in result["samples"]]
        mem.plot(xs, [s["processes"][c]["rss_mb"] for s in result["samples"]], marker=".", label=c)
    mem.set_xlabel("minute")
    mem.set_ylabel("RSS (MB)")
    mem.set_title("resident memory per component")
    mem.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
