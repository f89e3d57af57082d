"""ASL states that do no work (Pass, Choice, Succeed, Fail) run in the grain instance that reaches them, not after a
hop of their own (issue 27, grainworker/aslrun.py). Driven as tests/test_aslrun.py drives the states (every event
handled by its grain's handler in a context of its own, outputs delivered in a random order, one shared data layer):
the outputs must be the reference interpreter's and those of the runtime that hops at every state, with fewer
events between grains."""

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
    ran: list[tuple[str, list[str]]] = field(default_factory=list)  # per instance: its grain, the states it inlined


def drive(machine: dict[str, Any], value: Any, tasks: dict[str, Callable[[Any], Any]], seed: int = 0) -> Run:
    wf = parse_workflow(machine)
    handlers = {g: make_handler(wf, g, (lambda fn: (lambda event, context: fn(event)))(tasks[w.code])
                                if w.code else None) for g, w in wf.grains.items()}
    rng = random.Random(seed)
    data = Data()
    pending: list[tuple[str, Any, str]] = [(wf.entry, value, "")]
    results: list[Any] = []
    run = Run(None)
    while pending:
        grain, event, sender = pending.pop(rng.randrange(len(pending)))
        ctx = InlineCtx(data, grain, sender)
        out = handlers[grain](event, ctx)
        run.instances += 1
        run.ran.append((grain, ctx.ran_inline))
        if isinstance(out, dict) and set(out) == {"error"}:
            results.append(out)
        for target, v in ctx.sent:
            if target == END:
                assert not (isinstance(v, dict) and MARK in v), "the workflow's output is never wrapped"
                results.append(v)
            else:
                run.hops += 1
                pending.append((target, v, grain))
    assert len(results) == 1, results
    assert not data.maps and not data.counters, "joins clean up, failed ones too"
    run.output = results[0]
    return run


def hopping(machine: dict[str, Any], value: Any, tasks: dict[str, Callable[[Any], Any]], seed: int,
            monkeypatch: pytest.MonkeyPatch) -> Run:
    """The runtime before issue 27: every state a hop."""
    with monkeypatch.context() as m:
        m.setattr(aslrun, "INLINE", frozenset())
        return drive(machine, value, tasks, seed)


def same(got: Any, want: Any) -> None:
    if isinstance(want, dict) and set(want) == {"error"}:
        assert got["error"]["type"] == want["error"]["type"], got
        assert got["error"]["message"] == want["error"]["message"], got
    else:
        assert got == want


def task(name: str, nxt: str | None = None, **more: Any) -> dict[str, Any]:
    return {"Type": "Task", "Resource": name, **({"Next": nxt} if nxt else {"End": True}), **more}


CHAIN = {"StartAt": "Route", "States": {
    "Route": {"Type": "Choice", "Choices": [{"Variable": "$.n", "NumericGreaterThan": 0, "Next": "Shape"}],
              "Default": "Nothing"},
    "Shape": {"Type": "Pass", "Parameters": {"x.$": "$.n", "who": "me"}, "ResultPath": "$.shaped", "Next": "Twice"},
    "Twice": task("double", "Check", InputPath="$.shaped.x", ResultPath="$.twice"),
    "Check": {"Type": "Choice", "Choices": [{"Variable": "$.twice", "NumericLessThan": 10, "Next": "Done"}],
              "Default": "Big"},
    "Done": {"Type": "Succeed", "OutputPath": "$.twice"},
    "Big": {"Type": "Fail", "Error": "TooBig", "Cause": "more than 9"},
    "Nothing": {"Type": "Pass", "Result": {"nothing": True}, "End": True}}}

# The newcomer's application of the issue: Choice, Map of 6 items x 2 Tasks, Task, Parallel of 2, Choice, Pass.
NEWCOMER = {"StartAt": "Valid", "States": {
    "Valid": {"Type": "Choice", "Choices": [{"Variable": "$.xs", "IsPresent": True, "Next": "Each"}],
              "Default": "Invalid"},
    "Invalid": {"Type": "Fail", "Error": "Invalid", "CausePath": "States.Format('no xs in {}', $.name)"},
    "Each": {"Type": "Map", "ItemsPath": "$.xs", "ResultPath": "$.ys", "Next": "Sum",
             "ItemProcessor": {"StartAt": "D1", "States": {"D1": task("double", "D2"), "D2": task("double")}}},
    "Sum": task("sum", "Both", InputPath="$.ys", ResultPath="$.total"),
    "Both": {"Type": "Parallel", "ResultPath": "$.both", "Next": "Size",
             "Branches": [{"StartAt": "E", "States": {"E": task("echo", InputPath="$.total")}},
                          {"StartAt": "F", "States": {"F": task("double", InputPath="$.total")}}]},
    "Size": {"Type": "Choice", "Choices": [{"Variable": "$.total", "NumericGreaterThan": 100, "Next": "Large"}],
             "Default": "Small"},
    "Large": {"Type": "Pass", "Parameters": {"size": "large", "both.$": "$.both"}, "End": True},
    "Small": {"Type": "Pass", "Parameters": {"size": "small", "both.$": "$.both"}, "End": True}}}

MORE = {**TASKS, "sum": sum}

# Branches and iterations that start with a Pass or end in one or in a Succeed; a Catch going to a Pass; a Fail in
# a branch caught by its Parallel; a Map in a Parallel whose iterations are only Choice/Pass/Succeed states.
BRANCHES = {"StartAt": "P", "States": {
    "P": {"Type": "Parallel", "Next": "After", "ResultSelector": {"a.$": "$[0]", "b.$": "$[1]", "c.$": "$[2]"},
          "Branches": [
              {"StartAt": "Start", "States": {
                  "Start": {"Type": "Pass", "Parameters": {"v.$": "$.n"}, "Next": "T"},
                  "T": task("echo", "Out", InputPath="$.v"),
                  "Out": {"Type": "Succeed"}}},
              {"StartAt": "M", "States": {
                  "M": {"Type": "Map", "ItemsPath": "$.xs", "MaxConcurrency": 2, "Next": "Tail",
                        "ItemSelector": {"x.$": "$$.Map.Item.Value", "i.$": "$$.Map.Item.Index"},
                        "ItemProcessor": {"StartAt": "Odd", "States": {
                            "Odd": {"Type": "Choice", "Choices": [
                                {"Variable": "$.i", "NumericEquals": 1, "Next": "One"}], "Default": "Keep"},
                            "One": {"Type": "Pass", "Result": "one", "Next": "End"},
                            "Keep": {"Type": "Pass", "InputPath": "$.x", "Next": "End"},
                            "End": {"Type": "Succeed"}}}},
                  "Tail": {"Type": "Pass", "End": True}}},
              {"StartAt": "Risky", "States": {
                  "Risky": task("boom", "Never", Catch=[{"ErrorEquals": ["States.ALL"], "ResultPath": "$.err",
                                                          "Next": "Caught"}]),
                  "Never": {"Type": "Pass", "End": True},
                  "Caught": {"Type": "Pass", "InputPath": "$.err.Error", "End": True}}}]},
    "After": {"Type": "Parallel", "Next": "Last", "ResultPath": "$.failed",
              "Catch": [{"ErrorEquals": ["Nope"], "ResultPath": "$.failed", "Next": "Last"}],
              "Branches": [{"StartAt": "Q", "States": {"Q": {"Type": "Pass", "Next": "No"},
                                                       "No": {"Type": "Fail", "Error": "Nope", "Cause": "branch"}}},
                           {"StartAt": "R", "States": {"R": task("echo")}}]},
    "Last": {"Type": "Succeed"}}}

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
        name: str, machine: dict[str, Any], value: Any, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("grainworker.aslrun.time.sleep", lambda s: None)
    got = drive(machine, value, MORE, seed)
    same(got.output, reference(machine, value, MORE))
    before = hopping(machine, value, MORE, seed, monkeypatch)
    assert got.output == before.output  # the error's grain too: the inlined Fail's or Choice's
    assert got.hops < before.hops, (got.hops, before.hops)


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
    assert got.output == before.output == {"size": "small", "both": [84, 168]}  # 4 x (1 + ... + 6) = 84
    # Before: Valid→Each, 6 items, 6 D1→D2, the join→Sum, Sum→Both, 2 branches, the join→Size, Size→Small.
    assert before.hops == 1 + 6 + 6 + 1 + 1 + 2 + 1 + 1
    # Now: Valid (the entry) sends to Each (a Map), which fans out; its join goes to Sum (a Task), which sends to
    # Both; Both's join runs Size and Small itself and answers.
    assert got.hops == 1 + 6 + 6 + 1 + 1 + 2
    assert got.instances == before.instances - 2


def test_a_loop_without_a_task_hops_after_max_inline_states_and_still_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    loop = {"StartAt": "Count", "States": {
        "Count": {"Type": "Pass", "Parameters": {"n.$": "States.MathAdd($.n, 1)"}, "Next": "Enough"},
        "Enough": {"Type": "Choice", "Choices": [{"Variable": "$.n", "NumericGreaterThanEquals": 2500,
                                                  "Next": "Done"}], "Default": "Count"},
        "Done": {"Type": "Succeed"}}}
    run = drive(loop, {"n": 0}, TASKS)
    assert run.output == {"n": 2500} == reference(loop, {"n": 0}, TASKS)
    assert run.hops == 4  # 5001 states: per instance its own and at most MAX_INLINE (1000) inline
    assert [len(ran) for _, ran in run.ran] == [MAX_INLINE] * 4 + [5001 - 4 * (1 + MAX_INLINE) - 1]


def test_an_endless_loop_is_still_one_short_instance_per_hop() -> None:
    """A Choice -> Pass -> Choice loop that never ends runs as before (one instance after another, each bounded by
    the grain's timeout): one instance stops after MAX_INLINE states with one event for the next."""
    loop = {"StartAt": "Again", "States": {
        "Again": {"Type": "Choice", "Choices": [{"Variable": "$.stop", "IsPresent": True, "Next": "Out"}],
                  "Default": "Spin"},
        "Spin": {"Type": "Pass", "Next": "Again"},
        "Out": {"Type": "Succeed"}}}
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
    make_handler(wf, "Shape", None)({MARK: {"frames": [], "ctx": {"input": {}, "start": "t"}}, "input": {"n": 2}},
                                    ctx)
    assert ctx.ran_inline == [] and ctx.sent == [("Twice", {MARK: {"frames": [], "ctx": {"input": {}, "start": "t"}},
                                                           "input": {"n": 2, "shaped": {"x": 2, "who": "me"}}})]


def test_the_trace_shows_the_inlined_states_after_the_instance_that_ran_them() -> None:
    class Bus:
        def __init__(self) -> None:
            self.batches: list[list[tuple[str, bytes]]] = []

        def publish_batch(self, deliveries: list[tuple[str, bytes]]) -> None:
            self.batches.append(list(deliveries))

    wf = parse_workflow(CHAIN)
    bus = Bus()
    entry = ["agent.in", "h", 1, 2]
    event = {"id": "e", "execution_id": "x", "app": "a", "grain": "Twice", "from": "Route", "trace": [entry],
             "value": {MARK: {"frames": [], "ctx": {"input": {"n": 3}, "start": "t"}},
                       "input": {"n": 3, "shaped": {"x": 3, "who": "me"}}}}
    run_instance(json.dumps(event).encode(), InstanceSpec("a", "Twice", wf, frozenset(wf.grains), timeout_s=5.0),
                 make_handler(wf, "Twice", lambda e, c: e * 2), bus, lambda: None)
    report = decode(bus.batches[-1][-1][1])
    [out] = report["outputs"]
    assert out["grain"] == END and out["value"] == 6
    trace = out["trace"]
    assert trace[0] == entry and [(e[0], e[1]) for e in trace[1:]] == [("grain", "Twice"), ("grain", "Check"),
                                                                      ("grain", "Done")]
    published = trace[1][-1]
    assert trace[2][2:] == trace[3][2:] == [published] * 5  # the timeline stays in order
    times = [t for e in trace[1:] for t in e[2:]]
    assert times == sorted(times)
