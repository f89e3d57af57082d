"""ASL Choice Rules and timestamps: the comparison operators of contracts/asl.json, evaluated."""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from grainworker.asl_intrinsics import is_num, need
from grainworker.asl_paths import definite, get_path, parse_path
from grainworker.asl_spec import OPERATORS
from grainworker.asl_text import AslRuntimeError, show

_TIMESTAMP = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)")


def timestamp(value: Any) -> datetime | None:
    """An RFC 3339 timestamp (uppercase T, Z or a numeric offset) as an aware datetime; None if not one."""
    m = _TIMESTAMP.fullmatch(value) if isinstance(value, str) else None
    if m is None:
        return None
    try:
        tz = UTC
        if m[8] != "Z":
            offset = timedelta(hours=int(m[8][1:3]), minutes=int(m[8][4:6]))
            tz = timezone(-offset if m[8][0] == "-" else offset)
        micros = int((m[7] or "0")[:6].ljust(6, "0"))
        year, month, day, hour, minute, second = (int(m[k]) for k in range(1, 7))
        return datetime(year, month, day, hour, minute, second, micros, tzinfo=tz)
    except ValueError:
        return None


TYPE_OK: dict[str, Callable[[Any], bool]] = {
    "String": lambda v: isinstance(v, str),
    "Numeric": is_num,
    "Boolean": lambda v: isinstance(v, bool),
    "Timestamp": lambda v: timestamp(v) is not None,
    "Null": lambda v: v is None,
    "Present": lambda v: True,
}
_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "Equals": operator.eq,
    "LessThan": operator.lt,
    "GreaterThan": operator.gt,
    "LessThanEquals": operator.le,
    "GreaterThanEquals": operator.ge,
}


@functools.lru_cache(maxsize=512)
def wildcard(pattern: str) -> re.Pattern[str]:
    """StringMatches: '*' matches any characters; '\\*' is a literal star and '\\\\' a literal backslash."""
    parts = re.split(r"(\\.|\*)", pattern)  # text, then alternately a * or an escape and text
    need(
        all(p in ("*", "\\*", "\\\\") for p in parts[1::2]) and "\\" not in "".join(parts[::2]),
        "open escape: only \\* and \\\\ may follow a backslash",
    )
    return re.compile(
        "".join(re.escape(p) if k % 2 == 0 else ".*" if p == "*" else re.escape(p[1]) for k, p in enumerate(parts)),
        re.DOTALL,
    )


def _test(rule: dict[str, Any], data: Any, context: Mapping[str, Any] | None) -> bool:
    if "And" in rule:
        return all(_test(r, data, context) for r in rule["And"])
    if "Or" in rule:
        return any(_test(r, data, context) for r in rule["Or"])
    if "Not" in rule:
        return not _test(rule["Not"], data, context)
    op = next(k for k in rule if k in OPERATORS)
    spec = OPERATORS[op]
    want = rule[op]
    if op == "IsPresent":
        try:
            found = get_path(data, rule["Variable"], context)
            present = found != [] or definite(parse_path(rule["Variable"])[1])
        except AslRuntimeError:
            present = False
        return bool(present == want)
    value = get_path(data, rule["Variable"], context)
    if spec.is_path:
        want = get_path(data, want, context)
    if spec.family == "Is":
        return bool(TYPE_OK[spec.test](value) == want)
    if spec.family == "Matches":
        try:
            return isinstance(value, str) and wildcard(want).fullmatch(value) is not None
        except ValueError as exc:
            raise AslRuntimeError("States.Runtime", f"StringMatches {show(want)}: {exc}") from None
    ok = TYPE_OK[spec.family]
    if not (ok(value) and ok(want)):
        return False
    if spec.family == "Timestamp":
        value, want = timestamp(value), timestamp(want)
    return bool(_COMPARE[spec.compare](value, want))


def choose(state: dict[str, Any], data: Any, context: Mapping[str, Any] | None = None) -> str | None:
    """The Next of the first Choice Rule matching ``data`` (the effective input), else Default, else None (the
    caller then fails with States.NoChoiceMatched). A missing Variable raises States.Runtime (not IsPresent)."""
    for rule in state["Choices"]:
        if _test(rule, data, context):
            return str(rule["Next"])
    default = state.get("Default")
    return None if default is None else str(default)


__all__ = ["TYPE_OK", "choose", "timestamp", "wildcard"]
