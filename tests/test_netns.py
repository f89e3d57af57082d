"""deploy/netns.sh: several hosts on one machine, each in its own network namespace on a bridge (issue 12).

Uses its own prefix, bridge and subnet so it never touches a cluster that is running."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "SAND_NETNS_PREFIX": "sandt-", "SAND_NETNS_BRIDGE": "sandtbr0", "SAND_NETNS_SUBNET": "10.78.0"}

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ip"), reason="needs root and iproute2")


def netns(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(ROOT / "deploy" / "netns.sh"), *args],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
        check=check,
    )


def test_hosts_reach_each_other_until_a_link_is_cut_and_down_removes_everything() -> None:
    try:
        netns("up", "2")
        netns("up", "2")  # idempotent
        assert netns("status").stdout.split("\n")[:2] == [
            "h1    10.78.0.11      link UP",
            "h2    10.78.0.12      link UP",
        ]
        assert netns("reach", "h1", "10.78.0.12", check=False).returncode == 0
        assert netns("reach", "h2", "10.78.0.1", check=False).returncode == 0
        netns("cut", "h2")
        assert "h2    10.78.0.12      link DOWN" in netns("status").stdout
        assert netns("reach", "h1", "10.78.0.12", check=False).returncode != 0, "a cut host must be unreachable"
        netns("heal", "h2")
        assert netns("reach", "h1", "10.78.0.12", check=False).returncode == 0
        assert netns("exec", "h1", "ip", "-br", "addr", "show", "eth0").stdout.split()[2] == "10.78.0.11/24"
        assert "no host h9" in netns("addr", "h9", check=False).stderr
    finally:
        netns("down", check=False)
    assert netns("status").stdout == ""
    assert subprocess.run(["ip", "link", "show", "sandtbr0"], capture_output=True).returncode != 0
