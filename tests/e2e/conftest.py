"""End-to-end tests run against the real parts started by `make up`; every test here is marked e2e."""

from __future__ import annotations

import os

import pytest
import requests

from tests.e2e.api import Http


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "/e2e/" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def base(nginx_url: str) -> str:
    url = os.environ.get("SAND_E2E_URL", nginx_url).rstrip("/")
    try:
        r = requests.get(url + "/healthz", timeout=5)
    except requests.RequestException as e:
        pytest.fail(f"no SAND frontend at {url} ({e}): run `make up` (or set SAND_E2E_URL)")
    assert r.status_code == 200, f"{url}/healthz answered {r.status_code}: {r.text[:200]}"
    return url


@pytest.fixture(scope="session")
def http(base: str) -> Http:
    return Http(base)
