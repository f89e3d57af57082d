"""The paper's experiments cannot rot: each script runs `--quick` against the real system and writes well-formed
results (into a temporary folder: the committed results stay). No timing is asserted: benchmarks measure, tests
check that they can."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


def run(script: str, tmp_path: Path, *args: str, timeout: float = 900, png: bool = True) -> dict:
    env = os.environ | {"SAND_BENCH_RESULTS": str(tmp_path)}
    p = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), "--quick", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    name = script.removesuffix(".py")
    if png:
        assert (tmp_path / f"{name}.png").stat().st_size > 0
    return json.loads((tmp_path / f"{name}.json").read_text())


def positive(x: object) -> bool:
    return isinstance(x, int | float) and math.isfinite(x) and x > 0


def test_function_interaction_latency_fig_5c(tmp_path: Path) -> None:
    r = run("interaction_latency.py", tmp_path)
    for key in (
        "sand_p50_ms",
        "sand_p99_ms",
        "no_shortcut_p50_ms",
        "warm_p50_ms",
        "cold_p50_ms",
        "ratio_warm",
        "ratio_cold",
        "ratio_no_shortcut",
    ):
        assert positive(r[key]), (key, r)
    assert all(c["failed"] == 0 and c["n"] > 0 for c in r["cases"].values()), r["cases"]
    assert r["paper"] == {"ratio_warm": 8.32, "ratio_cold": 562}


def test_start_up_breakdown_tc6(tmp_path: Path) -> None:
    r = run("startup_breakdown.py", tmp_path)
    for case in ("cold", "warm", "concurrent"):
        phases = r["sand"][case]
        assert set(r["phases"]) <= set(phases) and positive(phases["total"]), (case, phases)
    assert positive(r["warm_baseline"]["later"]["hop"]) and positive(r["cold_baseline"]["later"]["start"])


def test_image_pipeline_fig_7(tmp_path: Path) -> None:
    fetch = subprocess.run(
        ["bash", str(ROOT / "examples/image-pipeline/fetch.sh")], capture_output=True, text=True, timeout=900
    )
    assert fetch.returncode == 0, fetch.stdout[-2000:] + fetch.stderr[-2000:]
    r = run("image_pipeline.py", tmp_path, "--skip-nopause", timeout=1800)
    for key in ("sand_overhead_ms", "warm_overhead_ms", "overhead_ratio", "sand_total_ms", "warm_total_ms"):
        assert positive(r[key]), (key, r)


def test_soak(tmp_path: Path) -> None:
    r = run("soak.py", tmp_path)
    assert r["requests"] > 0 and r["failed"] == 0, r["errors"]
    assert {row["minute"] for row in r["per_minute"]} == {0}, r["per_minute"]
    for comp in ("host agent", "frontend", "sandbox"):
        start, end = r["processes_start"][comp], r["processes_end"][comp]
        assert start["processes"] > 0 and end["processes"] > 0 and positive(end["rss_mb"]), (comp, start, end)
        assert set(r["growth_per_hour_after_warmup"][comp]) == {"rss_mb", "threads", "open_files"}


def test_serverlessbench_tc2(tmp_path: Path) -> None:
    r = run("serverlessbench.py", tmp_path, "tc2")["tc2"]
    assert sorted(r["by_n"], key=int) == ["1", "2", "4", "8", "16", "32"], r["by_n"]
    assert all(row["failed"] == 0 and row["n"] > 0 and positive(row["p50_ms"]) for row in r["by_n"].values()), r
    assert math.isfinite(r["ms_per_branch_p50"]) and r["target_ms_per_branch"] == 1.5


def test_serverlessbench_asl14(tmp_path: Path) -> None:
    r = run("serverlessbench.py", tmp_path, "asl14", png=False)["asl14"]  # one number: no panel of its own
    assert r["failed"] == 0 and r["warm"]["n"] > 0 and positive(r["warm"]["p50_ms"]), r
    assert isinstance(r["instances_on_path"], int) and r["instances_on_path"] > 0, r
    assert isinstance(r["fan_out_inline"], bool) and r["target"] == {"p50_ms": 40}, r


def test_idle_wakeups(tmp_path: Path) -> None:
    r = run("idle_wakeups.py", tmp_path, png=False)
    box = r["app"]["sandbox"]
    assert r["grains"] == 10 and box["by_role"]["grain worker"]["processes"] == 10, box
    assert box["cpu_s_per_s"] >= 0 and box["wakeups_per_s"] >= 0 and box["threads"] > 0, box
    for comp in ("host agent", "frontends"):
        assert positive(r["baseline"][comp]["cpu_s_per_s"]) and positive(r["app"][comp]["wakeups_per_s"]), comp
    assert math.isfinite(r["wakeups_per_s_per_grain_worker"]) and r["target"] == {"wakeups_per_s_per_grain_worker": 0}


def test_trigger_latency(tmp_path: Path) -> None:
    r = run("trigger_latency.py", tmp_path, png=False)
    for key in ("request_p50_ms", "timer_p50_ms", "queue_p50_ms", "timer_p99_ms", "queue_p99_ms"):
        assert positive(r[key]), (key, r)
    assert all(x[k]["n"] > 0 for x in r["rounds"] for k in ("request", "timer", "queue")), r["rounds"]


def test_data_trigger_latency(tmp_path: Path) -> None:
    r = run("data_trigger_latency.py", tmp_path, png=False)
    for key in ("data_write_to_triggered_handler_start", "local_bus_hop_output_to_next_handler_start"):
        assert r[key]["n"] == 20 and positive(r[key]["p50_ms"]), (key, r)


def test_grain_management_latency(tmp_path: Path) -> None:
    r = run("grain_management_latency.py", tmp_path, png=False)
    for key in ("from_a_grain", "from_outside_through_nginx"):
        assert r[key]["n"] == 20 and positive(r[key]["p50_ms"]), (key, r)
    assert positive(r["p50_ratio_grain_over_outside"]), r


def test_cold_start(tmp_path: Path) -> None:
    r = run("cold_start.py", tmp_path)
    for part in ("cold_call", "warm_call_p50_per_run"):
        assert r[part]["n"] == 3 and positive(r[part]["p50_ms"]), (part, r[part])
    # a cold call starts a sandbox (a Docker container): never as fast as a warm one
    assert r["cold_call"]["min_ms"] > r["warm_call_p50_per_run"]["p50_ms"], r
    assert r["calls_refused"] == [], r["calls_refused"]


def test_elastic(tmp_path: Path) -> None:
    r = run("elastic.py", tmp_path)
    for phase in ("static", "elastic"):
        p = r[phase]
        assert p["requests"] == 30 and p["lost"] == 0 and p["doubled"] == 0, (phase, p)
        assert p["samples"] and positive(p["memory_mb_mean"]), (phase, p)
    # the same trace: with scale to zero the idle applications hold no sandbox
    assert r["elastic"]["sandboxes_mean"] < r["static"]["sandboxes_mean"], r
