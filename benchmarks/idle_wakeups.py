"""What an idle deployed application costs (issue 27): CPU and wake-ups while nothing calls it.

  baseline  the platform idle without the application (its sandbox not deployed yet): the host agent's and the
            frontends' CPU and context switches over the window
  app       a chain of G trivial grains (TC3's), deployed, called once, left alone --settle s, then measured over
            --window s: its sandbox's CPU (the container's cgroup), the context switches of every thread in it
            (each is a wake-up: a sleeping thread that ran), per grain worker; the host agent and the frontends
            over the same window. The application's own cost is app minus baseline.

The target: no wake-up of an idle grain worker (today each worker's long poll of its local queue returns every
second). Other applications' sandboxes on the host are not stopped (they are counted in the JSON: their cost is in
both windows).

Needs `make up`.  python benchmarks/idle_wakeups.py [--grains 100] [--settle 5] [--window 30] [--quick]
Writes benchmarks/results/idle_wakeups.json (no plot).
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

from benchmarks._api import Bench, Caller, sandbox_container  # noqa: E402
from benchmarks._common import SAND_HOME, machine, write_result  # noqa: E402

INC = "def handle(event, context):\n    return {'n': event['n'] + 1}\n"
HZ = os.sysconf("SC_CLK_TCK")
ROLES = ("supervisor", "grain worker", "instance")  # the sandbox's processes: instance = a worker's child (standby)


def sandboxes_running() -> int:
    return len(
        subprocess.run(
            ["docker", "ps", "-q", "--filter", "label=sand.component=sandbox"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.split()
    )


def cgroup(container: str) -> tuple[Path, str, Path]:
    """(the container's CPU accounting folder, its usage file, the file listing its threads): cgroup v1 or v2."""
    for folder, usage, threads in (
        (f"/sys/fs/cgroup/cpuacct/docker/{container}", "cpuacct.usage", "tasks"),
        (f"/sys/fs/cgroup/cpuacct/system.slice/docker-{container}.scope", "cpuacct.usage", "tasks"),
        (f"/sys/fs/cgroup/system.slice/docker-{container}.scope", "cpu.stat", "cgroup.threads"),
        (f"/sys/fs/cgroup/docker/{container}", "cpu.stat", "cgroup.threads"),
    ):
        if Path(folder, usage).exists():
            return Path(folder), usage, Path(folder, threads)
    raise RuntimeError(
        f"no CPU cgroup found for container {container} (looked under /sys/fs/cgroup for cgroup v1 "
        "cpuacct and v2 cpu.stat); is Docker using the cgroupfs or systemd driver?"
    )


def cgroup_cpu_s(folder: Path, usage: str) -> float:
    text = Path(folder, usage).read_text()
    if usage == "cpuacct.usage":
        return int(text) / 1e9
    return int(dict(line.split() for line in text.splitlines())["usage_usec"]) / 1e6


def thread(tid: int | str, base: str = "/proc") -> tuple[int, float, int] | None:
    """(its process id, its CPU seconds, its context switches) of one thread, or None if it has ended."""
    try:
        status = Path(f"{base}/{tid}/status").read_text()
        stat = Path(f"{base}/{tid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    switches = int(fields["voluntary_ctxt_switches"]) + int(fields["nonvoluntary_ctxt_switches"])
    return int(fields["Tgid"]), (int(stat[11]) + int(stat[12])) / HZ, switches


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except OSError:
        return 0


def role(pid: int) -> str:
    cmd = cmdline(pid)
    if "--grain" not in cmd:
        return "supervisor"  # grainworker.supervisor (and anything else in the sandbox: none today)
    return "instance" if "--grain" in cmdline(parent(pid)) else "grain worker"


def sandbox_snapshot(container: str) -> dict[str, Any]:
    """The sandbox's cgroup CPU, per thread (tid -> (role, CPU s, switches)) and per process (pid -> role)."""
    folder, usage, tasks = cgroup(container)
    roles: dict[int, str] = {}
    threads = {}
    for tid in tasks.read_text().split():
        t = thread(tid)
        if t is None:
            continue
        pid, cpu, switches = t
        if pid not in roles:
            roles[pid] = role(pid)
        threads[int(tid)] = (roles[pid], cpu, switches)
    return {"cpu_s": cgroup_cpu_s(folder, usage), "threads": threads, "processes": roles}


def platform_pids() -> dict[str, list[int]]:
    """The host agent's and the frontends' Java processes: the supervisor's child (deploy/lib.sh), else the pid file."""
    out: dict[str, list[int]] = {"host agent": [], "frontends": []}
    run = SAND_HOME / "run"
    frontends = [(p.stem, "frontends") for p in sorted(run.glob("frontend-*.pid"))]
    for name, comp in [("hostagent", "host agent"), *frontends]:
        pid = None
        sup = run / f"{name}.supervisor"
        if sup.exists():
            pid = dict(line.split("=", 1) for line in sup.read_text().splitlines() if "=" in line).get("child")
        if not pid and (run / f"{name}.pid").exists():
            pid = (run / f"{name}.pid").read_text().strip()
        if pid and Path(f"/proc/{pid}").exists():
            out[comp].append(int(pid))
    if not out["host agent"]:
        raise RuntimeError(
            f"no running host agent found from {run}/hostagent.supervisor or .pid; start it with `make up`"
        )
    return out


def platform_snapshot(pids: dict[str, list[int]]) -> dict[str, dict[int, tuple[float, int]]]:
    """component -> (tid -> (CPU s, switches)) over every thread of its processes."""
    out: dict[str, dict[int, tuple[float, int]]] = {}
    for comp, plist in pids.items():
        rows = out.setdefault(comp, {})
        for pid in plist:
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for tid in tids:
                t = thread(tid, f"/proc/{pid}/task")
                if t is not None:
                    rows[int(tid)] = (t[1], t[2])
    return out


def rate(before: dict[int, tuple[Any, ...]], after: dict[int, tuple[Any, ...]], window: float) -> dict[str, float]:
    """CPU s/s and switches/s of the threads alive at the end (a thread born in the window counts from 0); each
    thread's row ends with (CPU s, switches)."""
    cpu, switches = 0.0, 0
    for tid, a in after.items():
        b = before.get(tid)
        cpu += a[-2] - (b[-2] if b else 0.0)
        switches += a[-1] - (b[-1] if b else 0)
    return {"cpu_s_per_s": round(cpu / window, 5), "wakeups_per_s": round(switches / window, 2), "threads": len(after)}


def measure(window: float, container: str | None) -> dict[str, Any]:
    """Idle `window` seconds: the platform's processes, and the sandbox's if given."""
    pids = platform_pids()
    p0 = platform_snapshot(pids)
    s0 = sandbox_snapshot(container) if container else None
    t0 = time.monotonic()
    time.sleep(window)
    s1 = sandbox_snapshot(container) if container else None
    p1 = platform_snapshot(pids)
    wall = time.monotonic() - t0
    out: dict[str, Any] = {"window_s": round(wall, 2), "other_sandboxes_running": sandboxes_running() - bool(container)}
    for comp in pids:
        out[comp] = rate(p0[comp], p1[comp], wall) | {"processes": len(pids[comp])}
    if s0 is not None and s1 is not None:
        box = {"cpu_s_per_s": round((s1["cpu_s"] - s0["cpu_s"]) / wall, 5)}
        total = rate(s0["threads"], s1["threads"], wall)
        box["wakeups_per_s"] = total["wakeups_per_s"]
        box["threads"] = total["threads"]
        box["by_role"] = {}
        for r in ROLES:
            mine = {tid: v for tid, v in s1["threads"].items() if v[0] == r}
            procs = sum(1 for v in s1["processes"].values() if v == r)
            box["by_role"][r] = rate(s0["threads"], mine, wall) | {"processes": procs}
        out["sandbox"] = box
    return out


def print_baseline(when: str, base: dict[str, Any]) -> None:
    print(
        f"  baseline {when} ({base['other_sandboxes_running']} other sandboxes on the host): host agent "
        f"{base['host agent']['cpu_s_per_s']:.4f} CPU-s/s, {base['host agent']['wakeups_per_s']:.1f} wake-ups/s; "
        f"frontends {base['frontends']['cpu_s_per_s']:.4f} CPU-s/s, {base['frontends']['wakeups_per_s']:.1f} "
        "wake-ups/s"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grains", type=int, help="grains in the chain (default 100; 10 with --quick)")
    ap.add_argument("--settle", type=float, default=5.0, help="seconds idle after the call before the window")
    ap.add_argument("--window", type=float, help="seconds measured (default 30; 10 with --quick)")
    ap.add_argument("--quick", action="store_true", help="10 grains, a 10 s window")
    args = ap.parse_args()
    grains = args.grains or (10 if args.quick else 100)
    window = args.window or (10.0 if args.quick else 30.0)
    if grains < 1 or window <= 0 or args.settle < 0:
        ap.error(
            f"--grains must be >= 1 (got {grains}), --window > 0 (got {window}), --settle >= 0 (got {args.settle})"
        )

    print(f"Idle cost of a deployed application: {grains} grains, settle {args.settle:g} s, window {window:g} s")
    bench = Bench()
    bases = []
    try:
        time.sleep(args.settle)  # the account's sign-up behind us
        bases.append(measure(window, None))
        print_baseline("before deploying", bases[-1])
        fns = [
            {"name": f"g{i:03d}", "resource": "inc", "next": [f"g{i + 1:03d}" if i + 1 < grains else "end"]}
            for i in range(grains)
        ]
        name, deploy_s, app = bench.deploy("idle", fns, {"inc": INC})
        status, _, _, answer = Caller(name).call(b'{"n": 0}')
        if status != 200 or json.loads(answer) != {"n": grains}:
            raise RuntimeError(f"the chain of {grains} grains answered {status}: {answer[:300]!r}")
        container = sandbox_container(app["id"])
        time.sleep(args.settle)
        idle = measure(window, container)
    finally:
        bench.cleanup()
    time.sleep(args.settle)
    bases.append(measure(window, None))
    print_baseline("after undeploying", bases[-1])
    # the baseline: the mean of the windows before and after (other work on the machine moves each of them)
    base = {
        comp: {k: round(sum(b[comp][k] for b in bases) / len(bases), 5) for k in ("cpu_s_per_s", "wakeups_per_s")}
        for comp in ("host agent", "frontends")
    }

    box = idle["sandbox"]
    workers = box["by_role"]["grain worker"]
    per_worker = round(workers["wakeups_per_s"] / max(workers["processes"], 1), 3)
    delta = {
        comp: {k: round(idle[comp][k] - base[comp][k], 5) for k in ("cpu_s_per_s", "wakeups_per_s")}
        for comp in ("host agent", "frontends")
    }
    print(
        f"  sandbox ({box['threads']} threads): {box['cpu_s_per_s']:.4f} CPU-s/s, {box['wakeups_per_s']:.1f} "
        f"wake-ups/s; {per_worker} per grain worker ({workers['processes']} workers; target 0)"
    )
    for r in ROLES:
        row = box["by_role"][r]
        print(
            f"    {r:12s} {row['processes']:4d} processes {row['threads']:4d} threads  "
            f"{row['cpu_s_per_s']:.4f} CPU-s/s  {row['wakeups_per_s']:7.1f} wake-ups/s"
        )
    for comp in ("host agent", "frontends"):
        print(
            f"  {comp}: {idle[comp]['cpu_s_per_s']:.4f} CPU-s/s, {idle[comp]['wakeups_per_s']:.1f} wake-ups/s "
            f"({delta[comp]['cpu_s_per_s']:+.4f} CPU-s/s, {delta[comp]['wakeups_per_s']:+.1f} wake-ups/s "
            "against the baseline)"
        )
    app_cpu = box["cpu_s_per_s"] + sum(d["cpu_s_per_s"] for d in delta.values())
    print(
        f"  the idle application costs {app_cpu:.4f} CPU-s/s in all (sandbox + host agent and frontends above "
        "their baseline)"
    )
    result = {
        "machine": machine(),
        "quick": args.quick,
        "grains": grains,
        "settle_s": args.settle,
        "window_s": window,
        "deploy_s": round(deploy_s, 2),
        "baseline": base,
        "baseline_windows": bases,
        "app": idle,
        "app_minus_baseline": delta,
        "app_cpu_s_per_s": round(app_cpu, 5),
        "wakeups_per_s_per_grain_worker": per_worker,
        "wakeups_per_s_per_grain": round(box["wakeups_per_s"] / grains, 3),
        "target": {"wakeups_per_s_per_grain_worker": 0},
    }
    print(f"wrote {write_result('idle_wakeups', result)}")


if __name__ == "__main__":
    main()
