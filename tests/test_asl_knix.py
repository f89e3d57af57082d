"""KNIX's ASL dialect (grainworker/asl_knix.py): accepted extensions, literal error names, KNIX's Retry, Catch and
Fail, against the answers KNIX's own tests expect (tests/asl_Catch, asl_Retry, asl_Fail of KNIX's repository)."""

from __future__ import annotations

from typing import Any

import pytest

from grainworker import asl_knix
from grainworker.asl_text import AslError, AslRuntimeError
from grainworker.asl_validate import validate
from tests.test_aslrun import KNIX_DIALECT_RUNS, TASKS, drive, drive_all, knix_machine


def fail_function(event: Any) -> Any:
    """KNIX's tests' FailFunction.py: one error per input."""
    if "invalid_value" in event:
        raise ValueError("FailFunction.py does not like this value!")
    if "invalid_type" in event:
        raise TypeError("FailFunction.py does not like this type!")
    raise Exception("States.All")  # noqa: TRY002 - KNIX's test raises exactly this


def task(handlers: dict[str, Any], **top: Any) -> dict[str, Any]:
    states = {"F": {"Type": "Task", "Resource": "fail", "End": True, **handlers}}
    if "Catch" in handlers:
        states["fallback"] = {"Type": "Pass", "Result": "Hello, AWS Step Functions!", "End": True}
    return {"SandDialect": "knix", "StartAt": "F", "States": states, **top}


CATCH = {
    "Catch": [{"ErrorEquals": ["ValueError", "TypeError", "States.All"], "Next": "fallback", "ResultPath": "$.error"}]
}
RETRY = {"Retry": [{"ErrorEquals": ["ValueError", "States.All"], "IntervalSeconds": 2, "MaxAttempts": 2}]}


def test_the_specification_refuses_what_knix_accepts() -> None:
    machine = task(CATCH)
    del machine["SandDialect"]
    with pytest.raises(AslError, match='"States.All" is not a predefined error'):
        validate(machine)
    with pytest.raises(AslError, match="EnableCheckpoints: unknown field"):
        validate({"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}, "EnableCheckpoints": False})


def test_knix_extensions_are_accepted_and_checked() -> None:
    validate(task(CATCH, EnableCheckpoints=False, AllowImmediateMessages=True))
    branch = {"StartAt": "X", "States": {"X": {"Type": "Pass", "End": True}}}
    par = {"Type": "Parallel", "Branches": [branch, {"StartAt": "Y", "States": {"Y": {"Type": "Pass", "End": True}}}]}
    ok = {"SandDialect": "knix", "StartAt": "P", "States": {"P": {**par, "WaitForNumBranches": [1, 2], "End": True}}}
    validate(ok)
    bad = {**ok, "States": {"P": {**par, "WaitForNumBranches": [2, 1], "End": True}}}
    with pytest.raises(AslError, match=r"^States.P.WaitForNumBranches: must be an ascending list"):
        validate(bad)
    with pytest.raises(AslError, match="^EnableCheckpoints: must be true or false"):
        validate(task(CATCH, EnableCheckpoints="no"))
    with pytest.raises(AslError, match='^SandDialect: "aws" is not a dialect SAND knows'):
        validate({**task(CATCH), "SandDialect": "aws"})


@pytest.mark.parametrize(
    ("inp", "error"),
    [
        ({"invalid_all": "test"}, "States.All"),
        ({"invalid_value": "test"}, "FailFunction.py does not like this value!"),
        ({"invalid_type": "test"}, "FailFunction.py does not like this type!"),
    ],
)
def test_catch_answers_as_knix(inp: dict[str, Any], error: str) -> None:
    out = drive(task(CATCH), inp, {"fail": fail_function})
    assert out == {**inp, "error": {"Cause": "this error caught by MFn ASL Workflow catcher!", "Error": error}}


def test_an_error_no_catcher_names_is_the_workflows() -> None:
    machine = task({"Catch": [{"ErrorEquals": ["KeyError"], "Next": "fallback"}]})
    assert drive(machine, {"invalid_value": 1}, {"fail": fail_function})["error"]["type"] == "ValueError"


@pytest.mark.parametrize(
    ("inp", "error"),
    [
        ([1, 2], "States.All"),
        ({"invalid_value": 1}, "FailFunction.py does not like this value!"),
        ({"invalid_type": 1}, "FailFunction.py does not like this type!"),  # no retrier names it: 1 more attempt
    ],
)
def test_retry_runs_again_then_answers_with_the_error(inp: Any, error: str) -> None:
    calls: list[Any] = []

    def counted(event: Any) -> Any:
        calls.append(event)
        return fail_function(event if isinstance(event, dict) else {})

    out = drive(task(RETRY), inp, {"fail": counted})
    assert out == {"Cause": "Error not caught by MFn ASL Workflow retryer", "Error": error}
    assert len(calls) == (2 if "invalid_type" in str(inp) else 3)


def test_a_retry_that_succeeds_goes_on() -> None:
    calls: list[Any] = []

    def flaky(event: Any) -> Any:
        calls.append(event)
        if len(calls) < 2:
            raise ValueError("once")
        return "fine"

    assert drive(task(RETRY), {"a": 1}, {"fail": flaky}) == "fine"


def test_fail_answers_with_its_input() -> None:
    machine = {"SandDialect": "knix", "StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "E", "Cause": "c"}}}
    assert drive(machine, {"fail test": "aabbcc"}, {}) == {"fail test": "aabbcc"}
    del machine["SandDialect"]
    assert drive(machine, {"fail test": "aabbcc"}, {})["error"]["type"] == "E"


def test_a_tasks_result_path_is_knixs() -> None:
    """KNIX's tests/asl_InputPath_ResultPath_OutputPath: the input's "data" hides the result put at $.data.x."""
    machine = {
        "SandDialect": "knix",
        "StartAt": "H",
        "States": {
            "H": {
                "Type": "Task",
                "Resource": "hello",
                "InputPath": "$.lambda",
                "ResultPath": "$.data.lambdaresult",
                "OutputPath": "$.data",
                "End": True,
            }
        },
    }
    hello = {"hello": lambda e: "Hello, " + e["who"] + "!"}
    inp = {"comment": "c", "data": {"val1": 23, "val2": 17}, "extra": "foo", "lambda": {"who": "AWS Step Functions"}}
    assert drive(machine, inp, hello) == {"val1": 23, "val2": 17}
    del machine["SandDialect"]  # the specification: the result is placed
    assert drive(machine, inp, hello) == {"val1": 23, "val2": 17, "lambdaresult": "Hello, AWS Step Functions!"}


@pytest.mark.parametrize(
    ("result_path", "out"),
    [("$", {"a": 1}), (None, {}), ("$.r", {"r": "x", "a": 1}), ("$['r s'].t", {"r s": {"t": "x"}, "a": 1})],
)
def test_knixs_result_path_forms(result_path: Any, out: Any) -> None:
    machine = {"SandDialect": "knix", "StartAt": "T", "States": {"T": {"Type": "Task", "Resource": "x", "End": True}}}
    machine["States"]["T"]["ResultPath"] = result_path
    assert drive(machine, {"a": 1}, {"x": lambda e: "x"}) == out
    del machine["States"]["T"]["ResultPath"]
    assert drive(machine, {"a": 1}, {"x": lambda e: "x"}) == "x"


@pytest.mark.parametrize(("value", "output"), KNIX_DIALECT_RUNS)
def test_the_e2e_machine_in_knixs_dialect(value: Any, output: Any) -> None:
    """What tests/e2e/test_knix.py expects of the machine deployed through the KNIX door."""
    assert drive({"SandDialect": "knix", **knix_machine()}, value, TASKS) == output


def test_a_pass_states_result_path_is_knixs() -> None:
    """KNIX's tests/asl_Loop_Iteration: the input's "iterator" hides the Pass state's Result put at $.iterator."""
    machine = {
        "SandDialect": "knix",
        "StartAt": "P",
        "States": {"P": {"Type": "Pass", "Result": {"count": 10}, "ResultPath": "$.iterator", "End": True}},
    }
    assert drive(machine, {"iterator": {"count": 20}}, {}) == {"iterator": {"count": 20}}
    assert drive(machine, {"a": 1}, {}) == {"iterator": {"count": 10}, "a": 1}
    del machine["SandDialect"]
    assert drive(machine, {"iterator": {"count": 20}}, {}) == {"iterator": {"count": 10}}


def knix_map(**fields: Any) -> dict[str, Any]:
    """A machine of one Map state, in KNIX's dialect, whose items go through a Task "echo"."""
    iterator = {"StartAt": "E", "States": {"E": {"Type": "Task", "Resource": "echo", "End": True}}}
    return {
        "SandDialect": "knix",
        "StartAt": "M",
        "States": {"M": {"Type": "Map", "End": True, "Iterator": iterator, **fields}},
    }


ECHO = {"echo": lambda e: e}
PEOPLE = [{"who": "bob"}, {"who": "meg"}]
CONTEXT = {"ContextIndex.$": "$$.Map.Item.Index", "ContextValue.$": "$$.Map.Item.Value"}


def test_a_maps_output_is_its_results_alone() -> None:
    """KNIX's tests/asl_Map example: the input's other fields are dropped, the results placed at ResultPath."""
    inp = {"ship-date": "2016", "detail": {"delivery-partner": "UQS", "shipped": [{"prod": "R31"}, {"prod": "S39"}]}}
    machine = knix_map(
        InputPath="$.detail",
        ItemsPath="$.shipped",
        ResultPath="$.detail.shipped",
        Parameters={"parcel.$": "$$.Map.Item.Value", "courier.$": "$.delivery-partner"},
    )
    tasks = {"echo": lambda e: e["courier"] + " " + e["parcel"]["prod"]}
    assert drive(machine, inp, tasks) == {"detail": {"shipped": ["UQS R31", "UQS S39"]}}
    del machine["SandDialect"]  # the specification: placed into the whole input
    assert drive(machine, inp, tasks) == {**inp, "detail": {**inp["detail"], "shipped": ["UQS R31", "UQS S39"]}}


def test_a_maps_result_path_needs_no_object_input() -> None:
    """KNIX's tests/asl_Map parameters test: ResultPath on a list input."""
    machine = knix_map(ResultPath="$.result", Parameters=CONTEXT)
    expected = [
        {"ContextIndex": 0, "ContextValue": {"who": "bob"}},
        {"ContextIndex": 1, "ContextValue": {"who": "meg"}},
    ]
    assert drive(machine, PEOPLE, ECHO) == {"result": expected}
    assert drive(knix_map(Parameters=CONTEXT), PEOPLE, ECHO) == expected
    del machine["SandDialect"]
    assert drive(machine, PEOPLE, ECHO)["error"]["type"] == "States.ResultPathMatchFailure"


@pytest.mark.parametrize(("result_path", "out"), [("$", {}), (None, {}), ("$['a b'].c", {"a b": {"c": ["x", "y"]}})])
def test_knixs_map_result_path_forms(result_path: Any, out: Any) -> None:
    machine = knix_map(ResultPath=result_path, OutputPath="$")
    machine["States"]["M"]["ItemsPath"] = "$.items"
    assert drive(machine, {"k": 1, "items": ["x", "y"]}, ECHO) == out


def test_a_path_into_the_input_ends_a_maps_parameters() -> None:
    """KNIX's tests/asl_Map IRO paths test: the index entry, and every entry after the path, are left out."""
    params = {"index.$": "$$.Map.Item.Index", "item.$": "$$.Map.Item.Value", "address.$": "$.address", "late": 1}
    machine = knix_map(ItemsPath="$.items", MaxConcurrency=1, Parameters=params, ResultPath="$.done")
    inp = {"address": "Seattle", "items": ["a", "b"]}
    assert drive(machine, inp, ECHO) == {
        "done": [{"address": "Seattle", "item": "a"}, {"address": "Seattle", "item": "b"}]
    }
    del machine["SandDialect"]
    assert drive(machine, inp, ECHO)["done"][1] == {"index": 1, "item": "b", "address": "Seattle", "late": 1}


def test_a_path_before_the_item_value_is_refused() -> None:
    machine = knix_map(ItemsPath="$.items", Parameters={"address.$": "$.address", "item.$": "$$.Map.Item.Value"})
    with pytest.raises(AslError, match=r'^States.M.Parameters: "address.\$" comes before the entry for \$\$.Map'):
        validate(machine)
    del machine["SandDialect"]
    validate(machine)  # the specification's template: any order
    with pytest.raises(AslRuntimeError, match="must follow it") as e:  # a machine deployed before the check
        asl_knix.check_map_parameters(machine["States"]["M"]["Parameters"])
    assert e.value.error == "States.ParameterPathFailure"


def knix_parallel(wait: list[int], n: int = 3) -> dict[str, Any]:
    """KNIX's tests/asl_KNIX_flags Parallel: ``n`` branches each naming itself, then a last Task."""
    branches = [
        {"StartAt": f"B{i}", "States": {f"B{i}": {"Type": "Task", "Resource": f"b{i}", "End": True}}} for i in range(n)
    ]
    par = {"Type": "Parallel", "Branches": branches, "WaitForNumBranches": wait, "Next": "After"}
    states = {"P": par, "After": {"Type": "Task", "Resource": "after", "End": True}}
    return {"SandDialect": "knix", "StartAt": "P", "States": states}


def named(name: str) -> Any:
    return lambda e: [*e, name]


BRANCH_TASKS = {**{f"b{i}": named(f"b{i}") for i in range(3)}, "after": lambda e: e}


@pytest.mark.parametrize("seed", range(8))
def test_a_parallel_goes_on_once_per_count_it_waits_for(seed: int) -> None:
    outs = drive_all(knix_parallel([2, 3]), [10], BRANCH_TASKS, seed)
    full = [[10, "b0"], [10, "b1"], [10, "b2"]]
    assert len(outs) == 2 and full in outs, outs  # the two answers may reach the end in either order
    partial = outs[1 - outs.index(full)]
    assert partial.count(None) == 1 and all(p in (None, f) for p, f in zip(partial, full, strict=True)), partial


@pytest.mark.parametrize("seed", range(4))
def test_a_parallel_that_does_not_wait_for_all_goes_on_once(seed: int) -> None:
    outs = drive_all(knix_parallel([1]), [10], BRANCH_TASKS, seed)
    assert len(outs) == 1 and outs[0].count(None) == 2, outs


def test_waiting_for_every_branch_is_the_specifications_parallel() -> None:
    assert drive_all(knix_parallel([3]), [10], BRANCH_TASKS) == [[[10, "b0"], [10, "b1"], [10, "b2"]]]
    machine = knix_parallel([2, 3])
    del machine["SandDialect"]
    with pytest.raises(AslError, match="WaitForNumBranches: unknown field"):
        validate(machine)
