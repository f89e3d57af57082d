"""ServerlessBench's test cases (SoCC '20) that SAND's design answers, run on the real system through nginx:

  tc2    parallel composition as an ASL Map: one Task grain (item + 1) over N = 1 to 32 items (p50/p99 per N and the
         least-squares slope in ms per extra branch)
  asl14  a newcomer's ASL application (Choice, Map of 6 items x 2 Tasks, Task, Parallel of 2 Tasks, Choice, Pass):
         p50/p99, and from the executions' timelines the grain instances on the answer's path and the states run
         inline (issue 27)
  tc3    a chain of 100 grains, each adding 1 (deploy time, first call, warm p50/p99, the hop between grains from
         the executions' timings, sandbox memory per idle grain against a 1-grain sandbox measured in the same run)
  tc5    a 2-grain pass-through with payloads from 0 to 50 KB in 5 KB steps (p50/p99 per size; 0 KB is the baseline)
  tc9    40 concurrent clients x 25 requests to a 1-grain echo (throughput, p50/p99, failures)
  sweep  the same echo at 1, 5, 10, 20 and 40 clients: where throughput stops growing (the knee)
  cpu    CPU per 1-grain request, per component, from /proc (benchmarks/_cpu.py)

Needs `make up`.  python benchmarks/serverlessbench.py [tc2 asl14 tc3 tc5 tc9 sweep cpu] [--quick]
Writes benchmarks/results/serverlessbench.json and serverlessbench.png.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import _cpu  # noqa: E402
from benchmarks._api import Bench, Caller, container_memory_mb  # noqa: E402
from benchmarks._common import RESULTS, machine, summary_ms, write_result  # noqa: E402

INC = "def handle(event, context):\n    return {'n': event['n'] + 1}\n"
ECHO = "def handle(event, context):\n    return event\n"
ADD1 = "def handle(event, context):\n    return event + 1\n"
DOUBLE = "def handle(event, context):\n    return event * 2\n"
SUM = "def handle(event, context):\n    return sum(event)\n"
FANOUT = [1, 2, 4, 8, 16, 32]


def hops_between_grains(steps: list[dict[str, Any]]) -> list[float]:
    """From one execution's timeline: ms from grain N's handler end to grain N+1's handler start."""
    ends = {s["where"]: s["at_ms"] for s in steps if s["step"].endswith(": handler ended")}
    starts = [(s["at_ms"], s["where"]) for s in steps if s["step"].endswith(": handler started")]
    starts.sort()
    out = []
    for (_, prev), (at, _) in zip(starts, starts[1:], strict=False):
        if prev in ends:
            out.append(at - ends[prev])
    return out


def deploy_asl(bench: Bench, name: str, workflow: dict[str, Any], grains: dict[str, str]) -> tuple[str, dict[str, Any]]:
    """Upload the grains, save and deploy an ASL state machine, wait until deployed; (name, app)."""
    name = f"{bench.prefix}-{name}"
    for grain, code in grains.items():
        bench.api.call("PUT", f"/api/v1/grains/{grain}", code, content_type="text/x-python")
    bench.api.call("PUT", f"/api/v1/apps/{name}", workflow | {"name": name})
    bench.api.call("POST", f"/api/v1/apps/{name}/deploy")
    bench.apps.append(name)
    deadline = time.monotonic() + 600
    while (app := bench.api.call("GET", f"/api/v1/apps/{name}").body)["status"] not in ("deployed", "failed"):
        if time.monotonic() > deadline:
            break
        time.sleep(0.2)
    if app["status"] != "deployed":
        raise RuntimeError(f"{name} did not deploy: {json.dumps(app)[:2000]}")
    return name, app


def slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (x, y)."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else float("nan")


def tc2(bench: Bench, quick: bool) -> dict[str, Any]:
    warm, n = (5, 10) if quick else (10, 40)
    print(f"TC2: parallel composition, an ASL Map of one Task grain (item + 1) over N items, {n} calls per N")
    # No MaxConcurrency: 0, every item at once. The Task's grain runs up to `concurrency` instances at once (32, the
    # default: N = 32 fits), all in one sandbox limited to `sandbox_cpus` (1.0 by default).
    fan = {
        "StartAt": "Fan",
        "States": {
            "Fan": {
                "Type": "Map",
                "ItemsPath": "$.items",
                "End": True,
                "Iterator": {"StartAt": "Inc", "States": {"Inc": {"Type": "Task", "Resource": "tc2inc", "End": True}}},
            }
        },
    }
    name, app = deploy_asl(bench, "tc2", fan, {"tc2inc": ADD1})
    caller = Caller(name)
    by_n: dict[int, dict[str, Any]] = {}
    for items in FANOUT:
        body = json.dumps({"items": list(range(items))}).encode()
        status, _, _, answer = caller.call(body)
        if status != 200 or json.loads(answer) != list(range(1, items + 1)):
            raise RuntimeError(f"TC2's Map of {items} answered {status}: {answer[:300]!r}")
        caller.run(body, warm)
        lat, _, failed = caller.run(body, n)
        by_n[items] = summary_ms(lat) | {"failed": failed}
        print(
            f"  N = {items:2d}: p50 {by_n[items]['p50_ms']:7.2f} ms  p99 {by_n[items]['p99_ms']:7.2f} ms  "
            f"failed {failed}"
        )
    per_branch = round(slope([(k, v["p50_ms"]) for k, v in by_n.items()]), 2)
    per_branch_p99 = round(slope([(k, v["p99_ms"]) for k, v in by_n.items()]), 2)
    print(
        f"  {per_branch} ms per extra branch at p50 ({per_branch_p99} at p99), least squares over N = "
        f"{', '.join(map(str, FANOUT))} (target <= 1.5 ms)"
    )
    settings = app.get("settings", {})
    return {
        "by_n": by_n,
        "ms_per_branch_p50": per_branch,
        "ms_per_branch_p99": per_branch_p99,
        "max_concurrency": 0,
        "grain_concurrency": settings.get("concurrency", 32),
        "sandbox_cpus": settings.get("sandbox_cpus", 1.0),
        "target_ms_per_branch": 1.5,
    }


def _task(resource: str, nxt: str | None = None, **more: Any) -> dict[str, Any]:
    return {"Type": "Task", "Resource": resource, **({"Next": nxt} if nxt else {"End": True}), **more}


# The shape of tests/test_aslrun_inline.py's NEWCOMER: 12 states (Invalid and Large are off the measured path).
ASL14 = {
    "StartAt": "Valid",
    "States": {
        "Valid": {
            "Type": "Choice",
            "Choices": [{"Variable": "$.xs", "IsPresent": True, "Next": "Each"}],
            "Default": "Invalid",
        },
        "Invalid": {"Type": "Fail", "Error": "Invalid", "Cause": "no xs"},
        "Each": {
            "Type": "Map",
            "ItemsPath": "$.xs",
            "ResultPath": "$.ys",
            "Next": "Sum",
            "ItemProcessor": {
                "StartAt": "D1",
                "States": {"D1": _task("asl14double", "D2"), "D2": _task("asl14double")},
            },
        },
        "Sum": _task("asl14sum", "Both", InputPath="$.ys", ResultPath="$.total"),
        "Both": {
            "Type": "Parallel",
            "ResultPath": "$.both",
            "Next": "Size",
            "Branches": [
                {"StartAt": "E", "States": {"E": _task("asl14echo", InputPath="$.total")}},
                {"StartAt": "F", "States": {"F": _task("asl14double", InputPath="$.total")}},
            ],
        },
        "Size": {
            "Type": "Choice",
            "Choices": [{"Variable": "$.total", "NumericGreaterThan": 100, "Next": "Large"}],
            "Default": "Small",
        },
        "Large": {"Type": "Pass", "Parameters": {"size": "large", "both.$": "$.both"}, "End": True},
        "Small": {"Type": "Pass", "Parameters": {"size": "small", "both.$": "$.both"}, "End": True},
    },
}


def path_instances(steps: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """From one execution's timeline (the path that reached the answer): the grains that ran an instance of their own
    and the states run inline in another's (an inlined state's entry follows that instance's "outputs published" at
    the same instant, envelope.inline_trace)."""
    own, inline = [], []
    for s in steps:
        if s["step"] == f"{s['where']}: worker polled":
            (inline if s["delta_ms"] == 0 else own).append(s["where"])
    return own, inline


def asl14(bench: Bench, quick: bool) -> dict[str, Any]:
    warm, n = (5, 20) if quick else (20, 200)
    print(
        f"ASL14: a newcomer's ASL application (Choice, Map of 6 x 2 Tasks, Task, Parallel of 2, Choice, Pass), "
        f"{n} calls"
    )
    name, app = deploy_asl(bench, "asl14", ASL14, {"asl14double": DOUBLE, "asl14sum": SUM, "asl14echo": ECHO})
    caller = Caller(name)
    body = json.dumps({"name": "ada", "xs": [1, 2, 3, 4, 5, 6]}).encode()
    status, _, _, answer = caller.call(body)
    if status != 200 or json.loads(answer) != {"size": "small", "both": [84, 168]}:
        raise RuntimeError(f"ASL14 answered {status}: {answer[:300]!r}")
    caller.run(body, warm)
    lat, ids, failed = caller.run(body, n)
    paths = [path_instances(bench.timings(eid)) for eid in ids[-10:]]
    own = sorted(len(o) for o, _ in paths)
    inline = sorted({g for _, i in paths for g in i})
    out = {
        "warm": summary_ms(lat),
        "failed": failed,
        "instances_on_path": own[len(own) // 2] if own else None,
        "states_inline_on_path": inline,
        "fan_out_inline": "Each" in inline and "Both" in inline,
        "target": {"p50_ms": 40},
        "was_p50_ms": 172,
    }
    print(
        f"  p50 {out['warm']['p50_ms']} ms, p99 {out['warm']['p99_ms']} ms, {failed} failed (target p50 <= 40 ms, "
        "was 172)"
    )
    print(
        f"  grain instances on the answer's path: {out['instances_on_path']} (median of the last {len(paths)} "
        f"timelines); run inline: {', '.join(inline) or 'none'}"
    )
    return out


def tc3(bench: Bench, quick: bool) -> dict[str, Any]:
    n_grains, warm, n = (100, 10, 20) if quick else (100, 20, 50)
    print(f"TC3: a chain of {n_grains} grains, each adding 1")
    base, _, base_app = bench.deploy("tc3one", [{"name": "only", "resource": "inc", "next": ["end"]}], {"inc": INC})
    fns = [
        {"name": f"g{i:03d}", "resource": "inc", "next": [f"g{i + 1:03d}" if i + 1 < n_grains else "end"]}
        for i in range(n_grains)
    ]
    name, deploy_s, app = bench.deploy("tc3", fns, {"inc": INC})
    time.sleep(1.0)
    idle, idle_one = container_memory_mb(app), container_memory_mb(base_app)
    caller = Caller(name)
    status, first_ns, _, answer = caller.call(b'{"n": 0}')
    if status != 200 or json.loads(answer) != {"n": n_grains}:
        raise RuntimeError(f"TC3's first call answered {status}: {answer[:300]!r}")
    caller.run(b'{"n": 0}', warm)
    lat, ids, failed = caller.run(b'{"n": 0}', n)
    hops = [h for eid in ids[-10:] for h in hops_between_grains(bench.timings(eid))]
    out = {
        "grains": n_grains,
        "sandbox_memory_limit_mb": app.get("settings", {}).get("sandbox_memory_mb", 512),
        "deploy_s": round(deploy_s, 2),
        "first_call_ms": round(first_ns / 1e6, 2),
        "warm": summary_ms(lat),
        "failed": failed,
        "hop_end_to_next_start": summary_ms([int(h * 1e6) for h in hops]),
        "sandbox_memory_idle_mb": round(idle, 1),
        "one_grain_sandbox_memory_idle_mb": round(idle_one, 1),
        "memory_per_idle_grain_mb": round((idle - idle_one) / (n_grains - 1), 2),
        "sandbox_memory_after_warm_run_mb": round(container_memory_mb(app), 1),
        "target": {"warm_p50_ms": 100, "hop_ms": 0.5},
    }
    print(
        f"  deployed in {out['deploy_s']} s; first call {out['first_call_ms']} ms; "
        f"warm p50 {out['warm']['p50_ms']} ms, p99 {out['warm']['p99_ms']} ms (target p50 <= 100 ms)"
    )
    print(
        f"  grain N end -> grain N+1 start: p50 {out['hop_end_to_next_start']['p50_ms']} ms, p99 "
        f"{out['hop_end_to_next_start']['p99_ms']} ms (target <= 0.5 ms)"
    )
    print(
        f"  sandbox memory idle {out['sandbox_memory_idle_mb']} MB vs {out['one_grain_sandbox_memory_idle_mb']} MB "
        f"for one grain: {out['memory_per_idle_grain_mb']} MB per idle grain; after the warm run "
        f"{out['sandbox_memory_after_warm_run_mb']} MB (standbys)"
    )
    return out


def tc5(bench: Bench, quick: bool) -> dict[str, Any]:
    print("TC5: 2-grain pass-through, payload 0 to 50 KB")
    name, _, _ = bench.deploy(
        "tc5",
        [
            {"name": "first", "resource": "echo", "next": ["second"]},
            {"name": "second", "resource": "echo", "next": ["end"]},
        ],
        {"echo": ECHO},
    )
    caller = Caller(name)
    n = 30 if quick else 100
    caller.run(b'{"p": ""}', 30)
    sizes = {}
    for kb in range(0, 55, 5):
        body = json.dumps({"p": "x" * (kb * 1024)}).encode()
        caller.run(body, 5)
        lat, _, failed = caller.run(body, n)
        sizes[kb] = summary_ms(lat) | {"failed": failed}
        print(f"  {kb:2d} KB: p50 {sizes[kb]['p50_ms']:7.2f} ms  p99 {sizes[kb]['p99_ms']:7.2f} ms")
    extra = round(sizes[50]["p50_ms"] - sizes[0]["p50_ms"], 2)
    print(f"  50 KB costs {extra} ms more than 0 KB at p50 (target <= 5 ms)")
    return {"by_kb": sizes, "p50_50kb_minus_0kb_ms": extra, "target_ms": 5}


def concurrent(app: str, clients: int, per_client: int, body: bytes) -> dict[str, Any]:
    """`clients` threads, each with its own connection, `per_client` requests each."""
    lat: list[int] = []
    failed = [0]
    lock = threading.Lock()

    def client() -> None:
        c = Caller(app)
        mine, _, f = c.run(body, per_client)
        with lock:
            lat.extend(mine)
            failed[0] += f

    threads = [threading.Thread(target=client) for _ in range(clients)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    return {
        "clients": clients,
        "requests": clients * per_client,
        "failed": failed[0],
        "wall_s": round(wall, 2),
        "throughput_rps": round(len(lat) / wall, 1),
    } | summary_ms(lat)


def echo_app(bench: Bench) -> str:
    if not hasattr(bench, "_echo"):
        name, _, _ = bench.deploy(
            "echo", [{"name": "echo", "next": ["end"]}], {"echo": ECHO}, settings={"concurrency": 64}
        )
        Caller(name).run(b'{"i": 1}', 50)
        bench._echo = name  # type: ignore[attr-defined]
    return bench._echo  # type: ignore[attr-defined]


def tc9(bench: Bench, quick: bool) -> dict[str, Any]:
    print("TC9: 40 concurrent clients x 25 requests, 1-grain echo")
    app = echo_app(bench)
    concurrent(app, 10, 10, b'{"i": 1}')
    r = concurrent(app, 40, 25, b'{"i": 1}')
    print(
        f"  {r['throughput_rps']} req/s, p50 {r['p50_ms']} ms, p99 {r['p99_ms']} ms, {r['failed']} failed "
        "(target >= 400 req/s, p99 <= 100 ms, 0 failed)"
    )
    return r | {"target": {"throughput_rps": 400, "p99_ms": 100, "failed": 0}}


def sweep(bench: Bench, quick: bool) -> dict[str, Any]:
    print("Throughput sweep, 1-grain echo")
    app = echo_app(bench)
    rows = []
    for clients in (1, 5, 10, 20, 40):
        r = concurrent(app, clients, max(10, (100 if quick else 400) // clients), b'{"i": 1}')
        rows.append(r)
        print(
            f"  {clients:2d} clients: {r['throughput_rps']:7.1f} req/s  p50 {r['p50_ms']:7.2f} ms  "
            f"p99 {r['p99_ms']:7.2f} ms  failed {r['failed']}"
        )
    best = max(r["throughput_rps"] for r in rows)
    knee = next(r["clients"] for r in rows if r["throughput_rps"] >= 0.9 * best)
    print(f"  knee: {knee} clients reach 90% of the best throughput ({best} req/s)")
    return {"rows": rows, "knee_clients": knee, "best_rps": best}


def cpu(bench: Bench, quick: bool) -> dict[str, Any]:
    print("CPU per 1-grain request (sequential)")
    app = echo_app(bench)
    caller = Caller(app)
    n = 200 if quick else 1000
    caller.run(b'{"i": 1}', n // 2)  # the JVMs' JIT compilers are still busy for the first few hundred requests

    def run() -> int:
        return len(caller.run(b'{"i": 1}', n)[0])

    out = _cpu.per_request(run)
    _cpu.print_table(out)
    return out | {"target_ms": 4}


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [k for k in ("tc2", "tc5", "sweep", "cpu") if k in result]
    if not panels:
        return
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4))
    axes = [axes] if len(panels) == 1 else list(axes)
    for ax, key in zip(axes, panels, strict=True):
        if key == "tc2":
            rows = result["tc2"]["by_n"]
            ns = sorted(rows, key=int)
            ax.plot([int(k) for k in ns], [rows[k]["p50_ms"] for k in ns], "o-", label="p50")
            ax.plot([int(k) for k in ns], [rows[k]["p99_ms"] for k in ns], "s--", label="p99")
            ax.set(
                xlabel="Map items (branches)",
                ylabel="latency (ms)",
                title=f"TC2: ASL Map, {result['tc2']['ms_per_branch_p50']} ms per branch",
            )
            ax.legend()
        elif key == "tc5":
            kb = sorted(result["tc5"]["by_kb"], key=int)
            ax.plot(kb, [result["tc5"]["by_kb"][k]["p50_ms"] for k in kb], "o-", label="p50")
            ax.plot(kb, [result["tc5"]["by_kb"][k]["p99_ms"] for k in kb], "s--", label="p99")
            ax.set(xlabel="payload (KB)", ylabel="latency (ms)", title="TC5: 2-grain pass-through")
            ax.legend()
        elif key == "sweep":
            rows = result["sweep"]["rows"]
            ax.plot([r["clients"] for r in rows], [r["throughput_rps"] for r in rows], "o-")
            ax.set(xlabel="concurrent clients", ylabel="requests/s", title="1-grain echo: throughput")
        else:
            rows = result["cpu"]["by_component"]
            names = [n for n in rows if n != "client"]
            ax.bar(names, [rows[n]["ms"] for n in names])
            ax.set(ylabel="CPU ms per request", title=f"CPU per request: {result['cpu']['total_ms']:.1f} ms")
            ax.tick_params(axis="x", rotation=30)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


CASES = {"tc2": tc2, "asl14": asl14, "tc3": tc3, "tc5": tc5, "tc9": tc9, "sweep": sweep, "cpu": cpu}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", metavar="case", help=f"which of {', '.join(CASES)} (default: all)")
    ap.add_argument("--quick", action="store_true", help="fewer requests per point")
    args = ap.parse_args()
    unknown = set(args.cases) - set(CASES)
    if unknown:
        ap.error(f"unknown case(s) {sorted(unknown)}: choose from {', '.join(CASES)}")
    bench = Bench()
    # A run of some cases replaces those in the results file and keeps the others (each case has its own machine
    # and date stamp).
    path = RESULTS / "serverlessbench.json"
    result: dict[str, Any] = json.loads(path.read_text()) if path.exists() and args.cases else {}
    result["machine"] = machine()
    try:
        for case in args.cases or list(CASES):
            result[case] = CASES[case](bench, args.quick) | {"measured": machine()["date"], "quick": args.quick}
    finally:
        bench.cleanup()
    out = write_result("serverlessbench", result)
    plot(result, RESULTS / "serverlessbench.png")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
