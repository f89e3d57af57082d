"""KNIX's ASL dialect (grainworker/asl_knix.py): accepted extensions, literal error names, KNIX's Retry, Catch and
Fail, against the answers KNIX's own tests expect (tests/asl_Catch, asl_Retry, asl_Fail of KNIX's repository)."""

from __future__ import annotations

from typing import Any

import pytest

from grainworker.asl_text import AslError
from grainworker.asl_validate import validate
from tests.test_aslrun import KNIX_DIALECT_RUNS, TASKS, drive, knix_machine


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
