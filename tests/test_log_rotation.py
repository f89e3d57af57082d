"""Who rolls which log, and that nothing is lost (docs/operations.md "Logs"): deploy/logroll.sh renames a log a
process keeps open (nginx) and has it reopen, deploy/supervise.sh keeps a process's console output (.out) per run
and never touches the .log the process writes itself. Real scripts, real signals; no SAND process."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Appends numbered lines to a log and reopens it on SIGUSR1, as nginx does; stops after N lines.
WRITER = r"""
import os, signal, sys, time
log, pid_file, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
f = open(log, "a", buffering=1)
reopen = []
signal.signal(signal.SIGUSR1, lambda *a: reopen.append(1))
open(pid_file, "w").write(str(os.getpid()))
for i in range(n):
    if reopen:
        reopen.clear(); f.close(); f = open(log, "a", buffering=1)
    f.write(f"line {i} " + "x" * 500 + "\n")
    if i % 200 == 0:
        time.sleep(0.01)
f.close()
"""


def env(home: Path, **extra: str) -> dict[str, str]:
    return os.environ | {"SAND_HOME": str(home)} | extra


def test_logroll_renames_by_size_and_the_writer_reopens_so_no_line_is_lost(tmp_path: Path) -> None:
    home, logs = tmp_path / "home", tmp_path / "home" / "logs"
    logs.mkdir(parents=True)
    log, pid_file = logs / "nginx-access.log", tmp_path / "writer.pid"
    roller = subprocess.Popen(
        ["bash", str(ROOT / "deploy" / "logroll.sh"), str(pid_file), str(log)],
        env=env(home, SAND_LOGROLL_EVERY_S="0.3", SAND_LOG_MAX_MB="1", SAND_LOG_TOTAL_MB="100"),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        n = 8000  # ~4 MB over ~1 s: several rolls while it writes
        subprocess.run([sys.executable, "-c", WRITER, str(log), str(pid_file), str(n)], check=True, timeout=60)
        time.sleep(1)
    finally:
        roller.send_signal(signal.SIGTERM)
        out, _ = roller.communicate(timeout=10)
    rolled = sorted(p for p in logs.iterdir() if p != log)
    assert rolled, f"nothing rolled: {out}"
    assert all(re.fullmatch(r"nginx-access\.log\.\d{4}-\d{2}-\d{2}\.\d+", p.name) for p in rolled), rolled
    assert re.search(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z rolled ", out, re.M), out
    files = [*rolled, log] if log.exists() else rolled  # the last roll may have come after the last line
    seen = [int(line.split()[1]) for p in files for line in p.read_text().splitlines()]
    assert sorted(seen) == list(range(n)), "every line once, in the log or a rolled file"


def test_logroll_keeps_rolled_files_under_the_total_cap(tmp_path: Path) -> None:
    logs = tmp_path / "home" / "logs"
    logs.mkdir(parents=True)
    log = logs / "nginx.log"
    for i in range(4):
        (logs / f"nginx.log.2026-11-2{i}.0").write_bytes(b"x" * 600_000)
        os.utime(logs / f"nginx.log.2026-11-2{i}.0", (time.time() - (4 - i) * 60, time.time() - (4 - i) * 60))
    log.write_text("current\n")
    roller = subprocess.Popen(
        ["bash", str(ROOT / "deploy" / "logroll.sh"), str(tmp_path / "none.pid"), str(log)],
        env=env(tmp_path / "home", SAND_LOGROLL_EVERY_S="0.2", SAND_LOG_TOTAL_MB="2"),
    )
    time.sleep(1.5)
    roller.send_signal(signal.SIGTERM)
    roller.wait(timeout=10)
    left = sorted(p.name for p in logs.iterdir())
    assert left == ["nginx.log", "nginx.log.2026-11-21.0", "nginx.log.2026-11-22.0", "nginx.log.2026-11-23.0"]
    assert log.read_text() == "current\n", "the current log is never pruned"


def test_logroll_refuses_a_bad_setting(tmp_path: Path) -> None:
    r = subprocess.run(
        ["bash", str(ROOT / "deploy" / "logroll.sh"), "x", "y"],
        env=env(tmp_path, SAND_LOG_FORMAT="xml"),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 1
    assert "SAND_LOG_FORMAT must be text or json, not 'xml'" in r.stderr


def test_the_supervisor_keeps_each_runs_console_output_and_never_touches_the_processs_own_log(tmp_path: Path) -> None:
    home = tmp_path / "home"
    logs = home / "logs"
    logs.mkdir(parents=True)
    own = logs / "demo.log"
    own.write_text("earlier run\n")
    # The command appends to its own log (as logback does) and prints a line to its console, then dies.
    cmd = f"echo run >>{own}; echo console; exit 3"
    sup = subprocess.Popen(
        ["bash", str(ROOT / "deploy" / "supervise.sh"), "demo", "sh", "-c", cmd],
        env=env(home),
        start_new_session=True,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and own.read_text().splitlines().count("run") < 3:  # 3 runs: 1 s + 2 s back-off
        time.sleep(0.2)
    sup.send_signal(signal.SIGTERM)
    sup.wait(timeout=10)
    assert own.read_text().startswith("earlier run\nrun\nrun\nrun\n"), "the process's own log is appended, never cut"
    out = (logs / "demo.out").read_text()
    assert re.search(
        r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z supervisor: demo exited with status 3; restart \d+ in \d+ s "
        r"\(the console output of the run that exited is .*demo\.out\.1; its log goes on in .*demo\.log\)$",
        out,
        re.M,
    ), out
    earlier = (logs / "demo.out.2").read_text()  # an earlier run's: what it printed, then how it ended
    assert re.search(r"^console\n.*Z supervisor: demo exited with status 3; restart \d+ in \d+ s\n$", earlier, re.M), (
        earlier
    )
    state = (home / "run" / "demo.supervisor").read_text()
    assert re.search(r"^last_exit_at=\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$", state, re.M), state
