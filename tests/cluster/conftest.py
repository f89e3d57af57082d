"""Fault tests on a SAND cluster of this machine's network namespaces: marked cluster (and e2e: real processes).
They need root, iproute2 and what deploy/install.sh builds; `make test` runs them after the single-host tests."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.cluster.workload import ROOT


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "/cluster/" in str(item.fspath):
            item.add_marker(pytest.mark.cluster)
            item.add_marker(pytest.mark.e2e)
            if os.geteuid() != 0 or not shutil.which("ip") or not (ROOT / "hostagent" / "target").is_dir():
                item.add_marker(pytest.mark.skip(reason="needs root, iproute2 and deploy/install.sh's build"))
