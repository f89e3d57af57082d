"""deploy/lib.sh's pid files name the process they were written for: after kill -9 of a host's processes the files
stay, and the kernel hands their numbers to later processes and threads (a frontend's start once waited 90 s on a
Cassandra thread that had its supervisor's old pid)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def lib(home: Path, script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", f"source {ROOT / 'deploy' / 'lib.sh'}; {script}"],
        env=os.environ | {"SAND_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_a_started_process_is_running_and_stopped_with_its_files(tmp_path: Path) -> None:
    r = lib(
        tmp_path,
        "start_bg demo sleep 60; is_running demo && echo running; stop_pid demo 5; is_running demo || echo gone",
    )
    assert r.stdout.split() == ["running", "gone"], r.stderr
    assert not list((tmp_path / "run").glob("demo.pid*"))


THREADED = """
import threading, time
t = threading.Thread(target=time.sleep, args=(60,), daemon=True)
t.start()
print(t.native_id, flush=True)
time.sleep(60)
"""


def test_a_pid_file_whose_number_went_to_another_thread_is_not_running(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    other = subprocess.Popen(["python3", "-c", THREADED], stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout is not None
        tid = int(other.stdout.readline())  # a thread of another process: kill -0 of it succeeds, as for ours
        for script in ("is_running demo && echo running || echo stale", "stop_pid demo 1; echo stopped"):
            (run / "demo.pid").write_text(f"{tid}\n")
            (run / "demo.pid.start").write_text("1\n")  # the start time of the process the file was written for
            r = lib(tmp_path, script)
            assert r.stdout.strip() in ("stale", "stopped"), r.stderr
            assert not (run / "demo.pid").exists() and not (run / "demo.pid.start").exists()
            # stop_pid signalled nothing (it used to TERM whoever had the number)
            assert other.poll() is None, "the other process was signalled"
    finally:
        other.kill()
        other.wait()


def test_a_pid_file_of_an_older_release_without_a_start_time_still_counts(tmp_path: Path) -> None:
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        (tmp_path / "run").mkdir()
        (tmp_path / "run" / "demo.pid").write_text(f"{sleeper.pid}\n")
        assert lib(tmp_path, "is_running demo && echo running").stdout.strip() == "running"
    finally:
        sleeper.kill()
        sleeper.wait()
