"""Paper §6.4 through the full platform: the memory of N concurrent calls to one Python function, SAND vs the warm
container-per-function baseline (benchmarks/baselines, a model of OpenWhisk), both on the running system.
(benchmarks/memory_footprint.py measures the same on a bare grain worker and bare containers; this one goes through
each platform's whole path.)

  SAND      one application, one grain that sleeps; N async requests through nginx -> N grain instances forked in
            the one sandbox. Measured: the sandbox's memory cgroup, usage minus inactive file cache (what
            `docker stats` shows), once all N instances run (counted with `docker top`).
  baseline  the same function as an action of WarmContainerPlatform; N concurrent invocations -> N containers (one
            call at a time per container, as OpenWhisk). Measured: the sum of their cgroups, the same formula, once
            N calls are in their containers.
Per-call MB = least-squares slope of MB against N. Paper: SAND 1.1 MB per call on top of a 16.35 MB grain
worker; OpenWhisk 14.61 MB per call.

Needs `make up`.  python benchmarks/memory_platform.py [--quick] [--steps 1,5,10,20,30,40,50]
Writes benchmarks/results/memory_platform.json and .png.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._api import URL, Bench, sandbox_container  # noqa: E402
from benchmarks._common import RESULTS, machine, write_result  # noqa: E402
from benchmarks.baselines._runtime import cgroup_memory_bytes  # noqa: E402

SLEEPER = """import time


def handle(event, context):
    time.sleep(event["s"])
    return {"slept": event["s"]}
"""


def fit(points: list[tuple[int, float]]) -> dict[str, float]:
    """Least-squares line MB = base + per_call * N."""
    n = len(points)
    if n < 2:
        return {"per_call_mb": float("nan"), "base_mb": float("nan")}
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    slope = sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else float("nan")
    return {"per_call_mb": round(slope, 3), "base_mb": round(my - slope * mx, 3)}


def instances(container: str) -> int:
    """The grain workers' children in the sandbox: the running instances and the standby."""
    out = subprocess.run(
        ["docker", "top", container, "-eo", "pid,ppid,args"], capture_output=True, text=True, timeout=30
    ).stdout.splitlines()[1:]
    procs = [line.split(None, 2) for line in out if "--grain" in line]
    workers = {p[0] for p in procs if not any(q[0] == p[1] for q in procs)}
    return sum(1 for p in procs if p[1] in workers)


def sand(steps: list[int], sleep_s: float) -> list[dict[str, Any]]:
    bench = Bench()
    rows = []
    try:
        name, _, app = bench.deploy(
            "mem",
            [{"name": "sleeper", "next": ["end"]}],
            {"sleeper": SLEEPER},
            settings={"concurrency": max(steps) + 8, "timeout_s": sleep_s * 4},
        )
        box = sandbox_container(app["id"])
        bench.api.call("POST", f"/app/{name}", {"s": 0})  # one call: the worker's first fork is behind us
        time.sleep(1)
        idle = cgroup_memory_bytes(box) / 2**20
        for n in steps:
            for _ in range(n):
                bench.api.call("POST", f"/app/{name}", {"s": sleep_s}, query={"async": "1"})
            deadline = time.monotonic() + sleep_s * 0.8
            running = 0
            while time.monotonic() < deadline:
                running = instances(box)
                if running >= n:
                    break
                time.sleep(0.1)
            mb = cgroup_memory_bytes(box) / 2**20
            rows.append({"n": n, "mb": round(mb, 2), "worker_children": running})  # instances + the standby
            print(f"SAND      N={n:3d}  {mb:8.1f} MB  ({running} instances + standby)", flush=True)
            time.sleep(sleep_s + 1)  # all of them end before the next step
        rows.insert(0, {"n": 0, "mb": round(idle, 2), "worker_children": 0})
    finally:
        bench.cleanup()
    return rows


def baseline(steps: list[int], sleep_s: float) -> list[dict[str, Any]]:
    from benchmarks.baselines import WarmContainerPlatform

    rows = []
    with WarmContainerPlatform(pause_after_s=None) as p:  # no pause: a paused container is not serving a call
        p.deploy("sleeper", SLEEPER)
        errors: list[str] = []

        def call() -> None:
            r = p.invoke(["sleeper"], {"s": sleep_s}, timeout_s=sleep_s + 120)
            if r.error:
                errors.append(r.error)

        for n in steps:
            threads = [threading.Thread(target=call) for _ in range(n)]
            for t in threads:
                t.start()
            deadline = time.monotonic() + 120
            while p.containers() < n and time.monotonic() < deadline:
                time.sleep(0.1)
            time.sleep(1.0)  # the last container's call is in its handler
            mb = p.memory_mb()
            rows.append({"n": n, "mb": round(mb, 2), "containers": p.containers()})
            print(f"baseline  N={n:3d}  {mb:8.1f} MB  ({p.containers()} containers)", flush=True)
            for t in threads:
                t.join(sleep_s + 180)
            if errors:
                raise RuntimeError(f"{len(errors)} calls failed: {errors[:3]}")
    return rows


def plot(path: Path, sand_rows: list[dict[str, Any]], base_rows: list[dict[str, Any]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.plot([r["n"] for r in sand_rows], [r["mb"] for r in sand_rows], "o-", label="SAND (one sandbox)")
    ax.plot([r["n"] for r in base_rows], [r["mb"] for r in base_rows], "s-", label="warm container per function")
    ax.set_xlabel("concurrent calls")
    ax.set_ylabel("memory (MB, docker stats formula)")
    ax.set_title("Memory of concurrent calls through the platform (§6.4)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", default="1,5,10,20,30,40,50")
    ap.add_argument("--sleep", type=float, default=6.0, help="seconds each call sleeps (SAND)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--full", action="store_true", help="the same as the default")
    args = ap.parse_args()
    steps = [1, 3, 5] if args.quick else [int(s) for s in args.steps.split(",")]
    sand_rows = sand(steps, args.sleep)
    base_rows = baseline(steps, max(args.sleep, 8.0))
    s_fit = fit([(r["n"], r["mb"]) for r in sand_rows if r["n"] > 0])
    b_fit = fit([(r["n"], r["mb"]) for r in base_rows])
    result = {
        "machine": machine(),
        "url": URL,
        "steps": steps,
        "sand": sand_rows,
        "warm_baseline": base_rows,
        "sand_per_call_mb": s_fit["per_call_mb"],
        "sand_base_mb": s_fit["base_mb"],
        "sand_idle_mb": sand_rows[0]["mb"],
        "warm_per_call_mb": b_fit["per_call_mb"],
        "ratio_per_call": round(b_fit["per_call_mb"] / s_fit["per_call_mb"], 2) if s_fit["per_call_mb"] > 0 else None,
        "paper": {"sand_per_call_mb": 1.1, "sand_worker_mb": 16.35, "openwhisk_per_call_mb": 14.61},
    }
    print(
        f"per call: SAND {s_fit['per_call_mb']} MB (base {s_fit['base_mb']} MB), warm baseline "
        f"{b_fit['per_call_mb']} MB; ratio {result['ratio_per_call']}x (paper: 1.1 vs 14.61 MB)"
    )
    path = write_result("memory_platform", result)
    plot(RESULTS / "memory_platform.png", sand_rows, base_rows)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
