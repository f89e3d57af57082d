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
DEFAULT_SESSION_TIMEOUT_S = float(RULES["application_settings"]["session_timeout_s"]["default"])
DEFAULT_SESSION_FUNCTIONS_MAX = int(RULES["application_settings"]["session_functions_max"]["default"])
NAME_RE = re.compile(f"^{_WORKFLOW['name_pattern']}$")
FIELDS = frozenset(_WORKFLOW["function_fields"])
# a workflow deployed through the KNIX door says so, and runs as on KNIX (docs/knix.md; ASL: grainworker/asl_knix.py)
DIALECT_FIELD = "SandDialect"
KNIX_DIALECT = "knix"

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_SESSION_FUNCTIONS_MAX",
    "DEFAULT_SESSION_TIMEOUT_S",
    "DEFAULT_TIMEOUT_S",
    "END",
    "AslState",
    "Grain",
    "Workflow",
    "WorkflowError",
    "is_asl",
    "parse_asl",
    "parse_workflow",
]


class WorkflowError(ValueError):
    """A workflow description that cannot run; the message says what and where."""


@dataclass(frozen=True)
class AslState:
    """What the grain of an Amazon States Language state needs at run time (grainworker/aslrun.py)."""

    name: str  # the state's name in its machine
    state: dict[str, Any]  # its definition
    names: dict[str, str]  # state name -> grain, for the states of its machine (its Next, Default, Catch targets)
    nested: tuple[str, ...] = ()  # Parallel: the first grain of each branch; Map: the first grain of its iterator


@dataclass(frozen=True)
class Grain:
    name: str
    next: tuple[str, ...] = ()
    potential_next: tuple[str, ...] = ()
    resource: str = ""
    asl: AslState | None = None
    # A session function's parameters ({} when it has none); None: not a session function (docs/sessions.md)
    session: dict[str, Any] | None = None

    @property
    def code(self) -> str:
        """The name of the code this grain runs ("": an ASL state other than Task, which runs built-in code)."""
        if self.asl is not None:
            return self.resource
        return self.resource or self.name


@dataclass(frozen=True)
class Workflow:
    name: str
    entry: str
    grains: dict[str, Grain] = field(default_factory=dict)
    asl: dict[str, Any] | None = None  # the Amazon States Language description it was made from, if any
    dialect: str = ""  # "knix": deployed through the KNIX door, runs as on KNIX (docs/knix.md)

    @property
    def has_sessions(self) -> bool:
        """Whether some grain is a session function: only then do the grain API's session calls work."""
        return any(g.session is not None for g in self.grains.values())

    def grain(self, name: str) -> Grain:
        try:
            return self.grains[name]
        except KeyError:
            raise WorkflowError(f"workflow '{self.name}' has no grain '{name}'") from None

    def to_json(self) -> dict[str, Any]:
        if self.asl is not None:
            return self.asl
        return {
            "name": self.name,
            "entry": self.entry,
            "functions": [
                {"name": g.name, "next": list(g.next), "potentialNext": list(g.potential_next)}
                | ({"resource": g.resource} if g.resource else {})
                | ({"sessionFunction": True, "sessionFunctionParameters": g.session} if g.session is not None else {})
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
    if is_asl(doc):
        return parse_asl(doc)
    dialect = doc.get(DIALECT_FIELD, "")
    if DIALECT_FIELD in doc and dialect != KNIX_DIALECT:
        raise WorkflowError(f'{DIALECT_FIELD}: {_show(dialect)} is not a dialect SAND knows; write "knix" or remove it')
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
        grains[gname] = Grain(
            gname,
            _names(f.get("next"), f"{where}.next"),
            _names(f.get("potentialNext"), f"{where}.potentialNext"),
            resource,
            session=_session(f, where),
        )
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
        raise WorkflowError(
            f"no grain reachable from entry '{entry}' leads to 'end' (through next or potentialNext): "
            "no request would ever be answered; give the grain whose return value is the answer "
            '"next": ["end"]'
        )
    return Workflow(name, entry, grains, dialect=dialect)


def _session(f: dict[str, Any], where: str) -> dict[str, Any] | None:
    """A session function's parameters (contracts/.../Workflow.java checks the same)."""
    flag, params = f.get("sessionFunction"), f.get("sessionFunctionParameters")
    if flag is not None and not isinstance(flag, bool):
        raise WorkflowError(f"{where}.sessionFunction {_show(flag)} must be true or false")
    if params is not None and not isinstance(params, dict):
        raise WorkflowError(
            f"{where}.sessionFunctionParameters must be an object, e.g. "
            '{"heartbeat_method": "function", "heartbeat_function": "hb", "heartbeat_interval_ms": 10000}'
        )
    if params is not None and not flag:
        raise WorkflowError(
            f"{where}.sessionFunctionParameters is only for a session function: "
            'add "sessionFunction": true or remove it'
        )
    return dict(params or {}) if flag else None


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


# ---- Amazon States Language (docs/workflows.md)
_OUTSIDE = re.compile(r"[^A-Za-z0-9_.-]")
_MAX_BASE = 100


def is_asl(doc: Any) -> bool:
    """KNIX's rule: a description with ``StartAt`` and a ``States`` object is Amazon States Language."""
    return isinstance(doc, dict) and "StartAt" in doc and isinstance(doc.get("States"), dict)


def _base(state: str) -> str:
    s = _OUTSIDE.sub("_", state)
    if not s or not (s[0].isascii() and s[0].isalnum()):
        s = "s_" + s
    return s[:_MAX_BASE]


def _unique(name: str, taken: set[str]) -> str:
    n, k = name, 2
    while n in taken or n == END:
        n, k = f"{name}_{k}", k + 1
    taken.add(n)
    return n


def parse_asl(doc: dict[str, Any]) -> Workflow:
    """An ASL state machine as grains: every state (and every state of its Parallel branches and Map iterators) is a
    grain named after it (the naming of contracts/.../AslWorkflow.java, character for character); a Task runs the
    grain its Resource names, the others built-in code. Every grain may send to every other and to 'end': the
    runtime decides per event. The machine is validated first (grainworker/asl.py: errors name state and field)."""
    from grainworker import asl  # only ASL workflows need it

    try:
        asl.validate(doc)
    except asl.AslError as e:
        raise WorkflowError(str(e)) from None
    grains: dict[str, tuple[str, AslState]] = {}
    entry = _flatten(doc, "", "", set(), grains)
    everything = (*grains, END)
    name = doc.get("name")
    return Workflow(
        name if isinstance(name, str) and NAME_RE.match(name) else "asl",
        entry,
        {g: Grain(g, (), everything, resource, st, _asl_session(st)) for g, (resource, st) in grains.items()},
        doc,
        dialect=doc.get(DIALECT_FIELD, ""),
    )


def _asl_session(st: AslState) -> dict[str, Any] | None:
    """KNIX's ASL session function: a Task with ``"SessionFunction": true`` (and ``SessionFunctionParameters``)."""
    if st.state.get("Type") != "Task" or st.state.get("SessionFunction") is not True:
        return None
    params = st.state.get("SessionFunctionParameters")
    return dict(params) if isinstance(params, dict) else {}


def _flatten(
    machine: dict[str, Any], prefix: str, where: str, taken: set[str], out: dict[str, tuple[str, AslState]]
) -> str:
    states: dict[str, Any] = machine["States"]
    names = {s: _unique(prefix + _base(s), taken) for s in states}
    for s, grain in names.items():
        if not NAME_RE.match(grain):
            raise WorkflowError(
                f"{where}States.{s}: nested too deep for a grain name ({len(grain)} characters; at most 128)"
            )
        resource = states[s].get("Resource")
        if states[s].get("Type") == "Task" and not (isinstance(resource, str) and NAME_RE.match(resource)):
            raise WorkflowError(
                f"{where}States.{s}.Resource: must name an uploaded grain (letters, digits, '_', '.', "
                f"'-'), got {'nothing' if resource is None else _show(resource)}"
            )
        out[grain] = ("", AslState(s, states[s], names))  # its place in the order; filled in below
    nested: dict[str, tuple[str, ...]] = {}
    for s, st in states.items():
        here = f"{where}States.{s}."
        if st.get("Type") == "Parallel":
            nested[s] = tuple(
                _flatten(b, f"{names[s]}.b{i}.", f"{here}Branches[{i}].", taken, out)
                for i, b in enumerate(st["Branches"])
            )
        elif st.get("Type") == "Map":
            field_name = "ItemProcessor" if "ItemProcessor" in st else "Iterator"
            nested[s] = (_flatten(st[field_name], f"{names[s]}.it.", f"{here}{field_name}.", taken, out),)
    for s, st in states.items():
        resource = st["Resource"] if st.get("Type") == "Task" else ""
        out[names[s]] = (resource, AslState(s, st, names, nested.get(s, ())))
    return names[machine["StartAt"]]
