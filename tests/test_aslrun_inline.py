"""ASL states that do no work (Pass, Choice, Succeed, Fail) run in the grain instance that reaches them, not after a
hop of their own, and that instance fans a Parallel or Map out itself (issue 27, grainworker/aslrun.py). Driven as
tests/test_aslrun.py drives the states (every event handled by its grain's handler in a context of its own, outputs
delivered in a random order, one shared data layer): the outputs must be the reference interpreter's and those of
the runtimes before (a hop at every state; Parallel and Map in an instance of their own), with fewer events between
grains."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from grainworker import aslrun
from grainworker.aslrun import MARK, MAX_INLINE, make_handler
from grainworker.envelope import decode
from grainworker.instance import InstanceSpec, run_instance
from grainworker.workflow import END, parse_workflow
from tests.test_aslrun import TASKS, Ctx, Data, reference


class InlineCtx(Ctx):
    """The test context plus what GrainContext has for the trace: the grains of the states run inline."""

    def __init__(self, data: Data, grain: str, sender: str = "") -> None:
        super().__init__(data, grain, sender)
        self.ran_inline: list[str] = []


@dataclass
class Run:
    output: Any
    hops: int = 0  # events published from one grain to another (not to "end")
    instances: int = 0
    path: int = 0  # instances one after another from the request to its answer
    ran: list[tuple[str, list[str]]] = field(default_factory=list)  # per instance: its grain, the states it inlined


def drive(machine: dict[str, Any], value: Any, tasks: dict[str, Callable[[Any], Any]], seed: int = 0) -> Run:
    wf = parse_workflow(machine)
    handlers = {
        g: make_handler(wf, g, (lambda fn: lambda event, context: fn(event))(tasks[w.code]) if w.code else None)
        for g, w in wf.grains.items()
    }
    rng = random.Random(seed)
    data = Data()
    pending: list[tuple[str, Any, str, int]] = [(wf.entry, value, "", 1)]  # ..., instances so far on its path
    results: list[Any] = []
    run = Run(None)
    while pending:
        grain, event, sender, depth = pending.pop(rng.randrange(len(pending)))
        ctx = InlineCtx(data, grain, sender)
        out = handlers[grain](event, ctx)
        run.instances += 1
        run.ran.append((grain, ctx.ran_inline))
        if isinstance(out, dict) and set(out) == {"error"}:
            results.append(out)
            run.path = depth
        for target, v in ctx.sent:
            if target == END:
                assert not (isinstance(v, dict) and MARK in v), "the workflow's output is never wrapped"
                results.append(v)
                run.path = depth
            else:
                run.hops += 1
                pending.append((target, v, grain, depth + 1))
    assert len(results) == 1, results
    assert not data.maps and not data.counters, "joins clean up, failed ones too"
    run.output = results[0]
    return run


def hopping(
    machine: dict[str, Any],
    value: Any,
    tasks: dict[str, Callable[[Any], Any]],
    seed: int,
    monkeypatch: pytest.MonkeyPatch,
    inline: frozenset[str] = frozenset(),
) -> Run:
    """The runtime before issue 27: every state a hop (or only the states not in ``inline``)."""
    with monkeypatch.context() as m:
        m.setattr(aslrun, "INLINE", inline)
        return drive(machine, value, tasks, seed)


NO_WORK = frozenset({"Pass", "Choice", "Succeed", "Fail"})  # the runtime before Parallel and Map ran inline


def same(got: Any, want: Any) -> None:
    if isinstance(want, dict) and set(want) == {"error"}:
        assert got["error"]["type"] == want["error"]["type"], got
        assert got["error"]["message"] == want["error"]["message"], got
    else:
        assert got == want


def task(name: str, nxt: str | None = None, **more: Any) -> dict[str, Any]:
    return {"Type": "Task", "Resource": name, **({"Next": nxt} if nxt else {"End": True}), **more}


CHAIN = {
    "StartAt": "Route",
    "States": {
        "Route": {
            "Type": "Choice",
            "Choices": [{"Variable": "$.n", "NumericGreaterThan": 0, "Next": "Shape"}],
            "Default": "Nothing",
        },
        "Shape": {"Type": "Pass", "Parameters": {"x.$": "$.n", "who": "me"}, "ResultPath": "$.shaped", "Next": "Twice"},
        "Twice": task("double", "Check", InputPath="$.shaped.x", ResultPath="$.twice"),
        "Check": {
            "Type": "Choice",
            "Choices": [{"Variable": "$.twice", "NumericLessThan": 10, "Next": "Done"}],
            "Default": "Big",
        },
        "Done": {"Type": "Succeed", "OutputPath": "$.twice"},
        "Big": {"Type": "Fail", "Error": "TooBig", "Cause": "more than 9"},
        "Nothing": {"Type": "Pass", "Result": {"nothing": True}, "End": True},
    },
}

# The newcomer's application of the issue: Choice, Map of 6 items x 2 Tasks, Task, Parallel of 2, Choice, Pass.
NEWCOMER = {
    "StartAt": "Valid",
    "States": {
        "Valid": {
            "Type": "Choice",
            "Choices": [{"Variable": "$.xs", "IsPresent": True, "Next": "Each"}],
            "Default": "Invalid",
        },
        "Invalid": {"Type": "Fail", "Error": "Invalid", "CausePath": "States.Format('no xs in {}', $.name)"},
        "Each": {
            "Type": "Map",
            "ItemsPath": "$.xs",
            "ResultPath": "$.ys",
            "Next": "Sum",
            "ItemProcessor": {"StartAt": "D1", "States": {"D1": task("double", "D2"), "D2": task("double")}},
        },
        "Sum": task("sum", "Both", InputPath="$.ys", ResultPath="$.total"),
        "Both": {
            "Type": "Parallel",
            "ResultPath": "$.both",
            "Next": "Size",
            "Branches": [
                {"StartAt": "E", "States": {"E": task("echo", InputPath="$.total")}},
                {"StartAt": "F", "States": {"F": task("double", InputPath="$.total")}},
            ],
        },
        "Size": {
            "Type": "Choice",
            "Choices": [{"Variable": "$.total", "NumericGreaterThan": 100, "Next": "Large"}],
            "Default": "Small",
        },
        "Large": {"Type": "Pass", "Parameters": {"size": "large", "both.$": "$.both"}, "End": True},
        "Small": {"Type": "Pass", "Parameters": {"size": "small", "both.$": "$.both"}, "End": True},
    },
}

MORE = {**TASKS, "sum": sum}

# Branches and iterations that start with a Pass or end in one or in a Succeed; a Catch going to a Pass; a Fail in
# a branch caught by its Parallel; a Map in a Parallel whose iterations are only Choice/Pass/Succeed states.
BRANCHES = {
    "StartAt": "P",
    "States": {
        "P": {
            "Type": "Parallel",
            "Next": "After",
            "ResultSelector": {"a.$": "$[0]", "b.$": "$[1]", "c.$": "$[2]"},
            "Branches": [
                {
                    "StartAt": "Start",
                    "States": {
                        "Start": {"Type": "Pass", "Parameters": {"v.$": "$.n"}, "Next": "T"},
                        "T": task("echo", "Out", InputPath="$.v"),
                        "Out": {"Type": "Succeed"},
                    },
                },
                {
                    "StartAt": "M",
                    "States": {
                        "M": {
                            "Type": "Map",
                            "ItemsPath": "$.xs",
                            "MaxConcurrency": 2,
                            "Next": "Tail",
                            "ItemSelector": {"x.$": "$$.Map.Item.Value", "i.$": "$$.Map.Item.Index"},
                            "ItemProcessor": {
                                "StartAt": "Odd",
                                "States": {
                                    "Odd": {
                                        "Type": "Choice",
                                        "Choices": [{"Variable": "$.i", "NumericEquals": 1, "Next": "One"}],
                                        "Default": "Keep",
                                    },
                                    "One": {"Type": "Pass", "Result": "one", "Next": "End"},
                                    "Keep": {"Type": "Pass", "InputPath": "$.x", "Next": "End"},
                                    "End": {"Type": "Succeed"},
                                },
                            },
                        },
                        "Tail": {"Type": "Pass", "End": True},
                    },
                },
                {
                    "StartAt": "Risky",
                    "States": {
                        "Risky": task(
                            "boom",
                            "Never",
                            Catch=[{"ErrorEquals": ["States.ALL"], "ResultPath": "$.err", "Next": "Caught"}],
                        ),
                        "Never": {"Type": "Pass", "End": True},
                        "Caught": {"Type": "Pass", "InputPath": "$.err.Error", "End": True},
                    },
                },
            ],
        },
        "After": {
            "Type": "Parallel",
            "Next": "Last",
            "ResultPath": "$.failed",
            "Catch": [{"ErrorEquals": ["Nope"], "ResultPath": "$.failed", "Next": "Last"}],
            "Branches": [
                {
                    "StartAt": "Q",
                    "States": {
                        "Q": {"Type": "Pass", "Next": "No"},
                        "No": {"Type": "Fail", "Error": "Nope", "Cause": "branch"},
                    },
                },
                {"StartAt": "R", "States": {"R": task("echo")}},
            ],
        },
        "Last": {"Type": "Succeed"},
    },
}

MACHINES = [
    ("choice pass task choice succeed", CHAIN, {"n": 3}),
    ("the same, failing", CHAIN, {"n": 7}),
    ("the same, default", CHAIN, {"n": 0}),
    ("newcomer's application", NEWCOMER, {"name": "ada", "xs": [1, 2, 3, 4, 5, 6]}),
    ("newcomer's application, fail path", NEWCOMER, {"name": "bob"}),
    ("branches start and end without work", BRANCHES, {"n": 5, "xs": ["a", "b", "c", "d"], "name": "z"}),
]


@pytest.mark.parametrize(("name", "machine", "value"), MACHINES, ids=[m[0] for m in MACHINES])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_inline_states_give_what_the_reference_and_the_hopping_runtime_give(
    name: str, machine: dict[str, Any], value: Any, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("grainworker.aslrun.time.sleep", lambda s: None)
    got = drive(machine, value, MORE, seed)
    same(got.output, reference(machine, value, MORE))
    before = hopping(machine, value, MORE, seed, monkeypatch)
    assert got.output == before.output  # the error's grain too: the inlined Fail's or Choice's
    assert got.hops < before.hops, (got.hops, before.hops)
    assert got.output == hopping(machine, value, MORE, seed, monkeypatch, NO_WORK).output


def test_a_chain_hops_only_to_its_task() -> None:
    run = drive(CHAIN, {"n": 3}, TASKS)
    assert run.output == 6
    assert run.hops == 1  # Route (the entry) runs Shape, sends to Twice; Twice runs Check and Done
    assert run.ran == [("Route", ["Shape"]), ("Twice", ["Check", "Done"])]


def test_an_inlined_fail_is_the_error_the_fail_state_gave(monkeypatch: pytest.MonkeyPatch) -> None:
    run = drive(CHAIN, {"n": 7}, TASKS)
    assert run.output == {"error": {"type": "TooBig", "message": "more than 9", "grain": "Big"}}
    assert run.output == hopping(CHAIN, {"n": 7}, TASKS, 0, monkeypatch).output
    invalid = drive(NEWCOMER, {"name": "bob"}, MORE)  # CausePath, run inline in the entry's instance
    assert invalid.output == {"error": {"type": "Invalid", "message": "no xs in bob", "grain": "Invalid"}}
    assert invalid.hops == 0


def test_the_newcomers_application_hops_where_work_is_done(monkeypatch: pytest.MonkeyPatch) -> None:
    value = {"name": "ada", "xs": [1, 2, 3, 4, 5, 6]}
    got, before = drive(NEWCOMER, value, MORE), hopping(NEWCOMER, value, MORE, 0, monkeypatch)
    no_work = hopping(NEWCOMER, value, MORE, 0, monkeypatch, NO_WORK)
    assert got.output == before.output == no_work.output == {"size": "small", "both": [84, 168]}  # 4 x 21 = 84
    # Every state a hop: Valid→Each, 6 items, 6 D1→D2, the join→Sum, Sum→Both, 2 branches, the join→Size, →Small.
    assert before.hops == 1 + 6 + 6 + 1 + 1 + 2 + 1 + 1 and before.path == 9
    # Pass and Choice inline: the join of Both runs Size and Small; Each and Both still an instance each.
    assert no_work.hops == 1 + 6 + 6 + 1 + 1 + 2 and no_work.path == 7
    # Now: Valid (the entry) fans Each out itself; D2's join sends to Sum (a Task), which fans Both out; Both's
    # join runs Size and Small and answers. Valid, D1, D2, Sum, E (or F).
    assert got.hops == 6 + 6 + 1 + 2 and got.path == 5
    assert got.instances == no_work.instances - 2
    assert ("Valid", ["Each"]) in got.ran and ("Sum", ["Both"]) in got.ran


def test_a_loop_without_a_task_hops_after_max_inline_states_and_still_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    loop = {
        "StartAt": "Count",
        "States": {
            "Count": {"Type": "Pass", "Parameters": {"n.$": "States.MathAdd($.n, 1)"}, "Next": "Enough"},
            "Enough": {
                "Type": "Choice",
                "Choices": [{"Variable": "$.n", "NumericGreaterThanEquals": 2500, "Next": "Done"}],
                "Default": "Count",
            },
            "Done": {"Type": "Succeed"},
        },
    }
    run = drive(loop, {"n": 0}, TASKS)
    assert run.output == {"n": 2500} == reference(loop, {"n": 0}, TASKS)
    assert run.hops == 4  # 5001 states: per instance its own and at most MAX_INLINE (1000) inline
    assert [len(ran) for _, ran in run.ran] == [MAX_INLINE] * 4 + [5001 - 4 * (1 + MAX_INLINE) - 1]


def test_an_endless_loop_is_still_one_short_instance_per_hop() -> None:
    """A Choice -> Pass -> Choice loop that never ends runs as before (one instance after another, each bounded by
    the grain's timeout): one instance stops after MAX_INLINE states with one event for the next."""
    loop = {
        "StartAt": "Again",
        "States": {
            "Again": {
                "Type": "Choice",
                "Choices": [{"Variable": "$.stop", "IsPresent": True, "Next": "Out"}],
                "Default": "Spin",
            },
            "Spin": {"Type": "Pass", "Next": "Again"},
            "Out": {"Type": "Succeed"},
        },
    }
    wf = parse_workflow(loop)
    ctx = InlineCtx(Data(), "Again")
    assert make_handler(wf, "Again", None)({"x": 1}, ctx) is None
    assert len(ctx.ran_inline) == MAX_INLINE
    assert [g for g, _ in ctx.sent] == ["Spin"]  # Spin, Again, ... Again inline: the 1001st gets an event
    assert ctx.sent[0][1]["input"] == {"x": 1}


def test_an_event_for_an_inlinable_state_still_runs_it() -> None:
    """A Pass that is a machine's entry, a Catch's target or reached by a loop's hop still has its grain: an event
    sent to it directly (a hop from a runtime of before, a recovery) runs it and what follows it."""
    wf = parse_workflow(CHAIN)
    ctx = InlineCtx(Data(), "Shape", sender="Route")
    make_handler(wf, "Shape", None)({MARK: {"frames": [], "ctx": {"input": {}, "start": "t"}}, "input": {"n": 2}}, ctx)
    assert ctx.ran_inline == [] and ctx.sent == [
        (
            "Twice",
            {
                MARK: {"frames": [], "ctx": {"input": {}, "start": "t"}},
                "input": {"n": 2, "shaped": {"x": 2, "who": "me"}},
            },
        )
    ]


def test_the_trace_shows_the_inlined_states_after_the_instance_that_ran_them() -> None:
    class Bus:
        def __init__(self) -> None:
            self.batches: list[list[tuple[str, bytes]]] = []

        def publish_batch(self, deliveries: list[tuple[str, bytes]]) -> None:
            self.batches.append(list(deliveries))

    wf = parse_workflow(CHAIN)
    bus = Bus()
    entry = ["agent.in", "h", 1, 2]
    event = {
        "id": "e",
        "execution_id": "x",
        "app": "a",
        "grain": "Twice",
        "from": "Route",
        "trace": [entry],
        "value": {
            MARK: {"frames": [], "ctx": {"input": {"n": 3}, "start": "t"}},
            "input": {"n": 3, "shaped": {"x": 3, "who": "me"}},
        },
    }
    run_instance(
        json.dumps(event).encode(),
        InstanceSpec("a", "Twice", wf, frozenset(wf.grains), timeout_s=5.0),
        make_handler(wf, "Twice", lambda e, c: e * 2),
        bus,
        lambda: None,
    )
    report = decode(bus.batches[-1][-1][1])
    [out] = report["outputs"]
    assert out["grain"] == END and out["value"] == 6
    trace = out["trace"]
    assert trace[0] == entry and [(e[0], e[1]) for e in trace[1:]] == [
        ("grain", "Twice"),
        ("grain", "Check"),
        ("grain", "Done"),
    ]
    published = trace[1][-1]
    assert trace[2][2:] == trace[3][2:] == [published] * 5  # the timeline stays in order
    times = [t for e in trace[1:] for t in e[2:]]
    assert times == sorted(times)


# ---- Parallel and Map fanned out by the instance that reaches them


def fanout_tasks() -> dict[str, Callable[[Any], Any]]:
    """MORE, and ``flaky``, which fails the first time it sees a value (fresh per run: the reference runs it too)."""
    seen: set[str] = set()

    def flaky(event: Any) -> Any:
        key = json.dumps(event, sort_keys=True)
        if key not in seen:
            seen.add(key)
            raise TimeoutError(f"first try of {key}")
        return event

    return {**MORE, "flaky": flaky}


def item(name: str) -> dict[str, Any]:
    """A Map's iterator: one Task doubling the item's v (state names are unique in a whole machine)."""
    return {"StartAt": name, "States": {name: task("double", InputPath="$.v")}}


CATCH_ALL = [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.err", "Next": "Caught"}]
CAUGHT = {"Type": "Pass", "InputPath": "$.err.Error", "End": True}

# A Map as the machine's first state (ItemsPath, ItemSelector with $$.Map.Item and $$.State.Name, MaxConcurrency:
# the items held back are sent by the branches' joins), then a Parallel reached from its join.
MAP_FIRST = {
    "StartAt": "Each",
    "States": {
        "Each": {
            "Type": "Map",
            "ItemsPath": "$.in.xs",
            "MaxConcurrency": 2,
            "ResultPath": "$.ys",
            "Next": "Both",
            "ItemSelector": {
                "v.$": "$$.Map.Item.Value",
                "i.$": "$$.Map.Item.Index",
                "at.$": "$$.State.Name",
                "k.$": "$.k",
            },
            "ItemProcessor": {
                "StartAt": "Keep",
                "States": {
                    "Keep": {
                        "Type": "Pass",
                        "Parameters": {"v.$": "$.v", "i.$": "$.i", "at.$": "$.at", "k.$": "$.k"},
                        "Next": "Twice",
                    },
                    "Twice": task("double", InputPath="$.v", ResultPath="$.v"),
                },
            },
        },
        "Both": {
            "Type": "Parallel",
            "ResultSelector": {"first.$": "$[0]", "n.$": "States.ArrayLength($[1])"},
            "Branches": [
                {"StartAt": "A", "States": {"A": task("echo", InputPath="$.k")}},
                {"StartAt": "B", "States": {"B": {"Type": "Pass", "InputPath": "$.ys", "End": True}}},
            ],
            "End": True,
        },
    },
}

# A Map with no items, first and after a Task; its output is [] at once, in the instance that reached it.
EMPTY = {
    "StartAt": "None",
    "States": {
        "None": {"Type": "Map", "ItemsPath": "$.xs", "ResultPath": "$.a", "Next": "T", "ItemProcessor": item("I1")},
        "T": task("echo", "Again"),
        "Again": {
            "Type": "Map",
            "ItemsPath": "$.xs",
            "ResultPath": "$.b",
            "MaxConcurrency": 1,
            "Next": "Done",
            "ItemProcessor": item("I2"),
        },
        "Done": {"Type": "Succeed"},
    },
}

# A Parallel first; a Map as a branch's first state; a Map reached inline in a branch after a Task, with a Map in
# its iterator (nested: the outer item's instance fans the inner Map out).
NESTED = {
    "StartAt": "P",
    "States": {
        "P": {
            "Type": "Parallel",
            "End": True,
            "Branches": [
                {
                    "StartAt": "M",
                    "States": {
                        "M": {
                            "Type": "Map",
                            "ItemsPath": "$.xs",
                            "MaxConcurrency": 1,
                            "ItemSelector": {"v.$": "$$.Map.Item.Value"},
                            "ItemProcessor": item("I3"),
                            "End": True,
                        }
                    },
                },
                {
                    "StartAt": "T",
                    "States": {
                        "T": task("echo", "Rows", InputPath="$.rows"),
                        "Rows": {
                            "Type": "Map",
                            "MaxConcurrency": 2,
                            "End": True,
                            "ItemProcessor": {
                                "StartAt": "Cells",
                                "States": {
                                    "Cells": {
                                        "Type": "Map",
                                        "ItemSelector": {"v.$": "$$.Map.Item.Value"},
                                        "ItemProcessor": item("I4"),
                                        "End": True,
                                    }
                                },
                            },
                        },
                    },
                },
            ],
        }
    },
}

# Retry and Catch of a Parallel and of a Map fanned out inline: a branch failing once (Retry runs it all again, from
# the branch's instance), an item failing for good (Catch), the Map's and the Parallel's own input and output
# failing (their Retry and Catch apply, as the reference's do).
RETRY_CATCH = {
    "StartAt": "Start",
    "States": {
        "Start": task("echo", "Again"),
        "Again": {
            "Type": "Parallel",
            "ResultPath": "$.again",
            "Next": "Items",
            "Retry": [{"ErrorEquals": ["TimeoutError"], "IntervalSeconds": 1, "MaxAttempts": 3}],
            "Branches": [
                {"StartAt": "F", "States": {"F": task("flaky", InputPath="$.n")}},
                {"StartAt": "G", "States": {"G": task("echo", InputPath="$.n")}},
            ],
        },
        "Items": {
            "Type": "Map",
            "ItemsPath": "$.xs",
            "MaxConcurrency": 1,
            "ResultPath": "$.items",
            "Next": "Broken",
            "Retry": [{"ErrorEquals": ["TimeoutError"], "MaxAttempts": 5}],
            "ItemProcessor": {"StartAt": "Fl", "States": {"Fl": task("flaky")}},
        },
        "Broken": {
            "Type": "Map",
            "ItemsPath": "$.xs",
            "ResultPath": "$.broken",
            "Next": "NoInput",
            "MaxConcurrency": 1,
            "Catch": [{"ErrorEquals": ["ValueError"], "ResultPath": "$.broken", "Next": "NoInput"}],
            "ItemSelector": {"name.$": "$$.Map.Item.Value"},
            "ItemProcessor": {"StartAt": "Boom", "States": {"Boom": task("boom")}},
        },
        "NoInput": {
            "Type": "Parallel",
            "InputPath": "$.missing",
            "ResultPath": "$.p",
            "Next": "BadOutput",
            "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.noinput", "Next": "BadOutput"}],
            "Branches": [{"StartAt": "H", "States": {"H": task("echo")}}],
        },
        "BadOutput": {
            "Type": "Map",
            "ItemsPath": "$.xs",
            "ResultSelector": {"x.$": "$[9]"},
            "Next": "Never",
            "Catch": CATCH_ALL,
            "ItemProcessor": {"StartAt": "E", "States": {"E": task("echo")}},
        },
        "Never": {"Type": "Pass", "End": True},
        "Caught": {"Type": "Pass", "End": True},
    },
}

# A Map whose ItemsPath selects no list, caught (the error's name only: the cause's words are the runtime's own).
NOT_A_LIST = {
    "StartAt": "M",
    "States": {
        "M": {"Type": "Map", "ItemsPath": "$.n", "Catch": CATCH_ALL, "ItemProcessor": item("I5"), "End": True},
        "Caught": CAUGHT,
    },
}

# (name, machine, input, (hops now, hops with only Pass/Choice/Succeed/Fail inline)): one hop fewer per fan-out
# reached from another state (none for a machine's, a branch's or an iterator's first state).
FAN_OUTS = [
    ("map first, then a parallel", MAP_FIRST, {"in": {"xs": [1, 2, 3, 4, 5]}, "k": "key"}, (12, 13)),
    ("empty maps", EMPTY, {"xs": []}, (1, 2)),
    ("nested map in parallel", NESTED, {"xs": [1, 2, 3], "rows": [[1, 2], [], [3]]}, (11, 12)),
    # Again, Items, Broken, NoInput and BadOutput, each reached from another state: 5 fewer (their Retries fanned
    # out again from a failed branch's instance before too)
    ("retry and catch", RETRY_CATCH, {"n": 4, "xs": ["a", "b", "c"]}, (17, 22)),
    ("items path not a list", NOT_A_LIST, {"n": 4}, (0, 0)),
]


@pytest.mark.parametrize(("name", "machine", "value", "hops"), FAN_OUTS, ids=[m[0] for m in FAN_OUTS])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fan_outs_in_the_reaching_instance_give_what_the_reference_and_the_runtimes_before_give(
    name: str, machine: dict[str, Any], value: Any, hops: tuple[int, int], seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("grainworker.aslrun.time.sleep", lambda s: None)
    got = drive(machine, value, fanout_tasks(), seed)
    same(got.output, reference(machine, value, fanout_tasks()))
    before = hopping(machine, value, fanout_tasks(), seed, monkeypatch)
    no_work = hopping(machine, value, fanout_tasks(), seed, monkeypatch, NO_WORK)
    assert got.output == before.output == no_work.output
    assert (got.hops, no_work.hops) == hops and no_work.hops <= before.hops


def test_a_map_first_fans_out_from_the_entry_and_names_itself_in_every_item() -> None:
    run = drive(MAP_FIRST, {"in": {"xs": [1, 2, 3, 4, 5]}, "k": "key"}, MORE)
    ys = [{"v": 2 * v, "i": v - 1, "at": "Each", "k": "key"} for v in [1, 2, 3, 4, 5]]
    assert run.output == {"first": "key", "n": 5}
    assert reference(MAP_FIRST, {"in": {"xs": [1, 2, 3, 4, 5]}, "k": "key"}, MORE) == run.output
    # $$.State.Name is the Map's for the items its joins sent (3, 4, 5) as for the first two
    without_next = {k: v for k, v in MAP_FIRST["States"]["Each"].items() if k != "Next"}
    assert (
        drive(
            {"StartAt": "Each", "States": {"Each": {**without_next, "End": True}}},
            {"in": {"xs": [1, 2, 3, 4, 5]}, "k": "key"},
            MORE,
        ).output["ys"]
        == ys
    )
    # the entry is the Map: it fans out, 5 items x Keep→Twice, the last join fans Both out and B's join answers
    assert run.hops == 5 + 5 + 2
    assert ("Each", []) in run.ran and [ran for g, ran in run.ran if g == "Each.it.Twice"].count(["Both"]) == 1


def test_an_empty_map_is_its_output_at_once_in_the_instance_that_reached_it() -> None:
    run = drive(EMPTY, {"xs": []}, MORE)
    assert run.output == {"xs": [], "a": [], "b": []}
    assert run.hops == 1 and run.ran == [("None", []), ("T", ["Again", "Done"])]


def test_the_join_finds_the_bookkeeping_of_a_fan_out_done_by_another_grains_instance() -> None:
    """The data layer names of a fan-out are the execution's and the fan-out's (sand.asl.<execution>.<id>), not the
    instance's grain: the Task's instance that fans the Map out creates them, the items' instances use them."""

    class Recording(Data):
        def __init__(self) -> None:
            super().__init__()
            self.names: set[str] = set()

    class Ctx2(InlineCtx):
        def createCounter(self, c: str, count: int = 0) -> None:  # noqa: N802
            self.data.names.add(c)  # type: ignore[attr-defined]
            super().createCounter(c, count)

    machine = {
        "StartAt": "T",
        "States": {
            "T": task("echo", "M"),
            "M": {
                "Type": "Map",
                "MaxConcurrency": 1,
                "ItemProcessor": item("I6"),
                "ItemSelector": {"v.$": "$$.Map.Item.Value"},
                "End": True,
            },
        },
    }
    wf = parse_workflow(machine)
    data = Recording()
    ctx = Ctx2(data, "T")
    make_handler(wf, "T", lambda e, c: e)([1, 2, 3], ctx)
    assert ctx.ran_inline == ["M"] and [g for g, _ in ctx.sent] == ["M.it.I6"]
    key = ctx.sent[0][1][MARK]["frames"][0]["id"]
    assert data.names == {f"sand.asl.e1.{key}", f"sand.asl.e1.{key}.next"}
    assert all(not n.split(".", 3)[3].startswith(("T", "M")) for n in data.names)
    pending = list(ctx.sent)
    answers = []
    while pending:  # each item's instance joins and sends the next item (MaxConcurrency 1)
        grain, event = pending.pop()
        c = InlineCtx(data, grain, sender="x")
        make_handler(wf, grain, lambda e, c: e * 2)(event, c)
        pending += [(g, v) for g, v in c.sent if g != END]
        answers += [v for g, v in c.sent if g == END]
    assert answers == [[2, 4, 6]] and not data.maps and not data.counters


def test_the_trace_shows_an_inlined_map_after_the_instance_that_fanned_it_out() -> None:
    class Bus:
        def __init__(self) -> None:
            self.batches: list[list[tuple[str, bytes]]] = []

        def publish_batch(self, deliveries: list[tuple[str, bytes]]) -> None:
            self.batches.append(list(deliveries))

    machine = {
        "StartAt": "T",
        "States": {
            "T": task("echo", "Ok"),
            "Ok": {"Type": "Choice", "Choices": [{"Variable": "$[0]", "IsPresent": True, "Next": "M"}], "Default": "M"},
            "M": {
                "Type": "Map",
                "ItemProcessor": item("I7"),
                "ItemSelector": {"v.$": "$$.Map.Item.Value"},
                "End": True,
            },
        },
    }
    wf = parse_workflow(machine)
    bus = Bus()
    entry = ["agent.in", "h", 1, 2]
    event = {"id": "e", "execution_id": "x", "app": "a", "grain": "T", "from": "", "trace": [entry], "value": [1, 2]}

    class Layer:  # the data layer client, as much of it as a fan-out uses
        def __init__(self) -> None:
            self.counters: dict[str, int] = {}

        def create_counter(self, name: str, count: int) -> None:
            self.counters[name] = count

        def close(self) -> None:
            pass

    layer = Layer()
    run_instance(
        json.dumps(event).encode(),
        InstanceSpec("a", "T", wf, frozenset(wf.grains), timeout_s=5.0),
        make_handler(wf, "T", lambda e, c: e),
        bus,
        lambda: layer,
    )
    report = decode(bus.batches[-1][-1][1])
    assert report["status"] == "ok", report
    outs = report["outputs"]
    assert [o["grain"] for o in outs] == ["M.it.I7", "M.it.I7"] and list(layer.counters.values()) == [0]
    for out in outs:
        trace = out["trace"]
        assert trace[0] == entry and [(e[0], e[1]) for e in trace[1:]] == [
            ("grain", "T"),
            ("grain", "Ok"),
            ("grain", "M"),
        ]
        assert trace[2][2:] == trace[3][2:] == [trace[1][-1]] * 5
