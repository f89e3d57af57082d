"""KNIX's stop after an error (grainworker/knix_stop.py) and the dialect mark of a native workflow."""

from __future__ import annotations

from typing import Any

import pytest

from grainworker import knix_stop
from grainworker.workflow import END, WorkflowError, parse_workflow


class Ctx:
    def __init__(self, fail: bool = False) -> None:
        self.maps: dict[str, dict[str, str]] = {}
        self.logs: list[tuple[str, str]] = []
        self.fail = fail

    def putMapEntry(self, m: str, k: str, v: str) -> None:  # noqa: N802
        if self.fail:
            raise ConnectionError("data layer down")
        self.maps.setdefault(m, {})[k] = v

    def getMapEntry(self, m: str, k: str) -> str | None:  # noqa: N802
        if self.fail:
            raise ConnectionError("data layer down")
        return self.maps.get(m, {}).get(k)

    def retrieveMap(self, m: str) -> dict[str, str]:  # noqa: N802
        return dict(self.maps.get(m, {}))

    def deleteMapEntry(self, m: str, k: str) -> None:  # noqa: N802
        self.maps.get(m, {}).pop(k, None)

    def log(self, text: str, level: str = "INFO") -> None:
        self.logs.append((level, text))


def out(*grains: str) -> list[dict[str, Any]]:
    return [{"grain": g, "value": 1} for g in grains]


def test_after_an_error_the_executions_other_instances_pass_nothing_on() -> None:
    ctx = Ctx()
    assert knix_stop.apply(ctx, "e1", "ok", out("b")) == out("b"), "no error yet"
    assert knix_stop.apply(ctx, "e1", "error", out(END)) == out(END)
    assert knix_stop.apply(ctx, "e1", "ok", out("c", "d")) == []
    assert ctx.logs[-1] == ("INFO", "Not continuing because workflow execution has been stopped... e1")
    assert knix_stop.apply(ctx, "e2", "ok", out("c")) == out("c"), "another execution goes on"
    assert knix_stop.apply(ctx, "e1", "ok", out(END)) == out(END), "to the exit only: not looked at, as KNIX"


def test_old_marks_are_pruned(monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = Ctx()
    ctx.maps[knix_stop.STOPPED_MAP] = {"old": "1", "bad": "x"}
    monkeypatch.setattr(knix_stop.random, "randrange", lambda n: 0)
    knix_stop.apply(ctx, "new", "error", out(END))
    assert set(ctx.maps[knix_stop.STOPPED_MAP]) == {"new"}


def test_a_data_layer_that_does_not_answer_lets_the_execution_go_on() -> None:
    ctx = Ctx(fail=True)
    assert knix_stop.apply(ctx, "e1", "ok", out("b")) == out("b")
    assert ctx.logs[-1][0] == "WARNING"


def test_a_native_workflow_carries_its_dialect() -> None:
    doc = {"name": "w", "entry": "a", "functions": [{"name": "a", "next": [END]}]}
    assert parse_workflow(doc).dialect == ""
    assert parse_workflow({**doc, "SandDialect": "knix"}).dialect == "knix"
    with pytest.raises(WorkflowError, match='^SandDialect: "aws" is not a dialect SAND knows'):
        parse_workflow({**doc, "SandDialect": "aws"})
