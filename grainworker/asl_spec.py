"""Amazon States Language as SAND supports it, declared once in ``contracts/asl.json``.

The frontend's validator reads the same file from the contracts jar (``sand.contracts.asl.AslSpec``); this reads
it in a checkout from ``contracts/``, in a sandbox from the copy ``deploy/install.sh`` puts in
``grainworker/_gen/`` (``tests/test_workflow.py`` checks the copy is the file). Lists keep the file's order:
messages list names, and suggest them, in that order. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from grainworker.rules import contract

_SPEC, SOURCE, COPY = contract("asl.json")


@dataclass(frozen=True)
class Check:
    """How a field is checked wherever it appears (asl.json's ``checks_about`` says what each kind means)."""

    check: str
    min: float | None = None
    nullable: bool = False
    values: tuple[str, ...] = ()
    why: str = ""


@dataclass(frozen=True)
class Operator:
    """A comparison operator: its family (String, Numeric, Timestamp, Boolean, Matches, Is), the comparison
    (Equals, LessThan, ...) or the Is-test (Null, Present, ...), and whether its operand is a Path."""

    family: str
    compare: str = ""
    test: str = ""
    is_path: bool = False


@dataclass(frozen=True)
class Signature:
    """An intrinsic function's argument kinds: required, optional, and the kind of any further ones."""

    args: tuple[str, ...]
    optional: tuple[str, ...] = ()
    rest: str | None = None

    def kind(self, n: int) -> str:
        """The kind of argument ``n`` (from 0)."""
        fixed = self.args + self.optional
        return fixed[n] if n < len(fixed) else self.rest or "any"


SPEC: dict[str, Any] = _SPEC
_GROUPS: dict[str, list[str]] = SPEC["field_groups"]
FLOW = tuple(_GROUPS["flow"])
STATE_TYPES = tuple(SPEC["state_types"])
FIELDS: dict[str, tuple[str, ...]] = {
    kind: tuple(f for g in s["groups"] for f in _GROUPS[g]) + tuple(s["fields"])
    for kind, s in SPEC["state_types"].items()
}
ALL_FIELDS = frozenset(f for fields in FIELDS.values() for f in fields)
EXACTLY_ONE_OF: dict[str, tuple[str, ...]] = {
    kind: tuple(s["exactly_one_of"]) for kind, s in SPEC["state_types"].items() if "exactly_one_of" in s
}
MACHINE_FIELDS: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in SPEC["machine_fields"].items()}
HANDLER_FIELDS: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in SPEC["handler_fields"].items()}
UNSUPPORTED: dict[str, str] = SPEC["unsupported"]
EXCLUSIVE: tuple[tuple[str, str], ...] = tuple((a, b) for a, b in SPEC["exclusive"])
CHECKS: dict[str, Check] = {
    key: Check(c["check"], c.get("min"), c.get("nullable", False), tuple(c.get("values", ())), c.get("why", ""))
    for key, c in SPEC["checks"].items()
}
ERRORS: tuple[str, ...] = tuple(SPEC["errors"])
RULE_FIELDS = frozenset(SPEC["comparison"]["rule_fields"])
FAMILIES: dict[str, str] = SPEC["comparison"]["families"]
OPERATORS: dict[str, Operator] = {
    name: Operator(o["family"], o.get("compare", ""), o.get("test", ""), o.get("operand") == "path")
    for name, o in SPEC["comparison"]["operators"].items()
}
ARGUMENT_KINDS: dict[str, str] = SPEC["argument_kinds"]
INTRINSICS: dict[str, Signature] = {
    name: Signature(tuple(s["args"]), tuple(s.get("optional", ())), s.get("rest"))
    for name, s in SPEC["intrinsics"].items()
}

__all__ = [
    "ALL_FIELDS",
    "ARGUMENT_KINDS",
    "CHECKS",
    "ERRORS",
    "EXACTLY_ONE_OF",
    "EXCLUSIVE",
    "FAMILIES",
    "FIELDS",
    "FLOW",
    "HANDLER_FIELDS",
    "INTRINSICS",
    "MACHINE_FIELDS",
    "OPERATORS",
    "RULE_FIELDS",
    "SPEC",
    "STATE_TYPES",
    "UNSUPPORTED",
    "Check",
    "Operator",
    "Signature",
]
