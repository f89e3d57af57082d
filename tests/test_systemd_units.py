"""The systemd units the Ansible role installs on a real cluster (deploy/systemd/*.j2, deploy/ansible/systemd.yml),
rendered as the role renders them and checked by systemd's own parser; and the scheduled backup's retention."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import jinja2
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
UNITS = ROOT / "deploy" / "systemd"


def render(dest: Path) -> list[Path]:
    defaults = yaml.safe_load((ROOT / "deploy" / "ansible" / "roles" / "sand" / "defaults" / "main.yml").read_text())
    values = {
        "sand_root": "/opt/sand",
        "sand_home": "/opt/sand/.sand",
        "sand_backup_dir": "/opt/sand/.sand/backups",
        **{k: defaults[k] for k in ("sand_backup_keep", "sand_backup_on_calendar", "sand_hostagent_cpu_weight")},
        "sand_frontend_cpu_weight": defaults["sand_frontend_cpu_weight"],
    }
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    out = []
    for t in sorted(UNITS.glob("*.j2")):
        name = t.name.removesuffix(".j2").replace("@.service", "@8081.service")
        (dest / name).write_text(env.from_string(t.read_text()).render(**values))
        out.append(dest / name)
    return out


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="needs systemd-analyze (Debian's systemd)")
def test_every_unit_parses_with_no_setting_ignored(tmp_path: Path) -> None:
    units = render(tmp_path)
    assert {u.name for u in units} == {
        "sand-backup.service",
        "sand-backup.timer",
        "sand-frontend@8081.service",
        "sand-hostagent.service",
    }
    r = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", *map(str, units)], capture_output=True, text=True, timeout=60
    )
    # systemd skips a setting it cannot parse with a line on stderr and still exits 0: both must be clean
    ours = [line for line in r.stderr.splitlines() if str(tmp_path) in line or "sand-" in line]
    assert r.returncode == 0 and ours == [], r.stderr
    text = {u.name: u.read_text() for u in units}
    assert "CPUWeight=200" in text["sand-hostagent.service"] and "CPUWeight=200" in text["sand-frontend@8081.service"]
    assert "backup.sh save-dated /opt/sand/.sand/backups 7" in text["sand-backup.service"]


def test_a_bad_setting_would_be_caught(tmp_path: Path) -> None:
    if shutil.which("systemd-analyze") is None:
        pytest.skip("needs systemd-analyze")
    bad = tmp_path / "sand-bad.service"
    bad.write_text("[Service]\nType=simple\nExecStart=/bin/true\nCPUWeight=lots\n")
    r = subprocess.run(["systemd-analyze", "verify", "--man=no", str(bad)], capture_output=True, text=True, timeout=60)
    assert "Invalid CPU weight" in r.stderr


def prune(home: Path, root: Path, keep: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(ROOT / "deploy" / "backup.sh"), "prune", str(root), keep],
        env=os.environ | {"SAND_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_the_scheduled_backup_keeps_the_newest_and_nothing_else_is_touched(tmp_path: Path) -> None:
    root = tmp_path / "backups"
    stamps = ["20261120T030000Z", "20261121T030000Z", "20261122T030000Z", "20261123T030000Z"]
    for s in stamps:
        (root / s).mkdir(parents=True)
        (root / s / "BACKUP").write_text(f"sand {s}\n")
    (root / "notes").mkdir()  # not a backup: kept
    r = prune(tmp_path / "home", root, "2")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in root.iterdir()) == ["20261122T030000Z", "20261123T030000Z", "notes"]
    refused = prune(tmp_path / "home", root, "0")
    assert refused.returncode != 0 and "KEEP >= 1" in refused.stderr


def copy(home: Path, root: Path, to: Path | None, node: str = "db1") -> subprocess.CompletedProcess[str]:
    env = os.environ | {"SAND_HOME": str(home), "SAND_BACKUP_NODE": node}
    env.pop("SAND_BACKUP_COPY_TO", None)
    if to is not None:
        env["SAND_BACKUP_COPY_TO"] = str(to)
    return subprocess.run(
        ["bash", str(ROOT / "deploy" / "backup.sh"), "copy", str(root)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_backups_are_mirrored_off_the_node_with_the_pruned_ones_gone(tmp_path: Path) -> None:
    if shutil.which("rsync") is None:
        pytest.skip("needs rsync (deploy/install.sh installs it)")
    root, offsite, home = tmp_path / "backups", tmp_path / "offsite", tmp_path / "home"
    for s in ("20261120T030000Z", "20261121T030000Z", "20261122T030000Z"):
        (root / s / "sand_apps").mkdir(parents=True)
        (root / s / "BACKUP").write_text(f"sand {s}\n")
        (root / s / "sand_apps" / "nb-1-big-Data.db").write_bytes(s.encode() * 100)
    r = copy(home, root, offsite)
    assert r.returncode == 0, r.stderr
    mirrored = offsite / "db1"
    assert sorted(p.name for p in mirrored.iterdir()) == ["20261120T030000Z", "20261121T030000Z", "20261122T030000Z"]
    assert (mirrored / "20261121T030000Z" / "sand_apps" / "nb-1-big-Data.db").read_bytes() == b"20261121T030000Z" * 100
    assert prune(home, root, "1").returncode == 0
    assert copy(home, root, offsite).returncode == 0
    assert sorted(p.name for p in mirrored.iterdir()) == ["20261122T030000Z"], "the copy follows the pruning"
    assert copy(home, root, offsite, node="db2").returncode == 0
    assert sorted(p.name for p in offsite.iterdir()) == ["db1", "db2"], "a folder per node"
    unset = copy(home, root, None)
    assert unset.returncode != 0 and "SAND_BACKUP_COPY_TO is not set" in unset.stderr
    bad = copy(home, root, offsite, node="../x")
    assert bad.returncode != 0 and "not a folder name" in bad.stderr
