"""Validation of an ASL state machine against the tables of contracts/asl.json.

The frontend's validator (``sand.contracts.asl.AslValidator``) makes the same checks in the same order with the
same messages (both run contracts/src/test/resources/asl-cases.json). A message starts with where the fault is
(``States.<State>.<Field>: ...``, nested machines prefixed with their place, top-level fields bare), shows values
as JSON and says what to write instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from grainworker.asl_choice import TYPE_OK, timestamp, wildcard
from grainworker.asl_intrinsics import is_num, parse_intrinsic
from grainworker.asl_paths import definite, parse_path
from grainworker.asl_spec import (
    ALL_FIELDS,
    CHECKS,
    ERRORS,
    EXACTLY_ONE_OF,
    EXCLUSIVE,
    FAMILIES,
    FIELDS,
    FLOW,
    HANDLER_FIELDS,
    MACHINE_FIELDS,
    OPERATORS,
    RULE_FIELDS,
    STATE_TYPES,
    UNSUPPORTED,
)
from grainworker.asl_text import AslError, show, suggest

_TYPES: dict[str, tuple[type, str]] = {
    "string": (str, "a string"),
    "boolean": (bool, "true or false"),
    "object": (dict, "a JSON object"),
}


@dataclass
class StateMachine:
    """A validated machine. ``children``: per Parallel state its branches, per Map state its [item processor]."""

    start: str
    states: dict[str, dict[str, Any]]
    children: dict[str, list[StateMachine]] = field(default_factory=dict)
    timeout_seconds: int | None = None
    comment: str | None = None


def _check_path(value: Any, where: str, *, ref: bool = False, context_ok: bool = True) -> None:
    kind = "Reference Path" if ref else "Path"
    if not isinstance(value, str):
        raise AslError(f'{where}: must be a {kind} (a string beginning with "$", e.g. "$.items"), got {show(value)}')
    try:
        is_context, segs = parse_path(value)
    except ValueError as exc:
        raise AslError(
            f'{where}: {show(value)} is not a valid {kind} ({exc}); write e.g. "$.a.b", "$.list[0]" or "$[\'a b\']"'
        ) from None
    if is_context and not context_ok:
        raise AslError(
            f'{where}: {show(value)} must not begin with "$$" (the context object is read-only); '
            'write a path into the state input such as "$.result"'
        )
    if ref and not definite(segs):
        raise AslError(
            f"{where}: {show(value)} must be a Reference Path selecting a single node (no [*], [a,b], "
            '[a:b] or .*); write e.g. "$.items" or "$.items[0]"'
        )


def _check_dynamic(value: Any, where: str, *, ref: bool = False) -> None:
    if not isinstance(value, str) or value.startswith("$"):
        _check_path(value, where, ref=ref)
        return
    try:
        parse_intrinsic(value)
    except ValueError as exc:
        raise AslError(
            f"{where}: {show(value)} is not a valid intrinsic function call ({exc}); write e.g. "
            "\"States.Format('Hello {}', $.name)\""
        ) from None


def _check_template(template: Any, where: str, top: bool = True) -> None:
    if top and not isinstance(template, dict):
        raise AslError(f'{where}: must be a JSON object (a Payload Template), e.g. {{"id.$": "$.order.id"}}')
    if isinstance(template, dict):
        names: set[str] = set()
        for key, value in template.items():
            name = key[:-2] if key.endswith(".$") else key
            if name in names:
                raise AslError(f"{where}.{key}: field {show(name)} appears twice once '.$' is stripped; keep one")
            names.add(name)
            if key.endswith(".$"):
                _check_dynamic(value, f"{where}.{key}")
            else:
                _check_template(value, f"{where}.{key}", False)
    elif isinstance(template, list):
        for i, value in enumerate(template):
            _check_template(value, f"{where}[{i}]", False)


def _check_field(key: str, value: Any, where: str) -> None:
    spec = CHECKS.get(key)
    if spec is None:
        return
    w, check, least = f"{where}.{key}" if where else key, spec.check, spec.min or 0
    if check == "integer" and not (isinstance(value, int) and not isinstance(value, bool) and value >= least):
        raise AslError(f"{w}: must be an integer >= {show(spec.min)}, got {show(value)}")
    if check == "number" and not (is_num(value) and value >= least):
        raise AslError(f"{w}: must be a number >= {show(spec.min)}, got {show(value)}")
    if check in _TYPES and not isinstance(value, _TYPES[check][0]):
        raise AslError(f"{w}: must be {_TYPES[check][1]}, got {show(value)}")
    if check in ("path", "result_path", "reference_path") and not (value is None and spec.nullable):
        _check_path(value, w, ref=check != "path", context_ok=check != "result_path")
    elif check == "dynamic":
        _check_dynamic(value, w, ref=True)
    elif check == "template":
        _check_template(value, w)
    elif check == "timestamp" and timestamp(value) is None:
        raise AslError(f'{w}: {show(value)} is not an RFC 3339 timestamp; write e.g. "2016-03-14T01:59:00Z"')
    elif check == "one_of" and value not in spec.values:
        why = f"; {spec.why}" if spec.why else ""
        raise AslError(f"{w}: must be {' or '.join(show(v) for v in spec.values)}, got {show(value)}{why}")


def _check_fields(obj: dict[str, Any], where: str) -> None:
    """Check the fields of ``obj`` that CHECKS knows, and the pairs of fields that exclude each other."""
    for key, value in obj.items():
        _check_field(key, value, where)
    for first, second in EXCLUSIVE:
        if first in obj and second in obj:
            raise AslError(f"{where}.{second}: cannot be used together with {first}; keep one of them")


def _targets(state: dict[str, Any]) -> list[str]:
    out = [state["Next"]] if "Next" in state else []
    out += state.get("PotentialNext", [])  # KNIX's: where the Task's code may send (context.add_workflow_next)
    heartbeat = state.get("SessionFunctionParameters", {}).get("heartbeat_function")  # a session's heartbeats
    out += [heartbeat] if isinstance(heartbeat, str) else []
    out += [rule["Next"] for rule in state.get("Choices", [])]
    out += [state["Default"]] if "Default" in state else []
    return out + [c["Next"] for c in state.get("Catch", [])]


class _Validator:
    def __init__(self) -> None:
        self.names: dict[str, str] = {}  # state name -> where it is defined: names are unique in the whole machine

    def machine(self, doc: Any, prefix: str, kind: str) -> StateMachine:
        def at(name: str) -> str:
            return f"{prefix}.{name}" if prefix else name

        if not isinstance(doc, dict):
            raise AslError(f"{prefix or 'StartAt'}: a state machine must be a JSON object with StartAt and States")
        for key in doc:
            if key not in MACHINE_FIELDS[kind]:
                raise AslError(f"{at(key)}: unknown field{suggest(key, MACHINE_FIELDS[kind])}; remove it")
        start, states = doc.get("StartAt"), doc.get("States")
        if not isinstance(start, str):
            raise AslError(f'{at("StartAt")}: missing or not a string; write "StartAt": "<name of the first state>"')
        if not isinstance(states, dict) or not states:
            raise AslError(
                f'{at("States")}: must be a non-empty object of states, e.g. "States": {{"{start}": '
                '{"Type": "Pass", "End": true}}'
            )
        if start not in states:
            raise AslError(f"{at('StartAt')}: {show(start)} is not a state of States{suggest(start, states)}")
        _check_fields(doc, prefix)
        children = {}
        for name, state in states.items():
            where = at(f"States.{name}")
            if name in self.names:
                raise AslError(
                    f"{where}: the name {show(name)} is already used at {self.names[name]}; state names "
                    "must be unique in the whole machine, branches and iterators included - rename one"
                )
            if not name or len(name) > 80:
                raise AslError(f"{where}: a state name must have 1 to 80 characters; shorten it")
            self.names[name] = where
            kids = self.state(state, where, states)
            if kids:
                children[name] = kids
        reached, todo = {start}, [start]
        while todo:
            for target in _targets(states[todo.pop()]):
                if target not in reached and target in states:
                    reached.add(target)
                    todo.append(target)
        for name in states:
            if name not in reached:
                raise AslError(
                    f"{at('States.' + name)}: unreachable from StartAt {show(start)}; add a Next, Default "
                    "or Catch leading to it, or remove it"
                )
        if not any(s.get("End") is True or s["Type"] in ("Succeed", "Fail") for s in states.values()):
            raise AslError(f'{at("States")}: no terminal state; give one state "End": true or add a Succeed state')
        return StateMachine(start, states, children, doc.get("TimeoutSeconds"), doc.get("Comment"))

    def next(self, target: Any, where: str, states: dict[str, Any]) -> None:
        if target is None:
            raise AslError(f'{where}: missing; write "Next": "<state name>"')
        if not isinstance(target, str) or target not in states:
            hint = suggest(target, states) if isinstance(target, str) else ""
            raise AslError(
                f"{where}: {show(target)} is not a state of this machine{hint} (states in a Parallel "
                f"branch or Map iterator only reach each other); one of: {', '.join(states)}"
            )

    def state(self, state: Any, where: str, states: dict[str, Any]) -> list[StateMachine]:
        if not isinstance(state, dict):
            raise AslError(f'{where}.Type: a state must be a JSON object, e.g. {{"Type": "Pass", "End": true}}')
        kind = state.get("Type")
        if not isinstance(kind, str) or kind not in FIELDS:
            hint = suggest(kind, STATE_TYPES) if isinstance(kind, str) else ""
            what = "missing" if kind is None else f"{show(kind)} is not a state type{hint}"
            raise AslError(f"{where}.Type: {what}; write one of {', '.join(STATE_TYPES)}")
        allowed = FIELDS[kind]
        for key in state:
            if key in FLOW and key not in allowed:
                why = "continues through Choices[].Next and Default" if kind == "Choice" else "ends its machine"
                raise AslError(f"{where}.{key}: not allowed, a {kind} state {why}; remove {show(key)}")
            if key in UNSUPPORTED:
                raise AslError(
                    f"{where}.{key}: {show(key)} is not supported by SAND's ASL ({UNSUPPORTED[key]}); remove it"
                )
            if key not in allowed:
                known = key in ALL_FIELDS
                raise AslError(
                    f"{where}.{key}: {f'not allowed in a {kind} state' if known else 'unknown field'}"
                    f"{'' if known else suggest(key, allowed)}; remove it"
                )
        _check_fields(state, where)
        if "Next" in allowed:
            if "Next" in state and state.get("End"):
                raise AslError(f'{where}.End: a state has either "Next" or "End": true, not both; remove one')
            if "Next" not in state and not state.get("End") and "PotentialNext" not in state:
                raise AslError(f'{where}.Next: missing; write "Next": "<state name>" or "End": true')
            if "Next" in state:
                self.next(state["Next"], f"{where}.Next", states)
        potential = state.get("PotentialNext", [])
        if not isinstance(potential, list) or not all(isinstance(p, str) for p in potential):
            raise AslError(f'{where}.PotentialNext: must be a list of state names, e.g. ["Next1", "Next2"]')
        for key in ("Retry", "Catch"):
            if key in state:
                self.handlers(state[key], f"{where}.{key}", states)
        check = getattr(self, f"check_{kind.lower()}", None)
        return (check(state, where, states) if check else None) or []

    def handlers(self, items: Any, where: str, states: dict[str, Any]) -> None:
        kind = "Retrier" if where.endswith("Retry") else "Catcher"
        example = '{"ErrorEquals": ["States.ALL"]' + (', "Next": "Recover"}' if kind == "Catcher" else "}")
        if not isinstance(items, list) or not all(isinstance(h, dict) for h in items):
            raise AslError(f"{where}: must be an array of {kind}s, e.g. [{example}]")
        for i, handler in enumerate(items):
            w, names = f"{where}[{i}]", handler.get("ErrorEquals")
            for key in handler:
                if key not in HANDLER_FIELDS[kind]:
                    raise AslError(f"{w}.{key}: unknown {kind} field{suggest(key, HANDLER_FIELDS[kind])}; remove it")
            if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
                raise AslError(f'{w}.ErrorEquals: must be a non-empty array of error names, e.g. ["States.ALL"]')
            for name in names:
                if name.startswith("States.") and name not in ERRORS:
                    raise AslError(
                        f"{w}.ErrorEquals: {show(name)} is not a predefined error{suggest(name, ERRORS)};"
                        " names starting with 'States.' are reserved"
                    )
            if "States.ALL" in names and (len(names) > 1 or i < len(items) - 1):
                raise AslError(
                    f"{w}.ErrorEquals: States.ALL must appear alone and in the last {kind}; move the other "
                    f"names to an earlier {kind}, or this {kind} to the end"
                )
            _check_fields(handler, w)
            if kind == "Catcher":
                self.next(handler.get("Next"), f"{w}.Next", states)

    def check_task(self, state: dict[str, Any], where: str, states: dict[str, Any]) -> None:
        resource = state.get("Resource")
        if not isinstance(resource, str) or not resource.strip():
            what = "missing" if resource is None else f"must be a non-empty string, got {show(resource)}"
            raise AslError(f'{where}.Resource: {what}; write the SAND grain to call, e.g. "Resource": "resize"')
        if "TimeoutSeconds" in state and state.get("HeartbeatSeconds", 0) >= state["TimeoutSeconds"]:
            raise AslError(
                f"{where}.HeartbeatSeconds: must be smaller than TimeoutSeconds "
                f"({state['TimeoutSeconds']}); lower it or raise TimeoutSeconds"
            )

    def check_wait(self, state: dict[str, Any], where: str, states: dict[str, Any]) -> None:
        one_of = EXACTLY_ONE_OF["Wait"]
        given = [key for key in one_of if key in state]
        if len(given) != 1:
            raise AslError(
                f"{where}.{given[1] if given else 'Seconds'}: a Wait state takes exactly one of "
                f"{', '.join(one_of)}; " + ("keep one" if given else 'add e.g. "Seconds": 10')
            )

    def check_choice(self, state: dict[str, Any], where: str, states: dict[str, Any]) -> None:
        rules = state.get("Choices")
        if not isinstance(rules, list) or not rules:
            raise AslError(
                f'{where}.Choices: must be a non-empty array of Choice Rules, e.g. [{{"Variable": "$.x", '
                '"NumericEquals": 1, "Next": "One"}]'
            )
        for i, rule in enumerate(rules):
            self.rule(rule, f"{where}.Choices[{i}]", True, states)
        if "Default" in state:
            self.next(state["Default"], f"{where}.Default", states)

    def rule(self, rule: Any, where: str, top: bool, states: dict[str, Any]) -> None:
        if not isinstance(rule, dict):
            raise AslError(f'{where}: a Choice Rule must be an object, e.g. {{"Variable": "$.x", "IsNull": true}}')
        if top:
            if "Next" not in rule:
                raise AslError(f'{where}.Next: missing; a top-level Choice Rule needs "Next": "<state name>"')
            self.next(rule["Next"], f"{where}.Next", states)
        elif "Next" in rule:
            raise AslError(f"{where}.Next: a rule inside And/Or/Not must not have Next; put Next on the top-level rule")
        for key in rule:
            if key not in OPERATORS and key not in RULE_FIELDS:
                raise AslError(
                    f"{where}.{key}: unknown comparison operator{suggest(key, OPERATORS)}; use one of the "
                    "spec's operators (StringEquals, NumericLessThan, IsPresent, ...) or And/Or/Not"
                )
        _check_fields({k: v for k, v in rule.items() if k == "Comment"}, where)
        combinators = [key for key in ("And", "Or", "Not") if key in rule]
        ops = [key for key in rule if key in OPERATORS]
        if combinators:
            key = combinators[0]
            if len(combinators) > 1 or ops or "Variable" in rule:
                raise AslError(
                    f"{where}.{key}: a rule is either one of And/Or/Not or a Variable with one comparison, "
                    "not both; nest the parts in separate rules"
                )
            subs = [rule[key]] if key == "Not" else rule[key]
            if not isinstance(subs, list) or not subs:
                raise AslError(f"{where}.{key}: must be a non-empty array of Choice Rules")
            for i, sub in enumerate(subs):
                self.rule(sub, f"{where}.Not" if key == "Not" else f"{where}.{key}[{i}]", False, states)
            return
        if "Variable" not in rule:
            raise AslError(
                f'{where}.Variable: missing; write "Variable": "$.field" and one comparison operator, or use And/Or/Not'
            )
        _check_path(rule["Variable"], f"{where}.Variable")
        if len(ops) != 1:
            raise AslError(
                f"{where}: {'no' if not ops else 'more than one'} comparison operator; a rule takes exactly "
                'one, e.g. "StringEquals": "x" (combine several with And)'
            )
        op = ops[0]
        value, w = rule[op], f"{where}.{op}"
        family, is_path = OPERATORS[op].family, OPERATORS[op].is_path
        kind = {"Is": "Boolean", "Matches": "String"}.get(family, family)
        if is_path:
            _check_path(value, w)
        elif not TYPE_OK[kind](value):
            hint = "" if family in ("Is", "Matches") else f"; to compare with another field use {op}Path"
            raise AslError(f"{w}: must be {FAMILIES[kind]}, got {show(value)}{hint}")
        elif family == "Matches":
            try:
                wildcard(value)
            except ValueError as exc:
                raise AslError(f"{w}: {exc}; write \\\\* for a literal star and \\\\\\\\ for a backslash") from None

    def check_parallel(self, state: dict[str, Any], where: str, states: dict[str, Any]) -> list[StateMachine]:
        branches = state.get("Branches")
        if not isinstance(branches, list) or not branches:
            raise AslError(
                f'{where}.Branches: must be a non-empty array of machines, e.g. [{{"StartAt": "A", '
                '"States": {"A": {"Type": "Pass", "End": true}}}]'
            )
        return [self.machine(b, f"{where}.Branches[{i}]", "branch") for i, b in enumerate(branches)]

    def check_map(self, state: dict[str, Any], where: str, states: dict[str, Any]) -> list[StateMachine]:
        key = "ItemProcessor" if "ItemProcessor" in state else "Iterator"
        if key not in state:
            raise AslError(
                f'{where}.ItemProcessor: missing; a Map state needs "ItemProcessor" (or the older '
                '"Iterator"): {"StartAt": ..., "States": {...}}'
            )
        return [self.machine(state[key], f"{where}.{key}", "processor")]


def validate(doc: dict[str, Any]) -> StateMachine:
    """Validate an ASL document; raise AslError naming the place (``States.<State>.<Field>: ...``). A machine in
    KNIX's dialect (``"SandDialect": "knix"``, grainworker/asl_knix.py) has its extensions checked first."""
    from grainworker.asl_knix import for_validation

    return _Validator().machine(for_validation(doc), "", "top")


__all__ = ["StateMachine", "validate"]
