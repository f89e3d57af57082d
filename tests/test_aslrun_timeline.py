"""The timeline of a fan-out (issue 29): the output that leaves a Parallel's or Map's join carries every branch's
(every item's) path, not only the last arrival's, each grain entry labelled with its state and branch or item, after
the fan-out's path; bounded by aslrun.MAX_TRACE. Driven as tests/test_aslrun.py drives the states, with the trace
each event carries (as grainworker/instance.py extends it)."""

from __future__ import annotations

import json
import random
import re
from typing import Any

from grainworker import aslrun
from grainworker.aslrun import make_handler
from grainworker.envelope import decode, grain_trace, inline_trace
from grainworker.instance import InstanceSpec, run_instance
from grainworker.workflow import END, parse_workflow
from tests.test_aslrun import TASKS, Data
from tests.test_aslrun_inline import InlineCtx, task


class TraceCtx(InlineCtx):
    """The test context plus the event (its trace) and the fields GrainContext has for a join's trace."""

    def __init__(self, data: Data, grain: str, sender: str, trace: list[Any]) -> None:
        super().__init__(data, grain, sender)
        self._event = {"execution_id": "e1", "trace": trace}
        self._grain = grain
        self.instance_times = (1, 2, 3)
        self.trace_override: list[Any] | None = None


def drive(machine: dict[str, Any], value: Any, seed: int = 0) -> tuple[Any, list[Any]]:
    """Run ``machine``; its output and the trace of the event that reached ``end``."""
    wf = parse_workflow(machine)
    handlers = {
        g: make_handler(wf, g, (lambda fn: lambda event, context: fn(event))(TASKS[w.code]) if w.code else None)
        for g, w in wf.grains.items()
    }
    rng = random.Random(seed)
    data = Data()
    pending: list[tuple[str, Any, str, list[Any]]] = [(wf.entry, value, "", [["frontend", "f", 0]])]
    ends: list[tuple[Any, list[Any]]] = []
    while pending:
        grain, event, sender, trace = pending.pop(rng.randrange(len(pending)))
        ctx = TraceCtx(data, grain, sender, trace)
        err = handlers[grain](event, ctx)
        assert err is None, err
        # as instance.py: the inherited trace (a join's merged one), this instance's entry, the states it inlined
        out = list(ctx.trace_override if ctx.trace_override is not None else trace)
        out += [grain_trace(grain, 1, 2, 3, 4, 5)] + [inline_trace(g, 5) for g in ctx.ran_inline]
        for target, v in ctx.sent:
            (ends.append((v, out)) if target == END else pending.append((target, v, grain, out)))
    assert len(ends) == 1, ends
    assert not data.maps and not data.counters, "joins clean up their traces too"
    return ends[0]


MACHINE = {
    "StartAt": "Fan",
    "States": {
        "Fan": {
            "Type": "Map",
            "ItemSelector": {"v.$": "$$.Map.Item.Value"},
            "ItemProcessor": {"StartAt": "Dbl", "States": {"Dbl": task("double", InputPath="$.v")}},
            "Next": "Par",
        },
        "Par": {
            "Type": "Parallel",
            "Branches": [
                {"StartAt": f"B{i}", "States": {f"B{i}": task("echo", f"B{i}b"), f"B{i}b": task("echo")}}
                for i in range(3)
            ],
            "End": True,
        },
    },
}


def labelled(trace: list[Any]) -> list[tuple[str, str, int]]:
    """(grain, state, index) of every entry a join labelled."""
    out = []
    for e in trace:
        m = re.fullmatch(r"(\S+) \[(\S+) (?:item|branch) (\d+)\]", str(e[1]))
        if e[0] == "grain" and m:
            out.append((m[1], m[2], int(m[3])))
    return out


def test_the_timeline_of_a_map_of_6_and_a_parallel_of_3_has_every_item_and_branch() -> None:
    for seed in range(5):  # the branches arrive in any order: the trace is in branch order all the same
        output, trace = drive(MACHINE, [1, 2, 3, 4, 5, 6], seed)
        assert output == [[2, 4, 6, 8, 10, 12]] * 3
        got = labelled(trace)
        fan = [(g, i) for g, s, i in got if s == "Fan" and g == "Fan.it.Dbl"]
        assert fan == [("Fan.it.Dbl", i) for i in range(6)], got
        par = [(g, i) for g, s, i in got if s == "Par"]
        assert par == [(g, i) for i in range(3) for g in (f"Par.b{i}.B{i}", f"Par.b{i}.B{i}b")], got
        assert trace[0] == ["frontend", "f", 0], "the fan-out's path comes first"
        # frontend, Fan, its 6 items, the item's instance that joined and went on (and the Par it ran inline),
        # the 3 branches' 2 states each, and the branch's instance that joined and ended the machine
        assert len(trace) == 1 + 1 + 6 + 2 + 6 + 1, trace
        assert [e[1] for e in trace[8:10]] == ["Fan.it.Dbl", "Par"], trace


def test_a_merged_timeline_is_bounded(monkeypatch: Any) -> None:
    monkeypatch.setattr(aslrun, "MAX_TRACE", 5)
    output, trace = drive(MACHINE, [1, 2, 3, 4, 5, 6])
    assert output == [[2, 4, 6, 8, 10, 12]] * 3  # the result is whole; only the timeline is cut
    assert len(trace) <= 5 + 1 + 3  # the cap, and the entries of the instance that goes on


class _Bus:
    def __init__(self) -> None:
        self.batches: list[list[tuple[str, bytes]]] = []

    def publish_batch(self, deliveries: list[tuple[str, bytes]]) -> None:
        self.batches.append(list(deliveries))


def test_an_instance_publishes_a_joins_merged_trace_then_its_own_entry() -> None:
    wf = parse_workflow({"StartAt": "T", "States": {"T": task("echo")}})
    merged = [["frontend", "f", 0], ["grain", "X [M item 0]", 1, 2, 3, 4, 5]]

    def handler(event: Any, context: Any) -> Any:
        assert context.instance_times is not None  # what a join's branch records of its instance
        context.trace_override = merged
        context.add_workflow_next(END, event)  # as an ASL state's handler hands on its output

    bus = _Bus()
    event = {"id": "e", "execution_id": "x", "app": "a", "grain": "T", "from": "", "trace": [["frontend", "f", 0]]}
    run_instance(
        json.dumps(event | {"value": 1}).encode(),
        InstanceSpec("a", "T", wf, frozenset(wf.grains), timeout_s=5.0),
        handler,
        bus,
        lambda: None,  # type: ignore[arg-type,return-value]
    )
    report = decode(bus.batches[-1][-1][1])
    trace = report["outputs"][0]["trace"]
    assert trace[:2] == merged and [e[1] for e in trace[2:]] == ["T"], trace
