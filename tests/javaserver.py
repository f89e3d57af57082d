"""Start a standalone Java server of this repo (local bus, data layer) for a test, on a free port."""

from __future__ import annotations

import os
import queue
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def classpath(module: str) -> str:
    jar = ROOT / module / "target" / f"{module}-0.1.0-SNAPSHOT.jar"
    if not jar.exists():
        raise RuntimeError(f"{jar} is missing: build the Java modules first (make install)")
    return f"{jar}:{ROOT / module / 'target' / 'lib'}/*"


@contextmanager
def java_server(module: str, main_class: str, env: dict[str, str], timeout_s: float = 30) -> Iterator[str]:
    """Run main_class with env; yields the address from its '<name> listening on <address>' line."""
    proc = subprocess.Popen(
        ["java", "-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-cp", classpath(module), main_class],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    output: list[str] = []

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            output.append(line)
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    try:
        address = None
        while address is None:
            try:
                line = lines.get(timeout=timeout_s)
            except queue.Empty:
                raise RuntimeError(f"{main_class} did not start in {timeout_s}s: {''.join(output)}") from None
            if " listening on " in line:
                address = line.split(" listening on ", 1)[1].strip()
        yield address
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
