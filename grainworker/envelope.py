"""The event envelope and the host agent report: the JSON every grain instance reads and writes.

Event (on a grain's local queue, in Kafka, and in LQ_HA reports)::

    {"id": "<event id>", "execution_id": "<id of the request>", "app": "<application>",
     "grain": "<destination grain or 'end'>", "from": "<producing grain, '' = frontend>",
     "frontend": "<frontend whose response topic gets the result>", "value": <payload>,
     "sent_ns": <wall clock ns when produced>, "tag": "<execution tag>", "trace": [[hop, where, ns...], ...]}

The tag is the frontend's proof that the execution entered through this application (an HMAC the host
agent and frontend check, docs/security.md); every event of the execution carries it unchanged. The trace
is the per-hop timeline (monotonic ns, ``TRACE_STEPS``): an output inherits its input's trace plus the entry
of the grain that produced it (and one per ASL state its instance ran inline, ``inline_trace``). Java's side is
contracts/.../Event.java and Trace.java; both are tested against the examples in contracts/src/test/resources/envelope.

Report (on LQ_HA, one per grain instance, in the same atomic batch as its outputs)::

    {"type": "finished", "app", "grain", "execution_id", "event_id": <the handled event's id>,
     "frontend", "status": "ok" | "error" | "lost", "outputs": [<event> + {"local": bool}, ...],
     "data": [[kind, name], ...], "logs": [[ns, level, text], ...], "start_ns", "end_ns", "event_sent_ns", "pid"}

``"type": "sent"`` reports carry events a grain sent during its run (``send_to_function_now``).
``"status": "lost"`` is the grain worker's report of an instance killed by SIGKILL from outside (not for its
timeout): its one output is the error event, which the host agent sends only once it stops re-running the
event (docs/host-agent.md, "Lost instances"). A re-delivered event carries ``"attempt": n`` (its n-th run).
A supervisor's ``{"type": "worker", "app", "grain", "state", "message"}`` says how a grain worker is doing:
``crash-looping``, ``running`` again, or ``exited`` (it died; what it had taken is re-delivered).
An error is an ordinary event to ``end`` whose value is ``{"error": {"type", "message", "grain"}}``.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

__all__ = [
    "TRACE_STEPS",
    "decode",
    "encode",
    "error_value",
    "grain_trace",
    "inline_trace",
    "is_error",
    "make_event",
    "new_id",
]

# The hops of a trace and the name of each of their times, in order (contracts/.../Trace.java, the same).
TRACE_STEPS: dict[str, tuple[str, ...]] = {
    "trigger": ("event fired",),
    "frontend": ("request received",),
    "agent.in": ("event taken", "event queued"),
    "grain": ("worker polled", "instance started", "handler started", "handler ended", "outputs published"),
    "agent.out": ("report taken", "result sent"),
    "frontend.out": ("result received", "reply sent"),
}

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def new_id() -> str:
    return os.urandom(16).hex()


def encode(obj: dict[str, Any]) -> bytes:
    """Compact JSON; raises TypeError/ValueError for what JSON cannot carry."""
    return _dumps(obj).encode()


def decode(data: bytes) -> dict[str, Any]:
    obj = json.loads(data)
    if not isinstance(obj, dict):
        raise ValueError("an event must be a JSON object")
    return obj


def grain_trace(
    grain: str, polled: int, started: int, handler_start: int, handler_end: int, published: int
) -> list[Any]:
    """The trace entry of one grain instance (its times in monotonic ns)."""
    return ["grain", grain, polled, started, handler_start, handler_end, published]


def inline_trace(grain: str, at: int) -> list[Any]:
    """The trace entry of an ASL state another grain's instance ran inline (aslrun.py: no hop of its own). It follows
    that instance's entry, every time its "outputs published" (``at``): the timeline stays in order and shows where
    the state ran; the state's time is in that instance's handler time."""
    return grain_trace(grain, at, at, at, at, at)


def make_event(
    source: dict[str, Any], grain: str, value: Any, producer: str, trace: list[Any] | None = None
) -> dict[str, Any]:
    """A new event for ``grain`` in the same execution as ``source`` (the event being handled); its trace is
    the source's plus ``trace`` (this instance's entry), when given."""
    path = source.get("trace")
    path = list(path) if isinstance(path, list) else []
    if trace is not None:
        path.append(trace)
    return {
        "id": new_id(),
        "execution_id": source["execution_id"],
        "app": source["app"],
        "grain": grain,
        "from": producer,
        "frontend": source.get("frontend", ""),
        "value": value,
        "sent_ns": time.time_ns(),
        "tag": source.get("tag", ""),
        "trace": path,
    }


def error_value(kind: str, message: str, grain: str) -> dict[str, Any]:
    return {"error": {"type": kind, "message": message, "grain": grain}}


def is_error(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"error"} and isinstance(value["error"], dict)
