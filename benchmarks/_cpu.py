"""CPU spent by the whole system per request, from /proc: every process is sorted into a SAND component by
its command line and its utime+stime (+ reaped children's: a grain instance's CPU reaches its worker when it is
reaped) is read before and after a run. The same time spent idle gives the background to subtract (heartbeats,
Cassandra's and Kafka's own housekeeping, other applications' idle sandboxes). Kernel threads are reported but not
counted as the system's."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

HZ = os.sysconf("SC_CLK_TCK")

# (substring of the command line, component): first match wins.
COMPONENTS = [
    ("sand.hostagent.HostAgent", "host agent"),
    ("sand.frontend.Frontend", "frontend"),
    ("CassandraDaemon", "cassandra"),
    ("kafka.Kafka", "kafka"),
    ("nginx", "nginx"),
    ("grainworker", "sandbox"),
    ("dockerd", "docker"),
    ("containerd", "docker"),
]


def component(cmdline: str) -> str:
    return next((name for key, name in COMPONENTS if key in cmdline), "other")


def snapshot() -> dict[int, tuple[str, int, int]]:
    """pid -> (component, all ticks, kernel ticks), self and reaped children together."""
    out = {}
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        utime, stime, cutime, cstime = (int(v) for v in fields[11:15])
        name = "client" if pid == me else component(cmd) if cmd.strip() else "kernel threads"
        out[pid] = (name, utime + stime + cutime + cstime, stime + cstime)
    return out


def diff(a: dict[int, tuple[str, int, int]], b: dict[int, tuple[str, int, int]]) -> dict[str, list[float]]:
    """component -> [CPU seconds, of which kernel] between two snapshots (a pid that ended is not counted)."""
    out: dict[str, list[float]] = {}
    for pid, (name, ticks, kernel) in b.items():
        _, t0, k0 = a.get(pid, (name, 0, 0))
        row = out.setdefault(name, [0.0, 0.0])
        row[0] += (ticks - t0) / HZ
        row[1] += (kernel - k0) / HZ
    return out


def per_request(run: Callable[[], int], idle: bool = True) -> dict[str, Any]:
    """Run `run` (it returns how many requests it made) and report the CPU per request of each component,
    in ms, with the background over an idle period as long as the run subtracted."""
    a = snapshot()
    t0 = time.monotonic()
    n = run()
    wall = time.monotonic() - t0
    time.sleep(0.5)  # let the last instances be reaped and write-behind work land
    busy = diff(a, snapshot())
    back: dict[str, list[float]] = {}
    if idle:
        a = snapshot()
        time.sleep(wall + 0.5)
        back = diff(a, snapshot())
    rows = {}
    for name in sorted(set(busy) | set(back)):
        cpu, kernel = busy.get(name, [0.0, 0.0])
        bg = back.get(name, [0.0, 0.0])[0]
        rows[name] = {
            "ms": round(max(0.0, cpu - bg) * 1000 / max(n, 1), 3),
            "kernel_ms": round(kernel * 1000 / max(n, 1), 3),
            "idle_background_ms": round(bg * 1000 / max(n, 1), 3),
        }
    # The client is not the system; kernel threads (no command line) are the machine's, e.g. this VM's DAMON.
    system = {k: v for k, v in rows.items() if k not in ("client", "kernel threads")}
    return {
        "requests": n,
        "wall_s": round(wall, 3),
        "by_component": rows,
        "total_ms": round(sum(v["ms"] for v in system.values()), 3),
    }


def print_table(cpu: dict[str, Any]) -> None:
    print(
        f"CPU per request over {cpu['requests']} requests (all of SAND's processes; idle background subtracted): "
        f"{cpu['total_ms']:.2f} ms"
    )
    for name, row in sorted(cpu["by_component"].items(), key=lambda kv: -kv[1]["ms"]):
        print(
            f"  {name:11s} {row['ms']:7.3f} ms  (kernel {row['kernel_ms']:6.3f}, idle background "
            f"{row['idle_background_ms']:6.3f})"
        )
