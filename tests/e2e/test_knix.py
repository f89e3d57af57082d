"""KNIX MicroFunctions' own SDK (PyPI mfn-sdk 0.8.9, unchanged) against SAND's KNIX door through nginx (docs/knix.md):
sign-up and login, functions as text and as a zip, a native KNIX workflow deployed and run synchronously and
asynchronously, a grain's error in KNIX's shape (exactly has_error and error_type), a state machine in KNIX's ASL
dialect, logs, storage actions (the user's space and a workflow's data, which
its grains read), and the clean-up a KNIX user does: undeploy, delete the workflow and functions, delete the account.
"""

from __future__ import annotations

import base64
import json
import time
import uuid
import zipfile
from collections.abc import Iterator

import pytest
import requests

from tests.e2e.knix_users import knix_user
from tests.test_aslrun import KNIX_DIALECT_RUNS, knix_machine

mfn_sdk = pytest.importorskip("mfn_sdk", reason="mfn-sdk 0.8.9 is a dev dependency: pip install -e '.[dev]'")

HELLO = """def handle(event, context):
    context.log("knix hello for " + event["name"])
    greeting = context.get("greeting") or "Hello"
    return greeting + " " + event["name"]
"""
BOOM = """def handle(event, context):
    raise ValueError("no " + event["name"])
"""
ZIPPED = """from helper import shout


def handle(event, context):
    return shout(event)
"""


@pytest.fixture(scope="module")
def knix(base: str) -> Iterator[mfn_sdk.MfnClient]:
    """A KNIX user: the SDK signs up when its first login fails (mfn_name given), as KNIX's own quick start does."""
    yield from knix_user(base, "knix")


@pytest.fixture(scope="module")
def deployed(knix: mfn_sdk.MfnClient, tmp_path_factory: pytest.TempPathFactory) -> mfn_sdk.workflow.Workflow:
    hello = knix.add_function("knixhello")
    hello.code = HELLO
    boom = knix.add_function("knixboom")
    boom.code = BOOM
    zipped = knix.add_function("knixzip")
    z = tmp_path_factory.mktemp("knix") / "knixzip.zip"
    with zipfile.ZipFile(z, "w") as out:
        out.writestr("knixzip.py", ZIPPED)
        out.writestr("helper.py", "def shout(event):\n    return event['text'].upper()\n")
    zipped.upload(str(z))
    wf = knix.add_workflow("knix hello")
    wf.json = json.dumps(
        {
            "name": "knix hello",
            "entry": "knixhello",
            "exit": "done",
            "functions": [{"name": "knixhello", "next": ["done"]}],
        }
    )
    wf.deploy(timeout=180)
    assert wf.status == "deployed", wf.get_deployment_error()
    return wf


def _workflow(knix: mfn_sdk.MfnClient, name: str, entry: str) -> mfn_sdk.workflow.Workflow:
    wf = knix.add_workflow(name)
    wf.json = json.dumps({"name": name, "entry": entry, "functions": [{"name": entry, "next": ["end"]}]})
    wf.deploy(timeout=180)
    assert wf.status == "deployed", wf.get_deployment_error()
    return wf


def test_login_gives_a_token_that_is_an_api_key(knix: mfn_sdk.MfnClient, base: str) -> None:
    assert "SAND" in knix.version()
    r = requests.get(base + "/api/v1/grains", headers={"Authorization": "Bearer " + knix.token}, timeout=10)
    assert r.status_code == 200, r.text
    with pytest.raises(Exception, match="Error logging in"):
        mfn_sdk.MfnClient(mfn_url=base, mfn_user=knix.user, mfn_password="wrong")


def test_functions_text_and_zip(knix: mfn_sdk.MfnClient, deployed: mfn_sdk.workflow.Workflow) -> None:
    names = {f.name: f for f in knix.functions}
    assert {"knixhello", "knixboom", "knixzip"} <= set(names)
    assert names["knixhello"].code == HELLO
    source = names["knixzip"].source
    # the SDK keeps what it uploaded: the code it took out of the zip, as bytes
    assert source["code"] in (ZIPPED, ZIPPED.encode())
    assert len(source["zip"]) == 1 and "helper.py" in base64.b64decode(source["metadata"]).decode()
    fresh = mfn_sdk.MfnClient(mfn_url=knix.baseurl, mfn_user=knix.user, mfn_password="correct horse")
    assert {f.name: f for f in fresh.functions}["knixzip"].code == ZIPPED, "the server's copy, read back"


def test_sync_and_async_execution(deployed: mfn_sdk.workflow.Workflow) -> None:
    assert deployed.execute({"name": "SAND"}) == "Hello SAND"
    assert deployed.endpoint.endswith("/knix")
    execution = deployed.execute_async({"name": "later"})
    assert len(execution.execution_id) == 32
    assert execution.get() == "Hello later"


def test_a_grains_exception_comes_back_in_knix_shape(
    knix: mfn_sdk.MfnClient, deployed: mfn_sdk.workflow.Workflow
) -> None:
    wf = _workflow(knix, "knix boom", "knixboom")
    out = wf.execute({"name": "way"})
    # exactly KNIX's two fields (KNIX's tests/workflow_error_handling compares the whole reply)
    assert out == {"has_error": True, "error_type": "User code exception: ValueError"}, out
    zipped = _workflow(knix, "knix zip", "knixzip")
    assert zipped.execute({"text": "from a zip"}) == "FROM A ZIP"


def test_logs(deployed: mfn_sdk.workflow.Workflow) -> None:
    deployed.execute({"name": "logged"})
    deadline = time.monotonic() + 20
    while True:  # the host agents store logs from LQ_HA reports, possibly after the answer (as KNIX's own do)
        logs = deployed.logs()
        if "knix hello for logged" in logs["log"] or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert "knix hello for logged" in logs["log"], logs
    assert isinstance(logs["timestamp"], int)


def test_storage_user_space_and_workflow_data(knix: mfn_sdk.MfnClient, deployed: mfn_sdk.workflow.Workflow) -> None:
    knix.put("color", "blue")
    assert knix.get("color") == "blue"
    assert knix.get("missing") is None
    assert "color" in knix.list_keys()
    knix.delete("color")
    assert knix.get("color") is None
    knix.put_map_entry("m", "a", "1")
    assert knix.get_map_entry("m", "a") == "1"
    assert knix.contains_map_key("m", "a") and knix.retrieve_map("m") == {"a": "1"}
    knix.add_set_entry("s", "x")
    assert knix.contains_set_item("s", "x") and knix.retrieve_set("s") == {"x"}
    knix.create_counter("c", 5)
    knix.increment_counter("c", 3)
    knix.decrement_counter("c", 1)
    assert knix.get_counter("c") == 7
    # KNIX's listings: names of maps and sets with entries and of counters (the platform's own counters not)
    assert "m" in knix.list_maps() and "s" in knix.list_sets() and knix.list_counters() == ["c"]
    knix.delete_map("m")
    assert "m" not in knix.list_maps()
    # the workflow's data is what its grains read: the greeting changes the workflow's answer
    knix.put("greeting", "Hola", wid=deployed.id)
    assert knix.get("greeting", wid=deployed.id) == "Hola"
    assert knix.get("greeting") is None, "the user's space and the workflow's data are apart"
    assert deployed.execute({"name": "mundo"}) == "Hola mundo"


def test_the_token_is_checked_and_one_user_cannot_reach_anothers(
    knix: mfn_sdk.MfnClient, base: str, deployed: mfn_sdk.workflow.Workflow
) -> None:
    r = requests.post(
        base + "/management", json={"action": "getWorkflows", "data": {"user": {"token": "forged"}}}, timeout=10
    )
    assert r.status_code == 200 and r.json()["status"] == "failure"
    assert "User verification failed" in r.json()["data"]["message"]
    other = mfn_sdk.MfnClient(
        mfn_url=base, mfn_user=f"other-{uuid.uuid4().hex[:6]}@example.com", mfn_password="pw", mfn_name="Other"
    )
    try:
        assert other.workflows == []
        with pytest.raises(Exception, match="does not exist"):
            other.action("getWorkflowJSON", {"workflow": {"id": deployed.id}})
        with pytest.raises(Exception, match="does not exist"):
            other.get("greeting", wid=deployed.id)
    finally:
        other.delete_user()


def test_an_asl_state_machine_runs_its_states_as_grains(
    knix: mfn_sdk.MfnClient, deployed: mfn_sdk.workflow.Workflow
) -> None:
    wf = knix.add_workflow("knix asl")
    wf.json = json.dumps(knix_machine(hello="knixhello", boom="knixboom"))
    wf.deploy(timeout=180)
    assert wf.status == "deployed", wf.get_deployment_error()
    # through the KNIX door the machine speaks KNIX's dialect (docs/knix.md): what tests/test_asl_knix.py checks
    # the states as grains give, in one process
    for value, output in KNIX_DIALECT_RUNS:
        assert wf.execute(value) == output


def test_unknown_actions_say_what_is_missing(knix: mfn_sdk.MfnClient) -> None:
    with pytest.raises(Exception, match="Unsupported action"):
        knix.action("frobnicate", {"trigger_name": "t"})


def test_timer_triggers_through_the_sdk(knix: mfn_sdk.MfnClient) -> None:
    """KNIX's trigger API on SAND's timers (docs/triggers.md): a trigger bound to a workflow runs it every tick with
    KNIX's trigger event; unbound, it stops; AMQP is refused with what SAND supports."""
    tick = knix.add_function("knixtick")
    tick.code = (
        "def handle(event, context):\n"
        "    e = event\n"
        "    context.log('tick ' + e['trigger_name'] + ' ' + e['trigger_type'] + ' ' + e['workflow_name'])\n"
        "    return event\n"
    )
    wf = _workflow(knix, "knix ticks", "knixtick")
    name = f"t{uuid.uuid4().hex[:8]}"
    # (mfn-sdk 0.8.9's add_trigger raises after the action succeeds: its get_triggers returns None; docs/knix.md)
    knix.action(
        "addTrigger", {"trigger_name": name, "trigger_info": {"trigger_type": "timer", "timer_interval_ms": 1000}}
    )
    trigger = knix.find_trigger(name)
    assert trigger.name == name and trigger.status == "ready" and trigger.type == "timer"
    knix.bind_trigger(name, "knix ticks")
    assert [w["workflow_name"] for w in knix.triggers[name].associated_workflows] == ["knix ticks"]
    time.sleep(5)
    knix.unbind_trigger(name, "knix ticks")
    runs = wf.logs()["log"].count(f"tick {name} timer knix ticks")
    assert runs >= 3, wf.logs()["log"][-2000:]
    time.sleep(3)
    assert wf.logs()["log"].count(f"tick {name} timer knix ticks") <= runs + 1  # unbound: no more ticks
    knix.delete_trigger(name)
    assert (
        knix.action("getTriggerDetails", {"trigger_names": [name]})["trigger_details"][name]["trigger_status"]
        == "non_existent"
    )
    with pytest.raises(Exception, match="AMQP triggers are not supported"):
        knix.action("addTrigger", {"trigger_name": "q", "trigger_info": {"trigger_type": "amqp", "amqp_addr": "x"}})
    with pytest.raises(Exception, match="timer_interval_ms"):
        knix.action(
            "addTrigger", {"trigger_name": "fast", "trigger_info": {"trigger_type": "timer", "timer_interval_ms": 5}}
        )
    with pytest.raises(Exception, match="does not exist"):
        knix.action("addTriggerForWorkflow", {"trigger_name": "nope", "workflow_name": "knix ticks"})
