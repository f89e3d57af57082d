"""Workflow description validation: clear errors for what cannot run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grainworker import asl_spec, rules
from grainworker.workflow import DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT_S, END, WorkflowError, parse_workflow

ROOT = Path(__file__).resolve().parent.parent


def wf(**over: object) -> dict:
    doc = {"name": "app", "entry": "a", "functions": [{"name": "a", "next": ["b"]}, {"name": "b", "next": ["end"]}]}
    doc.update(over)
    return doc


def test_valid_chain_fan_out_and_dynamic() -> None:
    w = parse_workflow(
        wf(
            functions=[
                {"name": "a", "next": ["b", "c"], "potentialNext": ["d"]},
                {"name": "b", "next": ["end"]},
                {"name": "c", "next": ["end"], "resource": "shared"},
                {"name": "d", "next": ["end"]},
            ]
        )
    )
    assert w.entry == "a" and w.grain("a").next == ("b", "c") and w.grain("a").potential_next == ("d",)
    assert w.grain("c").code == "shared" and w.grain("b").code == "b"
    assert parse_workflow(w.to_json()) == w


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ("{not json", "not valid JSON: Expecting property name enclosed in double quotes at line 1 column 2"),
        ("[]", "must be a JSON object"),
        (wf(entry=None), "'entry' is missing"),
        (wf(entry="zzz"), "entry 'zzz' is not a grain of the workflow"),
        (wf(functions=[]), "'functions' must be a non-empty list"),
        (wf(functions=[{"name": "a"}, {"name": "a"}]), "functions[1]: duplicate grain name 'a'"),
        (wf(functions=[{"name": "a", "next": ["nope"]}]), "functions[0] (a).next names unknown grain 'nope'"),
        (wf(functions=[{"name": "a", "potentialNext": ["x"]}]), "(a).potentialNext names unknown grain 'x'"),
        (wf(functions=[{"name": "a", "next": "b"}]), "functions[0].next must be a list of grain names"),
        (wf(functions=[{"name": "a", "nxt": ["end"]}]), "functions[0] has unknown field(s) [nxt]"),
        (wf(functions=[{"name": "end"}]), 'functions[0].name "end" is invalid'),
        (wf(name="has space"), 'workflow name "has space" is missing or invalid'),
    ],
)
def test_invalid_workflows_say_what_and_where(doc: object, message: str) -> None:
    with pytest.raises(WorkflowError) as err:
        parse_workflow(doc if isinstance(doc, str) else json.dumps(doc))
    assert message in str(err.value)


CASES = json.loads((ROOT / "contracts" / "src" / "test" / "resources" / "workflow-cases.json").read_text())


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_shared_cases_give_the_same_entry_or_the_same_message_as_java(case: dict) -> None:
    """contracts' WorkflowTest runs the same file: one set of rules, one wording, two languages."""
    if "error" in case:
        with pytest.raises(WorkflowError) as err:
            parse_workflow(json.dumps(case["workflow"]))
        assert str(err.value) == case["error"]
    else:
        w = parse_workflow(json.dumps(case["workflow"]))
        assert w.entry == case["entry"]
        assert list(dict.fromkeys(g.code for g in w.grains.values())) == case["resources"]


def test_rules_come_from_the_contracts_declaration() -> None:
    declared = json.loads((ROOT / "contracts" / "rules.json").read_text())
    assert rules.RULES == declared
    copy = rules.COPY
    assert copy.is_file(), "deploy/install.sh copies contracts/rules.json into grainworker/_gen for the sandbox"
    assert json.loads(copy.read_text()) == declared, "the sandbox's copy is stale: run deploy/install.sh"
    assert DEFAULT_CONCURRENCY == declared["application_settings"]["concurrency"]["default"]
    assert DEFAULT_TIMEOUT_S == declared["application_settings"]["timeout_s"]["default"]
    assert END == declared["workflow"]["end"]


def test_asl_tables_come_from_the_contracts_declaration() -> None:
    declared = json.loads((ROOT / "contracts" / "asl.json").read_text())
    assert asl_spec.SPEC == declared
    copy = asl_spec.COPY
    assert copy.is_file(), "deploy/install.sh copies contracts/asl.json into grainworker/_gen for the sandbox"
    assert json.loads(copy.read_text()) == declared, "the sandbox's copy is stale: run deploy/install.sh"
    assert "contracts/asl.json" in (ROOT / "deploy" / "sandbox-image.sh").read_text(), "the image's hash misses it"


ASL_GRAINS = json.loads((ROOT / "contracts" / "src" / "test" / "resources" / "asl-grains.json").read_text())["cases"]


@pytest.mark.parametrize("case", ASL_GRAINS, ids=[str(i) for i in range(len(ASL_GRAINS))])
def test_asl_machines_make_the_same_grains_as_java(case: dict) -> None:
    """contracts' AslWorkflowTest runs the same file: the grain names the host agent starts workers for are the
    ones the sandbox's runtime routes to."""
    w = parse_workflow(case["doc"])
    assert w.entry == case["entry"]
    assert [[g.name, g.code] for g in w.grains.values()] == case["grains"]
    assert all(set(g.potential_next) == {*w.grains, END} and not g.next for g in w.grains.values())
    assert w.to_json() == case["doc"], "the machine itself is what the sandbox is given"


def test_asl_structure_errors_say_state_and_field() -> None:
    with pytest.raises(WorkflowError, match=r"^States.T.Resource: must name an uploaded grain .*got \"bad name\""):
        parse_workflow({"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": "bad name", "End": True}}})
