"""ServerlessBench TC6, start-up breakdown: where the time of a call goes, phase by phase, for a cold application (the
first call after its deploy), a warm call, and a call under 40 concurrent clients; SAND from its executions' own
timelines (GET /api/v1/executions/{id} "timings"), beside the container baselines' phases (benchmarks/baselines:
a warm container per function, a new container per call) measured in the same run.

SAND's phases (1-grain echo; names of the timeline's steps, docs/host-agent.md "Per-hop timings"):
  frontend        request received -> the host agent took the event (the frontend, its gate or Kafka)
  host agent      event taken -> queued on the grain's local queue
  local queue     queued -> the grain worker polled it
  fork/standby    polled -> the grain instance started (a fork, or the pre-forked standby's hand-off)
  to handler      instance started -> handler started (the instance reads its event)
  handler         the grain's own code
  back            handler ended -> the frontend's reply sent (report, host agent, response, frontend)
Baselines' phases: the invoker's (acquire, create, start, unpause, ready, init, run) and the Kafka legs.

Needs `make up`.  python benchmarks/startup_breakdown.py [--quick] [--warm 50] [--clients 40]
Writes benchmarks/results/startup_breakdown.json and .png.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._api import Bench, Caller  # noqa: E402
from benchmarks._common import RESULTS, machine, write_result  # noqa: E402

ECHO = "def handle(event, context):\n    return event\n"
# (phase, the step it starts at, the step it ends at); a grain's steps are "<grain>: ...", the others "<where>: ..."
PHASES = [
    ("frontend", "frontend: request received", "host agent: event taken"),
    ("host agent", "host agent: event taken", "host agent: event queued"),
    ("local queue", "host agent: event queued", "worker polled"),
    ("fork/standby", "worker polled", "instance started"),
    ("to handler", "instance started", "handler started"),
    ("handler", "handler started", "handler ended"),
    ("back", "handler ended", "frontend: reply sent"),
]


def sand_phases(steps: list[dict[str, Any]]) -> dict[str, float]:
    """One execution's timeline as the phases above, in ms (a phase whose steps are missing is left out)."""
    at: dict[str, float] = {}
    for s in steps:
        name = s["step"].split(": ", 1)[1] if not s["step"].startswith(("frontend:", "host agent:")) else s["step"]
        at.setdefault(name, s["at_ms"])  # a 1-grain app: each step once
    out = {p: round(at[b] - at[a], 3) for p, a, b in PHASES if a in at and b in at}
    if steps:
        out["total"] = round(steps[-1]["at_ms"], 3)
    return out


def median_phases(samples: list[dict[str, float]]) -> dict[str, float]:
    keys = {k for s in samples for k in s}
    return {k: round(statistics.median(s[k] for s in samples if k in s), 3) for k in sorted(keys)}


def sand(bench: Bench, warm: int, clients: int, per_client: int) -> dict[str, Any]:
    name, deploy_s, _ = bench.deploy("tc6", [{"name": "echo", "next": ["end"]}], {"echo": ECHO})
    caller = Caller(name)
    status, _, cold_id, _ = caller.call(b'{"n": 0}')  # the first call after the deploy: a cold application
    if status != 200:
        raise RuntimeError(f"the first call answered {status}")
    cold = sand_phases(bench.timings(cold_id))
    warm_ids = [caller.call(b'{"n": 1}')[2] for _ in range(warm)]
    warm_phases = median_phases([sand_phases(bench.timings(i)) for i in warm_ids if i])

    ids: list[str] = []
    lock = threading.Lock()

    def client() -> None:
        c = Caller(name)
        for _ in range(per_client):
            s, _, eid, _ = c.call(b'{"n": 2}')
            if s == 200:
                with lock:
                    ids.append(eid)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    loaded = median_phases([sand_phases(bench.timings(i)) for i in ids])
    return {
        "deploy_s": round(deploy_s, 3),
        "cold": cold,
        "warm": warm_phases,
        "concurrent": loaded,
        "concurrent_calls": len(ids),
        "clients": clients,
    }


def baseline(platform: Any, warm: int) -> dict[str, Any]:
    platform.deploy("echo", ECHO)
    first = platform.invoke(["echo"], {"n": 0})
    rows = [platform.invoke(["echo"], {"n": 1}) for _ in range(warm)]
    hop = [r.hops[0].durations_ms() | {"total": (r.end_ns - r.start_ns) / 1e6} for r in rows if r.ok and r.hops]
    first_hop = first.hops[0].durations_ms() | {"total": (first.end_ns - first.start_ns) / 1e6} if first.hops else {}
    return {
        "first": {k: round(v, 3) for k, v in first_hop.items()},
        "later": median_phases(hop),
        "starts": sorted({r.hops[0].start for r in rows if r.hops}),
    }


# what a stacked bar must not count twice: the whole hop, and the pool's "acquire" when its parts are there
WRAPPERS = {"total", "hop"}
ACQUIRE_PARTS = {"create", "start", "unpause", "ready", "init"}


def stackable(phases: dict[str, float]) -> dict[str, float]:
    out = {k: v for k, v in phases.items() if k not in WRAPPERS}
    if ACQUIRE_PARTS & out.keys():
        out.pop("acquire", None)
    return out


def plot(path: Path, cases: dict[str, dict[str, float]]) -> None:
    """Stacked phases per case, linear ms: all cases, and the fast ones alone (their phases are too thin beside
    a container start)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    phases = sorted({p for c in cases.values() for p in stackable(c)})
    colours = dict(zip(phases, plt.get_cmap("tab20").colors, strict=False))
    fast = {k: v for k, v in cases.items() if sum(stackable(v).values()) < 50}
    fig, axes = plt.subplots(2, 1, figsize=(9, 7))
    for ax, shown, title in ((axes[0], cases, "every case"), (axes[1], fast, "the cases under 50 ms")):
        labels = list(shown)
        left = [0.0] * len(labels)
        for p in phases:
            widths = [max(stackable(shown[label]).get(p, 0.0), 0.0) for label in labels]
            ax.barh(labels, widths, left=left, label=p, color=colours[p])
            left = [a + b for a, b in zip(left, widths, strict=True)]
        ax.set_xlabel("ms (median per phase)")
        ax.set_title(f"Start-up breakdown (ServerlessBench TC6): {title}", fontsize=10)
    axes[0].legend(fontsize=7, ncol=3, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--warm", type=int, default=50, help="warm calls (median per phase)")
    ap.add_argument("--clients", type=int, default=40)
    ap.add_argument("--per-client", type=int, default=10)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--full", action="store_true", help="the same as the default (this one is short)")
    args = ap.parse_args()
    if args.quick:
        args.warm, args.clients, args.per_client = 10, 8, 3

    from benchmarks.baselines import ColdContainerPlatform, WarmContainerPlatform

    bench = Bench()
    try:
        s = sand(bench, args.warm, args.clients, args.per_client)
    finally:
        bench.cleanup()
    with WarmContainerPlatform() as p:
        w = baseline(p, args.warm)
    with ColdContainerPlatform() as p:
        c = baseline(p, max(3, args.warm // 10))
    result = {
        "machine": machine(),
        "sand": s,
        "warm_baseline": w,
        "cold_baseline": c,
        "phases": [p for p, _, _ in PHASES],
    }
    path = write_result("startup_breakdown", result)
    cases = {
        "SAND cold app": s["cold"],
        "SAND warm": s["warm"],
        f"SAND {s['clients']} clients": s["concurrent"],
        "warm container (first)": w["first"],
        "warm container": w["later"],
        "cold container": c["later"],
    }
    for label, phases in cases.items():
        print(
            f"{label:24s} total {phases.get('total', float('nan')):9.3f} ms  "
            + json.dumps({k: v for k, v in phases.items() if k != "total"})
        )
    plot(RESULTS / "startup_breakdown.png", cases)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
