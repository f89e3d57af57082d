"""Amazon States Language (ASL, the AWS Step Functions language): the pure core SAND's ASL support calls.

Written from the States Language specification (https://states-language.net/spec.html), in small modules: the
language's tables (``asl_spec``, read from contracts/asl.json, which the frontend's validator reads too), Paths
(``asl_paths``), Intrinsic Functions (``asl_intrinsics``), Choice Rules and timestamps (``asl_choice``),
validation (``asl_validate``) and, here, Payload Templates (``apply_template``), input/output processing in the
spec's order (``state_input``, ``state_output``), Wait (``wait_until``), Retry/Catch (``error_matches``,
``retry_delay``, ``find_catcher``, ``error_output``) and ``run``, an in-process reference interpreter whose
behaviour the distributed runtime must match. A Task's ``Resource`` names a SAND grain. Everything but ``run``
is free of side effects; standard library only (the modules run inside the sandbox).
"""

from __future__ import annotations

import copy
import random
import time
from collections.abc import Callable, Mapping
from typing import Any

from grainworker.asl_choice import choose, timestamp
from grainworker.asl_intrinsics import call_intrinsic
from grainworker.asl_paths import apply_result_path, get_path
from grainworker.asl_spec import ERRORS, STATE_TYPES
from grainworker.asl_text import AslError, AslRuntimeError, show
from grainworker.asl_validate import StateMachine, validate

__all__ = [
    "ERRORS",
    "STATE_TYPES",
    "AslError",
    "AslRuntimeError",
    "StateMachine",
    "apply_result_path",
    "apply_template",
    "call_intrinsic",
    "choose",
    "error_matches",
    "error_output",
    "fail_field",
    "find_catcher",
    "get_path",
    "is_asl",
    "retry_delay",
    "run",
    "state_input",
    "state_output",
    "validate",
    "wait_until",
]

_TIMEOUTS = frozenset({"States.Timeout", "States.HeartbeatTimeout"})


def is_asl(doc: object) -> bool:
    """True when ``doc`` looks like an ASL machine (KNIX's rule): a dict with "StartAt" and a dict "States"."""
    return isinstance(doc, dict) and "StartAt" in doc and isinstance(doc.get("States"), dict)


# ----------------------------------------------------------------------------------------- payload templates


def _dynamic(expr: Any, data: Any, context: Mapping[str, Any] | None, path_error: str) -> Any:
    """The value of a field whose name ends in ".$": a Path, a "$$" context Path or an intrinsic call."""
    if not isinstance(expr, str):
        raise AslRuntimeError(path_error, f"a '.$' field needs a string (a Path or an intrinsic), got {show(expr)}")
    if not expr.startswith("$"):
        return call_intrinsic(expr, data, context)
    try:
        return get_path(data, expr, context)
    except AslRuntimeError as exc:
        raise AslRuntimeError(path_error, exc.cause) from None


def apply_template(template: Any, data: Any, context: Mapping[str, Any] | None = None) -> Any:
    """Process a Payload Template (Parameters, ResultSelector, ItemSelector) against ``data``: at any depth, a
    field "name.$" becomes "name" with the value of its Path / context Path / intrinsic call."""
    if isinstance(template, dict):
        out: dict[str, Any] = {}
        for key, value in template.items():
            if key.endswith(".$"):
                out[key[:-2]] = _dynamic(value, data, context, "States.ParameterPathFailure")
            else:
                out[key] = apply_template(value, data, context)
        return out
    if isinstance(template, list):
        return [apply_template(v, data, context) for v in template]
    return template


# ------------------------------------------------------------------------------- input and output processing


def state_input(state: dict[str, Any], raw_input: Any, context: Mapping[str, Any] | None = None) -> Any:
    """The effective input: InputPath (null gives {}), then Parameters (not for Map, whose Parameters are its
    per-item selector)."""
    if "InputPath" in state and state["InputPath"] is None:
        data: Any = {}
    else:
        data = get_path(raw_input, state.get("InputPath", "$"), context)
    if "Parameters" in state and state.get("Type") != "Map":
        data = apply_template(state["Parameters"], data, context)
    return data


def state_output(state: dict[str, Any], raw_input: Any, result: Any, context: Mapping[str, Any] | None = None) -> Any:
    """The effective output: ResultSelector on the result, ResultPath into the raw input, then OutputPath (null
    gives {}). For Choice, Wait and Succeed, pass the effective input as ``result``."""
    if "ResultSelector" in state:
        result = apply_template(state["ResultSelector"], result, context)
    output = apply_result_path(raw_input, state.get("ResultPath", "$"), result)
    if "OutputPath" in state and state["OutputPath"] is None:
        return {}
    return get_path(output, state.get("OutputPath", "$"), context)


def wait_until(state: dict[str, Any], data: Any, now: float) -> float:
    """When (epoch seconds) a Wait state with effective input ``data`` entered at ``now`` resumes."""
    if "Seconds" in state:
        return now + float(state["Seconds"])
    if "SecondsPath" in state:
        seconds = get_path(data, state["SecondsPath"])
        if not (isinstance(seconds, int) and not isinstance(seconds, bool) and seconds >= 0):
            raise AslRuntimeError("States.Runtime", f"SecondsPath selected {show(seconds)}, not an integer >= 0")
        return now + seconds
    value = state["Timestamp"] if "Timestamp" in state else get_path(data, state["TimestampPath"])
    moment = timestamp(value)
    if moment is None:
        raise AslRuntimeError("States.Runtime", f"{show(value)} is not an RFC 3339 timestamp")
    return moment.timestamp()


# ----------------------------------------------------------------------------------------------------- errors


def error_matches(error_equals: list[str], error: str) -> bool:
    """Does ``error`` match one of the names? States.ALL matches any error; States.TaskFailed any but a timeout
    (States.Timeout, States.HeartbeatTimeout); States.Timeout also matches States.HeartbeatTimeout."""
    for name in error_equals:
        if name in (error, "States.ALL"):
            return True
        if name == "States.TaskFailed" and error not in _TIMEOUTS:
            return True
        if name == "States.Timeout" and error == "States.HeartbeatTimeout":
            return True
    return False


def retry_delay(retriers: list[dict[str, Any]], error: str, attempts: dict[int, int]) -> float | None:
    """Seconds to wait before retrying after ``error``, or None (no retrier matches, or the first one that does
    has used its MaxAttempts). ``attempts`` (retrier index -> retries done) is updated in place; keep one per
    state visit. Delay: IntervalSeconds * BackoffRate ** retries done, capped by MaxDelaySeconds."""
    for i, retrier in enumerate(retriers):
        if error_matches(retrier["ErrorEquals"], error):
            done = attempts.get(i, 0)
            if done >= retrier.get("MaxAttempts", 3):
                return None
            attempts[i] = done + 1
            delay = float(retrier.get("IntervalSeconds", 1) * retrier.get("BackoffRate", 2.0) ** done)
            if "MaxDelaySeconds" in retrier:
                delay = min(delay, float(retrier["MaxDelaySeconds"]))
            if retrier.get("JitterStrategy") == "FULL":
                delay = random.uniform(0.0, delay)
            return delay
    return None


def find_catcher(catchers: list[dict[str, Any]], error: str) -> dict[str, Any] | None:
    """The first Catcher whose ErrorEquals matches ``error``."""
    return next((c for c in catchers if error_matches(c["ErrorEquals"], error)), None)


def error_output(error: str, cause: str) -> dict[str, Any]:
    """The Error Output a Catcher passes on."""
    return {"Error": error, "Cause": cause}


# -------------------------------------------------------------------------------------- reference interpreter


def _describe(exc: Exception) -> tuple[str, str]:
    if isinstance(exc, AslRuntimeError):
        return exc.error, exc.cause
    return type(exc).__name__, str(exc)


def fail_field(state: dict[str, Any], key: str, raw: Any, context: Mapping[str, Any]) -> str:
    if key + "Path" not in state:
        return str(state.get(key, ""))
    value = _dynamic(state[key + "Path"], raw, context, "States.Runtime")
    if not isinstance(value, str):
        raise AslRuntimeError("States.Runtime", f"{key}Path must select a string, got {show(value)}")
    return value


def _invoke(
    machine: StateMachine,
    name: str,
    state: dict[str, Any],
    data: Any,
    tasks: Mapping[str, Callable[[Any], Any]],
    context: dict[str, Any],
    sleep: Callable[[float], None],
) -> Any:
    kind = state["Type"]
    if kind == "Task":
        if state["Resource"] not in tasks:
            raise AslRuntimeError("States.Runtime", f"no task named {show(state['Resource'])}")
        return tasks[state["Resource"]](copy.deepcopy(data))  # JSON in, as across the network
    if kind == "Parallel":
        return [run(branch, copy.deepcopy(data), tasks, context, sleep) for branch in machine.children[name]]
    items = get_path(data, state.get("ItemsPath", "$"), context)
    if not isinstance(items, list):
        raise AslRuntimeError("States.Runtime", f"ItemsPath selected {type(items).__name__}, not an array")
    selector = state.get("ItemSelector", state.get("Parameters"))
    results = []
    for index, item in enumerate(items):
        item_context = {**context, "Map": {"Item": {"Index": index, "Value": item}}}
        item_input = apply_template(selector, data, item_context) if selector is not None else item
        results.append(run(machine.children[name][0], item_input, tasks, item_context, sleep))
    return results


def _step(
    machine: StateMachine,
    name: str,
    raw: Any,
    tasks: Mapping[str, Callable[[Any], Any]],
    context: dict[str, Any],
    sleep: Callable[[float], None],
) -> tuple[Any, str | None]:
    """Run one state: (its output, the next state's name or None at the end)."""
    state = machine.states[name]
    kind = state["Type"]
    after = None if kind == "Succeed" or state.get("End") else state.get("Next")
    if kind == "Fail":
        raise AslRuntimeError(fail_field(state, "Error", raw, context), fail_field(state, "Cause", raw, context))
    if kind in ("Task", "Parallel", "Map"):
        attempts: dict[int, int] = {}
        while True:
            try:
                data = state_input(state, raw, context)
                result = _invoke(machine, name, state, data, tasks, context, sleep)
                return state_output(state, raw, result, context), after
            except Exception as exc:  # any failure is an ASL error (a task's: named after its class)
                error, cause = _describe(exc)
                delay = retry_delay(state.get("Retry", []), error, attempts)
                if delay is not None:
                    sleep(delay)
                    context["State"]["RetryCount"] = sum(attempts.values())
                    continue
                catcher = find_catcher(state.get("Catch", []), error)
                if catcher is None:
                    if isinstance(exc, AslRuntimeError):
                        raise
                    raise AslRuntimeError(error, cause) from exc
                output = apply_result_path(raw, catcher.get("ResultPath", "$"), error_output(error, cause))
                return output, catcher["Next"]
    data = state_input(state, raw, context)
    if kind == "Choice":
        after = choose(state, data, context)
        if after is None:
            raise AslRuntimeError(
                "States.NoChoiceMatched", f"no Choice Rule of {show(name)} matched and it has no Default"
            )
    elif kind == "Wait":
        now = time.time()
        sleep(max(0.0, wait_until(state, data, now) - now))
    result = copy.deepcopy(state["Result"]) if kind == "Pass" and "Result" in state else data
    return state_output(state, raw, result, context), after


def run(
    machine: StateMachine,
    data: Any,
    tasks: Mapping[str, Callable[[Any], Any]],
    context: dict[str, Any] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Any:
    """Run ``machine`` in-process on ``data`` and return its output; an unhandled error raises AslRuntimeError.
    A Task calls ``tasks[Resource](effective input)``; Parallel branches and Map iterations run one after another.
    Not enforced: TimeoutSeconds/HeartbeatSeconds (of tasks and of the machine), MaxConcurrency."""
    context = dict(context or {})
    name: str | None = machine.start
    while name is not None:
        context["State"] = {"Name": name, "RetryCount": 0}
        data, name = _step(machine, name, data, tasks, context, sleep)
    return data
