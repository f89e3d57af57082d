"""grainworker.asl: Amazon States Language validation, paths, payload templates and intrinsics, Choice, Wait,
Retry/Catch and the reference interpreter. Tests marked "spec §..." reproduce the worked examples of the States
Language specification (https://states-language.net/spec.html), in the section named."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from grainworker.asl import (
    AslError,
    AslRuntimeError,
    StateMachine,
    apply_result_path,
    apply_template,
    call_intrinsic,
    choose,
    error_matches,
    error_output,
    find_catcher,
    get_path,
    is_asl,
    retry_delay,
    run,
    state_input,
    state_output,
    validate,
    wait_until,
)
from grainworker.asl_text import distance, nearest

ROOT = Path(__file__).resolve().parent.parent
CASES = json.loads((ROOT / "contracts" / "src" / "test" / "resources" / "asl-cases.json").read_text())
LOCATION = re.compile(r"^(StartAt|States|[A-Z]\w*)(\.|\[|$)")


def machine(*states: tuple[str, dict], **top: Any) -> dict:
    """A machine starting at the first of ``states`` (name, state) pairs."""
    return {"StartAt": states[0][0], "States": dict(states), **top}


def rejected(doc: dict) -> str:
    with pytest.raises(AslError) as info:
        validate(doc)
    return str(info.value)


def runtime_error(fn: Any, *args: Any) -> AslRuntimeError:
    with pytest.raises(AslRuntimeError) as info:
        fn(*args)
    return info.value


def choice_state(*rules: dict, default: str | None = "Other") -> dict:
    state: dict = {"Type": "Choice", "Choices": [dict(r, Next=r.get("Next", "Hit")) for r in rules]}
    if default:
        state["Default"] = default
    return state


# ---------------------------------------------------------------------------------------------- shared cases


def test_contract_file_has_enough_cases_and_locations_first() -> None:
    assert len(CASES["valid"]) >= 8 and len(CASES["invalid"]) >= 25 and CASES["about"]
    types = {s["Type"] for doc in CASES["valid"] for s in doc["States"].values()}
    assert {"Parallel", "Map"} <= types
    for case in CASES["invalid"]:
        assert LOCATION.match(case["error"].split(": ", 1)[0]), case


@pytest.mark.parametrize("doc", CASES["valid"], ids=lambda d: d["StartAt"])
def test_contract_valid_machines_are_accepted(doc: dict) -> None:
    m = validate(copy.deepcopy(doc))
    assert isinstance(m, StateMachine) and m.start == doc["StartAt"] and m.states == doc["States"]


@pytest.mark.parametrize("case", CASES["invalid"], ids=lambda c: c["note"])
def test_contract_invalid_machines_are_rejected_naming_state_and_field(case: dict) -> None:
    # contracts' AslValidatorTest runs the same cases: both sides write exactly these messages
    assert rejected(copy.deepcopy(case["doc"])) == case["error"]


# ------------------------------------------------------------------------------------------------ validation


def test_is_asl_uses_knix_rule() -> None:
    assert is_asl({"StartAt": "A", "States": {}})
    assert not is_asl({"StartAt": "A", "States": []})
    assert not is_asl({"States": {}})
    assert not is_asl({"name": "wf", "entry": "a", "functions": []})
    assert not is_asl([{"StartAt": "A", "States": {}}])
    assert not is_asl(None)


def test_validate_returns_nested_machines_prevalidated() -> None:
    doc = machine(
        (
            "P",
            {
                "Type": "Parallel",
                "Next": "M",
                "Branches": [machine(("A", {"Type": "Pass", "End": True})), machine(("B", {"Type": "Succeed"}))],
            },
        ),
        ("M", {"Type": "Map", "Iterator": machine(("V", {"Type": "Task", "Resource": "v", "End": True})), "End": True}),
        TimeoutSeconds=30,
        Comment="c",
    )
    m = validate(doc)
    assert (m.start, list(m.states), m.timeout_seconds, m.comment) == ("P", ["P", "M"], 30, "c")
    assert [b.start for b in m.children["P"]] == ["A", "B"] and m.children["M"][0].start == "V"
    assert m.children["M"][0].states["V"]["Resource"] == "v"


def test_every_state_type_is_accepted() -> None:
    doc = machine(
        ("T", {"Type": "Task", "Resource": "t", "Next": "C"}),
        ("C", {"Type": "Choice", "Choices": [{"Variable": "$.x", "IsPresent": True, "Next": "W"}], "Default": "F"}),
        ("W", {"Type": "Wait", "Seconds": 0, "Next": "P"}),
        ("P", {"Type": "Pass", "Next": "Par"}),
        ("Par", {"Type": "Parallel", "Branches": [machine(("B", {"Type": "Pass", "End": True}))], "Next": "Map"}),
        ("Map", {"Type": "Map", "ItemProcessor": machine(("I", {"Type": "Pass", "End": True})), "Next": "S"}),
        ("S", {"Type": "Succeed"}),
        ("F", {"Type": "Fail", "Error": "E", "Cause": "c"}),
    )
    assert set(validate(doc).states) == {"T", "C", "W", "P", "Par", "Map", "S", "F"}


def test_nested_errors_carry_the_path_of_the_branch() -> None:
    branch = machine(("X", {"Type": "Pass", "Next": "Y"}), ("Y", {"Type": "Pass", "Next": "Gone"}))
    doc = machine(("P", {"Type": "Parallel", "End": True, "Branches": [machine(("Z", {"Type": "Succeed"})), branch]}))
    assert rejected(doc) == (
        'States.P.Branches[1].States.Y.Next: "Gone" is not a state of this machine (states in a '
        "Parallel branch or Map iterator only reach each other); one of: X, Y"
    )
    doc = machine(
        (
            "M",
            {
                "Type": "Map",
                "End": True,
                "ItemProcessor": machine(
                    (
                        "C",
                        {"Type": "Choice", "Choices": [{"Not": {"Variable": "$.a", "StringEquals": 1}, "Next": "D"}]},
                    ),
                    ("D", {"Type": "Succeed"}),
                ),
            },
        )
    )
    assert rejected(doc).startswith("States.M.ItemProcessor.States.C.Choices[0].Not.StringEquals: must be a string")
    doc = machine(
        (
            "M",
            {
                "Type": "Map",
                "End": True,
                "ItemProcessor": {"StartAt": "A", "States": {"A": {"Type": "Pass", "End": True}}, "Version": "1.0"},
            },
        )
    )
    assert rejected(doc).startswith("States.M.ItemProcessor.Version: unknown field")


def test_suggestions_follow_the_java_rule() -> None:
    # common's SuggestTest asserts the same answers of sand.common.Suggest
    assert nearest("Nxt", ["End", "Next", "Type"]) == "Next"
    assert nearest("NumericEqual", ["StringEquals", "NumericEquals"]) == "NumericEquals"
    assert nearest("B", ["A"]) is None and nearest("Lambda", ["Task", "Choice", "Pass"]) is None
    assert nearest("abc", ["ab", "bc"]) == "ab"
    assert distance("\U0001f600x", "x") == 1


def test_messages_say_what_to_write_instead() -> None:
    assert 'did you mean "Next"?' in rejected(machine(("A", {"Type": "Pass", "Nex": "A", "End": True})))
    assert 'did you mean "Task"?' in rejected(machine(("A", {"Type": "task", "End": True})))
    assert 'write "Next": "<state name>" or "End": true' in rejected(machine(("A", {"Type": "Pass"})))
    assert 'did you mean "NumericEquals"?' in rejected(
        machine(("C", choice_state({"Variable": "$.x", "NumericEqual": 1}, default=None)), ("Hit", {"Type": "Succeed"}))
    )
    message = rejected(
        machine(("A", {"Type": "Task", "Resource": "r", "End": True, "Retry": [{"ErrorEquals": ["States.Timout"]}]}))
    )
    assert message == (
        'States.A.Retry[0].ErrorEquals: "States.Timout" is not a predefined error (did you mean '
        "\"States.Timeout\"?); names starting with 'States.' are reserved"
    )


@pytest.mark.parametrize(
    ("state", "location"),
    [
        (
            {"Type": "Task", "Resource": "r", "End": True, "TimeoutSecondsPath": "$.t", "TimeoutSeconds": 5},
            "States.A.TimeoutSecondsPath",
        ),
        (
            {"Type": "Task", "Resource": "r", "End": True, "HeartbeatSecondsPath": "$.h[*]"},
            "States.A.HeartbeatSecondsPath",
        ),
        ({"Type": "Task", "Resource": " ", "End": True}, "States.A.Resource"),
        ({"Type": "Task", "Resource": "r", "End": True, "Credentials": "x"}, "States.A.Credentials"),
        (
            {"Type": "Task", "Resource": "r", "End": True, "ResultSelector": {"a.$": "$.b", "a": 1}},
            "States.A.ResultSelector.a",
        ),
        (
            {"Type": "Task", "Resource": "r", "End": True, "Parameters": {"x": [{"y.$": "nope"}]}},
            "States.A.Parameters.x[0].y.$",
        ),
        ({"Type": "Task", "Resource": "r", "End": True, "Parameters": {"x.$": 3}}, "States.A.Parameters.x.$"),
        (
            {"Type": "Task", "Resource": "r", "End": True, "Parameters": {"x.$": "States.MathAdd(1)"}},
            "States.A.Parameters.x.$",
        ),
        ({"Type": "Task", "Resource": "r", "End": True, "Retry": {"ErrorEquals": ["E"]}}, "States.A.Retry"),
        (
            {"Type": "Task", "Resource": "r", "End": True, "Retry": [{"MaxAttempts": 1}]},
            "States.A.Retry[0].ErrorEquals",
        ),
        (
            {"Type": "Task", "Resource": "r", "End": True, "Retry": [{"ErrorEquals": ["E"], "MaxDelaySeconds": 0}]},
            "States.A.Retry[0].MaxDelaySeconds",
        ),
        (
            {"Type": "Task", "Resource": "r", "End": True, "Retry": [{"ErrorEquals": ["E"], "JitterStrategy": "SOME"}]},
            "States.A.Retry[0].JitterStrategy",
        ),
        (
            {"Type": "Task", "Resource": "r", "End": True, "Retry": [{"ErrorEquals": ["E"], "BackoffRate": True}]},
            "States.A.Retry[0].BackoffRate",
        ),
        (
            {"Type": "Task", "Resource": "r", "End": True, "Catch": [{"ErrorEquals": [""], "Next": "A"}]},
            "States.A.Catch[0].ErrorEquals",
        ),
        (
            {"Type": "Task", "Resource": "r", "End": True, "Catch": [{"ErrorEquals": ["E"], "Next": "A", "Retry": 1}]},
            "States.A.Catch[0].Retry",
        ),
        ({"Type": "Pass", "End": "yes"}, "States.A.End"),
        ({"Type": "Pass", "End": True, "Comment": 1}, "States.A.Comment"),
        ({"Type": "Pass", "End": True, "QueryLanguage": "JSONata"}, "States.A.QueryLanguage"),
        ({"Type": "Pass", "End": True, "Assign": {"x": 1}}, "States.A.Assign"),
        ({"Type": "Pass", "End": True, "OutputPath": "$.a[0:4:2]"}, "States.A.OutputPath"),
        ({"Type": "Pass", "End": True, "InputPath": "$.a[?(@.b)]"}, "States.A.InputPath"),
        ({"Type": "Pass", "End": True, "InputPath": 5}, "States.A.InputPath"),
        ({"Type": "Wait", "SecondsPath": "$.s", "TimestampPath": "$.t", "End": True}, "States.A.TimestampPath"),
        ({"Type": "Wait", "Timestamp": "2016-02-30T00:00:00Z", "End": True}, "States.A.Timestamp"),
        ({"Type": "Fail", "ErrorPath": "States.Format('{}'"}, "States.A.ErrorPath"),
        ({"Type": "Fail", "ErrorPath": "$.errors[*]"}, "States.A.ErrorPath"),
        (
            {
                "Type": "Map",
                "End": True,
                "Iterator": machine(("I", {"Type": "Succeed"})),
                "ItemProcessor": machine(("J", {"Type": "Succeed"})),
            },
            "States.A.Iterator",
        ),
        (
            {
                "Type": "Map",
                "End": True,
                "Iterator": machine(("I", {"Type": "Succeed"})),
                "Parameters": {},
                "ItemSelector": {},
            },
            "States.A.ItemSelector",
        ),
        (
            {
                "Type": "Map",
                "End": True,
                "Iterator": machine(("I", {"Type": "Succeed"})),
                "MaxConcurrencyPath": "$.m",
                "MaxConcurrency": 1,
            },
            "States.A.MaxConcurrencyPath",
        ),
        (
            {"Type": "Map", "End": True, "Iterator": machine(("I", {"Type": "Succeed"})), "MaxConcurrency": 1.5},
            "States.A.MaxConcurrency",
        ),
        ({"Type": "Map", "End": True, "Iterator": [1]}, "States.A.Iterator"),
        (
            {
                "Type": "Parallel",
                "End": True,
                "Branches": [machine(("B", {"Type": "Pass", "End": True}), ("A2", {"Type": "Pass", "End": True}))],
            },
            "States.A.Branches[0].States.A2",
        ),
        (
            {"Type": "Choice", "Choices": [{"Variable": "$.a", "IsNull": True, "Next": "A", "And": []}]},
            "States.A.Choices[0].And",
        ),
        ({"Type": "Choice", "Choices": [{"IsNull": True, "Next": "A"}]}, "States.A.Choices[0].Variable"),
        ({"Type": "Choice", "Choices": [{"Not": [], "Next": "A"}]}, "States.A.Choices[0].Not"),
        ({"Type": "Choice", "Choices": ["x"]}, "States.A.Choices[0]"),
        (
            {"Type": "Choice", "Choices": [{"Variable": "$.a", "IsPresent": "yes", "Next": "A"}]},
            "States.A.Choices[0].IsPresent",
        ),
        (
            {"Type": "Choice", "Choices": [{"Variable": "$.a", "NumericEquals": True, "Next": "A"}]},
            "States.A.Choices[0].NumericEquals",
        ),
        (
            {"Type": "Choice", "Choices": [{"Variable": "$.a", "StringEqualsPath": 3, "Next": "A"}]},
            "States.A.Choices[0].StringEqualsPath",
        ),
    ],
)
def test_invalid_fields_name_state_and_field(state: dict, location: str) -> None:
    doc = machine(("A", state), ("End", {"Type": "Succeed"}))
    if state["Type"] != "Choice":
        doc = machine(("A", state))
    message = rejected(doc)
    assert message.startswith(location + ": "), message


def test_top_level_fields_are_named_bare() -> None:
    assert rejected({"StartAt": 1, "States": {}}).startswith("StartAt: ")
    assert rejected({"StartAt": "A", "States": {"A": {"Type": "Succeed"}}, "TimeoutSeconds": 0}).startswith(
        "TimeoutSeconds: "
    )
    assert rejected({"StartAt": "A", "States": {"A": {"Type": "Succeed"}}, "QueryLanguage": "JSONata"}).startswith(
        "QueryLanguage: "
    )
    assert rejected({"StartAt": "A", "States": {"A": {"Type": "Succeed"}}, "Comment": 5}).startswith("Comment: ")
    assert rejected({"StartAt": "A", "States": {"A": "Succeed"}}).startswith("States.A.Type: ")
    assert rejected({"StartAt": "A" * 81, "States": {"A" * 81: {"Type": "Succeed"}}}).startswith("States." + "A" * 81)


def test_unreachable_states_and_targets_of_catch_and_default_count_as_reached() -> None:
    doc = machine(
        (
            "T",
            {
                "Type": "Task",
                "Resource": "r",
                "Next": "C",
                "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Caught"}],
            },
        ),
        ("C", {"Type": "Choice", "Choices": [{"Variable": "$.a", "IsNull": True, "Next": "Done"}], "Default": "Other"}),
        ("Caught", {"Type": "Succeed"}),
        ("Done", {"Type": "Succeed"}),
        ("Other", {"Type": "Succeed"}),
    )
    validate(doc)
    doc["States"]["Lonely"] = {"Type": "Pass", "Next": "Done"}
    assert rejected(doc) == (
        'States.Lonely: unreachable from StartAt "T"; add a Next, Default or Catch leading to it, or remove it'
    )


def test_validation_does_not_change_the_document() -> None:
    doc = CASES["valid"][-2]
    before = copy.deepcopy(doc)
    validate(doc)
    assert doc == before


# ----------------------------------------------------------------------------------------------------- paths


def test_reference_paths_spec_example() -> None:
    # spec §Reference Paths: the example input and what three Reference Paths return.
    data = {"foo": 123, "bar": ["a", "b", "c"], "car": {"cdr": True}}
    assert get_path(data, "$.foo") == 123
    assert get_path(data, "$.bar") == ["a", "b", "c"]
    assert get_path(data, "$.car.cdr") is True
    assert get_path(data, "$") is data


@pytest.mark.parametrize(
    "path",
    [
        # spec §Reference Paths: "examples of acceptable Reference Path syntax"
        "$.store.book",
        "$.store\\.book",
        "$.\\stor\\e.boo\\k",
        "$.store.book.title",
        "$.foo.\\.bar",
        "$.foo\\@bar.baz\\[\\[.\\?pretty",
        "$.&Ж中.\U00010346",
        "$.ledgers.branch[0].pending.count",
        "$.ledgers.branch[0]",
        "$.ledgers[0][22][315].foo",
        "$['store']['book']",
        "$['store'][0]['book']",
    ],
)
def test_spec_reference_path_syntax_is_accepted(path: str) -> None:
    validate(machine(("A", {"Type": "Pass", "ResultPath": path, "End": True})))


def test_escaped_and_bracketed_names() -> None:
    data = {"store.book": 1, "store": {"book": 2, "a b": 3, "x'y": 4}, "foo@bar": {"baz[[": {"?pretty": 5}}}
    assert get_path(data, "$.store\\.book") == 1
    assert get_path(data, "$.\\stor\\e.boo\\k") == 2
    assert get_path(data, "$['store']['a b']") == 3
    assert get_path(data, '$.store["a b"]') == 3
    assert get_path(data, "$.store['x\\'y']") == 4
    assert get_path(data, "$.foo\\@bar.baz\\[\\[.\\?pretty") == 5


def test_array_indexes_wildcards_unions_and_slices() -> None:
    data = {"a": [10, 20, 30, 40], "o": {"x": 1, "y": 2}, "rows": [{"id": 1}, {"id": 2}, {"name": "no id"}]}
    assert get_path(data, "$.a[0]") == 10 and get_path(data, "$.a[-1]") == 40
    assert get_path(data, "$.a[*]") == [10, 20, 30, 40]
    assert get_path(data, "$.a[0,2]") == [10, 30]
    assert get_path(data, "$.a[1:3]") == [20, 30] and get_path(data, "$.a[-2:]") == [30, 40]
    assert get_path(data, "$.a[:1]") == [10]
    assert get_path(data, "$.o.*") == [1, 2] and get_path(data, "$.o[*]") == [1, 2]
    assert get_path(data, "$['o']['x','y']") == [1, 2]
    assert get_path(data, "$.rows[*].id") == [1, 2]  # items without the field are skipped
    assert get_path(data, "$.nothing[*]") == []


def test_missing_path_is_a_runtime_error() -> None:
    data = {"a": {"b": [1]}}
    for path in ("$.x", "$.a.c", "$.a.b[1]", "$.a.b.c", "$.a[0]"):
        err = runtime_error(get_path, data, path)
        assert err.error == "States.Runtime" and path in err.cause
    assert runtime_error(get_path, data, "a.b").error == "States.Runtime"
    assert runtime_error(get_path, data, "$..b").error == "States.Runtime"


def test_context_paths_read_the_context_object() -> None:
    context = {"Execution": {"Id": "exec-1"}, "Map": {"Item": {"Index": 2}}}
    assert get_path({"Execution": "input"}, "$$.Execution.Id", context) == "exec-1"
    assert get_path({}, "$$.Map.Item.Index", context) == 2
    assert runtime_error(get_path, {}, "$$.Execution.Id").error == "States.Runtime"


def test_multiple_values_are_gathered_into_an_array_for_input_path() -> None:
    # spec §Using InputPath...: "$.a[0,1]" applied to {"a": [1, 2, 3, 4]} gives the effective input [1, 2].
    assert state_input({"Type": "Pass", "InputPath": "$.a[0,1]"}, {"a": [1, 2, 3, 4]}) == [1, 2]
    assert state_output({"Type": "Pass", "OutputPath": "$.a[0,1]"}, {}, {"a": [1, 2, 3, 4]}) == [1, 2]


# ------------------------------------------------------------------------------------------------ ResultPath


def test_result_path_spec_examples() -> None:
    # spec §Using InputPath...: ResultPath "$.master.detail" overwrites, "$.master.result.sum" creates fields.
    raw = {"master": {"detail": [1, 2, 3]}}
    assert apply_result_path(raw, "$.master.detail", 6) == {"master": {"detail": 6}}
    assert apply_result_path(raw, "$.master.result.sum", 6) == {"master": {"detail": [1, 2, 3], "result": {"sum": 6}}}
    assert raw == {"master": {"detail": [1, 2, 3]}}  # the input is not changed
    # spec §Input/Output Processing Examples: several levels of object are constructed.
    assert apply_result_path({"a": 1}, "$.b.greeting", "Hi!") == {"a": 1, "b": {"greeting": "Hi!"}}


def test_result_path_runtime_error_spec_example() -> None:
    # spec §Runtime Errors: input "foo" with ResultPath "$.x" fails with States.ResultPathMatchFailure.
    assert runtime_error(apply_result_path, "foo", "$.x", 1).error == "States.ResultPathMatchFailure"


def test_result_path_null_dollar_arrays_and_failures() -> None:
    raw = {"a": [1, 2], "n": 5}
    assert apply_result_path(raw, None, "r") is raw
    assert apply_result_path(raw, "$", "r") == "r"
    assert apply_result_path(raw, "$.a[1]", "r") == {"a": [1, "r"], "n": 5}
    assert apply_result_path(raw, "$['a'][-1]", "r") == {"a": [1, "r"], "n": 5}
    assert apply_result_path([0, 1], "$[0]", "r") == ["r", 1]
    for path in ("$.a[2]", "$.n.x", "$.missing[0]", "$.a[*]", "$$.x", "x"):
        assert runtime_error(apply_result_path, raw, path, 1).error == "States.ResultPathMatchFailure", path


# ----------------------------------------------------------------------------------- input/output processing


def test_numbers_to_add_spec_example() -> None:
    # spec §Input/Output Processing Examples: InputPath "$.numbers" and ResultPath "$.sum" around an adding task.
    doc = machine(
        ("Add", {"Type": "Task", "Resource": "add", "InputPath": "$.numbers", "ResultPath": "$.sum", "End": True})
    )
    out = run(
        validate(doc),
        {"title": "Numbers to add", "numbers": {"val1": 3, "val2": 4}},
        {"add": lambda d: d["val1"] + d["val2"]},
    )
    assert out == {"title": "Numbers to add", "numbers": {"val1": 3, "val2": 4}, "sum": 7}


def test_payload_template_spec_example() -> None:
    # spec §Payload Template: Parameters with nested ".$" fields, a context path and States.Format.
    state = {
        "Type": "Task",
        "Resource": "x",
        "Next": "Y",
        "Parameters": {
            "flagged": True,
            "parts": {"first.$": "$.vals[0]", "last3.$": "$.vals[-3:]"},
            "weekday.$": "$$.DayOfWeek",
            "formattedOutput.$": "States.Format('Today is {}', $$.DayOfWeek)",
        },
    }
    effective = state_input(state, {"flagged": 7, "vals": [0, 10, 20, 30, 40, 50]}, {"DayOfWeek": "TUESDAY"})
    assert effective == {
        "flagged": True,
        "parts": {"first": 0, "last3": [30, 40, 50]},
        "weekday": "TUESDAY",
        "formattedOutput": "Today is TUESDAY",
    }


def test_pass_state_spec_example() -> None:
    # spec §Pass State: Result placed at ResultPath "$.coords".
    doc = machine(
        (
            "No-op",
            {
                "Type": "Pass",
                "Result": {"x-datum": 0.381018, "y-datum": 622.2269926397355},
                "ResultPath": "$.coords",
                "End": True,
            },
        )
    )
    assert run(validate(doc), {"georefOf": "Home"}, {}) == {
        "georefOf": "Home",
        "coords": {"x-datum": 0.381018, "y-datum": 622.2269926397355},
    }


def test_input_path_parameters_order_and_nulls() -> None:
    raw = {"a": {"b": 1}, "c": 2}
    assert state_input({"Type": "Task"}, raw) == raw
    assert state_input({"Type": "Task", "InputPath": None}, raw) == {}
    assert state_input({"Type": "Task", "InputPath": "$.a", "Parameters": {"v.$": "$.b"}}, raw) == {"v": 1}
    assert state_input({"Type": "Map", "Parameters": {"v.$": "$.c"}}, raw) == raw  # Map: per-item selector
    assert runtime_error(state_input, {"Type": "Task", "InputPath": "$.zzz"}, raw).error == "States.Runtime"


def test_output_processing_result_selector_then_result_path_then_output_path() -> None:
    state = {
        "Type": "Task",
        "ResultSelector": {"code.$": "$.status", "fixed": 1},
        "ResultPath": "$.out",
        "OutputPath": "$.out",
    }
    assert state_output(state, {"in": 1}, {"status": 200, "body": "…"}) == {"code": 200, "fixed": 1}
    state = {"Type": "Task", "ResultSelector": {"code.$": "$.status"}, "ResultPath": "$.out"}
    assert state_output(state, {"in": 1}, {"status": 200}) == {"in": 1, "out": {"code": 200}}
    assert state_output({"Type": "Task"}, {"in": 1}, "result") == "result"
    assert state_output({"Type": "Task", "ResultPath": None}, {"in": 1}, "result") == {"in": 1}
    assert state_output({"Type": "Task", "OutputPath": None}, {"in": 1}, "result") == {}
    err = runtime_error(state_output, {"Type": "Task", "ResultSelector": {"x.$": "$.gone"}}, {}, {})
    assert err.error == "States.ParameterPathFailure"


# ------------------------------------------------------------------------------------ templates, intrinsics


def test_templates_nest_through_objects_and_arrays_and_copy_literals() -> None:
    template = {"list": [{"v.$": "$.v"}, 2, "$.not-a-path"], "obj": {"deep": {"w.$": "$.w[1]"}}, "n": None}
    data = {"v": "V", "w": [0, 1]}
    assert apply_template(template, data) == {
        "list": [{"v": "V"}, 2, "$.not-a-path"],
        "obj": {"deep": {"w": 1}},
        "n": None,
    }
    assert apply_template({"all.$": "$"}, data) == {"all": data}
    assert apply_template(5, data) == 5


def test_template_path_failure_is_parameter_path_failure() -> None:
    err = runtime_error(apply_template, {"x.$": "$.missing"}, {})
    assert err.error == "States.ParameterPathFailure" and "$.missing" in err.cause
    assert runtime_error(apply_template, {"x.$": 5}, {}).error == "States.ParameterPathFailure"


def test_intrinsic_format_spec_examples() -> None:
    # spec Appendix B States.Format; spec §Intrinsic Functions (escaped apostrophe in the template).
    assert apply_template(
        {"foo.$": "States.Format('Your name is {}, we are in the year {}', $.name, 2020)"},
        {"name": "Foo", "zebra": "stripe"},
    ) == {"foo": "Your name is Foo, we are in the year 2020"}
    greeting = call_intrinsic(
        "States.Format('Welcome to {} {}\\'s playlist.', $.firstName, $.lastName)",
        {"firstName": "Ada", "lastName": "Lovelace"},
    )
    assert greeting == "Welcome to Ada Lovelace's playlist."


def test_intrinsic_format_escapes_values_and_errors() -> None:
    assert call_intrinsic("States.Format('\\{\\} {} \\\\ {}', $.a, $.b)", {"a": True, "b": None}) == "{} true \\ null"
    assert call_intrinsic("States.Format('{}|{}', 1.5, -2)", {}) == "1.5|-2"
    assert call_intrinsic("States.Format($.t, 'x')", {"t": "<{}>"}) == "<x>"  # template from a Path
    for bad in (
        "States.Format('{} {}', 1)",
        "States.Format('{}', 1, 2)",
        "States.Format('{}', $.o)",
        "States.Format(1)",
        "States.Format('{}', $.missing)",
    ):
        assert runtime_error(call_intrinsic, bad, {"o": {"k": 1}}).error == "States.IntrinsicFailure", bad


def test_intrinsic_json_spec_examples() -> None:
    # spec Appendix B States.StringToJson, States.JsonToString, States.Array
    assert apply_template(
        {"foo.$": "States.StringToJson($.someString)"}, {"someString": '{"number": 20}', "zebra": "stripe"}
    ) == {"foo": {"number": 20}}
    assert apply_template(
        {"foo.$": "States.JsonToString($.someJson)"}, {"someJson": {"name": "Foo", "year": 2020}, "zebra": "stripe"}
    ) == {"foo": '{"name":"Foo","year":2020}'}
    assert apply_template(
        {"foo.$": "States.Array('Foo', 2020, $.someJson, null)"}, {"someJson": {"random": "abcdefg"}, "zebra": "stripe"}
    ) == {"foo": ["Foo", 2020, {"random": "abcdefg"}, None]}
    assert runtime_error(call_intrinsic, "States.StringToJson('{nope')", {}).error == "States.IntrinsicFailure"


def test_intrinsic_array_length_math_add_uuid() -> None:
    # spec Appendix B States.ArrayLength and States.MathAdd examples.
    assert call_intrinsic("States.ArrayLength($.inputArray)", {"inputArray": [1, 2, 3, 4, 5, 6, 7, 8, 9]}) == 9
    assert call_intrinsic("States.MathAdd($.value1, $.step)", {"value1": 111, "step": -1}) == 110
    # the spec's MathAdd adds integers (2.0 counts as one); AWS would round 1.5
    assert call_intrinsic("States.MathAdd($.a, 2)", {"a": 2.0}) == 4
    assert runtime_error(call_intrinsic, "States.MathAdd($.a, 2)", {"a": 1.5}).cause == (
        "States.MathAdd($.a, 2): argument 1 of States.MathAdd must be an integer, got 1.5"
    )
    uuid_text = call_intrinsic("States.UUID()", {})
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", uuid_text)
    assert uuid_text != call_intrinsic("States.UUID()", {})
    for bad in ("States.ArrayLength($.s)", "States.MathAdd($.s, 1)", "States.MathAdd(true, 1)"):
        assert runtime_error(call_intrinsic, bad, {"s": "text"}).error == "States.IntrinsicFailure", bad


def test_other_intrinsics_from_appendix_b() -> None:
    data = {
        "inputArray": [1, 2, 3, 3, 4, 5, 6, 7, 8, 9],
        "input": "Data to encode",
        "json1": {"a": 1, "b": 2},
        "json2": {"a": 3, "c": 4},
    }
    assert call_intrinsic("States.ArrayPartition($.inputArray, 4)", data) == [[1, 2, 3, 3], [4, 5, 6, 7], [8, 9]]
    assert call_intrinsic("States.ArrayContains($.inputArray, 5)", data) is True
    assert call_intrinsic("States.ArrayRange(1, 9, 2)", data) == [1, 3, 5, 7, 9]
    assert call_intrinsic("States.ArrayGetItem($.inputArray, 5)", data) == 5
    assert call_intrinsic("States.ArrayUnique($.inputArray)", data) == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert call_intrinsic("States.Base64Encode($.input)", data) == base64.b64encode(b"Data to encode").decode()
    assert call_intrinsic("States.Base64Decode('RGF0YSB0byBlbmNvZGU=')", data) == "Data to encode"
    assert call_intrinsic("States.Hash('input data', 'SHA-1')", data) == hashlib.sha1(b"input data").hexdigest()
    assert call_intrinsic("States.JsonMerge($.json1, $.json2, false)", data) == {"a": 3, "b": 2, "c": 4}
    assert call_intrinsic("States.StringSplit('1,2,3', ',')", data) == ["1", "2", "3"]
    # as AWS does: any of the delimiter's characters splits, and empty pieces are dropped
    assert call_intrinsic("States.StringSplit('a+b,,c', '+,')", data) == ["a", "b", "c"]
    assert call_intrinsic("States.StringSplit(',,', ',')", data) == []
    assert 1 <= call_intrinsic("States.MathRandom(1, 999)", data) <= 999
    seeded = "States.MathRandom(1, 999, 7)"
    assert call_intrinsic(seeded, data) == call_intrinsic(seeded, data)
    for bad in (
        "States.ArrayRange(1, 9, 0)",
        "States.Hash('x', 'MD4')",
        "States.JsonMerge($.json1, $.json2, true)",
        "States.ArrayGetItem($.inputArray, 99)",
        "States.ArrayPartition($.inputArray, 0)",
    ):
        assert runtime_error(call_intrinsic, bad, data).error == "States.IntrinsicFailure", bad


def test_intrinsic_call_syntax() -> None:
    data = {"a": [1, 2], "a b": 3}
    assert call_intrinsic("States.ArrayLength(States.Array(1, 'two', $.a[0,1], null, true, -2.5e1))", data) == 6
    assert call_intrinsic("States.Array( $['a b'] , 'x,y)' )", data) == [3, "x,y)"]
    assert call_intrinsic("States.Array()", data) == []
    assert call_intrinsic("States.Array(States.Format('{}', 'q'), $$.id)", data, {"id": 9}) == ["q", 9]
    for bad in (
        "States.Array(1 2)",
        "States.Array(",
        "States.Array(1,)",
        "States.Nope(1)",
        "States.Array(1) x",
        "States.Format('unterminated)",
        "States.Format('open \\escape')",
        "Array(1)",
    ):
        assert runtime_error(call_intrinsic, bad, data).error == "States.IntrinsicFailure", bad
        message = rejected(machine(("A", {"Type": "Pass", "Parameters": {"v.$": bad}, "End": True})))
        assert message.startswith("States.A.Parameters.v.$: "), message


# -------------------------------------------------------------------------------------------------- Choice


def dispatch_event() -> dict:
    # spec §Choice State: the "DispatchEvent" example.
    return {
        "Type": "Choice",
        "Choices": [
            {"Not": {"Variable": "$.type", "StringEquals": "Private"}, "Next": "Public"},
            {
                "And": [
                    {"Variable": "$.value", "IsPresent": True},
                    {"Variable": "$.value", "IsNumeric": True},
                    {"Variable": "$.value", "NumericGreaterThanEquals": 20},
                    {"Variable": "$.value", "NumericLessThan": 30},
                ],
                "Next": "ValueInTwenties",
            },
            {"Variable": "$.rating", "NumericGreaterThanPath": "$.auditThreshold", "Next": "StartAudit"},
        ],
        "Default": "RecordEvent",
    }


def test_choice_spec_example() -> None:
    # spec §Choice State: with input {"type": "Private", "value": 22} the machine goes to "ValueInTwenties".
    state = dispatch_event()
    assert choose(state, {"type": "Private", "value": 22}) == "ValueInTwenties"
    assert choose(state, {"type": "Public"}) == "Public"
    assert choose(state, {"type": "Private", "value": 35, "rating": 9, "auditThreshold": 5}) == "StartAudit"
    assert choose(state, {"type": "Private", "value": 35, "rating": 1, "auditThreshold": 5}) == "RecordEvent"


TS = "2016-03-14T01:59:00Z"


@pytest.mark.parametrize(
    ("op", "value", "operand", "expected"),
    [
        ("StringEquals", "abc", "abc", True),
        ("StringEquals", "abc", "ABC", False),
        ("StringEquals", 1, "1", False),
        ("StringLessThan", "abc", "abd", True),
        ("StringLessThan", "b", "a", False),
        ("StringGreaterThan", "b", "a", True),
        ("StringGreaterThan", "a", "a", False),
        ("StringLessThanEquals", "a", "a", True),
        ("StringLessThanEquals", "b", "a", False),
        ("StringGreaterThanEquals", "a", "a", True),
        ("StringGreaterThanEquals", "a", "b", False),
        ("NumericEquals", 3, 3.0, True),
        ("NumericEquals", 3, 4, False),
        ("NumericEquals", True, 1, False),
        ("NumericEquals", "3", 3, False),
        ("NumericLessThan", 2, 3, True),
        ("NumericLessThan", 3, 3, False),
        ("NumericGreaterThan", 4, 3, True),
        ("NumericGreaterThan", 3, 3, False),
        ("NumericLessThanEquals", 3, 3, True),
        ("NumericLessThanEquals", 4, 3, False),
        ("NumericGreaterThanEquals", 3, 3, True),
        ("NumericGreaterThanEquals", 2.5, 3, False),
        ("BooleanEquals", True, True, True),
        ("BooleanEquals", False, True, False),
        ("BooleanEquals", 1, True, False),
        ("TimestampEquals", TS, "2016-03-14T02:59:00+01:00", True),
        ("TimestampEquals", TS, "2016-03-14T01:59:01Z", False),
        ("TimestampEquals", "yesterday", TS, False),
        ("TimestampLessThan", TS, "2016-03-14T01:59:00.5Z", True),
        ("TimestampLessThan", TS, TS, False),
        ("TimestampGreaterThan", "2017-01-01T00:00:00Z", TS, True),
        ("TimestampGreaterThan", TS, TS, False),
        ("TimestampLessThanEquals", TS, TS, True),
        ("TimestampLessThanEquals", "2017-01-01T00:00:00Z", TS, False),
        ("TimestampGreaterThanEquals", TS, TS, True),
        ("TimestampGreaterThanEquals", "2015-01-01T00:00:00Z", TS, False),
    ],
)
def test_comparison_operators_and_their_path_forms(op: str, value: Any, operand: Any, expected: bool) -> None:
    data = {"v": value, "other": operand}
    state = choice_state({"Variable": "$.v", op: operand})
    path_state = choice_state({"Variable": "$.v", op + "Path": "$.other"})
    validate(machine(("C", state), ("Hit", {"Type": "Succeed"}), ("Other", {"Type": "Succeed"})))
    validate(machine(("C", path_state), ("Hit", {"Type": "Succeed"}), ("Other", {"Type": "Succeed"})))
    assert choose(state, data) == ("Hit" if expected else "Other")
    assert choose(path_state, data) == ("Hit" if expected else "Other")


@pytest.mark.parametrize(
    ("pattern", "value", "expected"),
    [
        # spec §Choice State, StringMatches: the three examples, then the escapes.
        ("foo*.log", "foo23.log", True),
        ("*.log", "zebra.log", True),
        ("foo*.*", "foobar.zebra", True),
        ("foo*.log", "foo23.txt", False),
        ("*", "", True),
        ("a.c", "abc", False),
        ("log", "log.txt", False),
        ("foo\\*", "foo*", True),
        ("foo\\*", "foobar", False),
        ("a\\\\b", "a\\b", True),
        ("x*y*z", "x-y\nz", True),
        ("*.log", 5, False),
    ],
)
def test_string_matches(pattern: str, value: Any, expected: bool) -> None:
    assert choose(choice_state({"Variable": "$.v", "StringMatches": pattern}), {"v": value}) == (
        "Hit" if expected else "Other"
    )


@pytest.mark.parametrize(
    ("op", "value", "expected"),
    [
        ("IsNull", None, True),
        ("IsNull", 0, False),
        ("IsNumeric", 1.5, True),
        ("IsNumeric", True, False),
        ("IsNumeric", "1", False),
        ("IsString", "", True),
        ("IsString", None, False),
        ("IsBoolean", False, True),
        ("IsBoolean", 0, False),
        ("IsTimestamp", TS, True),
        ("IsTimestamp", "2016-03-14T01:59:00+05:30", True),
        ("IsTimestamp", "2016-03-14t01:59:00z", False),
        ("IsTimestamp", "2016-03-14", False),
        ("IsTimestamp", 1, False),
    ],
)
def test_type_tests(op: str, value: Any, expected: bool) -> None:
    assert choose(choice_state({"Variable": "$.v", op: True}), {"v": value}) == ("Hit" if expected else "Other")
    assert choose(choice_state({"Variable": "$.v", op: False}), {"v": value}) == ("Other" if expected else "Hit")


def test_is_present_never_raises_but_other_tests_do() -> None:
    assert choose(choice_state({"Variable": "$.v", "IsPresent": True}), {"v": None}) == "Hit"
    assert choose(choice_state({"Variable": "$.v", "IsPresent": False}), {}) == "Hit"
    assert choose(choice_state({"Variable": "$.v[*].x", "IsPresent": True}), {"v": [{}]}) == "Other"
    err = runtime_error(choose, choice_state({"Variable": "$.v", "IsNull": True}), {})
    assert err.error == "States.Runtime"
    err = runtime_error(choose, choice_state({"Variable": "$.v", "NumericEqualsPath": "$.w"}), {"v": 1})
    assert err.error == "States.Runtime"


def test_and_or_not_and_short_circuit() -> None:
    rule_and = {"And": [{"Variable": "$.a", "NumericGreaterThan": 1}, {"Variable": "$.missing", "IsNull": True}]}
    rule_or = {"Or": [{"Variable": "$.a", "NumericEquals": 5}, {"Variable": "$.missing", "IsNull": True}]}
    assert choose(choice_state(rule_and), {"a": 0}) == "Other"  # stops at the first false operand
    assert choose(choice_state(rule_or), {"a": 5}) == "Hit"  # stops at the first true operand
    assert choose(choice_state({"Not": {"Variable": "$.a", "NumericEquals": 5}}), {"a": 5}) == "Other"
    nested = {
        "Or": [
            {"And": [{"Variable": "$.a", "IsNumeric": True}, {"Not": {"Variable": "$.a", "NumericLessThan": 0}}]},
            {"Variable": "$.a", "StringEquals": "zero"},
        ]
    }
    assert [choose(choice_state(nested), {"a": a}) for a in (3, -3, "zero", "one")] == ["Hit", "Other", "Hit", "Other"]


def test_first_matching_rule_wins_and_no_match_without_default_is_none() -> None:
    state = choice_state(
        {"Variable": "$.a", "NumericEquals": 1, "Next": "First"},
        {"Variable": "$.a", "NumericGreaterThan": 0, "Next": "Second"},
        default=None,
    )
    assert [choose(state, {"a": a}) for a in (1, 5, -1)] == ["First", "Second", None]


def test_choice_variable_can_read_the_context() -> None:
    state = choice_state({"Variable": "$$.Execution.Name", "StringEquals": "x"})
    assert choose(state, {}, {"Execution": {"Name": "x"}}) == "Hit"


# ---------------------------------------------------------------------------------------------------- Wait


def test_wait_until() -> None:
    # spec §Wait State: the four examples (Seconds, Timestamp, TimestampPath "$.expirydate").
    when = datetime(2016, 3, 14, 1, 59, tzinfo=UTC).timestamp()
    assert wait_until({"Type": "Wait", "Seconds": 10}, {}, 1000.0) == 1010.0
    assert wait_until({"Type": "Wait", "SecondsPath": "$.s"}, {"s": 5}, 1000.0) == 1005.0
    assert wait_until({"Type": "Wait", "Timestamp": "2016-03-14T01:59:00Z"}, {}, 0.0) == when
    assert (
        wait_until({"Type": "Wait", "TimestampPath": "$.expirydate"}, {"expirydate": "2016-03-14T01:59:00Z"}, 0.0)
        == when
    )
    assert wait_until({"Type": "Wait", "Timestamp": "2016-03-14T03:59:00.250+02:00"}, {}, 0.0) == when + 0.25


def test_wait_runtime_errors() -> None:
    for state, data in (
        ({"SecondsPath": "$.s"}, {"s": "5"}),
        ({"SecondsPath": "$.s"}, {"s": -1}),
        ({"SecondsPath": "$.s"}, {}),
        ({"TimestampPath": "$.t"}, {"t": "tomorrow"}),
    ):
        assert runtime_error(wait_until, {"Type": "Wait", **state}, data, 0.0).error == "States.Runtime"


def test_run_wait_sleeps() -> None:
    slept: list[float] = []
    doc = machine(
        ("W", {"Type": "Wait", "Seconds": 10, "Next": "Past"}),
        ("Past", {"Type": "Wait", "Timestamp": "2000-01-01T00:00:00Z", "End": True}),
    )
    assert run(validate(doc), {"k": 1}, {}, sleep=slept.append) == {"k": 1}
    assert len(slept) == 2 and abs(slept[0] - 10) < 1 and slept[1] == 0


# ---------------------------------------------------------------------------------------------- error rules


def test_error_name_matching() -> None:
    assert error_matches(["States.ALL"], "Anything") and error_matches(["States.ALL"], "States.Timeout")
    assert error_matches(["States.TaskFailed"], "ValueError")
    assert error_matches(["States.TaskFailed"], "States.Permissions")
    assert not error_matches(["States.TaskFailed"], "States.Timeout")
    assert not error_matches(["States.TaskFailed"], "States.HeartbeatTimeout")
    assert error_matches(["States.Timeout"], "States.HeartbeatTimeout")
    assert error_matches(["ErrorA", "ErrorB"], "ErrorB") and not error_matches(["ErrorA"], "errora")
    assert not error_matches([], "ErrorA")


def test_retry_spec_examples() -> None:
    # spec §Retrying after error: 2 retries after 3 and 6 seconds; with MaxDelaySeconds 4, after 3 and 4.
    retriers = [{"ErrorEquals": ["States.Timeout"], "IntervalSeconds": 3, "MaxAttempts": 2, "BackoffRate": 2.0}]
    attempts: dict[int, int] = {}
    assert [retry_delay(retriers, "States.Timeout", attempts) for _ in range(3)] == [3.0, 6.0, None]
    assert attempts == {0: 2}
    capped = [dict(retriers[0], MaxDelaySeconds=4)]
    attempts = {}
    assert [retry_delay(capped, "States.Timeout", attempts) for _ in range(3)] == [3.0, 4.0, None]
    # spec: retry any error except States.Timeout.
    retriers = [{"ErrorEquals": ["States.Timeout"], "MaxAttempts": 0}, {"ErrorEquals": ["States.ALL"]}]
    assert retry_delay(retriers, "States.Timeout", {}) is None
    assert retry_delay(retriers, "Other", {}) == 1.0


def test_complex_retry_spec_example() -> None:
    # spec §Complex retry scenarios: ErrorA, ErrorB, ErrorC, ErrorB wait 1, 2 and 5 seconds, then go to Catch.
    retriers = [
        {"ErrorEquals": ["ErrorA", "ErrorB"], "IntervalSeconds": 1, "BackoffRate": 2, "MaxAttempts": 2},
        {"ErrorEquals": ["ErrorC"], "IntervalSeconds": 5},
    ]
    attempts: dict[int, int] = {}
    delays = [retry_delay(retriers, e, attempts) for e in ("ErrorA", "ErrorB", "ErrorC", "ErrorB")]
    assert delays == [1.0, 2.0, 5.0, None] and attempts == {0: 2, 1: 1}


def test_retry_defaults_no_match_and_jitter() -> None:
    attempts: dict[int, int] = {}
    delays = [retry_delay([{"ErrorEquals": ["E"]}], "E", attempts) for _ in range(4)]
    assert delays == [1.0, 2.0, 4.0, None]  # IntervalSeconds 1, BackoffRate 2.0, MaxAttempts 3
    assert retry_delay([{"ErrorEquals": ["E"]}], "F", {}) is None
    assert retry_delay([], "E", {}) is None
    jittered = [{"ErrorEquals": ["E"], "IntervalSeconds": 8, "JitterStrategy": "FULL"}]
    assert all(0.0 <= retry_delay(jittered, "E", {}) <= 8.0 for _ in range(20))


def test_find_catcher_spec_example_and_error_output() -> None:
    # spec §Fallback states: java.lang.Exception goes to RecoveryState, anything else to EndMachine.
    catchers = [
        {"ErrorEquals": ["java.lang.Exception"], "ResultPath": "$.error-info", "Next": "RecoveryState"},
        {"ErrorEquals": ["States.ALL"], "Next": "EndMachine"},
    ]
    assert find_catcher(catchers, "java.lang.Exception") is catchers[0]
    assert find_catcher(catchers, "States.Timeout") is catchers[1]
    assert find_catcher(catchers[:1], "Other") is None
    assert error_output("E", "why") == {"Error": "E", "Cause": "why"}


# -------------------------------------------------------------------------------------- reference interpreter


class Flaky:
    """A task failing ``failures`` times with ``exc`` before returning ``value``."""

    def __init__(self, failures: int, exc: Exception, value: Any = "ok") -> None:
        self.failures, self.exc, self.value, self.calls = failures, exc, value, 0

    def __call__(self, data: Any) -> Any:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.exc
        return self.value


class JavaException(Exception):
    pass


JavaException.__name__ = "java.lang.Exception"


def test_run_hello_task_gets_the_effective_input() -> None:
    seen = []
    doc = machine(
        (
            "Hello",
            {
                "Type": "Task",
                "Resource": "hello",
                "Parameters": {"who.$": "$.name"},
                "ResultPath": "$.greeting",
                "End": True,
            },
        )
    )
    out = run(validate(doc), {"name": "SAND"}, {"hello": lambda d: seen.append(d) or f"Hello, {d['who']}!"})
    assert seen == [{"who": "SAND"}] and out == {"name": "SAND", "greeting": "Hello, SAND!"}


def test_run_retries_with_backoff_then_succeeds() -> None:
    slept: list[float] = []
    task = Flaky(2, TimeoutError("slow"))
    doc = machine(
        (
            "T",
            {
                "Type": "Task",
                "Resource": "t",
                "End": True,
                "Retry": [{"ErrorEquals": ["TimeoutError"], "IntervalSeconds": 2, "BackoffRate": 3}],
            },
        )
    )
    assert run(validate(doc), {}, {"t": task}, sleep=slept.append) == "ok"
    assert task.calls == 3 and slept == [2.0, 6.0]


def test_run_retries_exhausted_raise_the_task_error() -> None:
    slept: list[float] = []
    task = Flaky(10, KeyError("k"))
    doc = machine(
        (
            "T",
            {
                "Type": "Task",
                "Resource": "t",
                "End": True,
                "Retry": [{"ErrorEquals": ["States.TaskFailed"], "MaxAttempts": 2}],
            },
        )
    )
    err = runtime_error(run, validate(doc), {}, {"t": task}, None, slept.append)
    assert (err.error, err.cause, task.calls, slept) == ("KeyError", "'k'", 3, [1.0, 2.0])


def test_run_catch_with_result_path_spec_example() -> None:
    # spec §Fallback states: the Error Output goes to "$.error-info" in the original input for RecoveryState.
    doc = machine(
        (
            "X",
            {
                "Type": "Task",
                "Resource": "x",
                "Next": "Done",
                "Catch": [
                    {"ErrorEquals": ["java.lang.Exception"], "ResultPath": "$.error-info", "Next": "RecoveryState"},
                    {"ErrorEquals": ["States.ALL"], "Next": "EndMachine"},
                ],
            },
        ),
        ("Done", {"Type": "Succeed"}),
        ("RecoveryState", {"Type": "Pass", "End": True}),
        ("EndMachine", {"Type": "Pass", "End": True}),
    )
    m = validate(doc)
    out = run(m, {"order": 7}, {"x": Flaky(1, JavaException("boom"))})
    assert out == {"order": 7, "error-info": {"Error": "java.lang.Exception", "Cause": "boom"}}
    assert run(m, {"order": 7}, {"x": Flaky(1, ValueError("bad"))}) == {"Error": "ValueError", "Cause": "bad"}


def test_run_retry_before_catch_and_task_failed_catches_exceptions() -> None:
    slept: list[float] = []
    doc = machine(
        (
            "T",
            {
                "Type": "Task",
                "Resource": "t",
                "Next": "Ok",
                "Retry": [{"ErrorEquals": ["RuntimeError"], "MaxAttempts": 1}],
                "Catch": [{"ErrorEquals": ["States.TaskFailed"], "Next": "Caught", "ResultPath": "$.err"}],
            },
        ),
        ("Ok", {"Type": "Succeed"}),
        ("Caught", {"Type": "Pass", "End": True}),
    )
    out = run(validate(doc), {"a": 1}, {"t": Flaky(5, RuntimeError("x"))}, sleep=slept.append)
    assert out == {"a": 1, "err": {"Error": "RuntimeError", "Cause": "x"}} and slept == [1.0]


def test_run_task_raising_asl_error_keeps_its_name() -> None:
    doc = machine(
        (
            "T",
            {"Type": "Task", "Resource": "t", "End": True, "Catch": [{"ErrorEquals": ["Custom.Error"], "Next": "C"}]},
        ),
        ("C", {"Type": "Succeed"}),
    )
    assert run(validate(doc), {}, {"t": Flaky(1, AslRuntimeError("Custom.Error", "c"))}) == {
        "Error": "Custom.Error",
        "Cause": "c",
    }
    err = runtime_error(run, validate(machine(("T", {"Type": "Task", "Resource": "missing", "End": True}))), {}, {})
    assert err.error == "States.Runtime"


def test_run_fail_and_succeed() -> None:
    doc = machine(("F", {"Type": "Fail", "Error": "ErrorA", "Cause": "Kaiju attack"}))  # spec §Fail State
    err = runtime_error(run, validate(doc), {}, {})
    assert (err.error, err.cause) == ("ErrorA", "Kaiju attack")
    doc = machine(
        (
            "F",
            {
                "Type": "Fail",
                "Comment": "my error comment",
                "ErrorPath": "$.Error",
                "CausePath": "States.Format('code {}', $.Code)",
            },
        )
    )
    err = runtime_error(run, validate(doc), {"Error": "Dynamic", "Code": 7}, {})
    assert (err.error, err.cause) == ("Dynamic", "code 7")
    assert runtime_error(run, validate(doc), {"Error": 5, "Code": 7}, {}).error == "States.Runtime"
    doc = machine(("S", {"Type": "Succeed", "InputPath": "$.keep", "OutputPath": "$.x"}))
    assert run(validate(doc), {"keep": {"x": [1]}, "drop": 1}, {}) == [1]


def test_run_choice_loop_with_intrinsic_counter() -> None:
    doc = machine(
        ("Init", {"Type": "Pass", "Result": 0, "ResultPath": "$.count", "Next": "Loop"}),
        (
            "Loop",
            {
                "Type": "Choice",
                "Choices": [{"Variable": "$.count", "NumericGreaterThanEquals": 3, "Next": "Stop"}],
                "Default": "Increment",
            },
        ),
        ("Increment", {"Type": "Pass", "Parameters": {"count.$": "States.MathAdd($.count, 1)"}, "Next": "Loop"}),
        ("Stop", {"Type": "Succeed"}),
    )
    assert run(validate(doc), {}, {}) == {"count": 3}


def test_run_choice_without_match_raises_no_choice_matched() -> None:
    doc = machine(
        ("C", {"Type": "Choice", "Choices": [{"Variable": "$.a", "IsNull": True, "Next": "D"}]}),
        ("D", {"Type": "Succeed"}),
    )
    assert runtime_error(run, validate(doc), {"a": 1}, {}).error == "States.NoChoiceMatched"
    doc["States"]["C"]["OutputPath"] = "$.a"
    assert run(validate(doc), {"a": None}, {}) is None


def test_run_parallel_spec_example_results_in_branch_order() -> None:
    # spec §Parallel State: "FunWithMath" given [3, 2] outputs [5, 1].
    doc = machine(
        (
            "FunWithMath",
            {
                "Type": "Parallel",
                "End": True,
                "Branches": [
                    machine(("Add", {"Type": "Task", "Resource": "add", "End": True})),
                    machine(("Subtract", {"Type": "Task", "Resource": "subtract", "End": True})),
                ],
            },
        )
    )
    tasks = {"add": lambda d: d[0] + d[1], "subtract": lambda d: d[0] - d[1]}
    assert run(validate(doc), [3, 2], tasks) == [5, 1]


def test_run_parallel_input_result_selector_and_branch_failure() -> None:
    doc = machine(
        (
            "P",
            {
                "Type": "Parallel",
                "InputPath": "$.n",
                "ResultSelector": {"first.$": "$[0]"},
                "ResultPath": "$.r",
                "Next": "Done",
                "Branches": [
                    machine(("B1", {"Type": "Task", "Resource": "inc", "End": True})),
                    machine(("B2", {"Type": "Fail", "Error": "Branch.Broke", "Cause": "b2"})),
                ],
                "Catch": [{"ErrorEquals": ["Branch.Broke"], "Next": "Caught", "ResultPath": "$.e"}],
            },
        ),
        ("Done", {"Type": "Succeed"}),
        ("Caught", {"Type": "Pass", "End": True}),
    )
    out = run(validate(doc), {"n": 1}, {"inc": lambda n: n + 1})
    assert out == {"n": 1, "e": {"Error": "Branch.Broke", "Cause": "b2"}}
    doc["States"]["P"]["Branches"][1] = machine(("B2", {"Type": "Pass", "Result": "two", "End": True}))
    assert run(validate(doc), {"n": 1}, {"inc": lambda n: n + 1}) == {"n": 1, "r": {"first": 2}}


def shipping() -> dict:
    # spec §Map State: the example input.
    return {
        "ship-date": "2016-03-14T01:59:00Z",
        "detail": {
            "delivery-partner": "UQS",
            "shipped": [
                {"prod": "R31", "dest-code": 9511, "quantity": 1344},
                {"prod": "S39", "dest-code": 9511, "quantity": 40},
                {"prod": "R31", "dest-code": 9833, "quantity": 12},
                {"prod": "R40", "dest-code": 9860, "quantity": 887},
                {"prod": "R40", "dest-code": 9511, "quantity": 1220},
            ],
        },
    }


def test_run_map_spec_example_with_items_path() -> None:
    # spec §Map State: "Validate-All" runs ship-val once per shipped item; results replace detail.shipped.
    doc = machine(
        (
            "Validate-All",
            {
                "Type": "Map",
                "InputPath": "$.detail",
                "ItemsPath": "$.shipped",
                "MaxConcurrency": 0,
                "ResultPath": "$.detail.shipped",
                "End": True,
                "ItemProcessor": machine(("Validate", {"Type": "Task", "Resource": "ship-val", "End": True})),
            },
        )
    )
    seen: list[Any] = []
    out = run(validate(doc), shipping(), {"ship-val": lambda item: seen.append(item) or item["quantity"] > 100})
    assert seen[0] == {"prod": "R31", "dest-code": 9511, "quantity": 1344} and len(seen) == 5
    # ResultPath is applied to the Map state's raw input, so detail.shipped is created under detail.
    assert out["detail"]["shipped"] == [True, False, False, True, True] and out["ship-date"] == "2016-03-14T01:59:00Z"


@pytest.mark.parametrize("selector", ["ItemSelector", "Parameters"])
def test_run_map_spec_example_with_item_selector(selector: str) -> None:
    # spec §Map State: ItemSelector builds {"parcel": <item>, "courier": "UQS"} (Parameters: the older name).
    doc = machine(
        (
            "Validate-All",
            {
                "Type": "Map",
                "InputPath": "$.detail",
                "ItemsPath": "$.shipped",
                selector: {
                    "parcel.$": "$$.Map.Item.Value",
                    "courier.$": "$.delivery-partner",
                    "index.$": "$$.Map.Item.Index",
                },
                "Iterator": machine(("Validate", {"Type": "Task", "Resource": "ship-val", "End": True})),
                "ResultPath": "$.detail.shipped",
                "End": True,
            },
        )
    )
    seen: list[Any] = []
    run(validate(doc), shipping(), {"ship-val": lambda item: seen.append(item)})
    assert seen[0] == {"parcel": {"prod": "R31", "dest-code": 9511, "quantity": 1344}, "courier": "UQS", "index": 0}
    assert [s["index"] for s in seen] == [0, 1, 2, 3, 4]


def test_run_map_default_items_path_and_errors() -> None:
    doc = machine(
        (
            "M",
            {
                "Type": "Map",
                "End": True,
                "Retry": [{"ErrorEquals": ["ZeroDivisionError"], "MaxAttempts": 1}],
                "ItemProcessor": machine(("Inv", {"Type": "Task", "Resource": "inv", "End": True})),
            },
        )
    )
    m = validate(doc)
    assert run(m, [1, 2, 4], {"inv": lambda x: 1 / x}) == [1.0, 0.5, 0.25]
    slept: list[float] = []
    err = runtime_error(run, m, [1, 0], {"inv": lambda x: 1 / x}, None, slept.append)
    assert err.error == "ZeroDivisionError" and slept == [1.0]
    assert runtime_error(run, m, {"not": "a list"}, {"inv": lambda x: x}).error == "States.Runtime"


def test_run_passes_the_context_object() -> None:
    doc = machine(
        ("P", {"Type": "Pass", "Parameters": {"id.$": "$$.Execution.Id", "state.$": "$$.State.Name"}, "End": True})
    )
    assert run(validate(doc), {}, {}, {"Execution": {"Id": "e-1"}}) == {"id": "e-1", "state": "P"}


def test_run_does_not_mutate_the_machine_or_input() -> None:
    doc = machine(
        ("T0", {"Type": "Task", "Resource": "t", "ResultPath": "$.t0", "Next": "P"}),
        ("P", {"Type": "Pass", "Result": {"list": [1]}, "ResultPath": "$.r", "Next": "T"}),
        ("T", {"Type": "Task", "Resource": "t", "ResultPath": "$.t", "End": True}),
    )
    m = validate(doc)
    data = {"in": 1, "r": {"list": []}}

    def mutate(d: dict) -> int:
        d["r"]["list"].append(2)
        return 0

    out = run(m, data, {"t": mutate})
    assert data == {"in": 1, "r": {"list": []}} and m.states["P"]["Result"] == {"list": [1]}
    assert out == {"in": 1, "r": {"list": [1]}, "t0": 0, "t": 0}
