"""A KNIX function managing the platform from inside a workflow (docs/knix.md "From a grain"), on the real system
through nginx: ``context.addTrigger`` and ``addTriggerForWorkflow`` with a start state make a timer that runs the
workflow from that state; ``deleteTriggerForWorkflow``/``deleteTrigger`` stop it; the request travels grain -> local
data layer -> host agent -> gate -> frontend and runs as the workflow's owner, so another account's workflows are
out of its reach.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator

import pytest

from tests.e2e.knix_users import knix_user

mfn_sdk = pytest.importorskip("mfn_sdk", reason="mfn-sdk 0.8.9 is a dev dependency: pip install -e '.[dev]'")

MANAGE = """import time


def handle(event, context):
    if isinstance(event, dict) and "trigger_name" in event:
        context.log("manage got a trigger event")  # the trigger starts at Second, never here
        return event
    if event["op"] == "add":
        added = context.addTrigger(event["name"], {"trigger_type": "timer", "timer_interval_ms": 1000})
        bound = context.addTriggerForWorkflow(event["name"], event["wf"], "Second")
        return {"added": list(added), "bound": list(bound)}
    if event["op"] == "remove":
        unbound = context.deleteTriggerForWorkflow(event["name"], event["wf"])
        deleted = context.deleteTrigger(event["name"])
        return {"unbound": list(unbound), "deleted": list(deleted)}
    # another account's workflow, by name: the request runs as this workflow's owner
    details = context._getWorkflowDetails(event["wf"])
    bound = context.addTriggerForWorkflow("any", event["wf"])
    status, message, response = context._invoke_management_api({"action": "signUp", "data": {}})
    return {"details": details, "bound": list(bound), "sign_up": response}
"""
SECOND = """def handle(event, context):
    if isinstance(event, dict) and "trigger_name" in event:
        context.log("second tick " + event["trigger_name"] + " " + event["workflow_name"])
    return event
"""


@pytest.fixture(scope="module")
def owner(base: str) -> Iterator[mfn_sdk.MfnClient]:
    yield from knix_user(base, "knix-grain")


@pytest.fixture(scope="module")
def stranger(base: str) -> Iterator[mfn_sdk.MfnClient]:
    users = knix_user(base, "knix-stranger")
    client = next(users)
    wf = client.add_workflow("private")
    wf.json = json.dumps({"name": "private", "entry": "p", "functions": [{"name": "p", "next": ["end"]}]})
    yield client
    next(users, None)  # its clean-up


@pytest.fixture(scope="module")
def selfmanaged(owner: mfn_sdk.MfnClient) -> mfn_sdk.workflow.Workflow:
    owner.add_function("knixmanage").code = MANAGE
    owner.add_function("knixsecond").code = SECOND
    wf = owner.add_workflow("self managed")
    wf.json = json.dumps(
        {
            "StartAt": "Manage",
            "States": {
                "Manage": {"Type": "Task", "Resource": "knixmanage", "Next": "Second"},
                "Second": {"Type": "Task", "Resource": "knixsecond", "End": True},
            },
        }
    )
    wf.deploy(timeout=180)
    assert wf.status == "deployed", wf.get_deployment_error()
    return wf


def test_a_function_makes_a_timer_that_starts_its_workflow_at_a_state(
    selfmanaged: mfn_sdk.workflow.Workflow,
) -> None:
    name = f"t{uuid.uuid4().hex[:8]}"
    out = selfmanaged.execute({"op": "add", "name": name, "wf": "self managed"}, timeout=120)
    assert out["added"][0] is True and out["bound"] == [True, f"Trigger {name} added for workflow self managed"], out
    time.sleep(6)
    log = selfmanaged.logs()["log"]
    assert log.count(f"second tick {name} self managed") >= 3, log[-2000:]
    assert "manage got a trigger event" not in log
    out = selfmanaged.execute({"op": "remove", "name": name, "wf": "self managed"}, timeout=120)
    assert out["unbound"][0] is True and out["deleted"][0] is True, out
    time.sleep(2)
    ticks = selfmanaged.logs()["log"].count(f"second tick {name} self managed")
    time.sleep(3)
    assert selfmanaged.logs()["log"].count(f"second tick {name} self managed") <= ticks + 1  # deleted: it stops


def test_a_function_reaches_nothing_of_another_account(
    selfmanaged: mfn_sdk.workflow.Workflow, stranger: mfn_sdk.MfnClient
) -> None:
    assert [w.name for w in stranger.workflows] == ["private"]
    out = selfmanaged.execute({"op": "peek", "wf": "private"}, timeout=120)
    assert out["details"] is None, out  # not found among the owner's workflows
    assert out["bound"][0] is False and "does not exist" in out["bound"][1], out
    assert out["sign_up"]["status"] == "failure" and "cannot be called from a function" in json.dumps(out), out
