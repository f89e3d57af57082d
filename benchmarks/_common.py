"""Helpers shared by the benchmarks: percentiles, CPU pinning, result files, plots."""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# where results go: benchmarks/results (committed), or SAND_BENCH_RESULTS (a smoke run must not overwrite them)
RESULTS = Path(os.environ.get("SAND_BENCH_RESULTS") or Path(__file__).resolve().parent / "results")
SAND_HOME = Path(os.environ.get("SAND_HOME", ROOT / ".sand"))
BIND = os.environ.get("SAND_BIND", "127.0.0.1")
KAFKA = f"{BIND}:{os.environ.get('SAND_KAFKA_PORT', '9092')}"


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in [0, 100])."""
    if not values:
        return float("nan")
    s = sorted(values)
    k = max(0, min(len(s) - 1, round(p / 100 * len(s) + 0.5) - 1))
    return s[k]


def summary_ms(samples_ns: list[int]) -> dict[str, float]:
    ms = [v / 1e6 for v in samples_ns]
    return {
        "n": len(ms),
        "p50_ms": round(percentile(ms, 50), 4),
        "p90_ms": round(percentile(ms, 90), 4),
        "p99_ms": round(percentile(ms, 99), 4),
        "mean_ms": round(statistics.fmean(ms), 4) if ms else float("nan"),
        "min_ms": round(min(ms), 4) if ms else float("nan"),
    }


def pin_prefix(cpu: int | None) -> list[str]:
    """taskset prefix pinning a command to one CPU, or nothing (unpinned)."""
    return [] if cpu is None else ["taskset", "-c", str(cpu)]


def machine() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "loadavg": [round(x, 2) for x in os.getloadavg()],  # other work on the machine while it ran
    }


def write_result(name: str, data: dict[str, Any]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    return path


def bar_plot(
    path: Path,
    title: str,
    labels: list[str],
    p50: list[float],
    p99: list[float],
    ylabel: str = "latency (ms)",
    log: bool = True,
) -> None:
    """Grouped p50/p99 bars, one group per label."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(6, len(labels) * 1.2), 4))
    x = range(len(labels))
    ax.bar([i - 0.2 for i in x], p50, width=0.4, label="p50")
    ax.bar([i + 0.2 for i in x], p99, width=0.4, label="p99")
    ax.set_xticks(list(x), labels, rotation=20, ha="right")
    ax.set_ylabel(ylabel)
    if log:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
