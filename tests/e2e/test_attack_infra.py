"""A grain fills the host's disk through its container's stdout (issue 26, finding 10), on the real system through
nginx: whatever a grain writes to fd 1 bypasses its instance's log capture and goes to Docker's log of the sandbox;
Docker rotates it (the host agent's sandbox.log.max.mb x sandbox.log.max.files, 10 MB x 3 by default), so the
container's log files stay under that cap, and another tenant's application keeps answering.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import uuid
from typing import Any

import pytest

from tests.e2e.api import Http, put_app, raw_remove, sandbox_ids, sign_up

RUN = uuid.uuid4().hex[:8]
ECHO = "def handle(event, context):\n    return event\n"
WRITE_MB = 50
# The host agent's defaults (SandboxSettings: log.max.mb 10, log.max.files 3), plus one line of JSON framing.
LOG_CAP_BYTES = 10 * 3 * (1 << 20) + (1 << 20)

# Writes straight to fd 1 (not print: the instance's capture of sys.stdout is not what is attacked here).
LOUD = r"""
import os

def handle(event, context):
    line = b"x" * 65535 + b"\n"
    written = 0
    while written < event["mb"] << 20:
        written += os.write(1, line)
    return {"written": written}
"""


def docker_json(*args: str) -> Any:
    out = subprocess.run(["docker", *args], check=True, capture_output=True, text=True, timeout=60).stdout
    return json.loads(out)


def sandbox_of(app_id: str) -> dict[str, Any]:
    names = sandbox_ids(app_id)
    assert len(names) == 1, names
    return docker_json("inspect", names[0])[0]


def log_bytes(container: dict[str, Any]) -> int:
    """What Docker keeps of the container's stdout/stderr: its log file and the rotated ones beside it."""
    path = container["LogPath"]
    assert path, container["HostConfig"].get("LogConfig")
    return sum(os.path.getsize(p) for p in glob.glob(glob.escape(path) + "*"))


@pytest.fixture(scope="module")
def tenants(http: Http) -> dict[str, str]:
    return {who: sign_up(http, f"infra-{who}-{RUN}") for who in ("mallory", "alice")}


@pytest.fixture(scope="module")
def victim(http: Http, tenants: dict[str, str]) -> Any:
    name = f"victim-{RUN}"
    app = put_app(http, tenants["alice"], name, [{"name": "echo", "next": ["end"]}], {"echo": ECHO})
    assert app["status"] == "deployed", app
    yield name
    raw_remove(http, tenants["alice"], name)


def test_a_grain_writing_to_fd_1_cannot_fill_the_disk(http: Http, tenants: dict[str, str], victim: str) -> None:
    name = f"loud-{RUN}"
    app = put_app(
        http, tenants["mallory"], name, [{"name": "loud", "next": ["end"]}], {"loud": LOUD}, settings={"timeout_s": 120}
    )
    assert app["status"] == "deployed", app
    try:
        r = http("POST", f"/app/{name}", json_body={"mb": WRITE_MB}, timeout=150)
        assert r.status_code == 200 and r.json()["written"] >= WRITE_MB << 20, r.text
        container = sandbox_of(app["id"])
        kept = log_bytes(container)
        assert kept <= LOG_CAP_BYTES, (
            f"{WRITE_MB} MB written to fd 1 left {kept} bytes of container logs "
            f"(LogConfig {container['HostConfig'].get('LogConfig')})"
        )
        assert kept >= 10 << 20, f"the grain's output did not reach Docker's log ({kept} bytes): nothing was tested"
    finally:
        raw_remove(http, tenants["mallory"], name)
    r = http("POST", f"/app/{victim}", json_body={"hello": "alice"}, timeout=30)
    assert r.status_code == 200 and r.json() == {"hello": "alice"}, r.text
