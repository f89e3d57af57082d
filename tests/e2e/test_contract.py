"""The running API (through nginx) against its own OpenAPI document: schemathesis, every check, every phase
(examples, coverage, fuzzing, stateful), 50 examples per operation, a fixed seed. Zero failures is the contract:
every status, content type and body the server answers is documented, a request the schema allows is served (or
refused for one of the rules listed in tests/contract/schemathesis.toml), one it forbids is refused, and every
error, Jetty's and nginx's included, is the API's JSON."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

from tests.conftest import SAND_HOME
from tests.e2e.api import Http

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "tests" / "contract" / "schemathesis.toml"


def schemathesis(base: str, key: str, *selection: str) -> subprocess.CompletedProcess[str]:
    st = Path(sys.executable).parent / "st"
    return subprocess.run(
        [
            str(st),
            "--config-file",
            str(CONFIG),
            "run",
            f"{base}/api/v1/openapi.json",
            "--checks",
            "all",
            "--max-examples",
            "50",
            "--seed",
            "1",
            "--no-color",
            "--request-timeout",
            "35",
            "--header",
            f"Authorization: Bearer {key}",
            *selection,
        ],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
    )


def test_a_developer_finds_no_contract_failure(base: str, http: Http) -> None:
    r = http("POST", "/api/v1/accounts", json_body={"name": f"contract-{uuid.uuid4().hex[:10]}"})
    assert r.status_code == 201, r.text
    p = schemathesis(base, r.json()["api_key"], "--exclude-path-regex", "^/api/v1/admin/")
    assert p.returncode == 0, p.stdout[-20000:] + p.stderr[-5000:]
    assert " passed" in p.stdout and "failures" not in p.stdout.splitlines()[-1], p.stdout[-3000:]


def test_the_operator_finds_no_contract_failure(base: str) -> None:
    admin = (SAND_HOME / "admin-key").read_text().strip()
    p = schemathesis(base, admin, "--include-path-regex", "^/api/v1/admin/")
    assert p.returncode == 0, p.stdout[-20000:] + p.stderr[-5000:]
