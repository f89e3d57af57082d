"""The docs that are generated from code are current."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_config_reference_matches_the_code(tmp_path: Path) -> None:
    fresh = tmp_path / "config.md"
    subprocess.run([str(ROOT / "deploy" / "gen-config-doc.sh"), str(fresh)], check=True)
    assert fresh.read_text() == (ROOT / "docs" / "config.md").read_text(), (
        "docs/config.md is stale: run deploy/gen-config-doc.sh"
    )
