"""A grain instance: what runs in the process the grain worker forks for one event (paper §4.1).

It decodes the event, calls ``handle(event, context)``, and publishes in ONE atomic batch: the output
events for next grains running on this host (straight into their local queues) and the report to the
host agent's queue LQ_HA (a copy of every output + "this instance finished"). Then the process exits
and the OS reclaims everything it used.
"""

from __future__ import annotations

import io
import os
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport.TTransport import TMemoryBuffer

from grainworker._gen.localbus import LocalBus
from grainworker._gen.localbus.ttypes import Delivery
from grainworker.context import GrainContext
from grainworker.envelope import decode, encode, error_value, grain_trace, inline_trace, is_error, make_event, new_id
from grainworker.localbus import HOST_AGENT_QUEUE, LocalBusError, queue_name
from grainworker.session import SessionError, SessionFunction, SessionRegistry, SessionSlots, function_id, session_id
from grainworker.workflow import DEFAULT_SESSION_FUNCTIONS_MAX, DEFAULT_SESSION_TIMEOUT_S, END, KNIX_DIALECT, Workflow

__all__ = ["InstanceSpec", "failure_batch", "rehearse", "run_instance"]

EXIT_NICE = 19  # an instance that has published its outputs exits at this nice
PUBLISH_RETRY_S = 30.0  # a full queue or quota (backpressure) is retried this long before the instance gives up
_BACKPRESSURE = ("QUEUE_FULL", "QUOTA_EXCEEDED")


@dataclass
class InstanceSpec:
    """What a grain worker knows that its instances need."""

    app: str
    grain: str
    workflow: Workflow
    local_grains: frozenset[str] = field(default_factory=frozenset)
    timeout_s: float = 0.0  # the grain's timeout: the context's remaining time counts down from it (0: unknown)
    session_timeout_s: float = DEFAULT_SESSION_TIMEOUT_S  # a session function's instead (docs/sessions.md)
    session_functions_max: int = DEFAULT_SESSION_FUNCTIONS_MAX  # at once in the sandbox, all grains together

    @property
    def session(self) -> dict[str, Any] | None:
        """The grain's session function parameters; None when it is not a session function."""
        return self.workflow.grain(self.grain).session

    @property
    def instance_timeout_s(self) -> float:
        return self.session_timeout_s if self.session is not None else self.timeout_s

    def queue(self, grain: str) -> str:
        return queue_name(self.app, grain)


def _route(spec: InstanceSpec, outputs: list[dict[str, Any]]) -> list[tuple[str, bytes]]:
    """Deliveries for local next grains; marks each output local or not (the host agent forwards the rest)."""
    deliveries = []
    for ev in outputs:
        local = ev["grain"] != END and ev["grain"] in spec.local_grains
        if local:
            deliveries.append((spec.queue(ev["grain"]), encode(ev)))  # the event itself, before it is marked
        ev["local"] = local
    return deliveries


def _report(
    spec: InstanceSpec,
    event: dict[str, Any],
    status: str,
    outputs: list[dict[str, Any]],
    ctx: GrainContext | None,
    start_ns: int,
    kind: str = "finished",
) -> bytes:
    return encode(
        {
            "type": kind,
            "app": spec.app,
            "grain": spec.grain,
            "execution_id": event.get("execution_id", ""),
            "event_id": event.get("id", ""),
            "frontend": event.get("frontend", ""),
            "status": status,
            "outputs": outputs,
            "data": [list(d) for d in ctx.data_written] if ctx else [],
            "logs": ctx.logs if ctx else [],
            "start_ns": start_ns,
            "end_ns": time.time_ns(),
            # when its event was sent: the host agent's hop latency (sand_hop_duration_seconds)
            "event_sent_ns": event.get("sent_ns", 0) if isinstance(event.get("sent_ns", 0), int) else 0,
            "pid": os.getpid(),
        }
    )


def batch_for(
    spec: InstanceSpec,
    event: dict[str, Any],
    status: str,
    outputs: list[dict[str, Any]],
    ctx: GrainContext | None,
    start_ns: int,
    kind: str = "finished",
) -> list[tuple[str, bytes]]:
    deliveries = _route(spec, outputs)
    deliveries.append((HOST_AGENT_QUEUE, _report(spec, event, status, outputs, ctx, start_ns, kind)))
    return deliveries


def failure_batch(
    spec: InstanceSpec, raw: bytes, kind: str, message: str, status: str = "error"
) -> list[tuple[str, bytes]]:
    """What the worker publishes for an instance that died without publishing (timeout, kill, crash): an error
    event to the workflow's end. ``status`` "lost" (killed from outside) lets the host agent run the event again
    instead of answering with the error (envelope.py)."""
    try:
        event = decode(raw)
    except ValueError:
        event = {}
    outputs = []
    if "execution_id" in event:
        outputs.append(make_event(event, END, error_value(kind, message, spec.grain), spec.grain))
    return batch_for(spec, event, status, outputs, None, time.time_ns())


def publish_with_retry(bus: Any, deliveries: list[tuple[str, bytes]], deadline: float) -> None:
    """Publish atomically; a full queue or a used-up quota is backpressure: wait and retry, never drop."""
    delay = 0.001
    while True:
        try:
            bus.publish_batch(deliveries)
            return
        except LocalBusError as e:
            if e.code not in _BACKPRESSURE or time.monotonic() + delay > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


def _take_output(ctx: GrainContext, out_buf: io.StringIO, err_buf: io.StringIO) -> None:
    """What the grain printed since the last take, as log lines of the instance."""
    for level, buf in (("STDOUT", out_buf), ("STDERR", err_buf)):
        if buf.getvalue():
            ctx.logs.append([time.time_ns(), level, buf.getvalue()])
            buf.seek(0)
            buf.truncate()


def run_instance(
    raw: bytes,
    spec: InstanceSpec,
    handler: Callable[[Any, Any], Any],
    bus: Any,
    data_client: Callable[[], Any],
    polled_ns: int | None = None,
    rehearsal: bool = False,
    bus_factory: Callable[[], Any] | None = None,
) -> None:
    """Handle one event and publish its outputs and report. Never raises for the grain's faults.

    ``polled_ns`` is when the grain worker took the event from the queue (monotonic): with the instance's own
    times it becomes this grain's entry in every output's trace (envelope.TRACE_STEPS)."""
    started = time.monotonic_ns()
    polled = polled_ns or started
    start_ns = time.time_ns()
    try:
        event = decode(raw)
        value = event["value"]
    except (ValueError, KeyError) as e:
        bus.publish_batch(failure_batch(spec, raw, "BadEvent", f"undecodable event: {e}"))
        return

    def send_now(ev: dict[str, Any]) -> None:
        now = time.monotonic_ns()
        ev["trace"].append(grain_trace(spec.grain, polled, started, handler_start, now, now))
        publish_with_retry(
            bus, batch_for(spec, event, "ok", [ev], ctx, start_ns, kind="sent"), time.monotonic() + PUBLISH_RETRY_S
        )

    timeout_s = spec.instance_timeout_s
    deadline = time.monotonic() + timeout_s if timeout_s > 0 else None
    ctx = GrainContext(event, spec.grain, spec.workflow, data_client, send_now, deadline=deadline)
    ctx.publish_now = lambda q, payload: publish_with_retry(bus, [(q, payload)], time.monotonic() + PUBLISH_RETRY_S)

    def flush_logs() -> None:
        """Report the instance's log lines so far, mid-run (before a management call, which may read them)."""
        _take_output(ctx, out_buf, err_buf)
        if ctx.logs:
            report = batch_for(spec, event, "ok", [], ctx, start_ns, kind="sent")
            publish_with_retry(bus, report, time.monotonic() + PUBLISH_RETRY_S)
            ctx.logs.clear()

    ctx.flush_logs = flush_logs
    session_error = ""
    if spec.session is not None and not rehearsal:
        try:
            _start_session(spec, event, ctx, bus_factory, data_client, start_ns)
        except Exception as e:  # noqa: BLE001 - the session function does not start; the caller hears why
            session_error = f"session function {spec.grain} could not start: {e}"
    out_buf, err_buf = io.StringIO(), io.StringIO()
    sys.stdout, sys.stderr = out_buf, err_buf
    status = "ok"
    handler_start = time.monotonic_ns()
    ctx.instance_times = (polled, started, handler_start)  # a fan-out's join records its branch's path (aslrun.py)
    try:
        if session_error:
            raise SessionError(session_error)
        result = handler(value, ctx)
        if is_error(result):
            # A grain may answer with an error value itself: it ends the workflow like an exception.
            status, outputs = "error", [make_event(event, END, result, spec.grain)]
        else:
            outputs = [make_event(event, n, result, spec.grain) for n in spec.workflow.grain(spec.grain).next]
            outputs += [make_event(event, g, v, spec.grain) for g, v in ctx.dynamic_next]
    except BaseException as e:  # noqa: BLE001 - a grain's failure of any kind becomes an error event
        status = "error"
        outputs = [make_event(event, END, error_value(type(e).__name__, str(e) or repr(e), spec.grain), spec.grain)]
        ctx.log("".join(traceback.format_exception(e)), "ERROR")
    finally:
        handler_end = time.monotonic_ns()
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        if ctx.session_function is not None:
            ctx.session_function.close()  # it leaves its session before its outputs go (KNIX's order)
            own = ctx.session_function.queue  # what it sent itself would wait in a queue nobody polls
            ctx.session_messages = [m for m in ctx.session_messages if m[0] != own]
        _take_output(ctx, out_buf, err_buf)
    # a native workflow through the KNIX door: an error stops the execution, as on KNIX (ASL machines keep their
    # joins' bookkeeping whole: their errors are the machine's, grainworker/aslrun.py)
    if spec.workflow.dialect == KNIX_DIALECT and spec.workflow.asl is None:
        from grainworker import knix_stop

        outputs = knix_stop.apply(ctx, event["execution_id"], status, outputs)
    published = time.monotonic_ns()
    entries = [grain_trace(spec.grain, polled, started, handler_start, handler_end, published)]
    entries += [inline_trace(g, published) for g in ctx.ran_inline]  # ASL states it ran besides its own
    for ev in outputs:
        if ctx.trace_override is not None:  # a join: every branch's path, not only the last one's (aslrun.py)
            ev["trace"] = list(ctx.trace_override)
        ev["trace"].extend(entries)
    try:
        deliveries = batch_for(spec, event, status, outputs, ctx, start_ns) + ctx.session_messages
    except (TypeError, ValueError) as e:
        err = error_value("BadOutput", f"output is not JSON-serialisable: {e}", spec.grain)
        deliveries = batch_for(spec, event, "error", [make_event(event, END, err, spec.grain)], ctx, start_ns)
    publish_with_retry(bus, deliveries, time.monotonic() + PUBLISH_RETRY_S)
    # What is left (closing connections, the process's exit and the kernel's teardown of its memory, ~0.7 ms
    # here) is nobody's critical path: leave the CPU to the next grain, which was just handed the outputs.
    if not rehearsal:
        os.setpriority(os.PRIO_PROCESS, 0, EXIT_NICE)  # raising one's own nice needs no privilege
    ctx.close()


def _start_session(
    spec: InstanceSpec,
    event: dict[str, Any],
    ctx: GrainContext,
    bus_factory: Callable[[], Any] | None,
    data_client: Callable[[], Any],
    start_ns: int,
) -> None:
    """Make this instance a session function: a slot, a place in its session, a helper thread on its own queue."""
    if bus_factory is None:
        raise SessionError("no bus connection for the session's helper (the grain worker passes one)")
    params = spec.session or {}
    slot = SessionSlots(spec.session_functions_max).claim()  # kept open (locked) until the process ends

    def send(helper_bus: Any, grain: str, value: Any) -> None:
        ev = make_event(event, grain, value, spec.grain)
        publish_with_retry(
            helper_bus, batch_for(spec, event, "ok", [ev], None, start_ns, kind="sent"), time.monotonic() + 5
        )

    grain = spec.workflow.grain(spec.grain)
    registry = SessionRegistry(ctx._dl(), session_id(event.get("value"), event.get("execution_id", "")))
    fn = SessionFunction(
        spec.app,
        spec.grain,
        grain.asl.name if grain.asl is not None else spec.grain,
        function_id(spec.app, str(event.get("id", ""))),
        registry,
        params,
        spec.workflow.grains,
        bus_factory,
        data_client,
        send,
    )
    fn.start()
    fn.slot = slot
    ctx.session_function = fn


class _RehearsalBus:
    """Encodes what it is given to publish as the bus client would, into memory, and sends nothing."""

    def __init__(self) -> None:
        self._client = LocalBus.Client(TBinaryProtocolAccelerated(TMemoryBuffer()))

    def publish_batch(self, deliveries: list[tuple[str, bytes]]) -> None:
        self._client.send_publishBatch("rehearsal", [Delivery(queue=q, payload=p) for q, p in deliveries])


def _no_data_layer() -> Any:
    raise RuntimeError("a rehearsal has no data layer")


def rehearse(spec: InstanceSpec) -> None:
    """Run the platform's part of an instance (decode, context, outputs, trace, report, encoding the publish) on a
    made-up event, with no handler, no bus and no data layer: in a pre-forked standby, while it waits. Every page
    that path writes is then this process's own before the event comes: an instance paid ~210 copy-on-write and
    first-touch page faults on its path (~1 ms on a VM) where the standby pays them ahead (docs/host-agent.md)."""
    event = {
        "id": new_id(),
        "execution_id": new_id(),
        "app": spec.app,
        "grain": spec.grain,
        "from": "",
        "frontend": "rehearsal",
        "value": {"rehearsal": [1, 2.5, "text", None, True]},
        "sent_ns": time.time_ns(),
        "tag": "",
        "trace": [["frontend", "rehearsal", time.monotonic_ns()]],
    }
    run_instance(
        encode(event),
        spec,
        lambda value, context: value,
        _RehearsalBus(),
        _no_data_layer,
        time.monotonic_ns(),
        rehearsal=True,
    )
