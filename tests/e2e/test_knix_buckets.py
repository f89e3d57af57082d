"""KNIX's triggerable buckets through its own SDK (mfn-sdk 0.8.9, unchanged) against SAND's KNIX door through nginx
(docs/data-triggers.md): add a bucket, bind workflows (one before its deploy: queued up, as KNIX does), a grain's
``context.put(key, value, bucketName=...)`` starts every deployed bound workflow with KNIX's storage event, unbinding
and undeploying stop it, deleting the bucket removes it. The flow of KNIX's tests/triggers_storage, driven from the
SDK instead of from inside a function (a SAND sandbox has no network to reach the management API)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator

import pytest

from tests.e2e.knix_users import knix_user

mfn_sdk = pytest.importorskip("mfn_sdk", reason="mfn-sdk 0.8.9 is a dev dependency: pip install -e '.[dev]'")

WRITER = """import json
def handle(event, context):
    context.put(event["key"], json.dumps(event["value"]), bucketName=event["bucket"])
    return "wrote " + event["key"]
"""
TRIGGERED = """import json
def handle(event, context):
    if isinstance(event, dict) and "key" in event and "value" in event and "source" in event:
        value = json.loads(event["value"])
        print("_!_TRIGGER_START_" + value["nonce"] + ";" + str(value["count"]))
    return event
"""


@pytest.fixture(scope="module")
def knix(base: str) -> Iterator[mfn_sdk.MfnClient]:
    yield from knix_user(base, "knixb")


def _workflow(knix: mfn_sdk.MfnClient, name: str, function: str, deploy: bool = True) -> mfn_sdk.workflow.Workflow:
    wf = knix.add_workflow(name)
    wf.json = json.dumps({"name": name, "entry": function, "functions": [{"name": function, "next": ["end"]}]})
    if deploy:
        wf.deploy(timeout=180)
        assert wf.status == "deployed", wf.get_deployment_error()
    return wf


def _starts(wf: mfn_sdk.workflow.Workflow, nonce: str) -> list[str]:
    return [line for line in wf.logs()["log"].split("\n") if "_!_TRIGGER_START_" + nonce in line]


def _wait_starts(wf: mfn_sdk.workflow.Workflow, nonce: str, want: int, timeout: float = 30) -> list[str]:
    deadline = time.monotonic() + timeout
    while len(found := _starts(wf, nonce)) < want and time.monotonic() < deadline:
        time.sleep(0.5)
    return found


def test_a_bucket_starts_its_bound_deployed_workflows(knix: mfn_sdk.MfnClient) -> None:
    nonce = uuid.uuid4().hex[:8]
    knix.add_function("kbwriter").code = WRITER
    knix.add_function("kbtriggered").code = TRIGGERED
    writer = _workflow(knix, "kb writer", "kbwriter")
    main = _workflow(knix, "kb main", "kbtriggered")
    other = _workflow(knix, "kb other", "kbtriggered", deploy=False)
    bucket = "triggerable_bucket__" + nonce

    knix.add_bucket(bucket)
    knix.bind_bucket(bucket, main.name)
    knix.bind_bucket(bucket, other.name)  # not deployed: queued up until its deploy, as on KNIX
    assert knix.buckets[bucket].associated_workflows == [main.name]
    other.deploy(timeout=180)
    assert other.status == "deployed", other.get_deployment_error()
    assert sorted(knix.buckets[bucket].associated_workflows) == sorted([main.name, other.name])
    [meta] = [m for m in knix.buckets[bucket]._metadata if m["wfname"] == main.name]
    assert meta["urltype"] == "url" and meta["urls"][0].endswith("/knix"), meta

    def write(count: int) -> None:
        value = {"nonce": nonce, "count": count}
        assert writer.execute({"bucket": bucket, "key": f"key_{count}", "value": value}) == f"wrote key_{count}"

    write(1)  # both
    assert len(_wait_starts(main, nonce, 1)) == 1 and len(_wait_starts(other, nonce, 1)) == 1
    knix.unbind_bucket(bucket, other.name)
    time.sleep(1)  # host agents hear of a change within tens of ms (KNIX's own test waits 1 s, too)
    write(2)  # main only
    assert len(_wait_starts(main, nonce, 2)) == 2
    knix.bind_bucket(bucket, other.name)
    time.sleep(1)
    write(3)  # both again
    assert len(_wait_starts(main, nonce, 3)) == 3 and len(_wait_starts(other, nonce, 2)) == 2
    other.undeploy(timeout=120)
    assert knix.buckets[bucket].associated_workflows == [main.name], "only deployed workflows are listed"
    write(4)  # main only
    main_starts = _wait_starts(main, nonce, 4)
    time.sleep(2)
    assert [s.rsplit(";", 1)[1].strip() for s in main_starts] == ["1", "2", "3", "4"], main_starts

    knix.delete_bucket(bucket)
    # (not knix.buckets: mfn-sdk 0.8.9's property raises NameError once a bucket it knew is gone, its own bug)
    assert bucket not in knix.action("getTriggerableBuckets")["buckets"]
    with pytest.raises(Exception, match="not found"):
        knix.bind_bucket(bucket, main.name)
