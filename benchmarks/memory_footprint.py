"""Paper §6.4: memory footprint of N concurrent calls to one Python function, SAND vs container per call.

The function (one grain) sends "started" to the benchmark over a Unix datagram socket, then sleeps, so
all N calls of a step run at once; memory is sampled only when all N have started and are still alive.

  sand (host)       one real grain worker (`python -m grainworker --standby 0`) on the host, against
                    the emulator's in-memory local bus / data layer (Unix sockets); N events published to
                    the grain's local queue -> N forked instances. Measured: PSS, USS and RSS summed over
                    the worker and its instance processes (/proc/<pid>/smaps_rollup).
  sand (container)  the same worker inside ONE container of the sandbox image (--network none, the
                    sockets bind-mounted): the container's memory cgroup (v1) as `docker stats` reports
                    it (usage_in_bytes - total_inactive_file), plus usage and rss, plus PSS of its processes.
  baseline          a container per call (OpenWhisk / Greengrass style): N containers of the sandbox image,
                    each running the same function in a bare `python3` (a lower bound: no runtime
                    process), started one after the other and all alive at each step; the sum of their
                    cgroups (docker stats formula), and the PSS of their processes.
  baseline_runtime  a container per call that also runs the grain worker as its runtime (like an action
                    proxy): one worker + one forked instance per container.
Each containerd shim (one per container, outside the container's cgroup and not in `docker stats`) is
reported separately. Lines are least-squares fits of MB against N.

    python benchmarks/memory_footprint.py [--quick] [--sleep 3] [--steps 1,5,10,20,30,40,50]

Writes benchmarks/results/memory_footprint.json and memory_footprint.png.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import RESULTS, machine, write_result  # noqa: E402
from benchmarks.startup import (  # noqa: E402
    IMAGE,
    LocalServers,
    on_sigterm,
    remove_labelled,
    reply_socket,
    start_host_worker,
    stop_process,
    worker_args,
    write_app,
)

MB = 1024 * 1024
APP, GRAIN = "bmem", "sleeper"
CGROUP = Path("/sys/fs/cgroup/memory/docker")
SLEEP_GRAIN = """import os
import socket
import time


def handle(event, context):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.sendto(b"started %d" % os.getpid(), event["reply"])
    s.close()
    time.sleep(event["s"])
    return "slept"
"""
PAPER = {
    "sand_per_instance_mb": 1.1,
    "sand_worker_mb": 16.35,
    "openwhisk_per_call_mb": 14.61,
    "greengrass_per_call_mb": 13.96,
}


# ---- memory readings -----------------------------------------------------------------------------


def smaps(pid: int) -> dict[str, int] | None:
    """Rss, Pss, Uss (private clean + dirty) of one process in bytes; None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    kb = {}
    for line in text.splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 2 and parts[0].endswith(":"):
            kb[parts[0][:-1]] = int(parts[1])
    return {
        "rss": kb.get("Rss", 0) * 1024,
        "pss": kb.get("Pss", 0) * 1024,
        "uss": (kb.get("Private_Clean", 0) + kb.get("Private_Dirty", 0)) * 1024,
    }


def processes_memory(pids: list[int]) -> dict[str, float]:
    tot = {"rss": 0, "pss": 0, "uss": 0}
    alive = 0
    for pid in pids:
        m = smaps(pid)
        if m:
            alive += 1
            for k in tot:
                tot[k] += m[k]
    return {"rss_mb": tot["rss"] / MB, "pss_mb": tot["pss"] / MB, "uss_mb": tot["uss"] / MB, "processes": alive}


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except FileNotFoundError:
        return []


def cgroup_dir(container_id: str) -> Path:
    d = CGROUP / container_id
    if not d.is_dir():
        raise RuntimeError(f"no memory cgroup {d} (this benchmark reads cgroup v1 with the cgroupfs driver)")
    return d


def cgroup_memory(container_id: str) -> dict[str, float]:
    """What `docker stats` shows on cgroup v1 (usage - total_inactive_file), and its parts."""
    d = cgroup_dir(container_id)
    usage = int((d / "memory.usage_in_bytes").read_text())
    stat = {k: int(v) for k, v in (line.split() for line in (d / "memory.stat").read_text().splitlines())}
    return {
        "docker_stats_mb": (usage - stat.get("total_inactive_file", 0)) / MB,
        "usage_mb": usage / MB,
        "rss_mb": stat.get("total_rss", stat.get("rss", 0)) / MB,
        "cache_mb": stat.get("total_cache", stat.get("cache", 0)) / MB,
    }


def cgroup_pids(container_id: str) -> list[int]:
    return [int(p) for p in (cgroup_dir(container_id) / "cgroup.procs").read_text().split()]


def inner_pids(host_pids: list[int]) -> set[int]:
    """The pids these processes have inside their (container's) pid namespace."""
    out = set()
    for pid in host_pids:
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("NSpid:"):
                    out.add(int(line.split()[-1]))
    return out


def shim_pid(container_pid: int) -> int | None:
    """The containerd shim holding a container (the parent of the container's first process)."""
    try:
        ppid = int(Path(f"/proc/{container_pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        comm = Path(f"/proc/{ppid}/comm").read_text().strip()
    except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
        return None
    return ppid if comm.startswith("containerd-shim") else None


def add(total: dict[str, float], part: dict[str, float]) -> None:
    for k, v in part.items():
        total[k] = total.get(k, 0) + v


def fit(points: list[dict[str, float]], key: str) -> dict[str, float]:
    """Least-squares line MB = intercept + slope * N over the points with N >= 1."""
    xs = [p["n"] for p in points if p["n"] >= 1]
    ys = [p[key] for p in points if p["n"] >= 1]
    if len(xs) < 2:
        return {"slope_mb": float("nan"), "intercept_mb": float("nan"), "r2": float("nan")}
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    icpt = my - slope * mx
    ss_res = sum((y - icpt - slope * x) ** 2 for x, y in zip(xs, ys, strict=True))
    ss_tot = sum((y - my) ** 2 for y in ys) or 1.0
    return {"slope_mb": round(slope, 3), "intercept_mb": round(icpt, 3), "r2": round(1 - ss_res / ss_tot, 4)}


# ---- the runs ------------------------------------------------------------------------------------


class Bench:
    def __init__(self, tmp: Path, sleep_s: float, client, labels: dict[str, str]) -> None:
        self.tmp = tmp
        self.sleep_s = sleep_s
        self.client = client
        self.labels = labels
        self.srv = LocalServers(tmp, APP)
        self.code_dir, self.wf = write_app(tmp, APP, GRAIN, SLEEP_GRAIN)
        self.sock, self.reply = reply_socket(tmp)
        self.agent = self.srv.agent()

    def publish(self, n: int, sleep_s: float) -> None:
        for _ in range(n):
            self.agent.publish(f"{APP}/{GRAIN}", self.srv.event(GRAIN, {"s": sleep_s, "reply": self.reply}))

    def wait_started(self, n: int, timeout: float = 60) -> list[int]:
        """The pids of n instances that have entered the function."""
        pids = []
        deadline = time.monotonic() + timeout
        while len(pids) < n:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                msg = self.sock.recv(100)
            except TimeoutError:
                raise RuntimeError(f"only {len(pids)} of {n} calls started within {timeout:.0f}s") from None
            pids.append(int(msg.split()[1]))
        return pids

    def drain_reports(self, n: int, timeout: float) -> None:
        got, deadline = 0, time.monotonic() + timeout
        while got < n and time.monotonic() < deadline:
            got += len(self.agent.poll_host_agent(max_messages=100, timeout_ms=500))

    def wait_no_children(self, pids_of) -> None:  # noqa: ANN001
        deadline = time.monotonic() + 30
        while pids_of() and time.monotonic() < deadline:
            time.sleep(0.1)

    def container(self, cmd: list[str], env: dict[str, str] | None = None):
        # The folder is mounted at the same path inside, so socket and code paths are the same.
        return self.client.containers.run(
            IMAGE,
            cmd,
            detach=True,
            network_mode="none",
            labels=self.labels,
            environment=env or {},
            volumes={str(self.tmp): {"bind": str(self.tmp), "mode": "rw"}},
        )

    def worker_in_container(self, concurrency: int, timeout_s: int = 60):
        args = worker_args(
            APP,
            GRAIN,
            str(self.code_dir),
            str(self.wf),
            f"unix:{self.srv.bus_sock}",
            f"unix:{self.srv.data_sock}",
            standby=False,
            concurrency=concurrency,
        )
        args[args.index("--timeout") + 1] = str(timeout_s)
        return self.container(["python3", *args], env={"SAND_GRAINWORKER_CREDENTIAL": self.srv.app_cred})

    # -- SAND: one worker on the host
    def sand_host(self, steps: list[int]) -> list[dict[str, float]]:
        worker = start_host_worker(self.srv, self.code_dir, self.wf, GRAIN, standby=False, concurrency=max(steps) + 8)
        points = []
        try:
            self.publish(1, 0)  # warm-up: the worker is up, its first instance came and went
            self.wait_started(1, timeout=30)
            self.drain_reports(1, 10)
            self.wait_no_children(lambda: children(worker.pid))
            time.sleep(0.5)
            points.append({"n": 0, **processes_memory([worker.pid])})
            for n in steps:
                self.publish(n, self.sleep_s)
                started = self.wait_started(n)
                kids = children(worker.pid)
                m = processes_memory([worker.pid, *kids])
                alive = len([k for k in children(worker.pid) if k in started])
                if set(started) != set(kids) or alive != n:
                    raise RuntimeError(f"sand host n={n}: {len(kids)} children, {alive} of the started alive")
                points.append({"n": n, **m, "worker_pss_mb": processes_memory([worker.pid])["pss_mb"]})
                print(
                    f"  sand host       n={n:3d}  PSS {m['pss_mb']:8.2f} MB  USS {m['uss_mb']:8.2f} MB  "
                    f"RSS {m['rss_mb']:8.2f} MB  ({m['processes']} processes)",
                    flush=True,
                )
                self.drain_reports(n, self.sleep_s + 30)
                self.wait_no_children(lambda: children(worker.pid))
        finally:
            stop_process(worker)
        return points

    # -- SAND: one worker inside one container
    def sand_container(self, steps: list[int]) -> tuple[list[dict[str, float]], float]:
        box = self.worker_in_container(max(steps) + 8)
        points = []
        try:
            self.publish(1, 0)
            self.wait_started(1, timeout=60)
            self.drain_reports(1, 10)
            worker_pid = box.attrs["State"]["Pid"] or self.client.containers.get(box.id).attrs["State"]["Pid"]
            self.wait_no_children(lambda: children(worker_pid))
            time.sleep(0.5)
            shim = shim_pid(worker_pid)
            shim_mb = processes_memory([shim])["pss_mb"] if shim else float("nan")
            points.append({"n": 0, **cgroup_memory(box.id), **prefixed(processes_memory(cgroup_pids(box.id)))})
            for n in steps:
                self.publish(n, self.sleep_s)
                started = self.wait_started(n)
                m = {**cgroup_memory(box.id), **prefixed(processes_memory(cgroup_pids(box.id)))}
                alive = len(set(started) & inner_pids(cgroup_pids(box.id)))  # started: pids inside
                if alive != n:
                    raise RuntimeError(f"sand container n={n}: only {alive} instances alive when sampled")
                points.append({"n": n, **m})
                print(
                    f"  sand container  n={n:3d}  docker stats {m['docker_stats_mb']:8.2f} MB  "
                    f"usage {m['usage_mb']:8.2f} MB  PSS {m['proc_pss_mb']:8.2f} MB",
                    flush=True,
                )
                self.drain_reports(n, self.sleep_s + 30)
                self.wait_no_children(lambda: children(worker_pid))
        finally:
            with contextlib.suppress(Exception):
                box.remove(force=True)
        return points, shim_mb

    # -- baselines: one container per call, all kept alive while N grows
    def baseline(self, steps: list[int], runtime: bool) -> tuple[list[dict[str, float]], list[float]]:
        name = "baseline_runtime" if runtime else "baseline"
        hold_s = 300  # the calls sleep this long; the containers are removed when done
        boxes = []
        points = []
        shims: list[float] = []
        fn = (
            f"import sys; sys.path.insert(0, {str(self.code_dir)!r}); import {GRAIN}; "
            f"{GRAIN}.handle({{'s': {hold_s}, 'reply': {self.reply!r}}}, None)"
        )
        try:
            for n in steps:
                while len(boxes) < n:
                    if runtime:
                        boxes.append(self.worker_in_container(1, timeout_s=hold_s + 60))
                        self.publish(1, hold_s)  # only the new worker is idle: it takes the event
                    else:
                        boxes.append(self.container(["python3", "-c", fn]))
                    self.wait_started(1, timeout=60)
                m: dict[str, float] = {}
                pids: list[int] = []
                for b in boxes:
                    add(m, cgroup_memory(b.id))
                    pids += cgroup_pids(b.id)
                add(m, prefixed(processes_memory(pids)))
                if m["proc_processes"] != n * (2 if runtime else 1):
                    raise RuntimeError(f"{name} n={n}: {m['proc_processes']:.0f} processes alive")
                points.append({"n": n, **m})
                print(
                    f"  {name:16s}n={n:3d}  docker stats {m['docker_stats_mb']:8.2f} MB  "
                    f"usage {m['usage_mb']:8.2f} MB  PSS {m['proc_pss_mb']:8.2f} MB",
                    flush=True,
                )
            for b in boxes:
                pid = b.attrs["State"]["Pid"] or self.client.containers.get(b.id).attrs["State"]["Pid"]
                shim = shim_pid(pid)
                if shim:
                    shims.append(processes_memory([shim])["pss_mb"])
            if not runtime and boxes:  # cross-check the formula against docker's own stats, one container
                s = boxes[0].stats(stream=False)["memory_stats"]
                points[0]["docker_api_usage_minus_inactive_file_mb"] = (
                    s["usage"] - s["stats"].get("total_inactive_file", 0)
                ) / MB
        finally:
            for b in boxes:
                with contextlib.suppress(Exception):
                    b.remove(force=True)
            self.drain_reports(10**6, 0.5)
        return points, shims


def prefixed(m: dict[str, float]) -> dict[str, float]:
    return {f"proc_{k}": v for k, v in m.items()}


def plot(path: Path, series: dict[str, tuple[list[dict[str, float]], str]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    for label, (points, key) in series.items():
        pts = [p for p in points if p["n"] >= 1] if label.startswith("baseline") else points
        ax.plot([p["n"] for p in pts], [p[key] for p in pts], marker="o", label=label)
    ax.set_xlabel("concurrent calls")
    ax.set_ylabel("memory (MB)")
    ax.set_title("Memory footprint of concurrent calls (paper §6.4)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", default="1,5,10,20,30,40,50", help="concurrency levels")
    ap.add_argument("--sleep", type=float, default=3.0, help="seconds each SAND call sleeps")
    ap.add_argument("--quick", action="store_true", help="steps 1,10,25")
    ap.add_argument("--no-runtime-baseline", action="store_true", help="skip the baseline with a worker per container")
    args = ap.parse_args()
    steps = [1, 10, 25] if args.quick else sorted({int(s) for s in args.steps.split(",")})

    import docker

    on_sigterm()
    t0 = time.monotonic()
    client = docker.from_env()
    client.images.get(IMAGE)
    cgroup_dir("")  # cgroup v1 memory controller with docker's cgroupfs layout
    run_id = f"memory-{uuid.uuid4().hex[:8]}"
    label = f"sand.bench={run_id}"
    tmp = Path(tempfile.mkdtemp(prefix="sand-bench-memory-"))
    tmp.chmod(0o755)  # the sandbox's user (uid 1000) reads the grain code and uses the sockets
    out: dict[str, object] = {
        "machine": machine(),
        "image": IMAGE,
        "steps": steps,
        "sleep_s": args.sleep,
        "loadavg_1m_start": round(os.getloadavg()[0], 2),
    }
    try:
        b = Bench(tmp, args.sleep, client, {"sand.bench": run_id})
        print("SAND, grain worker on the host (PSS/USS/RSS of worker + instances):", flush=True)
        host = b.sand_host(steps)
        print("SAND, grain worker in one container (its memory cgroup):", flush=True)
        cont, sand_shim = b.sand_container(steps)
        print("baseline, one container per call (bare python3 running the function):", flush=True)
        base, base_shims = b.baseline(steps, runtime=False)
        rt, rt_shims = ([], [])
        if not args.no_runtime_baseline:
            print("baseline, one container per call with the grain worker as its runtime:", flush=True)
            rt, rt_shims = b.baseline(steps, runtime=True)
    finally:
        try:
            removed = remove_labelled(client, label)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print(f"cleanup: removed {removed} leftover container(s) labelled {label}", flush=True)

    fits = {
        "sand_host_pss": fit(host, "pss_mb"),
        "sand_host_uss": fit(host, "uss_mb"),
        "sand_host_rss": fit(host, "rss_mb"),
        "sand_container_docker_stats": fit(cont, "docker_stats_mb"),
        "sand_container_usage": fit(cont, "usage_mb"),
        "sand_container_pss": fit(cont, "proc_pss_mb"),
        "baseline_docker_stats": fit(base, "docker_stats_mb"),
        "baseline_usage": fit(base, "usage_mb"),
        "baseline_pss": fit(base, "proc_pss_mb"),
        "baseline_uss": fit(base, "proc_uss_mb"),
    }
    if rt:
        fits["baseline_runtime_docker_stats"] = fit(rt, "docker_stats_mb")
        fits["baseline_runtime_pss"] = fit(rt, "proc_pss_mb")
    idle = host[0]
    out.update(
        {
            "per_instance_mb": fits["sand_host_pss"]["slope_mb"],
            "worker_mb": fits["sand_host_pss"]["intercept_mb"],
            "worker_idle_pss_mb": round(idle["pss_mb"], 3),
            "worker_idle_uss_mb": round(idle["uss_mb"], 3),
            "worker_idle_rss_mb": round(idle["rss_mb"], 3),
            "per_instance_uss_mb": fits["sand_host_uss"]["slope_mb"],
            "worker_uss_mb": fits["sand_host_uss"]["intercept_mb"],
            "sand_container_per_instance_mb": fits["sand_container_docker_stats"]["slope_mb"],
            "sand_container_worker_mb": fits["sand_container_docker_stats"]["intercept_mb"],
            "sand_container_idle_mb": round(cont[0]["docker_stats_mb"], 3),
            "baseline_per_call_mb": fits["baseline_docker_stats"]["slope_mb"],
            "baseline_per_call_pss_mb": fits["baseline_pss"]["slope_mb"],
            "baseline_runtime_per_call_mb": fits["baseline_runtime_docker_stats"]["slope_mb"] if rt else None,
            "shim_pss_mb_per_container": round(sum(base_shims + rt_shims) / len(base_shims + rt_shims), 3)
            if base_shims + rt_shims
            else None,
            "sand_shim_pss_mb": round(sand_shim, 3),
            "fits": fits,
            "points": {"sand_host": host, "sand_container": cont, "baseline": base, "baseline_runtime": rt},
            "paper": PAPER,
            "method": {
                "sand_host": "sum over the worker and its instance processes of /proc/<pid>/smaps_rollup "
                "(PSS = shared pages split among their sharers; USS = private pages only)",
                "cgroup": "cgroup v1 memory of the container: docker stats = usage_in_bytes - total_inactive_file",
                "baseline": "N containers of the sandbox image, each a bare python3 running the same function",
                "headline": "per_instance_mb / worker_mb: slope / intercept of SAND host PSS; baseline_per_call_mb: "
                "slope of the baseline's summed docker-stats memory",
            },
        }
    )
    n_max = max(steps)
    out["memory_at_max_n_mb"] = {
        "n": n_max,
        "sand_host_pss": round(host[-1]["pss_mb"], 2),
        "sand_container_docker_stats": round(cont[-1]["docker_stats_mb"], 2),
        "baseline_docker_stats": round(base[-1]["docker_stats_mb"], 2),
    }
    out["baseline_over_sand_at_max_n"] = round(base[-1]["docker_stats_mb"] / cont[-1]["docker_stats_mb"], 2)
    out["elapsed_s"] = round(time.monotonic() - t0, 1)
    path = write_result("memory_footprint", out)
    series = {
        "SAND host: PSS worker+instances": (host, "pss_mb"),
        "SAND host: USS": (host, "uss_mb"),
        "SAND in container: docker stats": (cont, "docker_stats_mb"),
        "baseline container/call: docker stats": (base, "docker_stats_mb"),
        "baseline container/call: PSS": (base, "proc_pss_mb"),
    }
    if rt:
        series["baseline container/call + worker runtime: docker stats"] = (rt, "docker_stats_mb")
    plot(RESULTS / "memory_footprint.png", series)

    print()
    print(f"{'series':42s} {'per call MB':>12s} {'fixed MB':>10s} {'r2':>7s}")
    for k, f in fits.items():
        print(f"{k:42s} {f['slope_mb']:12.3f} {f['intercept_mb']:10.3f} {f['r2']:7.4f}")
    print(
        f"SAND: {out['per_instance_mb']} MB per instance (PSS) on top of a {out['worker_mb']} MB worker "
        f"(idle worker measured: PSS {out['worker_idle_pss_mb']} MB, USS {out['worker_idle_uss_mb']} MB, "
        f"RSS {out['worker_idle_rss_mb']} MB); in a container: {out['sand_container_per_instance_mb']} MB per "
        f"instance on {out['sand_container_worker_mb']} MB (docker stats)"
    )
    print(
        f"baseline: {out['baseline_per_call_mb']} MB per call (docker stats), {out['baseline_per_call_pss_mb']} MB "
        f"(PSS); with a worker runtime: {out['baseline_runtime_per_call_mb']} MB; containerd shim "
        f"{out['shim_pss_mb_per_container']} MB PSS per container on top"
    )
    print(f"at n={n_max}: baseline / SAND-in-container = {out['baseline_over_sand_at_max_n']}x")
    print(
        f"paper: SAND {PAPER['sand_per_instance_mb']} MB per call on {PAPER['sand_worker_mb']} MB; OpenWhisk "
        f"{PAPER['openwhisk_per_call_mb']} MB, Greengrass {PAPER['greengrass_per_call_mb']} MB per call"
    )
    print(f"wrote {path} in {out['elapsed_s']} s")


if __name__ == "__main__":
    main()
