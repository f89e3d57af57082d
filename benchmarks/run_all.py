"""Run every benchmark (what `make bench` does) and print where the results are.

python benchmarks/run_all.py [--quick | --full]
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = [
    "message_delivery.py",
    "startup.py",
    "memory_footprint.py",
    "e2e_latency.py",
    "serverlessbench.py",
    "interaction_latency.py",
    "startup_breakdown.py",
    "memory_platform.py",
    "image_pipeline.py",
    "idle_memory.py",
    "idle_wakeups.py",
    "soak.py",
    "trigger_latency.py",
    "data_trigger_latency.py",
    "grain_management_latency.py",
    "cold_start.py",
    "elastic.py",
]
# Too long for the 20-minute `make bench`: their default run only with --full, else a shortened run.
SHORTENED = {"idle_memory.py": ["--calls", "120", "--timeouts", "1,60,600"]}


def main() -> int:
    extra = sys.argv[1:]
    failed = []
    for name in BENCHMARKS:
        if not (HERE / name).exists():
            continue
        # --full (paper scale) only where a script has it; the others' default is their full run
        args = [a for a in extra if a != "--full" or '"--full"' in (HERE / name).read_text()]
        if name in SHORTENED and not extra:
            args = SHORTENED[name]
        print(f"==> {name} {' '.join(args)}", flush=True)
        t0 = time.monotonic()
        rc = subprocess.call([sys.executable, str(HERE / name), *args])
        print(f"    {name}: {'ok' if rc == 0 else f'FAILED (exit {rc})'} in {time.monotonic() - t0:.0f}s", flush=True)
        if rc:
            failed.append(name)
    print(f"results: {HERE / 'results'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
