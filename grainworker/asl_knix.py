"""KNIX's dialect of Amazon States Language (docs/knix.md "KNIX's ASL dialect"): what a machine deployed through
the KNIX door means, where KNIX's function worker differs from the specification. A machine says it speaks this
dialect with ``"SandDialect": "knix"`` at its top (the KNIX door adds it); every other machine follows the
specification. The Java side (contracts/.../asl/KnixDialect.java) checks the same fields with the same messages.

What the dialect changes (facts from KNIX's FunctionWorker/python/StateUtils.py):

- ``EnableCheckpoints`` and ``AllowImmediateMessages`` (top, booleans) and a Parallel's ``WaitForNumBranches``
  (an ascending list of branch counts)
  are accepted. SAND backs every event up in any case and a grain may send before it returns, so the switches have
  no effect. A Parallel with ``WaitForNumBranches`` goes on (Next or End) once per listed count of finished
  branches, with the outputs so far (None for a branch not done), as KNIX's post-parallel step does
  (grainworker/aslrun.py ``arrive``); the execution then reaches its end more than once.
- ``ErrorEquals`` names are matched literally against the error's class name *or its message*; no name is
  reserved or special (``States.ALL`` is not a wildcard on KNIX: an error raised as ``Exception("States.All")``
  matches the name ``"States.All"``).
- A Task with ``Retry`` runs again up to the ``MaxAttempts`` of the last matching retrier (1 if none matches), at
  once; when every attempt failed its *result* is ``{"Error": <message>, "Cause": "Error not caught by MFn ASL
  Workflow retryer"}`` and the machine goes on (ResultPath, OutputPath, Next or End) as after a success.
- A Task with ``Catch`` (and no ``Retry``) whose error a catcher matches gets the result ``{"Error": <message>,
  "Cause": "this error caught by MFn ASL Workflow catcher!"}`` placed at the catcher's ResultPath and goes on by
  the state's own Next or End; KNIX also starts the catcher's Next with the error message, a second path whose
  answer races the first, which SAND does not start (the first answer is KNIX's).
- A Task's and a Pass state's ``ResultPath`` is KNIX's: absent, the output is the result; ``"$"``, the state's
  input (the result is dropped); null, ``{}``; a path ``$.a.b``, the result nested as ``{"a": {"b": result}}``
  and merged under the input's top-level keys (the input's win: ``{"data": {...}}`` in the input hides a result
  put at ``$.data.x``). ResultSelector and OutputPath are the specification's.
- A Fail state answers with its input (KNIX ends the execution there with the value, not an error).
- A Map's output is its results alone, placed by its ResultPath into an empty object (KNIX's post-Map step starts
  from ``{}``, not from the input): absent, the results; ``$.a.b``, ``{"a": {"b": results}}``; ``"$"`` and null,
  ``{}``. The input's other fields are dropped. ResultSelector and OutputPath are the specification's (KNIX has no
  ResultSelector and skips a Map's OutputPath; no KNIX test uses either on a Map).
- A Map's ``Parameters`` make each item as KNIX's function worker does: ``$$.Map.Item.Value`` and
  ``$$.Map.Item.Index`` entries as the specification's, but the first entry with a path into the Map's input
  (``"x.$": "$.y"``) ends them: the item is then that value and the item value's entry only (the index and every
  later entry left out). Other entries are the specification's. Such a path before the item value's entry is
  refused at deploy (KNIX fails there at run time).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from grainworker import asl
from grainworker.asl_text import AslError, AslRuntimeError, show

__all__ = [
    "CATCH_CAUSE",
    "FIELD",
    "KNIX",
    "RETRY_CAUSE",
    "catch_result",
    "check_map_parameters",
    "for_validation",
    "is_knix",
    "map_item",
    "map_output",
    "matches",
    "retry_attempts",
    "retry_result",
    "task_output",
]

FIELD = "SandDialect"
KNIX = "knix"
RETRY_CAUSE = "Error not caught by MFn ASL Workflow retryer"
CATCH_CAUSE = "this error caught by MFn ASL Workflow catcher!"
# KNIX's top-level switches: checkpoints of every state's output (SAND backs events up in any case) and messages
# sent before a function returns (SAND's send_to_running... calls do not need it): accepted, no effect
SWITCHES = ("EnableCheckpoints", "AllowImmediateMessages")
# ErrorEquals names are renamed under this prefix for the specification's checks: KNIX reserves none of them
_NAME_PREFIX = "knix:"


def is_knix(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get(FIELD) == KNIX


def for_validation(doc: Any) -> Any:
    """The machine the specification's validator checks for ``doc``: ``doc`` itself without ``SandDialect``; in
    KNIX's dialect, with its extensions checked here and removed, and its error names made ordinary."""
    if not isinstance(doc, dict) or FIELD not in doc:
        return doc
    if doc[FIELD] != KNIX:
        raise AslError(f'{FIELD}: {show(doc[FIELD])} is not a dialect SAND knows; write "{KNIX}" or remove it')
    out = copy.deepcopy(doc)
    del out[FIELD]
    for switch in SWITCHES:
        if switch in out:
            if not isinstance(out[switch], bool):
                raise AslError(f"{switch}: must be true or false, got {show(out[switch])}")
            del out[switch]
    _machine(out, "")
    return out


def _machine(machine: Any, prefix: str) -> None:
    states = machine.get("States") if isinstance(machine, dict) else None
    if not isinstance(states, dict):
        return  # the specification's validator says what is wrong
    for name, state in states.items():
        if not isinstance(state, dict):
            continue
        where = f"{prefix}States.{name}"
        for kind in ("Retry", "Catch"):
            handlers = state.get(kind)
            for h in handlers if isinstance(handlers, list) else []:
                names = h.get("ErrorEquals") if isinstance(h, dict) else None
                if isinstance(names, list):
                    h["ErrorEquals"] = [_NAME_PREFIX + n if isinstance(n, str) and n else n for n in names]
        if state.get("Type") == "Map" and (key := _path_before_item_value(state.get("Parameters"))) is not None:
            raise AslError(f"{where}.Parameters: {show(key)} {MAP_ORDER}")
        if "WaitForNumBranches" in state and state.get("Type") == "Parallel":
            _wait_for(state.pop("WaitForNumBranches"), state.get("Branches"), f"{where}.WaitForNumBranches")
        branches = state.get("Branches")
        for i, b in enumerate(branches if isinstance(branches, list) else []):
            _machine(b, f"{where}.Branches[{i}].")
        for key in ("Iterator", "ItemProcessor"):
            if key in state:
                _machine(state[key], f"{where}.{key}.")


def _wait_for(counts: Any, branches: Any, where: str) -> None:
    n = len(branches) if isinstance(branches, list) else 0
    ok = isinstance(counts, list) and counts and all(type(c) is int and 1 <= c <= n for c in counts)
    if not ok or counts != sorted(counts):
        raise AslError(
            f"{where}: must be an ascending list of branch counts from 1 to the number of Branches ({n}), "
            f"e.g. [{n}]; got {show(counts)}"
        )


def matches(names: Any, error: str, message: str) -> bool:
    """KNIX's rule: the error's class name or its message is one of ``names``, literally."""
    return isinstance(names, list) and (error in names or message in names)


def retry_attempts(retriers: list[dict[str, Any]], error: str, message: str) -> int:
    """How many more times KNIX runs a failed Task: the MaxAttempts of the last matching retrier, else 1."""
    attempts = 1
    for r in retriers:
        if matches(r.get("ErrorEquals"), error, message):
            attempts = int(r.get("MaxAttempts", 1))
    return max(0, attempts)


def retry_result(message: str) -> dict[str, Any]:
    return {"Error": message, "Cause": RETRY_CAUSE}


def catch_result(catchers: list[dict[str, Any]], error: str, message: str) -> tuple[dict[str, Any], Any] | None:
    """The last matching catcher and the Task's result, or None (no catcher matches: the error is the machine's)."""
    found = None
    for c in catchers:
        if matches(c.get("ErrorEquals"), error, message):
            found = c
    return None if found is None else (found, {"Error": message, "Cause": CATCH_CAUSE})


_STEP = re.compile(r"\.([^.\[]+)|\['([^']*)'\]|\[(\d+)\]")


def _steps(path: str) -> list[str]:
    """The names of a ResultPath (``$.a.b``, ``$['a b']``), as KNIX's jsonpath tokenizer gives them."""
    if not path.startswith("$"):
        raise AslRuntimeError("States.ResultPathMatchFailure", f"ResultPath {show(path)} does not start with $")
    out, at = [], 1
    while at < len(path):
        m = _STEP.match(path, at)
        if m is None:
            raise AslRuntimeError("States.ResultPathMatchFailure", f"ResultPath {show(path)} is not a simple path")
        out.append(next(g for g in m.groups() if g is not None))
        at = m.end()
    return out


def _result_path(state: Mapping[str, Any], raw_input: Any, result: Any) -> Any:
    if "ResultPath" not in state:
        return result
    path = state["ResultPath"]
    if path is None:
        return {}
    if path == "$":
        return raw_input
    nested = result
    for step in reversed(_steps(path)):
        nested = {step: nested}
    return {**nested, **raw_input} if isinstance(raw_input, dict) and isinstance(nested, dict) else nested


def task_output(state: Mapping[str, Any], raw_input: Any, result: Any, context: Mapping[str, Any] | None) -> Any:
    """A Task's or Pass state's output as KNIX makes it: the specification's ResultSelector, KNIX's ResultPath, the
    specification's OutputPath."""
    if "ResultSelector" in state:
        result = asl.apply_template(state["ResultSelector"], result, context)
    mid = _result_path(state, raw_input, result)
    rest = {k: v for k, v in state.items() if k not in ("ResultSelector", "ResultPath")}
    return asl.state_output(rest, mid, mid, context)


_ITEM_VALUE = "$$.Map.Item.Value"
_ITEM_INDEX = "$$.Map.Item.Index"


def _input_path_entry(key: str, value: Any) -> bool:
    return key.endswith(".$") and isinstance(value, str) and value.startswith("$.")


MAP_ORDER = "comes before the entry for $$.Map.Item.Value; in KNIX's dialect a path into the Map's input must follow it"


def _path_before_item_value(parameters: Any) -> str | None:
    """The entry of a Map's Parameters with a path into the Map's input that comes before the item value's (KNIX
    fails there: "item value is not set"), or None."""
    for key, value in parameters.items() if isinstance(parameters, dict) else ():
        if key.endswith(".$") and value == _ITEM_VALUE:
            return None
        if _input_path_entry(key, value):
            return str(key)
    return None


def check_map_parameters(parameters: Any) -> None:
    """Before a Map fans out (the validator refuses such a machine; this is for one deployed before it did)."""
    key = _path_before_item_value(parameters)
    if key is not None:
        raise AslRuntimeError("States.ParameterPathFailure", f"Parameters: {show(key)} {MAP_ORDER}")


def map_item(parameters: Any, eff: Any, item: Any, index: int, context: Mapping[str, Any] | None) -> Any:
    """One Map item as KNIX makes it from the Map's ``Parameters`` (``eff``: the Map's effective input)."""
    if not isinstance(parameters, dict):
        return asl.apply_template(parameters, eff, context)
    check_map_parameters(parameters)
    out: dict[str, Any] = {}
    value_key = ""
    for key, value in parameters.items():
        name = key[:-2] if key.endswith(".$") else key
        if key.endswith(".$") and value == _ITEM_VALUE:
            value_key = name
            out[name] = item
        elif key.endswith(".$") and value == _ITEM_INDEX:
            out[name] = index
        elif _input_path_entry(key, value):
            return {name: asl.get_path(eff, value, context), value_key: item}
        else:
            out.update(asl.apply_template({key: value}, eff, context))
    return out


def map_output(state: Mapping[str, Any], results: list[Any], context: Mapping[str, Any] | None) -> Any:
    """A Map's output as KNIX makes it: its results placed by ResultPath into ``{}`` (the input is dropped)."""
    if "ResultSelector" in state:
        results = asl.apply_template(state["ResultSelector"], results, context)
    if "ResultPath" not in state:
        mid: Any = results
    elif state["ResultPath"] in (None, "$"):
        mid = {}
    else:
        mid = _result_path(state, {}, results)
    rest = {k: v for k, v in state.items() if k not in ("ResultSelector", "ResultPath")}
    return asl.state_output(rest, mid, mid, context)
