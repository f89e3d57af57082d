"""Shared fixtures: where the parts started by `make up` listen (same defaults as deploy/lib.sh)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAND_HOME = Path(os.environ.get("SAND_HOME", ROOT / ".sand"))
BIND = os.environ.get("SAND_BIND", "127.0.0.1")


@pytest.fixture(scope="session")
def kafka_bootstrap() -> str:
    return f"{BIND}:{os.environ.get('SAND_KAFKA_PORT', '9092')}"


@pytest.fixture(scope="session")
def cassandra_address() -> tuple[str, int]:
    return BIND, int(os.environ.get("SAND_CASSANDRA_PORT", "9042"))


@pytest.fixture(scope="session")
def nginx_url() -> str:
    return f"http://{BIND}:{os.environ.get('SAND_NGINX_PORT', '8080')}"


@pytest.fixture(scope="session")
def sandbox_image() -> str:
    return os.environ.get("SAND_SANDBOX_IMAGE", "sand-sandbox") + ":latest"
