"""Sessions (docs/sessions.md) on the real system: session functions that stay alive in their sandbox, take messages
through their own local queue, send heartbeats, leave their session when stopped; and the bounds: a message to a
session function that is not running, one session function more than session_functions_max, one that never ends
(killed at session_timeout_s and taken out of its session).

Needs `make up` (nginx, frontends, a host agent, Kafka, Cassandra, Docker)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.e2e.api import Http, put_app, raw_remove, sign_up

FRONT = """
def handle(event, context):
    action = event["action"]
    if action in ("start", "start-only"):
        for i in range(event.get("n", 1)):
            context.add_workflow_next("worker", {"hang": event.get("hang", False), "i": i})
        if action == "start":
            context.add_workflow_next("end", context.get_session_id())
        return None
    if action == "info":
        context.add_workflow_next("end", sorted(context.get_all_session_function_ids()))
    elif action == "send":
        context.send_to_running_function_in_session(event["to"], event["msg"], send_now=True)
        context.add_workflow_next("end", "sent")
    elif action == "stop":
        context.send_to_all_running_functions_in_session({"action": "--stop"})
        context.add_workflow_next("end", "stopping")
    elif action == "get":
        context.add_workflow_next("end", context.get(event["key"]))
    return None
"""
WORKER = """
import time


def handle(event, context):
    fid = context.get_session_function_id()
    while event["hang"] or context.is_still_running():
        for msg in context.get_session_update_messages(count=10):
            context.put("got-" + fid, str(msg))
        time.sleep(0.2)
    return "worker " + fid + " ended"
"""
BEAT = """
def handle(event, context):
    context.put("beat-" + event["session_function_id"], str(event["timestamp"]))
"""


@pytest.fixture(scope="module")
def key(http: Http) -> str:
    return sign_up(http, f"sess-{uuid.uuid4().hex[:8]}")


@pytest.fixture(scope="module")
def app(http: Http, key: str) -> Iterator[str]:
    name = f"sess-{uuid.uuid4().hex[:8]}"
    s = uuid.uuid4().hex[:6]
    front, worker, beat = f"front{s}", f"worker{s}", f"beat{s}"
    functions = [
        {"name": "front", "resource": front, "next": [], "potentialNext": ["worker", "end"]},
        {
            "name": "worker",
            "resource": worker,
            "sessionFunction": True,
            "sessionFunctionParameters": {
                "heartbeat_method": "function",
                "heartbeat_function": "beat",
                "heartbeat_interval_ms": 500,
            },
            "next": ["end"],
        },
        {"name": "beat", "resource": beat, "next": []},
    ]
    settings = {"session_timeout_s": 15, "session_functions_max": 2}
    got = put_app(http, key, name, functions, {front: FRONT, worker: WORKER, beat: BEAT}, settings)
    assert got["status"] == "deployed", got
    yield name
    raw_remove(http, key, name)


def call(http: Http, app: str, body: dict[str, Any]) -> Any:
    r = http("POST", f"/app/{app}", json_body=body, timeout=60)
    assert r.status_code in (200, 500), r.text
    return r.json()


def until(what: Callable[[], Any], ok: Callable[[Any], bool], timeout: float = 20) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = what()
        if ok(got) or time.monotonic() > deadline:
            return got
        time.sleep(0.5)


def test_session_functions_take_messages_beat_and_stop(http: Http, app: str) -> None:
    sid = call(http, app, {"action": "start", "n": 2})
    assert isinstance(sid, str) and len(sid) == 32, sid
    ids = until(lambda: call(http, app, {"action": "info", "sessionId": sid}), lambda g: len(g) == 2)
    assert len(ids) == 2, ids
    assert call(http, app, {"action": "send", "sessionId": sid, "to": ids[0], "msg": "config2"}) == "sent"
    got = until(lambda: call(http, app, {"action": "get", "key": f"got-{ids[0]}"}), lambda g: g is not None)
    assert got == "config2"
    for fid in ids:  # each one's heartbeats reach the beat grain
        assert until(lambda f=fid: call(http, app, {"action": "get", "key": f"beat-{f}"}), lambda g: g is not None)

    # one more than session_functions_max (2) does not start, and says why
    over = call(http, app, {"action": "start-only"})
    assert over["error"]["type"] == "SessionError", over
    assert "2 session functions of this application already run on this host" in over["error"]["message"]

    # a message to a session function that is not running: a clear error, nothing queued
    bad = call(http, app, {"action": "send", "sessionId": sid, "to": "f" * 32, "msg": "x"})
    assert "no session function 'ffffffffffffffffffffffffffffffff' runs in session" in bad["error"]["message"]

    assert call(http, app, {"action": "stop", "sessionId": sid}) == "stopping"
    left = until(lambda: call(http, app, {"action": "info", "sessionId": sid}), lambda g: g == [])
    assert left == []


def test_a_session_function_that_never_ends_is_killed_at_its_timeout(http: Http, app: str) -> None:
    started = time.monotonic()
    out = call(http, app, {"action": "start-only", "hang": True})  # answers when the worker is killed
    assert out["error"]["type"] == "Timeout", out
    assert "ran past session_timeout_s (15s) and was killed" in out["error"]["message"]
    assert 14 <= time.monotonic() - started < 45
