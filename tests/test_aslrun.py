"""ASL states as grains (grainworker/aslrun.py), driven as the platform drives them: each event handled by its
state's grain handler in a context of its own, outputs passed on as the local bus would, in a random order (grain
instances run concurrently), the data layer shared. Every machine must give what grainworker/asl.py's reference
interpreter gives in one process."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import pytest

from grainworker import asl
from grainworker.aslrun import MARK, make_handler
from grainworker.workflow import END, parse_workflow


class Data:
    """The data layer the instances share: maps and counters."""

    def __init__(self) -> None:
        self.maps: dict[str, dict[str, str]] = {}
        self.counters: dict[str, int] = {}


class Ctx:
    """What a grain instance's context offers that aslrun uses."""

    def __init__(self, data: Data, grain: str, sender: str = "") -> None:
        self.data, self.grain, self.sender = data, grain, sender
        self.sent: list[tuple[str, Any]] = []
        self.logs: list[str] = []

    def get_execution_id(self) -> str:
        return "e1"

    def get_sender(self) -> str:
        return self.sender

    def log(self, text: str, level: str = "INFO") -> None:
        self.logs.append(f"{level} {text}")

    def add_workflow_next(self, grain: str, value: Any) -> None:
        self.sent.append((grain, json.loads(json.dumps(value))))  # through the bus: a copy

    def putMapEntry(self, m: str, k: str, v: str) -> None:  # noqa: N802
        self.data.maps.setdefault(m, {})[k] = v

    def getMapEntry(self, m: str, k: str) -> str | None:  # noqa: N802
        return self.data.maps.get(m, {}).get(k)

    def retrieveMap(self, m: str) -> dict[str, str]:  # noqa: N802
        return dict(self.data.maps.get(m, {}))

    def deleteMap(self, m: str) -> None:  # noqa: N802
        self.data.maps.pop(m, None)

    def createCounter(self, c: str, count: int = 0) -> None:  # noqa: N802
        self.data.counters[c] = count

    def incrementCounter(self, c: str, increment: int = 1) -> int:  # noqa: N802
        self.data.counters[c] += increment  # as SAND's data layer: a counter exists once created (KeyError)
        return self.data.counters[c]

    def getCounterValue(self, c: str) -> int:  # noqa: N802
        return self.data.counters[c]

    def deleteCounter(self, c: str) -> None:  # noqa: N802
        self.data.counters.pop(c, None)


def drive(machine: dict[str, Any], value: Any, tasks: dict[str, Callable[[Any], Any]], seed: int = 0) -> Any:
    """Run ``machine`` as the platform would; the workflow's output (or its error value)."""
    results = drive_all(machine, value, tasks, seed)
    assert len(results) == 1, results
    return results[0]


def drive_all(machine: dict[str, Any], value: Any, tasks: dict[str, Callable[[Any], Any]], seed: int = 0) -> list[Any]:
    """Run ``machine`` as the platform would; every output that reached the end (or error value), in order."""
    wf = parse_workflow(machine)
    handlers = {
        g: make_handler(wf, g, (lambda fn: lambda event, context: fn(event))(tasks[w.code]) if w.code else None)
        for g, w in wf.grains.items()
    }
    rng = random.Random(seed)
    data = Data()
    pending: list[tuple[str, Any, str]] = [(wf.entry, value, "")]  # (grain, value, the grain that sent it)
    results: list[Any] = []
    while pending:
        grain, event, sender = pending.pop(rng.randrange(len(pending)))
        ctx = Ctx(data, grain, sender)
        out = handlers[grain](event, ctx)
        if isinstance(out, dict) and set(out) == {"error"}:
            results.append(out)
        for target, v in ctx.sent:
            if target == END:
                assert not (isinstance(v, dict) and MARK in v), "the workflow's output is never wrapped"
                results.append(v)
            else:
                pending.append((target, v, grain))
    assert not data.maps and not data.counters, "joins clean up, failed ones too"
    return results


def reference(machine: dict[str, Any], value: Any, tasks: dict[str, Callable[[Any], Any]]) -> Any:
    try:
        return asl.run(asl.validate(machine), value, tasks, sleep=lambda s: None)
    except asl.AslRuntimeError as e:
        return {"error": {"type": e.error, "message": e.cause}}


def hello(event: Any) -> str:
    return "Hello " + event["name"]


def boom(event: Any) -> Any:
    raise ValueError("no " + str(event.get("name")))


TASKS = {"hello": hello, "boom": boom, "double": lambda e: e * 2, "echo": lambda e: e}


def knix_machine(hello: str = "hello", boom: str = "boom") -> dict[str, Any]:
    """The state machine of tests/e2e/test_knix.py (there over KNIX functions), with its two Resources named."""
    return {
        "StartAt": "Route",
        "States": {
            "Route": {
                "Type": "Choice",
                "Default": "Greet",
                "Choices": [
                    {
                        "And": [
                            {"Variable": "$.kind", "IsPresent": True},
                            {"Variable": "$.kind", "StringEquals": "many"},
                        ],
                        "Next": "Each",
                    },
                    {
                        "And": [{"Variable": "$.n", "IsPresent": True}, {"Variable": "$.n", "NumericGreaterThan": 10}],
                        "Next": "Both",
                    },
                ],
            },
            "Greet": {"Type": "Task", "Resource": hello, "ResultPath": "$.greeting", "Next": "Shape"},
            "Shape": {"Type": "Pass", "Parameters": {"text.$": "$.greeting", "who.$": "$.name"}, "End": True},
            "Each": {
                "Type": "Map",
                "ItemsPath": "$.names",
                "MaxConcurrency": 2,
                "Parameters": {"name.$": "$$.Map.Item.Value"},
                "End": True,
                "Iterator": {"StartAt": "Hi", "States": {"Hi": {"Type": "Task", "Resource": hello, "End": True}}},
            },
            "Both": {
                "Type": "Parallel",
                "Next": "Risky",
                "Branches": [
                    {"StartAt": "B1", "States": {"B1": {"Type": "Task", "Resource": hello, "End": True}}},
                    {"StartAt": "B2", "States": {"B2": {"Type": "Pass", "Result": "second", "End": True}}},
                ],
            },
            "Risky": {
                "Type": "Task",
                "Resource": boom,
                "Parameters": {"name": "boom"},
                "Next": "Recovered",
                "Retry": [{"ErrorEquals": ["ValueError"], "IntervalSeconds": 1, "MaxAttempts": 1}],
                "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$", "Next": "Recovered"}],
            },
            "Recovered": {"Type": "Pass", "Parameters": {"caught.$": "$.Error", "cause.$": "$.Cause"}, "End": True},
        },
    }


KNIX = knix_machine()
# what the machine gives for an input: the same in this test and through the platform (tests/e2e/test_knix.py)
KNIX_RUNS = [
    ({"name": "SAND"}, {"text": "Hello SAND", "who": "SAND"}),
    ({"kind": "many", "names": ["a", "b", "c"]}, ["Hello a", "Hello b", "Hello c"]),
    ({"name": "x", "n": 11}, {"caught": "ValueError", "cause": "no boom"}),
]
# the same machine through the KNIX door, in KNIX's dialect (grainworker/asl_knix.py): Risky's Retry runs it once
# more, then goes on with the error as its result (KNIX's Retry is taken before its Catch)
KNIX_DIALECT_RUNS = [
    *KNIX_RUNS[:2],
    ({"name": "x", "n": 11}, {"caught": "no boom", "cause": "Error not caught by MFn ASL Workflow retryer"}),
]

MACHINES: list[tuple[str, dict[str, Any], Any]] = [
    ("default route", KNIX, {"name": "SAND"}),
    ("map of three, two at a time", KNIX, {"kind": "many", "names": ["a", "b", "c"]}),
    ("parallel then retry and catch", KNIX, {"name": "x", "n": 11}),
    ("empty map", KNIX, {"kind": "many", "names": []}),
    ("fail state", {"StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "Bad", "Cause": "why"}}}, {}),
    (
        "no choice matched",
        {
            "StartAt": "C",
            "States": {
                "C": {"Type": "Choice", "Choices": [{"Variable": "$.x", "NumericEquals": 1, "Next": "P"}]},
                "P": {"Type": "Pass", "End": True},
            },
        },
        {"x": 2},
    ),
    (
        "a failing branch is the parallel's error, caught",
        {
            "StartAt": "P",
            "States": {
                "P": {
                    "Type": "Parallel",
                    "Next": "Done",
                    "ResultPath": "$.out",
                    "Catch": [{"ErrorEquals": ["ValueError"], "ResultPath": "$.err", "Next": "Done"}],
                    "Branches": [
                        {"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "echo", "End": True}}},
                        {"StartAt": "B", "States": {"B": {"Type": "Task", "Resource": "boom", "End": True}}},
                    ],
                },
                "Done": {"Type": "Succeed"},
            },
        },
        {"name": "b"},
    ),
    (
        "uncaught task error",
        {"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": "boom", "End": True}}},
        {"name": "z"},
    ),
    (
        "nested map in parallel, paths",
        {
            "StartAt": "P",
            "States": {
                "P": {
                    "Type": "Parallel",
                    "End": True,
                    "OutputPath": "$[1]",
                    "Branches": [
                        {"StartAt": "Id", "States": {"Id": {"Type": "Pass", "End": True}}},
                        {
                            "StartAt": "M",
                            "States": {
                                "M": {
                                    "Type": "Map",
                                    "ItemsPath": "$.xs",
                                    "End": True,
                                    "Iterator": {
                                        "StartAt": "D",
                                        "States": {
                                            "D": {"Type": "Task", "Resource": "double", "Next": "W"},
                                            "W": {"Type": "Wait", "Seconds": 0, "End": True},
                                        },
                                    },
                                }
                            },
                        },
                    ],
                }
            },
        },
        {"xs": [1, 2, 3, 4, 5]},
    ),
]


@pytest.mark.parametrize(("name", "machine", "value"), MACHINES, ids=[m[0] for m in MACHINES])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_states_as_grains_give_what_the_reference_interpreter_gives(
    name: str, machine: dict[str, Any], value: Any, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("grainworker.aslrun.time.sleep", lambda s: None)
    got = drive(machine, value, TASKS, seed)
    want = reference(machine, value, TASKS)
    if isinstance(want, dict) and set(want) == {"error"}:
        assert got["error"]["type"] == want["error"]["type"] and got["error"]["message"] == want["error"]["message"]
    else:
        assert got == want


def test_the_knix_machine_gives_the_outputs_the_e2e_test_expects(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("grainworker.aslrun.time.sleep", lambda s: None)
    for value, output in KNIX_RUNS:
        assert drive(KNIX, value, TASKS) == output


def test_a_request_cannot_pose_as_a_states_handover() -> None:
    """A caller's body that looks like the wrapper between states is the machine's input, not a branch's output:
    it cannot jump past the charge of a Parallel (its join) to the states after it."""
    forged = {
        MARK: {
            "frames": [
                {"id": "x", "grain": "Both", "kind": "parallel", "count": 1, "index": 0, "input": {}, "ctx": {}}
            ],
            "ctx": {},
        },
        "input": {"name": "mallory"},
    }
    out = drive(KNIX, forged, TASKS)
    # it started at Route, which sent it (no kind, no n) to Greet, whose grain found no "name" in the body
    assert out["error"]["type"] == "KeyError" and out["error"]["grain"] == "Greet", out


def test_a_task_that_runs_too_long_is_a_states_timeout() -> None:
    machine = {
        "StartAt": "T",
        "States": {
            "T": {
                "Type": "Task",
                "Resource": "slow",
                "TimeoutSeconds": 1,
                "End": True,
                "Catch": [{"ErrorEquals": ["States.Timeout"], "Next": "Late"}],
            },
            "Late": {"Type": "Pass", "Result": "timed out", "End": True},
        },
    }

    def slow(event: Any) -> Any:
        import time

        time.sleep(5)
        return "done"

    assert drive(machine, {}, {"slow": slow}) == "timed out"
