"""Amazon States Language states as grains (docs/workflows.md): the handler a state's grain worker runs.

SAND's idea kept: no orchestrator. Each state of the machine is a grain; its instance does what the state says
(grainworker/asl.py: paths, templates, Choice rules, Retry and Catch) and hands its output to the next state's grain
over the local bus (``context.add_workflow_next``), or to ``end``. A Task's grain runs the uploaded grain its Resource
names, retrying in the same instance as its Retry says. Parallel and Map fan out to the first grain of each branch
(or of the iterator, per item) and join through the data layer: each branch's last state writes its output into a
map of the execution and counts itself done; the branch that makes the count complete assembles the results, in
branch (or item) order, and goes on as the Parallel or Map state. Errors of a branch are the Parallel's (or Map's),
as are those of its own input and output processing: its Retry and Catch apply.

The join is race-free because each branch instance touches the fan-out's data layer items (results, items, counters)
only before one last atomic add to the fan-out's counter, its arrival, and every branch arrives exactly once, failed
or not: a failing branch adds ``FAILED`` too, and an item a Map's MaxConcurrency held back is claimed by exactly one
arriving branch, which sends it or, once the Map failed, arrives for it. So the arrival that completes the count is the
last access: that instance, and only it, deletes the fan-out's items (issue 26: a late item used to find the counters
deleted by the one that went on).

States other than Task and Wait do not hop (issue 27): the instance that reaches a Pass, Choice, Succeed or Fail
runs it itself, and the one after it (at most ``MAX_INLINE`` in a row: a loop of them hops then, as every state
did); the instance that reaches a Parallel or Map fans it out itself, publishing the branch-start events. So an
event is published only where a Task or Wait runs, where a branch starts, or where the machine ends. Nothing of a
fan-out depends on the instance that did it: its data layer names are the execution's and a fresh id's (``_key``),
its state travels in the branches' frames, and any instance may fan out again (a Retry, from a branch's). Every way
a state leaves for the next one (its Next, a Choice's pick, a Catch's Next, a join going on as its Parallel or Map)
returns a ``_Next``, which ``_Run.run`` either runs here or sends. The grains of those states stay: an event still
reaches them as a machine's or branch's first state, or when a loop used up the inline steps. The states an instance
ran inline follow its own entry in its outputs' trace (``context.ran_inline``, instance.py). A join carries every
branch's part of the trace on, not only its own (``_merge_traces``, issue 29: the execution's timeline shows every
branch and item); each branch writes its part beside its result.

Between states the value travels wrapped, ``{"__sand_asl__": {"frames": [...], "ctx": {...}}, "input": data}``:
the frames say which Parallel or Map branches the event is in (innermost last), ``ctx`` what the context object
``$$`` needs. A value without the wrapper is a request's input: the machine's start.
"""

from __future__ import annotations

import copy
import json
import os
import signal
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from grainworker import asl, asl_knix
from grainworker.asl_text import show
from grainworker.envelope import grain_trace, inline_trace
from grainworker.workflow import END, AslState, Workflow

__all__ = ["MARK", "MAX_INLINE", "make_handler"]

MARK = "__sand_asl__"
FAILED = 1 << 32  # what a failing branch adds to its fan-out's count of arrivals (far above any branch count)
MAX_TRACE = 1000  # entries of a merged fan-out timeline (_merge_traces): an execution's trace stays bounded
MAX_INLINE = 1000  # states one instance runs inline in a row; then it hops (a loop of Pass and Choice states)
# The states run where they are reached: those that do no work, and the fan-outs (their work is the branches').
INLINE = frozenset({"Pass", "Choice", "Succeed", "Fail", "Parallel", "Map"})

Handler = Callable[[Any, Any], Any]


def _unwrap(value: Any) -> tuple[Any, list[dict[str, Any]], dict[str, Any] | None]:
    if isinstance(value, dict) and set(value) == {MARK, "input"} and isinstance(value[MARK], dict):
        meta = value[MARK]
        return value["input"], list(meta.get("frames", [])), meta.get("ctx")
    return value, [], None


def _wrap(data: Any, frames: list[dict[str, Any]], ctx: dict[str, Any]) -> dict[str, Any]:
    return {MARK: {"frames": frames, "ctx": ctx}, "input": data}


class _Next(NamedTuple):
    """A handover to the next state: its grain and what it gets (``_Run.run`` runs it here or sends it)."""

    grain: str
    data: Any
    frames: list[dict[str, Any]]
    ctx: dict[str, Any]


class _Timeout(Exception):
    pass


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Timeout()


def _error_name(e: BaseException) -> tuple[str, str]:
    if isinstance(e, asl.AslRuntimeError):
        return e.error, e.cause
    if isinstance(e, _Timeout):
        return "States.Timeout", "the task ran longer than its TimeoutSeconds"
    return type(e).__name__, str(e) or repr(e)


class _Run:
    """One event at one state: what the grain instance does with it."""

    def __init__(
        self, workflow: Workflow, grain: str, st: AslState, context: Any, raw: Any, task: Handler | None
    ) -> None:
        self.workflow = workflow
        self.grain = grain
        self.st = st
        self.context = context
        self.task = task
        # Only another state's grain hands over a wrapped value: a request's body is the machine's input as it is,
        # whatever it looks like (a caller cannot pose as a branch of a Parallel and skip states).
        self.data, self.frames, ctx = _unwrap(raw) if context.get_sender() else (raw, [], None)
        self.ctx = ctx or {"input": self.data, "start": _now_iso()}
        self.knix = asl_knix.is_knix(workflow.asl)  # KNIX's dialect (grainworker/asl_knix.py)

    # ---- the context object ($$)
    def context_object(self, extra: dict[str, Any] | None = None, state: AslState | None = None) -> dict[str, Any]:
        """``$$`` at ``state`` (this event's state by default; a fan-out's own where a branch's instance works for
        its Parallel or Map: a join, a Retry, a held-back item)."""
        c: dict[str, Any] = {
            "Execution": {
                "Id": self.context.get_execution_id(),
                "Input": self.ctx.get("input"),
                "StartTime": self.ctx.get("start"),
            },
            "State": {"Name": (state or self.st).name, "EnteredTime": _now_iso()},
            "StateMachine": {"Id": self.workflow.name},
        }
        if extra:
            c.update(extra)
        return c

    # ---- routing
    def send(self, grain: str, data: Any, frames: list[dict[str, Any]], ctx: dict[str, Any]) -> None:
        self.context.add_workflow_next(grain, _wrap(data, frames, ctx))

    def go(self, state: AslState, data: Any, frames: list[dict[str, Any]], ctx: dict[str, Any]) -> Any:
        """After ``state`` produced ``data``: its Next, or the end of its machine."""
        nxt = state.state.get("Next")
        if nxt is not None and state.state.get("Type") not in ("Succeed", "Fail"):
            return _Next(state.names[nxt], data, frames, ctx)
        if not state.state.get("End") and "PotentialNext" in state.state:
            return None  # KNIX's Task with neither: it goes on only where its code sent (add_workflow_next)
        return self.finish(data, frames, ctx)

    def finish(self, data: Any, frames: list[dict[str, Any]], ctx: dict[str, Any]) -> Any:
        """The end of a machine: the workflow's output, or one branch of a Parallel or Map done."""
        if not frames:
            self.context.add_workflow_next(END, data)
            return None
        return self.join(data, frames)

    # ---- errors
    def fail(self, error: str, cause: str, frames: list[dict[str, Any]]) -> Any:
        """An error no Catch of this state took: the enclosing Parallel or Map fails with it (its Retry, then its
        Catch, apply), or the workflow does."""
        if not frames:
            return {"error": {"type": error, "message": cause, "grain": self.grain}}
        frame = frames[-1]
        key = _key(self.context, frame)
        failures, _ = self.arrive(key, frame, FAILED + 1 + self.next_item(frame, frames, True))
        if failures != 1:
            return None  # another branch failed first: its error is the Parallel's
        parent = self.workflow.grain(frame["grain"]).asl
        assert parent is not None
        return self.fan_out_failed(
            parent, frame["input"], error, cause, frames[:-1], frame["ctx"], frame.get("attempts", {})
        )

    def fan_out_failed(
        self,
        state: AslState,
        data: Any,
        error: str,
        cause: str,
        frames: list[dict[str, Any]],
        ctx: dict[str, Any],
        attempts: dict[str, int],
    ) -> Any:
        """A Parallel or Map failed (a branch, its input or its output): its Retry runs it all again, here, or its
        Catch goes on, or the error is the enclosing state's."""
        counts = {int(k): v for k, v in attempts.items()}
        delay = asl.retry_delay(state.state.get("Retry", []), error, counts)
        if delay is not None:
            time.sleep(delay)
            return self.fan_out(state, data, frames, ctx, {str(k): v for k, v in counts.items()})
        return self.catch_or_fail(state, data, error, cause, frames, ctx)

    def catch_or_fail(
        self, state: AslState, data: Any, error: str, cause: str, frames: list[dict[str, Any]], ctx: dict[str, Any]
    ) -> Any:
        catcher = asl.find_catcher(state.state.get("Catch", []), error)
        if catcher is None:
            return self.fail(error, cause, frames)
        out = asl.apply_result_path(data, catcher.get("ResultPath", "$"), asl.error_output(error, cause))
        return _Next(state.names[catcher["Next"]], out, frames, ctx)

    # ---- the states
    def run(self) -> Any:
        """This event's state, then the states after it that do no work, here; the first that does (or the
        ``MAX_INLINE``-th in a row) gets an event. None, or the workflow's error value."""
        out = self.run_state(self.data, self.frames, self.ctx)
        inlined = 0
        while isinstance(out, _Next):
            st = self.workflow.grain(out.grain).asl
            assert st is not None
            if st.state.get("Type") not in INLINE or inlined >= MAX_INLINE:
                self.send(*out)
                return None
            inlined += 1
            self.grain, self.st, self.ctx = out.grain, st, out.ctx
            ran = getattr(self.context, "ran_inline", None)  # the trace shows it (instance.py)
            if isinstance(ran, list):
                ran.append(out.grain)
            out = self.run_state(out.data, out.frames, out.ctx)
        return out

    def run_state(self, data: Any, frames: list[dict[str, Any]], ctx: dict[str, Any]) -> Any:
        """The state ``self.st`` on ``data``: None, a ``_Next``, or the workflow's error value."""
        st = self.st.state
        kind = st["Type"]
        try:
            if kind == "Task":
                return self.run_task_knix() if self.knix else self.run_task({})
            if kind in ("Parallel", "Map"):
                return self.fan_out(self.st, data, frames, ctx, {})
            eff = asl.state_input(st, data, self.context_object())
            if kind == "Pass":
                result = copy.deepcopy(st["Result"]) if "Result" in st else eff  # no JSON copy between states now
                output = asl_knix.task_output if self.knix else asl.state_output  # KNIX's ResultPath, or the spec's
                return self.go(self.st, output(st, data, result, self.context_object()), frames, ctx)
            if kind == "Choice":
                nxt = asl.choose(st, eff, self.context_object())
                if nxt is None:
                    return self.fail(
                        "States.NoChoiceMatched",
                        f"no Choice Rule of {show(self.st.name)} matched and it has no Default",
                        frames,
                    )
                return _Next(self.st.names[nxt], asl.state_output(st, data, eff, self.context_object()), frames, ctx)
            if kind == "Wait":
                pause = asl.wait_until(st, eff, time.time()) - time.time()
                if pause > 0:
                    time.sleep(pause)
                return self.go(self.st, asl.state_output(st, data, eff, self.context_object()), frames, ctx)
            if kind == "Succeed":
                return self.finish(asl.state_output(st, data, eff, self.context_object()), frames, ctx)
            if kind == "Fail" and self.knix:  # KNIX answers with the Fail state's input
                return self.finish(data, frames, ctx)
            if kind == "Fail":
                co = self.context_object()
                return self.fail(asl.fail_field(st, "Error", data, co), asl.fail_field(st, "Cause", data, co), frames)
            return self.fail("States.Runtime", f"unknown state type {show(kind)}", frames)
        except asl.AslRuntimeError as e:  # a path that is not there, a template that does not apply, ...
            return self.fail(e.error, e.cause, frames)

    def run_task(self, attempts: dict[int, int]) -> Any:
        st = self.st.state
        co = self.context_object()
        while True:
            try:
                eff = asl.state_input(st, self.data, co)
                timeout = (
                    asl.get_path(self.data, st["TimeoutSecondsPath"], co)
                    if "TimeoutSecondsPath" in st
                    else st.get("TimeoutSeconds")
                )
                result = self._call_task(eff, timeout)
                out = asl.state_output(st, self.data, result, co)
            except Exception as e:  # noqa: BLE001 - the task's error is the state's: Retry and Catch decide
                error, cause = _error_name(e)
                self.context.log(f"state {self.st.name}: {error}: {cause}", "ERROR")
            else:  # what comes after the task (a join's data layer calls) is not the task's: no Retry or Catch of it
                return self.go(self.st, out, self.frames, self.ctx)
            delay = asl.retry_delay(st.get("Retry", []), error, attempts)
            if delay is None:
                return self.catch_or_fail(self.st, self.data, error, cause, self.frames, self.ctx)
            time.sleep(delay)

    def run_task_knix(self) -> Any:
        """A Task as KNIX's function worker runs it (grainworker/asl_knix.py): Retry runs it again at once and then
        goes on with the error as its result; a matching Catch goes on by the state's own Next with the error at
        the catcher's ResultPath."""
        st = self.st.state
        co = self.context_object()
        retriers, catchers = st.get("Retry", []), st.get("Catch", [])
        eff = None
        try:
            eff = asl.state_input(st, self.data, co)
            result = self._call_task(eff, st.get("TimeoutSeconds"))
        except Exception as e:  # noqa: BLE001 - the task's error: KNIX's Retry and Catch decide
            error, cause = _error_name(e)
            message = str(e)
            self.context.log(f"state {self.st.name}: {error}: {cause}", "ERROR")
            if retriers and eff is not None:
                result = asl_knix.retry_result(message)
                for _ in range(asl_knix.retry_attempts(retriers, error, message)):
                    try:
                        result = self._call_task(eff, st.get("TimeoutSeconds"))
                        break
                    except Exception as again:  # noqa: BLE001 - counted as an attempt, as KNIX does
                        self.context.log(f"state {self.st.name}: retry: {_error_name(again)[0]}: {again}", "ERROR")
                return self.go(self.st, asl_knix.task_output(st, self.data, result, co), self.frames, self.ctx)
            caught = asl_knix.catch_result(catchers, error, message) if catchers else None
            if caught is None:
                return self.fail(error, cause, self.frames)
            catcher, result = caught
            # KNIX puts the catcher's ResultPath ("$" if it has none) in the state's place
            placed = {**st, "ResultPath": catcher.get("ResultPath", "$")}
            placed.pop("ResultSelector", None)
            return self.go(self.st, asl_knix.task_output(placed, self.data, result, co), self.frames, self.ctx)
        try:
            out = asl_knix.task_output(st, self.data, result, co)
        except asl.AslRuntimeError as e:
            return self.fail(e.error, e.cause, self.frames)
        return self.go(self.st, out, self.frames, self.ctx)

    def _call_task(self, eff: Any, timeout: Any) -> Any:
        assert self.task is not None
        if not timeout:
            return self.task(eff, self.context)
        old = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, float(timeout))
        try:
            return self.task(eff, self.context)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)

    def fan_out(
        self, state: AslState, data: Any, frames: list[dict[str, Any]], ctx: dict[str, Any], attempts: dict[str, int]
    ) -> Any:
        """A Parallel's branches, or a Map's items, each to the first grain of its machine."""
        st = state.state
        co = self.context_object(state=state)
        frame: dict[str, Any] = {
            "id": os.urandom(8).hex(),
            "grain": state.names[state.name],
            "input": data,
            "ctx": ctx,
            "attempts": attempts,
        }
        key = _key(self.context, frame)
        ran = getattr(self.context, "ran_inline", None)
        # Where the branches' traces part from the fan-out's: its instance's input trace, own entry and inlined states.
        frame["trace_at"] = len(_event_trace(self.context)) + 1 + (len(ran) if isinstance(ran, list) else 0)
        try:  # the state's input processing: its errors are the state's (Retry, Catch), as a branch's are
            eff = asl.state_input(st, data, co)  # a Map's Parameters are its ItemSelector: not applied here
            if st["Type"] == "Map":
                items = asl.get_path(eff, st.get("ItemsPath", "$"), co)
                if not isinstance(items, list):
                    raise asl.AslRuntimeError(
                        "States.Runtime",
                        f"ItemsPath of Map state '{state.name}' selects {type(items).__name__}, not a list",
                    )
                limit = _limit(st, eff, co)
                if self.knix and "Parameters" in st:
                    asl_knix.check_map_parameters(st["Parameters"])
        except asl.AslRuntimeError as e:
            return self.fan_out_failed(state, data, e.error, e.cause, frames, ctx, attempts)
        if st["Type"] == "Parallel":
            frame |= {"kind": "parallel", "count": len(state.nested)}
            if self.knix and "WaitForNumBranches" in st:  # KNIX goes on once per count (asl_knix.py)
                frame["wait"] = sorted(st["WaitForNumBranches"])
            self.context.createCounter(key, 0)  # the branches' arrivals (SAND's counters exist once created)
            if "wait" in frame:
                self.context.createCounter(key + ".done", 0)  # who has read the results (arrive)
            for i, first in enumerate(state.nested):
                self.send(first, eff, [*frames, frame | {"index": i}], ctx)
            return None
        frame |= {"kind": "map", "count": len(items)}
        if not items:  # nothing to fan out: the Map's output at once
            try:
                out = asl_knix.map_output(st, [], co) if self.knix else asl.state_output(st, data, [], co)
            except asl.AslRuntimeError as e:
                return self.fan_out_failed(state, data, e.error, e.cause, frames, ctx, attempts)
            return self.go(state, out, frames, ctx)
        at_once = len(items) if limit <= 0 else min(limit, len(items))
        if at_once < len(items):  # the rest are sent as items finish (join): keep them, and the Map's input
            for i, item in enumerate(items[at_once:], at_once):
                self.context.putMapEntry(key + ".items", str(i), json.dumps(item))
            self.context.createCounter(key + ".next", at_once)  # the next item to send
            frame["eff"] = eff
        self.context.createCounter(key, 0)  # the items' arrivals
        for i in range(at_once):
            self.send_item(state, frame, frames, ctx, eff, i, items[i])
        return None

    def send_item(
        self,
        state: AslState,
        frame: dict[str, Any],
        frames: list[dict[str, Any]],
        ctx: dict[str, Any],
        eff: Any,
        index: int,
        item: Any,
    ) -> None:
        st = state.state
        template = st.get("ItemSelector", st.get("Parameters"))
        co = self.context_object({"Map": {"Item": {"Index": index, "Value": item}}}, state)
        if template is None:
            value = item
        elif self.knix and "Parameters" in st:  # KNIX's Map Parameters (asl_knix.map_item)
            value = asl_knix.map_item(template, eff, item, index, co)
        else:
            value = asl.apply_template(template, eff, co)
        self.send(state.nested[0], value, [*frames, frame | {"index": index}], ctx)

    def join(self, data: Any, frames: list[dict[str, Any]]) -> Any:
        """One branch (or item) of the innermost Parallel (or Map) is done; the last one goes on as that state."""
        frame = frames[-1]
        key = _key(self.context, frame)
        failed = _counter(self.context, key) >= FAILED
        if not failed:  # else the Parallel failed already (its error went on): this branch's output is dropped
            self.context.putMapEntry(key, str(frame["index"]), json.dumps(data))
        if "trace_at" in frame:  # this branch's own path, for the timeline of the instance that goes on (_merge_traces)
            own = _branch_trace(self.context)[int(frame["trace_at"]) :][
                :MAX_TRACE
            ]  # the fan-out's path is the joiner's
            self.context.putMapEntry(key + ".trace", str(frame["index"]), json.dumps(own))
        _, results = self.arrive(key, frame, 1 + self.next_item(frame, frames, failed))
        if results is None:  # branches still to arrive, or the Parallel failed
            return None
        parent = self.workflow.grain(frame["grain"]).asl
        assert parent is not None
        outer = frames[:-1]
        co = self.context_object(state=parent)
        try:
            if self.knix and parent.state["Type"] == "Map":  # KNIX's Map output: the results alone
                out = asl_knix.map_output(parent.state, results, co)
            else:
                out = asl.state_output(parent.state, frame["input"], results, co)
        except asl.AslRuntimeError as e:  # its ResultSelector, ResultPath or OutputPath: the state's error
            return self.fan_out_failed(
                parent, frame["input"], e.error, e.cause, outer, frame["ctx"], frame.get("attempts", {})
            )
        return self.go(parent, out, outer, frame["ctx"])

    def next_item(self, frame: dict[str, Any], frames: list[dict[str, Any]], failed: bool) -> int:
        """For a Map with MaxConcurrency: claim the next item not yet sent and send it. Once the Map failed, claim
        all the items not yet sent instead, and return how many: this branch arrives for them too."""
        if "eff" not in frame:
            return 0
        key, count = _key(self.context, frame), int(frame["count"])
        if failed:
            return max(0, count - (int(self.context.incrementCounter(key + ".next", count)) - count))
        nxt = self.context.incrementCounter(key + ".next", 1) - 1
        if nxt >= count:
            return 0
        if _counter(self.context, key) >= FAILED:
            return 1 + self.next_item(frame, frames, True)
        item = json.loads(self.context.getMapEntry(key + ".items", str(nxt)))
        parent = self.workflow.grain(frame["grain"]).asl
        assert parent is not None
        self.send_item(
            parent, {k: v for k, v in frame.items() if k != "index"}, frames[:-1], frame["ctx"], frame["eff"], nxt, item
        )
        return 0

    def arrive(self, key: str, frame: dict[str, Any], add: int) -> tuple[int, list[Any] | None]:
        """This branch's last touch of its fan-out: add to the arrivals. The arrival that completes them deletes the
        fan-out's data (every other branch is done with it). Returns how many branches failed so far (the first
        failing branch sees 1) and, to the last arrival when none failed, the results in branch order.

        In KNIX's dialect a Parallel with ``WaitForNumBranches`` goes on at each of those counts of arrivals, with
        the results written so far (None for a branch not done): those arrivals get results too (and the last one
        none, unless its count is listed). Each of them reads before it counts itself in ``.done``; the last to
        count there, they and the completing arrival, deletes the fan-out's data."""
        failures, arrived = divmod(self.context.incrementCounter(key, add), FAILED)
        count, wait = frame["count"], frame.get("wait")
        early = [k for k in wait if k < count] if wait else []
        if arrived < count and arrived not in early:
            return failures, None
        results = None
        if not failures:
            entries = self.context.retrieveMap(key)
            results = [json.loads(entries[str(i)]) if str(i) in entries else None for i in range(count)]
            if "trace_at" in frame:
                _merge_traces(self.context, frame, self.context.retrieveMap(key + ".trace"))
        if not early or self.context.incrementCounter(key + ".done", 1) == len(early) + 1:
            _forget(self.context, key)
        if arrived == count and wait and count not in wait:
            results = None  # KNIX goes on only at the listed counts
        return failures, results


def _event_trace(context: Any) -> list[Any]:
    """The trace this instance's outputs inherit: a join's merged one, else its event's (GrainContext; [] in tests)."""
    merged = getattr(context, "trace_override", None)
    if isinstance(merged, list):
        return merged
    event = getattr(context, "_event", None)
    trace = event.get("trace") if isinstance(event, dict) else None
    return list(trace) if isinstance(trace, list) else []


def _branch_trace(context: Any) -> list[Any]:
    """A branch's path as it arrives at its join: its event's trace, then this instance's entry so far (its handler
    ends at the join) and the states it ran inline."""
    times = getattr(context, "instance_times", None)
    now = time.monotonic_ns()
    polled, started, handler_start = times if isinstance(times, tuple) else (now, now, now)
    grain = getattr(context, "_grain", "")
    ran = getattr(context, "ran_inline", None)
    own = [grain_trace(grain, polled, started, handler_start, now, now)]
    own += [inline_trace(g, now) for g in (ran if isinstance(ran, list) else [])]
    return _event_trace(context) + own


def _merge_traces(context: Any, frame: dict[str, Any], traces: dict[str, str]) -> None:
    """The join's timeline: the fan-out's path, then every branch's (or item's) own part in branch order, each grain
    entry labelled ``"<grain> [<state> item|branch <i>]"`` (its parent is the entry before it in that branch, the
    first one's the fan-out's instance); at most ``MAX_TRACE`` entries (later branches' entries are left out)."""
    at = int(frame["trace_at"])
    state = str(frame["grain"])
    kind = "item" if frame.get("kind") == "map" else "branch"
    merged = _event_trace(context)[:at]  # the fan-out's path: every branch's trace starts with it
    for i in range(int(frame["count"])):
        raw = traces.get(str(i))
        for e in json.loads(raw) if raw else []:
            if len(merged) >= MAX_TRACE - 1:  # room for the joining instance's own entry
                context.trace_override = merged
                return
            if isinstance(e, list) and len(e) >= 2 and e[0] == "grain":
                e = [e[0], f"{e[1]} [{state} {kind} {i}]", *e[2:]]
            merged.append(e)
    context.trace_override = merged


def _limit(st: dict[str, Any], eff: Any, co: dict[str, Any]) -> int:
    """A Map's MaxConcurrency (0: no limit)."""
    value = asl.get_path(eff, st["MaxConcurrencyPath"], co) if "MaxConcurrencyPath" in st else st.get("MaxConcurrency")
    return int(value or 0)


def _forget(context: Any, key: str) -> None:
    """Delete a fan-out's bookkeeping: its results, its items and its counters."""
    for name in (key, key + ".items", key + ".trace"):
        context.deleteMap(name)
    for name in (key, key + ".next", key + ".done"):
        context.deleteCounter(name)


def _counter(context: Any, name: str) -> int:
    """A counter's value; 0 when it does not exist."""
    try:
        return int(context.getCounterValue(name) or 0)
    except Exception:  # noqa: BLE001 - a counter that does not exist
        return 0


def _key(context: Any, frame: dict[str, Any]) -> str:
    """The data layer names of one fan-out: unique per execution and Parallel/Map run."""
    return f"sand.asl.{context.get_execution_id()}.{frame['id']}"


def _now_iso() -> str:
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"


def make_handler(workflow: Workflow, grain: str, task: Handler | None) -> Handler:
    """The handler of an ASL state's grain; ``task`` is the uploaded grain a Task runs (None for other states)."""
    state = workflow.grain(grain).asl
    if state is None:
        raise ValueError(f"grain {grain!r} is not an ASL state")

    def handle(event: Any, context: Any) -> Any:
        return _Run(workflow, grain, state, context, event, task).run()

    return handle
