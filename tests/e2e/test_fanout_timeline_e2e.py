"""The timeline of a fan-out on the platform (issue 29): an ASL Map of 6 items then a Parallel of 3 branches; the
execution's GET /api/v1/executions/{id} must list every item and every branch as a grain instance, each with its
parent (the instance that fanned it out, or the one before it on its branch), not only the branch that arrived
last. The rows come from the trace the join carries on (grainworker/aslrun.py, contracts Trace.instances)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandclient.client import Client
from tests.e2e.api import Http, sign_up

WORK = '''def handle(event, context):
    """An item or a branch: doubles its value."""
    return event["v"] * 2
'''


def task(name: str) -> dict[str, object]:
    return {"StartAt": name, "States": {name: {"Type": "Task", "Resource": "work", "End": True}}}


MACHINE = {
    "name": "fanout",
    "StartAt": "Each",
    "States": {
        "Each": {
            "Type": "Map",
            "ItemsPath": "$.items",
            "ItemSelector": {"v.$": "$$.Map.Item.Value"},
            "ItemProcessor": task("Work"),
            "ResultPath": "$.doubled",
            "Next": "Three",
        },
        "Three": {
            "Type": "Parallel",
            "Parameters": {"v.$": "$.doubled[0]"},
            "Branches": [task(f"B{i}") for i in range(3)],
            "End": True,
        },
    },
}


@pytest.fixture(scope="module")
def machine(http: Http, base: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Client, str]]:
    key = sign_up(http, f"fanout-{uuid.uuid4().hex[:8]}")
    client = Client(base, key)
    folder: Path = tmp_path_factory.mktemp("fanout") / "app"
    folder.mkdir()
    (folder / "workflow.json").write_text(json.dumps(MACHINE, indent=1))
    (folder / "work.py").write_text(WORK)
    app = f"fanout-{uuid.uuid4().hex[:6]}"
    client.deploy(folder, name=app, timeout_s=180)
    yield client, app
    try:
        client.undeploy(app, timeout_s=60)
        client.call("DELETE", f"/api/v1/apps/{app}")
    except Exception:  # noqa: BLE001 - best effort: the account stays with an undeployed app at worst
        pass


def test_the_timeline_has_every_item_and_branch_with_its_parent(machine: tuple[Client, str]) -> None:
    client, app = machine
    answer = client.invoke(app, {"items": [1, 2, 3, 4, 5, 6]}, timeout_s=60)
    assert answer.output == [4, 4, 4], answer.output  # each branch doubles the Map's first output (2)
    body = client.execution(answer.execution_id)
    for _ in range(50):  # the record is written behind the answer
        if body.get("instances"):
            break
        time.sleep(0.1)
        body = client.execution(answer.execution_id)
    rows = body["instances"]
    items = sorted(r["item"] for r in rows if r.get("state") == "Each")
    assert items == list(range(6)), rows
    branches = sorted(r["branch"] for r in rows if r.get("state") == "Three")
    assert branches == [0, 1, 2], rows
    for r in rows:
        if "state" in r:
            parent = r["parent"]
            assert isinstance(parent, int) and 0 <= parent < r["instance"], r
    assert all(r["host"] for r in rows), f"every instance says its host: {rows}"
    fanned = {rows[r["parent"]]["grain"] for r in rows if r.get("state") == "Each"}
    assert len(fanned) == 1, f"every item starts from the one instance that fanned the Map out: {fanned}"
    hops = body["timings"]["hops"]
    assert sum(1 for h in hops if h["step"].endswith("handler started") and "[Each item" in h["where"]) == 6, hops
