"""Sessions (grainworker/session.py, session_api.py, their part of instance.py): fakes of the bus and data layer."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from typing import Any

import pytest

from grainworker import instance as instance_mod
from grainworker.context import GrainApiError, GrainContext
from grainworker.envelope import decode, encode
from grainworker.instance import InstanceSpec, run_instance
from grainworker.session import (
    SessionError,
    SessionFunction,
    SessionRegistry,
    SessionSlots,
    check_heartbeat,
    function_id,
    message_payload,
    session_id,
    session_queue,
)
from grainworker.workflow import WorkflowError, parse_workflow

WF = parse_workflow(
    {
        "name": "s",
        "entry": "front",
        "functions": [
            {"name": "front", "next": ["end"], "potentialNext": ["worker"]},
            {
                "name": "worker",
                "sessionFunction": True,
                "sessionFunctionParameters": {
                    "heartbeat_method": "function",
                    "heartbeat_function": "beat",
                    "heartbeat_interval_ms": 100,
                },
                "next": ["end"],
            },
            {"name": "beat", "next": []},
        ],
    }
)


class FakeBus:
    """The local bus's calls the session code makes, in memory, shared by every 'connection'."""

    def __init__(self) -> None:
        self.queues: dict[str, list[bytes]] = {}
        self.deleted: list[str] = []
        self.batches: list[list[tuple[str, bytes]]] = []
        self.cond = threading.Condition()

    def publish(self, queue: str, payload: bytes) -> None:
        self.publish_batch([(queue, payload)])

    def publish_batch(self, deliveries: list[tuple[str, bytes]]) -> None:
        with self.cond:
            self.batches.append(list(deliveries))
            for q, p in deliveries:
                self.queues.setdefault(q, []).append(p)
            self.cond.notify_all()

    def poll(self, queue: str, max_messages: int = 1, timeout_ms: int = 1000) -> list[bytes]:
        with self.cond:
            self.cond.wait_for(lambda: self.queues.get(queue), timeout_ms / 1000)
            got = self.queues.get(queue, [])[:max_messages]
            del self.queues.get(queue, [])[: len(got)]
            return got

    def delete_queue(self, queue: str) -> int:
        self.deleted.append(queue)
        return len(self.queues.pop(queue, []))

    def close(self) -> None:
        pass

    def __enter__(self) -> FakeBus:
        return self

    def __exit__(self, *_: object) -> None:
        pass


class FakeData:
    def __init__(self) -> None:
        self.maps: dict[str, dict[str, bytes]] = {}
        self.kv: dict[str, bytes] = {}

    def put(self, key: str, value: bytes) -> None:
        self.kv[key] = value

    def put_map_entry(self, m: str, k: str, v: bytes) -> None:
        self.maps.setdefault(m, {})[k] = v

    def get_map_entry(self, m: str, k: str) -> bytes | None:
        return self.maps.get(m, {}).get(k)

    def delete_map_entry(self, m: str, k: str) -> bool:
        return self.maps.get(m, {}).pop(k, None) is not None

    def retrieve_map(self, m: str) -> dict[str, bytes]:
        return dict(self.maps.get(m, {}))

    def get_map_keys(self, m: str) -> list[str]:
        return list(self.maps.get(m, {}))

    def close(self) -> None:
        pass


def event(value: Any, execution: str = "e1", grain: str = "front") -> dict[str, Any]:
    return {
        "id": os.urandom(8).hex(),
        "execution_id": execution,
        "app": "a1",
        "grain": grain,
        "from": "",
        "value": value,
    }


def context(data: FakeData, value: Any = None, grain: str = "front") -> GrainContext:
    return GrainContext(event(value, grain=grain), grain, WF, lambda: data, lambda ev: None)


def until(cond: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


# ---- names and bounds
def test_a_session_is_the_one_the_value_names_else_the_execution() -> None:
    assert session_id({"sessionId": "s9"}, "e1") == "s9"
    assert session_id({"session_id": "s8"}, "e1") == "s8"
    assert session_id({"sessionId": ""}, "e1") == "e1"
    assert session_id("text", "e1") == "e1"
    assert function_id("a1", "ev") == function_id("a1", "ev") != function_id("a1", "ev2")
    assert session_queue("a1", "f" * 32) == "a1/session." + "f" * 32


def test_the_workflow_marks_session_functions_and_checks_their_fields() -> None:
    assert WF.grain("worker").session == {
        "heartbeat_method": "function",
        "heartbeat_function": "beat",
        "heartbeat_interval_ms": 100,
    }
    assert WF.grain("front").session is None and WF.has_sessions
    assert WF.to_json()["functions"][1]["sessionFunction"] is True
    base = {"name": "s", "entry": "g"}
    with pytest.raises(WorkflowError, match=r"functions\[0\].sessionFunction \"yes\" must be true or false"):
        parse_workflow(base | {"functions": [{"name": "g", "next": ["end"], "sessionFunction": "yes"}]})
    with pytest.raises(WorkflowError, match='only for a session function: add "sessionFunction": true'):
        parse_workflow(base | {"functions": [{"name": "g", "next": ["end"], "sessionFunctionParameters": {}}]})
    with pytest.raises(WorkflowError, match="sessionFunctionParameters must be an object"):
        parse_workflow(
            base
            | {"functions": [{"name": "g", "next": ["end"], "sessionFunction": True, "sessionFunctionParameters": 3}]}
        )


def test_heartbeat_parameters_are_checked() -> None:
    grains = {"beat": 1}
    assert check_heartbeat({}, grains) == ("", "", 0.0)
    assert check_heartbeat({"heartbeat_method": "function", "heartbeat_function": "beat"}, grains) == (
        "function",
        "beat",
        10_000.0,
    )
    with pytest.raises(SessionError, match="heartbeat_method 'pigeon' is not one of"):
        check_heartbeat({"heartbeat_method": "pigeon"}, grains)
    with pytest.raises(SessionError, match="must be a number of milliseconds >= 100"):
        check_heartbeat({"heartbeat_method": "data_layer", "heartbeat_interval_ms": 1}, grains)
    with pytest.raises(SessionError, match="heartbeat_function 'nope' is not a grain of the workflow"):
        check_heartbeat({"heartbeat_method": "function", "heartbeat_function": "nope"}, grains)


def test_slots_bound_the_session_functions_of_a_sandbox(tmp_path: Any) -> None:
    slots = SessionSlots(2, str(tmp_path))
    a, b = slots.claim(), slots.claim()
    with pytest.raises(SessionError, match=r"2 session functions of this application already run on this host"):
        slots.claim()
    os.close(a)  # an instance that ends (however it ends) gives its slot back
    os.close(slots.claim())
    os.close(b)


# ---- the registry
def test_registry_keeps_functions_and_aliases() -> None:
    data = FakeData()
    reg = SessionRegistry(data, "s1")
    reg.add("f1", "worker", "worker", "a1/session.f1")
    reg.add("f2", "worker", "worker", "a1/session.f2")
    assert reg.ids() == ["f1", "f2"] and reg.get("f1")["sandbox"] == socket.gethostname()
    assert reg.get("nope") is None
    assert reg.set_function_alias("f1", "lead") == ""
    assert "in use by session function f1" in reg.set_function_alias("f2", "lead")
    assert reg.with_alias("lead") == "f1" and reg.aliases_by_function() == {"f1": "lead"}
    assert reg.set_session_alias("mine") == "" and reg.session_alias() == "mine"
    assert "in use by session s1" in SessionRegistry(data, "s2").set_session_alias("mine")
    reg.unset_session_alias()
    assert reg.session_alias() is None
    reg.remove("f1")  # leaving takes its alias along
    assert reg.ids() == ["f2"] and reg.with_alias("lead") is None


# ---- the grain API
def test_messages_go_to_running_session_functions_only() -> None:
    data = FakeData()
    SessionRegistry(data, "s1").add("f1", "worker", "worker", "a1/session.f1")
    c = context(data, {"sessionId": "s1"})
    assert c.get_session_id() == "s1" and c.get_all_session_function_ids() == ["f1"]
    c.send_to_running_function_in_session("f1", {"x": 1})
    assert [(q, decode(p)["value"]) for q, p in c.session_messages] == [("a1/session.f1", {"x": 1})]
    now: list[tuple[str, bytes]] = []
    c.publish_now = lambda q, p: now.append((q, p))
    c.send_to_all_running_functions_in_session_with_function_name("worker", "hi", send_now=True)
    c.send_to_all_running_functions_in_session_with_function_name("other", "no one")
    assert [decode(p)["value"] for _, p in now] == ["hi"]
    assert "no session function 'other' runs in session s1: the message went nowhere" in [t for _, _, t in c.logs]
    empty = context(data, {"sessionId": "none"})
    empty.send_to_all_running_functions_in_session("x")
    assert [t for _, _, t in empty.logs] == ["no session function runs in session none: the message went nowhere"]
    with pytest.raises(GrainApiError, match="no session function 'gone' runs in session s1: it ended or never"):
        c.send_to_running_function_in_session("gone", "x")
    with pytest.raises(GrainApiError, match="has the alias 'who'"):
        c.send_to_running_function_in_session_with_alias("who", "x")
    with pytest.raises(GrainApiError, match="must be JSON"):
        c.send_to_running_function_in_session("f1", {1, 2})
    with pytest.raises(GrainApiError, match="must be a non-empty string"):
        c.set_session_alias("")


def test_a_session_function_on_another_host_is_refused() -> None:
    data = FakeData()
    meta = {"grain": "worker", "name": "worker", "sandbox": "elsewhere", "queue": "a1/session.f9"}
    data.put_map_entry("__sand.session.s1.functions", "f9", json.dumps(meta).encode())
    c = context(data, {"sessionId": "s1"})
    with pytest.raises(GrainApiError, match="runs on another host: session messages reach only"):
        c.send_to_running_function_in_session("f9", "x")
    c.send_to_all_running_functions_in_session("x")  # every one: the others get it, this one a warning
    assert c.session_messages == [] and any("another host" in t for _, lvl, t in c.logs if lvl == "WARNING")


def test_alias_summary_as_knix() -> None:
    data = FakeData()
    reg = SessionRegistry(data, "s1")
    reg.add("f1", "worker", "worker", "q1")
    reg.add("f2", "worker", "worker", "q2")
    c = context(data, {"sessionId": "s1"})
    c.set_session_function_alias("al1", "f1")
    c.set_session_function_alias("al-x", "nope")  # not running: a warning, nothing set
    c.set_session_alias("sa")
    assert c.get_alias_summary() == {"session": {"s1": "sa"}, "session_functions": {"f1": "al1", "f2": ""}}
    assert c.get_all_session_function_aliases() == {"al1": "f1"}
    assert c.get_session_function_id_with_alias("al1") == "f1"
    c.unset_session_function_alias("f1")
    c.unset_session_alias()
    assert c.get_alias_summary() == {"session": {"s1": ""}, "session_functions": {"f1": "", "f2": ""}}


# ---- a session function
def test_a_session_function_polls_its_queue_beats_and_stops() -> None:
    bus, data = FakeBus(), FakeData()
    beats: list[Any] = []
    fn = SessionFunction(
        "a1",
        "worker",
        "worker",
        "f1",
        SessionRegistry(data, "s1"),
        {"heartbeat_method": "function", "heartbeat_function": "beat", "heartbeat_interval_ms": 100},
        WF.grains,
        lambda: bus,
        lambda: data,
        lambda b, grain, value: beats.append((grain, value)),
    )
    fn.start()
    assert SessionRegistry(data, "s1").ids() == ["f1"]
    bus.publish(fn.queue, message_payload("config2", "front", "e2"))
    until(lambda: fn.pending.qsize() == 1)
    assert fn.messages(5, block=False) == ["config2"] and fn.messages(1, block=False) == []
    until(lambda: len(beats) >= 2)
    assert beats[0][0] == "beat" and beats[0][1]["session_function_id"] == "f1"
    assert beats[0][1]["action"] == "--heartbeat" and beats[0][1]["session_id"] == "s1"
    update = {"action": "--update-heartbeat", "heartbeat_parameters": {"heartbeat_method": "data_layer"}}
    bus.publish(fn.queue, message_payload(update, "front", "e2"))
    until(lambda: fn.heartbeat[0] == "data_layer")
    until(lambda: "heartbeat_s1_f1" in data.kv)
    bus.publish(fn.queue, message_payload({"action": "--stop"}, "front", "e2"))
    until(lambda: not fn.running)
    assert fn.messages(3, block=True) == []  # a stopped one does not wait
    fn.close()
    assert SessionRegistry(data, "s1").ids() == [] and fn.queue in bus.deleted


def test_blocking_get_waits_for_count_messages() -> None:
    bus, data = FakeBus(), FakeData()
    fn = SessionFunction(
        "a1", "worker", "worker", "f1", SessionRegistry(data, "s1"), {}, WF.grains, lambda: bus, lambda: data, print
    )
    fn.start()

    def later() -> None:
        for i in range(3):
            time.sleep(0.05)
            bus.publish(fn.queue, message_payload({"n": i}, "m", "e"))

    threading.Thread(target=later).start()
    assert fn.messages(3, block=True) == [{"n": 0}, {"n": 1}, {"n": 2}]
    fn.close()


def test_an_instance_of_a_session_function_runs_in_its_session(monkeypatch: Any, tmp_path: Any) -> None:
    monkeypatch.setattr(instance_mod.os, "setpriority", lambda *a: None)
    monkeypatch.setattr("grainworker.session.SLOTS_DIR", str(tmp_path))
    monkeypatch.setattr(instance_mod.SessionSlots.__init__, "__defaults__", (str(tmp_path),))
    bus, data = FakeBus(), FakeData()
    spec = InstanceSpec("a1", "worker", WF, frozenset(WF.grains), 60.0, 30.0, 4)
    seen: dict[str, Any] = {}

    def handler(value: Any, ctx: Any) -> Any:
        seen["fid"] = ctx.get_session_function_id()
        seen["sid"] = ctx.get_session_id()
        while ctx.is_still_running():
            for m in ctx.get_session_update_messages(count=10):
                seen.setdefault("got", []).append(m)
            time.sleep(0.02)
        ctx.send_to_running_function_in_session(seen["fid"], "to itself, after its end: dropped")
        return "done"

    ev = event({"start": 1}, execution="e7", grain="worker")
    t = threading.Thread(
        target=run_instance, args=(encode(ev), spec, handler, bus, lambda: data, None, False, lambda: bus)
    )
    t.start()
    until(lambda: "fid" in seen)
    assert seen["sid"] == "e7" and seen["fid"] == function_id("a1", ev["id"])
    c = context(data, {"sessionId": "e7"})
    c.send_to_all_running_functions_in_session("hello")
    bus.publish_batch(c.session_messages)
    until(lambda: seen.get("got") == ["hello"])
    c.session_messages.clear()
    c.send_to_all_running_functions_in_session({"action": "--stop"})
    bus.publish_batch(c.session_messages)
    t.join(10)
    final = bus.batches[-1]
    assert [q for q, _ in final] == ["__ha__"]  # no message to itself after its end
    report = decode(final[-1][1])
    assert report["status"] == "ok" and [o["grain"] for o in report["outputs"]] == ["end"]
    assert SessionRegistry(data, "e7").ids() == []
    assert any(q == "a1/beat" for b in bus.batches for q, _ in b)  # its heartbeats went to the beat grain


def test_a_session_function_that_cannot_start_answers_why(monkeypatch: Any, tmp_path: Any) -> None:
    monkeypatch.setattr(instance_mod.os, "setpriority", lambda *a: None)
    monkeypatch.setattr(instance_mod.SessionSlots.__init__, "__defaults__", (str(tmp_path),))
    bus, data = FakeBus(), FakeData()
    spec = InstanceSpec("a1", "worker", WF, frozenset(WF.grains), 60.0, 30.0, 1)
    held = SessionSlots(1, str(tmp_path)).claim()  # the one slot is taken
    ran: list[int] = []
    run_instance(
        encode(event(1, grain="worker")), spec, lambda v, c: ran.append(1), bus, lambda: data, None, False, lambda: bus
    )
    os.close(held)
    report = decode(bus.batches[-1][-1][1])
    assert ran == [] and report["status"] == "error"
    err = report["outputs"][0]["value"]["error"]
    assert err["type"] == "SessionError" and "1 session functions of this application already run" in err["message"]
