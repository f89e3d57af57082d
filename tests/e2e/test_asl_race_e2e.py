"""ASL Map and Parallel joins on the platform (issue 26, finding 15): a new user's machine, its Maps under every
MaxConcurrency, its Parallels' branches finishing in every order, some with failing items (Catch), run 120
times side by side through nginx; every request must get its one right answer and no grain instance may hit a
data layer error (a late item used to find the join's counters deleted: NOT_FOUND ... '.failed'). The same machine
and inputs as tests/test_asl_race.py's emulator test."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from sandclient.client import Client
from tests.e2e.api import Http, sign_up
from tests.test_asl_race import stress_inputs, write_stress_app


@pytest.fixture(scope="module")
def machine(http: Http, base: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Client, str]]:
    key = sign_up(http, f"aslrace-{uuid.uuid4().hex[:8]}")
    client = Client(base, key)
    folder = tmp_path_factory.mktemp("aslrace") / "app"
    write_stress_app(folder)
    app = f"aslrace-{uuid.uuid4().hex[:6]}"
    client.deploy(folder, name=app, timeout_s=180)
    yield client, app
    try:
        client.undeploy(app, timeout_s=60)
        client.call("DELETE", f"/api/v1/apps/{app}")
    except Exception:  # noqa: BLE001 - best effort: the account stays with an undeployed app at worst
        pass


def test_maps_and_parallels_answer_once_and_right(machine: tuple[Client, str]) -> None:
    client, app = machine
    runs = stress_inputs(120, seed=15)
    started_ms = int(time.time() * 1000)
    with ThreadPoolExecutor(6) as pool:  # side by side, as a new user's requests come
        answers = list(pool.map(lambda run: client.invoke(app, run[0], timeout_s=60), runs))
    wrong = [(run[0], a.output, a.execution_id) for run, a in zip(runs, answers, strict=True) if a.output != run[1]]
    assert not wrong, f"{len(wrong)} wrong answers of {len(runs)}, e.g. {wrong[:2]}"
    time.sleep(2)  # a late instance's log lines are written behind
    logs = client.app_logs(app, since_ms=started_ms, limit=100)  # the newest 100: enough to see a late instance's error
    lines = [str(line) for execution in logs.get("executions", []) for line in execution.get("logs", [])]
    assert any("item failed" in line for line in lines), "the failing items' log lines are read"
    hit = [line for line in lines if "NOT_FOUND" in line or "DataLayerError" in line]
    assert not hit, f"{len(hit)} log lines of data layer errors, e.g. {hit[:2]}"
