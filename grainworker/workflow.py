"""The workflow description (paper §4.1; the shape KNIX uses) and its validation.

    {"name": "hello", "entry": "greet",
     "functions": [{"name": "greet", "next": ["shout"]},
                   {"name": "shout", "next": ["end"], "potentialNext": [], "resource": "shout"}]}

``next``: grains that always get this grain's output ("end" = the workflow's output). ``potentialNext``:
grains this grain may choose at run time (``context.add_workflow_next``). ``resource``: the code the
grain runs (a grain uploaded under that name), default: the grain's own name.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from grainworker.rules import RULES

_WORKFLOW = RULES["workflow"]
END: str = _WORKFLOW["end"]
# A grain's settings when its application's do not say: the same declaration the platform's side reads
# (contracts/rules.json). Here, in a module with no imports but the standard library's and rules', so the
# sandbox's supervisor can use them before its one import of the grain worker.
DEFAULT_CONCURRENCY = int(RULES["application_settings"]["concurrency"]["default"])
DEFAULT_TIMEOUT_S = float(RULES["application_settings"]["timeout_s"]["default"])
NAME_RE = re.compile(f"^{_WORKFLOW['name_pattern']}$")
FIELDS = frozenset(_WORKFLOW["function_fields"])

__all__ = ["DEFAULT_CONCURRENCY", "DEFAULT_TIMEOUT_S", "END", "Grain", "Workflow", "WorkflowError", "parse_workflow"]


class WorkflowError(ValueError):
    """A workflow description that cannot run; the message says what and where."""


@dataclass(frozen=True)
class Grain:
    name: str
    next: tuple[str, ...] = ()
    potential_next: tuple[str, ...] = ()
    resource: str = ""

    @property
    def code(self) -> str:
        """The name of the code this grain runs."""
        return self.resource or self.name


@dataclass(frozen=True)
class Workflow:
    name: str
    entry: str
    grains: dict[str, Grain] = field(default_factory=dict)

    def grain(self, name: str) -> Grain:
        try:
            return self.grains[name]
        except KeyError:
            raise WorkflowError(f"workflow '{self.name}' has no grain '{name}'") from None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "entry": self.entry,
            "functions": [
                {"name": g.name, "next": list(g.next), "potentialNext": list(g.potential_next)}
                | ({"resource": g.resource} if g.resource else {})
                for g in self.grains.values()
            ],
        }


def _show(value: Any) -> str:
    """A value as the message shows it: compact JSON, as Jackson prints a node (null when missing)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _list(names: Any) -> str:
    return "[" + ", ".join(sorted(names)) + "]"


def _names(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise WorkflowError(f"{where} must be a list of grain names")
    return tuple(value)


def parse_workflow(source: str | bytes | dict[str, Any]) -> Workflow:
    """Parse and validate; raises WorkflowError naming the problem and where it is."""
    if isinstance(source, str | bytes):
        try:
            doc = json.loads(source)
        except json.JSONDecodeError as e:
            raise WorkflowError(f"workflow is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    else:
        doc = source
    if not isinstance(doc, dict):
        raise WorkflowError("workflow must be a JSON object with name, entry and functions")
    name = doc.get("name")
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise WorkflowError(f"workflow name {_show(name)} is missing or invalid: use letters, digits, '_', '.', '-'")
    functions = doc.get("functions")
    if not isinstance(functions, list) or not functions:
        raise WorkflowError("workflow 'functions' must be a non-empty list")
    grains: dict[str, Grain] = {}
    for i, f in enumerate(functions):
        where = f"functions[{i}]"
        if not isinstance(f, dict):
            raise WorkflowError(f"{where} must be an object with at least 'name'")
        unknown = set(f) - FIELDS
        if unknown:
            raise WorkflowError(f"{where} has unknown field(s) {_list(unknown)}")
        gname = f.get("name")
        if not isinstance(gname, str) or not NAME_RE.match(gname) or gname == END:
            raise WorkflowError(f"{where}.name {_show(gname)} is invalid: letters, digits, '_', '.', '-', not '{END}'")
        if gname in grains:
            raise WorkflowError(f"{where}: duplicate grain name '{gname}'")
        resource = f.get("resource")
        resource = "" if resource is None else resource
        if not isinstance(resource, str) or (resource and not NAME_RE.match(resource)):
            raise WorkflowError(f"{where}.resource {_show(f.get('resource'))} is invalid")
        grains[gname] = Grain(gname, _names(f.get("next"), f"{where}.next"),
                              _names(f.get("potentialNext"), f"{where}.potentialNext"), resource)
    entry = doc.get("entry")
    if not isinstance(entry, str) or not entry:
        raise WorkflowError("workflow 'entry' is missing: name the grain that receives the request")
    if entry not in grains:
        raise WorkflowError(f"entry '{entry}' is not a grain of the workflow; grains: {_list(grains)}")
    for i, g in enumerate(grains.values()):
        for kind, targets in (("next", g.next), ("potentialNext", g.potential_next)):
            for t in targets:
                if t != END and t not in grains:
                    raise WorkflowError(f"functions[{i}] ({g.name}).{kind} names unknown grain '{t}'")
    if not _reaches_end(entry, grains):
        raise WorkflowError(f"no grain reachable from entry '{entry}' leads to 'end' (through next or potentialNext): "
                            "no request would ever be answered; give the grain whose return value is the answer "
                            '"next": ["end"]')
    return Workflow(name, entry, grains)


def _reaches_end(entry: str, grains: dict[str, Grain]) -> bool:
    """Whether some path from the entry through next or potentialNext reaches END (else no request is answered)."""
    todo, seen = [entry], {entry}
    while todo:
        g = grains[todo.pop()]
        for t in (*g.next, *g.potential_next):
            if t == END:
                return True
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return False
