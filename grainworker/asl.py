"""Amazon States Language (ASL, the AWS Step Functions language): the pure core SAND's ASL support calls.

Written from the States Language specification (https://states-language.net/spec.html): validation of a state
machine (``validate``), Paths and Reference Paths (``get_path``, ``apply_result_path``), Payload Templates and
Intrinsic Functions (``apply_template``), input/output processing in the spec's order (``state_input``,
``state_output``), Choice Rules (``choose``), Wait (``wait_until``), Retry/Catch (``error_matches``,
``retry_delay``, ``find_catcher``, ``error_output``) and ``run``, an in-process reference interpreter whose
behaviour the distributed runtime must match. A Task's ``Resource`` names a SAND grain. Everything but ``run``
is free of side effects; standard library only (the module runs inside the sandbox).
"""

from __future__ import annotations

import base64
import copy
import difflib
import functools
import hashlib
import json
import operator
import random
import re
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

__all__ = [
    "AslError", "AslRuntimeError", "StateMachine", "apply_result_path", "apply_template", "call_intrinsic", "choose",
    "error_matches", "error_output", "find_catcher", "get_path", "is_asl", "retry_delay", "run", "state_input",
    "state_output", "validate", "wait_until",
]

STATE_TYPES = ("Task", "Choice", "Pass", "Wait", "Succeed", "Fail", "Parallel", "Map")
# The spec's Appendix A, plus the names AWS Step Functions adds.
KNOWN_ERRORS = frozenset({
    "States.ALL", "States.HeartbeatTimeout", "States.Timeout", "States.TaskFailed", "States.Permissions",
    "States.ResultPathMatchFailure", "States.ParameterPathFailure", "States.BranchFailed", "States.NoChoiceMatched",
    "States.IntrinsicFailure", "States.ExceedToleratedFailureThreshold", "States.ItemReaderFailed",
    "States.ResultWriterFailed", "States.Runtime", "States.DataLimitExceeded",
})
_TIMEOUTS = frozenset({"States.Timeout", "States.HeartbeatTimeout"})


class AslError(ValueError):
    """An invalid state machine. The message starts with where: ``States.<State>.<Field>: ...``."""


class AslRuntimeError(Exception):
    """An ASL error while running: ``error`` is the Error Name, ``cause`` human-readable text."""

    def __init__(self, error: str, cause: str = "") -> None:
        super().__init__(f"{error}: {cause}" if cause else error)
        self.error = error
        self.cause = cause


@dataclass
class StateMachine:
    """A validated machine. ``children``: per Parallel state its branches, per Map state its [item processor]."""

    start: str
    states: dict[str, dict]
    children: dict[str, list[StateMachine]] = field(default_factory=dict)
    timeout_seconds: int | None = None
    comment: str | None = None


def is_asl(doc: object) -> bool:
    """True when ``doc`` looks like an ASL machine (KNIX's rule): a dict with "StartAt" and a dict "States"."""
    return isinstance(doc, dict) and "StartAt" in doc and isinstance(doc.get("States"), dict)


# ---------------------------------------------------------------------------------------------------- paths

_Seg = tuple[Any, ...]  # ("k", name) | ("i", index) | ("*",) | ("u", members) | ("s", start, end)
_Q = r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*\""""
_TOKEN = re.compile(rf"""\.(?P<dot>\*(?=[.\[]|$)|(?:[^.\[\]\\@?,:*'"()]|\\.)+)
    | \[\s*(?:(?P<names>(?:{_Q})(?:\s*,\s*(?:{_Q}))*)|(?P<star>\*)|(?P<slice>-?\d*\s*:\s*-?\d*)
              |(?P<ints>-?\d+(?:\s*,\s*-?\d+)*))\s*\]""", re.VERBOSE)


def _path_problem(path: str, i: int) -> str:
    rest = path[i:]
    if rest.startswith(".."):
        return "recursive descent '..' is not supported"
    if rest.startswith(("[?", "[(")):
        return "filter and script expressions [?(...)] are not supported"
    c = rest[1:2] if rest.startswith(".") else rest[:1]
    if c and c in "]@?,:*'\"()\\":
        return f"{c!r} in a field name must be escaped with a backslash or the name written as ['name']"
    return f"cannot read {rest!r}; write .name, ['name'], [0], [-1], [*], [0,1] or [1:3]"


@functools.lru_cache(maxsize=2048)
def _parse_path(path: str) -> tuple[bool, tuple[_Seg, ...]]:
    """Parse a Path into (applies to the context object, segments); ValueError says what is wrong."""
    if not path.startswith("$"):
        raise ValueError("a path must begin with '$'")
    is_context = path.startswith("$$")
    i, segs = (2 if is_context else 1), []
    while i < len(path):
        m = _TOKEN.match(path, i)
        if m is None:
            raise ValueError(_path_problem(path, i))
        if m["dot"] == "*" or m["star"]:
            segs.append(("*",))
        elif m["dot"]:  # the spec's examples escape any character with a backslash: $.store\.book
            segs.append(("k", _unescape(m["dot"])))
        elif m["names"]:
            names = tuple(_unescape(q[1:-1]) for q in re.findall(_Q, m["names"]))
            segs.append(("k", names[0]) if len(names) == 1 else ("u", names))
        elif m["slice"]:
            lo, hi = (int(p) if p.strip() else None for p in m["slice"].split(":"))
            segs.append(("s", lo, hi))
        else:
            ints = tuple(int(p) for p in m["ints"].split(","))
            segs.append(("i", ints[0]) if len(ints) == 1 else ("u", ints))
        i = m.end()
    return is_context, tuple(segs)


def _definite(segs: tuple[_Seg, ...]) -> bool:
    return all(s[0] in ("k", "i") for s in segs)


def _select(node: Any, seg: _Seg) -> list[Any]:
    kind = seg[0]
    if kind == "k":
        return [node[seg[1]]] if isinstance(node, dict) and seg[1] in node else []
    if kind == "i":
        return [node[seg[1]]] if isinstance(node, list) and -len(node) <= seg[1] < len(node) else []
    if kind == "*":
        return list(node.values()) if isinstance(node, dict) else list(node) if isinstance(node, list) else []
    if kind == "u":
        return [v for m in seg[1] for v in _select(node, ("k" if isinstance(m, str) else "i", m))]
    return node[seg[1]:seg[2]] if isinstance(node, list) else []


def _parsed(path: object, error: str) -> tuple[bool, tuple[_Seg, ...]]:
    if not isinstance(path, str):
        raise AslRuntimeError(error, f"a path must be a string beginning with '$', got {path!r}")
    try:
        return _parse_path(path)
    except ValueError as exc:
        raise AslRuntimeError(error, f"invalid path {path!r}: {exc}") from None


def get_path(data: Any, path: str, context: Mapping[str, Any] | None = None) -> Any:
    """Apply a Path to ``data`` (``$$...`` paths to ``context``). A path selecting one node ($.a.b, $.a[0],
    $['a b'], $.a[-1]) returns it, or raises AslRuntimeError('States.Runtime') when it is missing; a path that
    can select several ([*], [0,1], [1:3], .*) returns the list of what it selects."""
    is_context, segs = _parsed(path, "States.Runtime")
    node = (context if context is not None else {}) if is_context else data
    if not _definite(segs):
        nodes = [node]
        for seg in segs:
            nodes = [v for n in nodes for v in _select(n, seg)]
        return nodes
    for seg in segs:
        found = _select(node, seg)
        if not found:
            where = "context object" if is_context else "input"
            raise AslRuntimeError("States.Runtime", f"path {path!r} not found in the {where} (no {seg[1]!r})")
        node = found[0]
    return node


def apply_result_path(state_input: Any, result_path: str | None, result: Any) -> Any:
    """Combine ``result`` into (a copy of) ``state_input`` at ``result_path``: None keeps the input, "$" is the
    result, "$.a.b" sets a.b, creating missing objects on the way. Fails with States.ResultPathMatchFailure."""
    if result_path is None:
        return state_input
    fail = "States.ResultPathMatchFailure"
    is_context, segs = _parsed(result_path, fail)
    if is_context or not _definite(segs):
        raise AslRuntimeError(fail, f"ResultPath {result_path!r} must be a Reference Path into the state input")
    if not segs:
        return result
    out = copy.deepcopy(state_input)
    node = out
    for n, seg in enumerate(segs):
        if n < len(segs) - 1 and seg[0] == "k" and isinstance(node, dict) and segs[n + 1][0] == "k":
            node.setdefault(seg[1], {})  # create the missing objects on the way
        if n == len(segs) - 1 and (seg[0] == "k" and isinstance(node, dict) or _select(node, seg)):
            node[seg[1]] = result
            return out
        found = _select(node, seg)
        if not found:
            break
        node = found[0]
    raise AslRuntimeError(fail, f"ResultPath {result_path!r} cannot be applied to the state input at {seg[1]!r}")


# ---------------------------------------------------------------------------------------- intrinsic functions

def _need(ok: Any, message: str) -> None:
    if not ok:
        raise ValueError(message)


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


_HASHES = {"MD5": "md5", "SHA-1": "sha1", "SHA-256": "sha256", "SHA-384": "sha384", "SHA-512": "sha512"}
# Argument kinds: s string, i integer, n number, a array, o object, b boolean, * anything; an uppercase kind is
# optional, "+" means any number of further arguments of any kind.
_KINDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "s": (lambda v: isinstance(v, str), "a string"), "n": (_is_num, "a number"), "*": (lambda v: True, "anything"),
    "i": (lambda v: _is_num(v) and float(v).is_integer(), "an integer"),
    "a": (lambda v: isinstance(v, list), "an array"),
    "o": (lambda v: isinstance(v, dict), "an object"), "b": (lambda v: isinstance(v, bool), "a boolean"),
}
# name -> (argument kinds, implementation); States.Format is done in _eval.
_INTRINSICS: dict[str, tuple[str, Callable[..., Any] | None]] = {
    "States.Format": ("s+", None),
    "States.StringToJson": ("s", json.loads),
    "States.JsonToString": ("*", lambda v: json.dumps(v, separators=(",", ":"), ensure_ascii=False)),
    "States.Array": ("+", lambda *a: list(a)),
    "States.ArrayPartition": ("ai", lambda a, n: _need(n > 0, "the chunk size must be positive")
                              or [a[k:k + int(n)] for k in range(0, len(a), int(n))]),
    "States.ArrayContains": ("a*", lambda a, v: any(_same(x, v) for x in a)),
    "States.ArrayRange": ("iii", lambda lo, hi, s: _need(s and 0 <= (hi - lo) / s < 1000, "bad range or step")
                          or list(range(int(lo), int(hi) + (1 if s > 0 else -1), int(s)))),
    "States.ArrayGetItem": ("ai", lambda a, k: a[int(k)]),
    "States.ArrayLength": ("a", len),
    "States.ArrayUnique": ("a", lambda a: [v for k, v in enumerate(a) if not any(_same(v, w) for w in a[:k])]),
    "States.Base64Encode": ("s", lambda s: base64.b64encode(s.encode()).decode()),
    "States.Base64Decode": ("s", lambda s: base64.b64decode(s, validate=True).decode()),
    "States.Hash": ("ss", lambda d, alg: _need(alg in _HASHES, f"the algorithm must be one of {', '.join(_HASHES)}")
                    or hashlib.new(_HASHES[alg], d.encode()).hexdigest()),
    "States.JsonMerge": ("oob", lambda a, b, deep: _need(not deep, "only shallow merging (false) is supported")
                         or {**a, **b}),
    "States.MathRandom": ("iiI", lambda lo, hi, seed=None: random.Random(seed).randint(int(lo), int(hi))),
    "States.MathAdd": ("nn", operator.add),
    "States.StringSplit": ("ss", lambda s, sep: s.split(sep)),
    "States.UUID": ("", lambda: str(uuid.uuid4())),
}


def _arity(kinds: str) -> tuple[int, float]:
    return sum(k.islower() or k == "*" for k in kinds), float("inf") if "+" in kinds else len(kinds)


_ARG = re.compile(rf"""\s*(?:(?P<str>'(?:[^'\\]|\\.)*')
    | (?P<lit>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|null|true|false)(?=\s*[,)])
    | (?P<path>\$\$?(?:{_TOKEN.pattern})*) | (?P<call>[A-Za-z0-9._]+\s*\())""", re.VERBOSE)
_CALL = re.compile(r"\s*([A-Za-z0-9._]+)\s*\(")
_SEPARATOR = re.compile(r"\s*([,)])")
_CLOSE = re.compile(r"\s*\)")


def _parse_call(text: str, pos: int) -> tuple[tuple, int]:
    """Parse ``States.Name(arg, ...)`` at ``pos``: ("call", name, args) and the position after it. Arguments:
    'strings' (escapes \\' \\{ \\} \\\\), numbers, null, true, false, Paths and nested calls, parsed as ("str", raw
    text), ("lit", value), ("path", path), ("call", ...)."""
    m = _CALL.match(text, pos)
    _need(m is not None, "expected an intrinsic function call such as States.Format('{}', $.x)")
    name, pos, args = m[1], m.end(), []
    _need(name in _INTRINSICS, f"unknown intrinsic function {name!r}{_suggest(name, _INTRINSICS)}")
    close = _CLOSE.match(text, pos)
    pos = close.end() if close else pos
    while close is None:
        m = _ARG.match(text, pos)
        if m is None:
            rest = text[pos:].strip()
            _need(False, "unterminated string: close it with '" if rest.startswith("'") else f"cannot read {rest!r}")
        elif m["call"]:
            arg, pos = _parse_call(text, m.start("call"))
        elif m["str"]:
            _need(re.fullmatch(r"(?:[^\\]|\\['{}\\])*", m["str"][1:-1]), "open escape in a string: only \\' \\{ \\} "
                  "and \\\\ are allowed")
            arg, pos = ("str", m["str"][1:-1]), m.end()
        elif m["path"]:
            _parse_path(m["path"].rstrip())
            arg, pos = ("path", m["path"].rstrip()), m.end()
        else:
            arg, pos = ("lit", json.loads(m["lit"])), m.end()
        args.append(arg)
        sep = _SEPARATOR.match(text, pos)
        _need(sep is not None, f"expected ',' or ')' after argument {len(args)} of {name}, not {text[pos:]!r}")
        pos, close = sep.end(), sep if sep[1] == ")" else None
    low, high = _arity(_INTRINSICS[name][0])
    count = f"{low}" if low == high else f"{low}+" if high == float("inf") else f"{low}-{high:.0f}"
    _need(low <= len(args) <= high, f"{name} takes {count} argument(s), got {len(args)}")
    return ("call", name, tuple(args)), pos


@functools.lru_cache(maxsize=1024)
def _parse_intrinsic(text: str) -> tuple:
    call, pos = _parse_call(text, 0)
    _need(not text[pos:].strip(), f"unexpected text after the call: {text[pos:]!r}")
    return call


def _unescape(raw: str) -> str:
    return re.sub(r"\\(.)", r"\1", raw)


def _format(raw: str, values: list[Any]) -> str:
    parts = re.split(r"(\\.|\{\})", raw)  # text, then alternately an escape or a {} and text
    holes = parts[1::2].count("{}")
    _need(holes == len(values), f"States.Format has {holes} {{}} but {len(values)} value(s) to insert")
    _need(not any(isinstance(v, dict | list) for v in values), "States.Format cannot insert an object or array")
    it = iter(v if isinstance(v, str) else json.dumps(v) for v in values)
    return "".join(p if k % 2 == 0 else next(it) if p == "{}" else p[1] for k, p in enumerate(parts))


def _eval(node: tuple, data: Any, context: Mapping[str, Any] | None) -> Any:
    kind = node[0]
    if kind == "str":
        return _unescape(node[1])
    if kind == "lit":
        return node[1]
    if kind == "path":
        return get_path(data, node[1], context)
    name, args = node[1], node[2]
    values = [_eval(a, data, context) for a in args]
    kinds, impl = _INTRINSICS[name]
    for n, value in enumerate(values):
        test, what = _KINDS[kinds[min(n, len(kinds) - 1)].lower().replace("+", "*")]
        _need(test(value), f"argument {n + 1} of {name} must be {what}, got {json.dumps(value)}")
    if impl is None:  # States.Format: escapes count in a literal template, not in one read from a Path
        return _format(args[0][1] if args[0][0] == "str" else values[0].replace("\\", "\\\\"), values[1:])
    return impl(*values)


def call_intrinsic(expression: str, data: Any, context: Mapping[str, Any] | None = None) -> Any:
    """Evaluate an Intrinsic Function call against ``data``; failures raise States.IntrinsicFailure."""
    try:
        return _eval(_parse_intrinsic(expression), data, context)
    except AslRuntimeError as exc:
        raise AslRuntimeError("States.IntrinsicFailure", f"{expression}: {exc.cause}") from None
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        raise AslRuntimeError("States.IntrinsicFailure", f"{expression}: {exc}") from None


# ----------------------------------------------------------------------------------------- payload templates

def _dynamic(expr: Any, data: Any, context: Mapping[str, Any] | None, path_error: str) -> Any:
    """The value of a field whose name ends in ".$": a Path, a "$$" context Path or an intrinsic call."""
    if not isinstance(expr, str):
        raise AslRuntimeError(path_error, f"a '.$' field needs a string (a Path or an intrinsic), got {expr!r}")
    if not expr.startswith("$"):
        return call_intrinsic(expr, data, context)
    try:
        return get_path(data, expr, context)
    except AslRuntimeError as exc:
        raise AslRuntimeError(path_error, exc.cause) from None


def apply_template(template: Any, data: Any, context: Mapping[str, Any] | None = None) -> Any:
    """Process a Payload Template (Parameters, ResultSelector, ItemSelector) against ``data``: at any depth, a
    field "name.$" becomes "name" with the value of its Path / context Path / intrinsic call."""
    if isinstance(template, dict):
        out: dict[str, Any] = {}
        for key, value in template.items():
            if key.endswith(".$"):
                out[key[:-2]] = _dynamic(value, data, context, "States.ParameterPathFailure")
            else:
                out[key] = apply_template(value, data, context)
        return out
    if isinstance(template, list):
        return [apply_template(v, data, context) for v in template]
    return template


# ----------------------------------------------------------------------------------------------- timestamps

_TIMESTAMP = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)")


def _timestamp(value: Any) -> datetime | None:
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


# -------------------------------------------------------------------------------------------------- Choice

_TYPE_OK: dict[str, Callable[[Any], bool]] = {
    "String": lambda v: isinstance(v, str), "Numeric": _is_num, "Boolean": lambda v: isinstance(v, bool),
    "Timestamp": lambda v: _timestamp(v) is not None, "Null": lambda v: v is None, "Present": lambda v: True,
}
_COMPARE = {"Equals": operator.eq, "LessThan": operator.lt, "GreaterThan": operator.gt,
            "LessThanEquals": operator.le, "GreaterThanEquals": operator.ge}
_OPS: dict[str, tuple[str, Callable[[Any, Any], Any] | None, bool]] = {  # name: (family, compare, operand is a Path)
    **{f"{family}{name}{path}": (family, compare, bool(path)) for family in ("String", "Numeric", "Timestamp")
       for name, compare in _COMPARE.items() for path in ("", "Path")},
    "BooleanEquals": ("Boolean", operator.eq, False), "BooleanEqualsPath": ("Boolean", operator.eq, True),
    "StringMatches": ("Matches", None, False),
    **{f"Is{kind}": ("Is", None, False) for kind in ("Null", "Present", "Numeric", "String", "Boolean", "Timestamp")},
}
_RULE_FIELDS = frozenset({"And", "Or", "Not", "Variable", "Next", "Comment"})


@functools.lru_cache(maxsize=512)
def _wildcard(pattern: str) -> re.Pattern[str]:
    """StringMatches: '*' matches any characters; '\\*' is a literal star and '\\\\' a literal backslash."""
    parts = re.split(r"(\\.|\*)", pattern)  # text, then alternately a * or an escape and text
    _need(all(p in ("*", "\\*", "\\\\") for p in parts[1::2]) and "\\" not in "".join(parts[::2]),
          "open escape: only \\* and \\\\ may follow a backslash")
    return re.compile("".join(re.escape(p) if k % 2 == 0 else ".*" if p == "*" else re.escape(p[1])
                              for k, p in enumerate(parts)), re.DOTALL)


def _test(rule: dict, data: Any, context: Mapping[str, Any] | None) -> bool:
    if "And" in rule:
        return all(_test(r, data, context) for r in rule["And"])
    if "Or" in rule:
        return any(_test(r, data, context) for r in rule["Or"])
    if "Not" in rule:
        return not _test(rule["Not"], data, context)
    op = next(k for k in rule if k in _OPS)
    family, compare, is_path = _OPS[op]
    want = rule[op]
    if op == "IsPresent":
        try:
            found = get_path(data, rule["Variable"], context)
            present = found != [] or _definite(_parse_path(rule["Variable"])[1])
        except AslRuntimeError:
            present = False
        return present == want
    value = get_path(data, rule["Variable"], context)
    if is_path:
        want = get_path(data, want, context)
    if family == "Is":
        return _TYPE_OK[op[2:]](value) == want
    if family == "Matches":
        try:
            return isinstance(value, str) and _wildcard(want).fullmatch(value) is not None
        except ValueError as exc:
            raise AslRuntimeError("States.Runtime", f"StringMatches {want!r}: {exc}") from None
    ok = _TYPE_OK[family]
    if not (ok(value) and ok(want)):
        return False
    if family == "Timestamp":
        value, want = _timestamp(value), _timestamp(want)
    assert compare is not None
    return bool(compare(value, want))


def choose(state: dict, data: Any, context: Mapping[str, Any] | None = None) -> str | None:
    """The Next of the first Choice Rule matching ``data`` (the effective input), else Default, else None (the
    caller then fails with States.NoChoiceMatched). A missing Variable raises States.Runtime (not IsPresent)."""
    for rule in state["Choices"]:
        if _test(rule, data, context):
            return rule["Next"]
    return state.get("Default")


# ---------------------------------------------------------------------------------------------- validation

_COMMON = frozenset({"Type", "Comment", "QueryLanguage"})
_IO = frozenset({"InputPath", "OutputPath"})
_FLOW = frozenset({"Next", "End"})
_RESULT = frozenset({"Parameters", "ResultSelector", "ResultPath", "Retry", "Catch"})
_FIELDS: dict[str, frozenset[str]] = {  # the spec's table of the fields each state type may have
    "Task": _COMMON | _IO | _FLOW | _RESULT | {"Resource", "TimeoutSeconds", "TimeoutSecondsPath", "HeartbeatSeconds",
                                               "HeartbeatSecondsPath", "Credentials"},
    "Parallel": _COMMON | _IO | _FLOW | _RESULT | {"Branches"},
    "Map": _COMMON | _IO | _FLOW | _RESULT | {"Iterator", "ItemProcessor", "ItemsPath", "ItemSelector",
                                              "MaxConcurrency", "MaxConcurrencyPath"},
    "Pass": _COMMON | _IO | _FLOW | {"Parameters", "ResultPath", "Result"},
    "Wait": _COMMON | _IO | _FLOW | {"Seconds", "SecondsPath", "Timestamp", "TimestampPath"},
    "Choice": _COMMON | _IO | {"Choices", "Default"},
    "Succeed": _COMMON | _IO,
    "Fail": _COMMON | {"Error", "Cause", "ErrorPath", "CausePath"},
}
_ALL_FIELDS = frozenset().union(*_FIELDS.values())
_UNSUPPORTED = frozenset({"ItemReader", "ItemBatcher", "ResultWriter", "ToleratedFailurePercentage", "Label",
                          "ToleratedFailurePercentagePath", "ToleratedFailureCount", "ToleratedFailureCountPath",
                          "Arguments", "Output", "Assign"})
_HANDLER_FIELDS = {"Retrier": frozenset({"ErrorEquals", "IntervalSeconds", "MaxAttempts", "BackoffRate",
                                         "MaxDelaySeconds", "JitterStrategy", "Comment"}),
                   "Catcher": frozenset({"ErrorEquals", "Next", "ResultPath", "Comment"})}
# "name" at the top: SAND's, the workflow's name (docs/workflows.md); the rest the specification's
_MACHINE_FIELDS = {"top": frozenset({"StartAt", "States", "Comment", "Version", "TimeoutSeconds", "QueryLanguage",
                                     "name"}),
                   "branch": frozenset({"StartAt", "States", "Comment"}),
                   "processor": frozenset({"StartAt", "States", "Comment", "ProcessorConfig"})}
_WAIT_FIELDS = ("Seconds", "SecondsPath", "Timestamp", "TimestampPath")
# How a field is checked wherever it appears (machine, state, Retrier, Catcher): an int is the least integer
# allowed; "path"/"result" may be null; "result" is a Reference Path outside the context object; "dynamic" is a
# Reference Path or an intrinsic call.
_CHECKS: dict[str, int | str] = {
    "TimeoutSeconds": 1, "HeartbeatSeconds": 1, "Seconds": 0, "MaxConcurrency": 0, "IntervalSeconds": 1,
    "MaxAttempts": 0, "MaxDelaySeconds": 1, "Comment": "str", "Version": "str", "Error": "str", "Cause": "str",
    "End": "bool", "Credentials": "object", "ProcessorConfig": "object", "InputPath": "path", "OutputPath": "path",
    "ResultPath": "result", "TimeoutSecondsPath": "ref", "HeartbeatSecondsPath": "ref", "SecondsPath": "ref",
    "TimestampPath": "ref", "ItemsPath": "ref", "MaxConcurrencyPath": "ref", "ErrorPath": "dynamic",
    "CausePath": "dynamic", "Parameters": "template", "ResultSelector": "template", "ItemSelector": "template",
    "Timestamp": "timestamp", "BackoffRate": "rate", "JitterStrategy": "jitter", "QueryLanguage": "jsonpath",
}
_TYPES = {"str": (str, "a string"), "bool": (bool, "true or false"), "object": (dict, "a JSON object")}
_DESCRIBE = {"String": "a string", "Numeric": "a number", "Boolean": "true or false",
             "Timestamp": 'an RFC 3339 timestamp such as "2016-03-14T01:59:00Z"'}
_EXCLUSIVE = (("TimeoutSeconds", "TimeoutSecondsPath"), ("HeartbeatSeconds", "HeartbeatSecondsPath"),
              ("Error", "ErrorPath"), ("Cause", "CausePath"), ("MaxConcurrency", "MaxConcurrencyPath"),
              ("ItemProcessor", "Iterator"), ("Parameters", "ItemSelector"))


def _suggest(word: str, choices: Any) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _check_path(value: Any, where: str, *, ref: bool = False, context_ok: bool = True) -> None:
    kind = "Reference Path" if ref else "Path"
    if not isinstance(value, str):
        raise AslError(f'{where}: must be a {kind} (a string beginning with "$", e.g. "$.items"), got {value!r}')
    try:
        is_context, segs = _parse_path(value)
    except ValueError as exc:
        raise AslError(f"{where}: {value!r} is not a valid {kind} ({exc}); write e.g. \"$.a.b\", \"$.list[0]\" "
                       "or \"$['a b']\"") from None
    if is_context and not context_ok:
        raise AslError(f'{where}: {value!r} must not begin with "$$" (the context object is read-only); '
                       'write a path into the state input such as "$.result"')
    if ref and not _definite(segs):
        raise AslError(f"{where}: {value!r} must be a Reference Path selecting a single node (no [*], [a,b], [a:b] "
                       "or .*); write e.g. \"$.items\" or \"$.items[0]\"")


def _check_dynamic(value: Any, where: str, *, ref: bool = False) -> None:
    if not isinstance(value, str) or value.startswith("$"):
        _check_path(value, where, ref=ref)
        return
    try:
        _parse_intrinsic(value)
    except ValueError as exc:
        raise AslError(f"{where}: {value!r} is not a valid intrinsic function call ({exc}); write e.g. "
                       "\"States.Format('Hello {}', $.name)\"") from None


def _check_template(template: Any, where: str, top: bool = True) -> None:
    if top and not isinstance(template, dict):
        raise AslError(f'{where}: must be a JSON object (a Payload Template), e.g. {{"id.$": "$.order.id"}}')
    if isinstance(template, dict):
        names: set[str] = set()
        for key, value in template.items():
            name = key[:-2] if key.endswith(".$") else key
            if name in names:
                raise AslError(f"{where}.{key}: field {name!r} appears twice once '.$' is stripped; keep one")
            names.add(name)
            if key.endswith(".$"):
                _check_dynamic(value, f"{where}.{key}")
            else:
                _check_template(value, f"{where}.{key}", False)
    elif isinstance(template, list):
        for i, value in enumerate(template):
            _check_template(value, f"{where}[{i}]", False)


def _check_fields(obj: dict, where: str) -> None:
    """Check the fields of ``obj`` that _CHECKS knows, and the pairs of fields that exclude each other."""
    for key, value in obj.items():
        check, w = _CHECKS.get(key), f"{where}.{key}" if where else key
        if isinstance(check, int) and not (isinstance(value, int) and not isinstance(value, bool) and value >= check):
            raise AslError(f"{w}: must be an integer >= {check}, got {value!r}")
        if check in _TYPES and not isinstance(value, _TYPES[check][0]):
            raise AslError(f"{w}: must be {_TYPES[check][1]}, got {value!r}")
        if check in ("path", "result", "ref") and (value is not None or check == "ref"):
            _check_path(value, w, ref=check != "path", context_ok=check != "result")
        elif check == "dynamic":
            _check_dynamic(value, w, ref=True)
        elif check == "template":
            _check_template(value, w)
        elif check == "timestamp" and _timestamp(value) is None:
            raise AslError(f'{w}: {value!r} is not an RFC 3339 timestamp; write e.g. "2016-03-14T01:59:00Z"')
        elif check == "rate" and not (_is_num(value) and value >= 1.0):
            raise AslError(f"{w}: must be a number >= 1.0, got {value!r}")
        elif check == "jitter" and value not in ("FULL", "NONE"):
            raise AslError(f'{w}: must be "FULL" or "NONE", got {value!r}')
        elif check == "jsonpath" and value != "JSONPath":
            raise AslError(f'{w}: only "JSONPath" is supported (not JSONata); remove the field')
    for first, second in _EXCLUSIVE:
        if first in obj and second in obj:
            raise AslError(f"{where}.{second}: cannot be used together with {first}; keep one of them")


def _targets(state: dict) -> list[str]:
    out = [state["Next"]] if "Next" in state else []
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
            if key not in _MACHINE_FIELDS[kind]:
                raise AslError(f"{at(key)}: unknown field{_suggest(key, _MACHINE_FIELDS[kind])}; remove it")
        start, states = doc.get("StartAt"), doc.get("States")
        if not isinstance(start, str):
            raise AslError(f'{at("StartAt")}: missing or not a string; write "StartAt": "<name of the first state>"')
        if not isinstance(states, dict) or not states:
            raise AslError(f'{at("States")}: must be a non-empty object of states, e.g. "States": {{"{start}": '
                           '{"Type": "Pass", "End": true}}')
        if start not in states:
            raise AslError(f"{at('StartAt')}: {start!r} is not a state of States{_suggest(start, states)}")
        _check_fields(doc, prefix)
        children = {}
        for name, state in states.items():
            where = at(f"States.{name}")
            if name in self.names:
                raise AslError(f"{where}: the name {name!r} is already used at {self.names[name]}; state names "
                               "must be unique in the whole machine, branches and iterators included - rename one")
            if not name or len(name) > 80:
                raise AslError(f"{where}: a state name must have 1 to 80 characters; shorten it")
            self.names[name] = where
            kids = self.state(state, where, states)
            if kids:
                children[name] = kids
        reached, todo = {start}, [start]
        while todo:
            for target in _targets(states[todo.pop()]):
                if target not in reached:
                    reached.add(target)
                    todo.append(target)
        for name in states:
            if name not in reached:
                raise AslError(f"{at('States.' + name)}: unreachable from StartAt {start!r}; add a Next, Default "
                               "or Catch leading to it, or remove it")
        if not any(s.get("End") is True or s["Type"] in ("Succeed", "Fail") for s in states.values()):
            raise AslError(f'{at("States")}: no terminal state; give one state "End": true or add a Succeed state')
        return StateMachine(start, states, children, doc.get("TimeoutSeconds"), doc.get("Comment"))

    def next(self, target: Any, where: str, states: dict) -> None:
        if target is None:
            raise AslError(f'{where}: missing; write "Next": "<state name>"')
        if not isinstance(target, str) or target not in states:
            raise AslError(f"{where}: {target!r} is not a state of this machine{_suggest(str(target), states)} (states "
                           f"in a Parallel branch or Map iterator only reach each other); one of: {', '.join(states)}")

    def state(self, state: Any, where: str, states: dict) -> list[StateMachine]:
        if not isinstance(state, dict):
            raise AslError(f'{where}.Type: a state must be a JSON object, e.g. {{"Type": "Pass", "End": true}}')
        kind = state.get("Type")
        if kind not in _FIELDS:
            what = "missing" if kind is None else f"{kind!r} is not a state type{_suggest(str(kind), STATE_TYPES)}"
            raise AslError(f"{where}.Type: {what}; write one of {', '.join(STATE_TYPES)}")
        allowed = _FIELDS[kind]
        for key in state:
            if key in _FLOW and key not in allowed:
                why = "continues through Choices[].Next and Default" if kind == "Choice" else "ends its machine"
                raise AslError(f"{where}.{key}: not allowed, a {kind} state {why}; remove {key!r}")
            if key in _UNSUPPORTED:
                raise AslError(f"{where}.{key}: {key!r} is not supported by SAND's ASL; remove it")
            if key not in allowed:
                known = key in _ALL_FIELDS
                raise AslError(f"{where}.{key}: {f'not allowed in a {kind} state' if known else 'unknown field'}"
                               f"{'' if known else _suggest(key, allowed)}; remove it")
        _check_fields(state, where)
        if "Next" in allowed:
            if "Next" in state and state.get("End"):
                raise AslError(f'{where}.End: a state has either "Next" or "End": true, not both; remove one')
            if "Next" not in state and not state.get("End"):
                raise AslError(f'{where}.Next: missing; write "Next": "<state name>" or "End": true')
            if "Next" in state:
                self.next(state["Next"], f"{where}.Next", states)
        for key in ("Retry", "Catch"):
            if key in state:
                self.handlers(state[key], f"{where}.{key}", states)
        check = getattr(self, f"check_{kind.lower()}", None)
        return (check(state, where, states) if check else None) or []

    def handlers(self, items: Any, where: str, states: dict) -> None:
        kind = "Retrier" if where.endswith("Retry") else "Catcher"
        example = '{"ErrorEquals": ["States.ALL"]' + (', "Next": "Recover"}' if kind == "Catcher" else "}")
        if not isinstance(items, list) or not all(isinstance(h, dict) for h in items):
            raise AslError(f"{where}: must be an array of {kind}s, e.g. [{example}]")
        for i, handler in enumerate(items):
            w, names = f"{where}[{i}]", handler.get("ErrorEquals")
            for key in handler:
                if key not in _HANDLER_FIELDS[kind]:
                    raise AslError(f"{w}.{key}: unknown {kind} field{_suggest(key, _HANDLER_FIELDS[kind])}; remove it")
            if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
                raise AslError(f'{w}.ErrorEquals: must be a non-empty array of error names, e.g. ["States.ALL"]')
            for name in names:
                if name.startswith("States.") and name not in KNOWN_ERRORS:
                    raise AslError(f"{w}.ErrorEquals: {name!r} is not a predefined error{_suggest(name, KNOWN_ERRORS)};"
                                   " names starting with 'States.' are reserved")
            if "States.ALL" in names and (len(names) > 1 or i < len(items) - 1):
                raise AslError(f"{w}.ErrorEquals: States.ALL must appear alone and in the last {kind}; move the other "
                               f"names to an earlier {kind}, or this {kind} to the end")
            _check_fields(handler, w)
            if kind == "Catcher":
                self.next(handler.get("Next"), f"{w}.Next", states)

    def check_task(self, state: dict, where: str, states: dict) -> None:
        resource = state.get("Resource")
        if not isinstance(resource, str) or not resource.strip():
            what = "missing" if resource is None else f"must be a non-empty string, got {resource!r}"
            raise AslError(f'{where}.Resource: {what}; write the SAND grain to call, e.g. "Resource": "resize"')
        if "TimeoutSeconds" in state and state.get("HeartbeatSeconds", 0) >= state["TimeoutSeconds"]:
            raise AslError(f"{where}.HeartbeatSeconds: must be smaller than TimeoutSeconds "
                           f"({state['TimeoutSeconds']}); lower it or raise TimeoutSeconds")

    def check_wait(self, state: dict, where: str, states: dict) -> None:
        given = [key for key in _WAIT_FIELDS if key in state]
        if len(given) != 1:
            raise AslError(f"{where}.{given[1] if given else 'Seconds'}: a Wait state takes exactly one of "
                           f"{', '.join(_WAIT_FIELDS)}; " + ("keep one" if given else 'add e.g. "Seconds": 10'))

    def check_choice(self, state: dict, where: str, states: dict) -> None:
        rules = state.get("Choices")
        if not isinstance(rules, list) or not rules:
            raise AslError(f'{where}.Choices: must be a non-empty array of Choice Rules, e.g. [{{"Variable": "$.x", '
                           '"NumericEquals": 1, "Next": "One"}]')
        for i, rule in enumerate(rules):
            self.rule(rule, f"{where}.Choices[{i}]", True, states)
        if "Default" in state:
            self.next(state["Default"], f"{where}.Default", states)

    def rule(self, rule: Any, where: str, top: bool, states: dict) -> None:
        if not isinstance(rule, dict):
            raise AslError(f'{where}: a Choice Rule must be an object, e.g. {{"Variable": "$.x", "IsNull": true}}')
        if top:
            if "Next" not in rule:
                raise AslError(f'{where}.Next: missing; a top-level Choice Rule needs "Next": "<state name>"')
            self.next(rule["Next"], f"{where}.Next", states)
        elif "Next" in rule:
            raise AslError(f"{where}.Next: a rule inside And/Or/Not must not have Next; put Next on the top-level rule")
        for key in rule:
            if key not in _OPS and key not in _RULE_FIELDS:
                raise AslError(f"{where}.{key}: unknown comparison operator{_suggest(key, _OPS)}; use one of the "
                               "spec's operators (StringEquals, NumericLessThan, IsPresent, ...) or And/Or/Not")
        _check_fields({k: v for k, v in rule.items() if k == "Comment"}, where)
        combinators = [key for key in ("And", "Or", "Not") if key in rule]
        ops = [key for key in rule if key in _OPS]
        if combinators:
            key = combinators[0]
            if len(combinators) > 1 or ops or "Variable" in rule:
                raise AslError(f"{where}.{key}: a rule is either one of And/Or/Not or a Variable with one comparison, "
                               "not both; nest the parts in separate rules")
            subs = [rule[key]] if key == "Not" else rule[key]
            if not isinstance(subs, list) or not subs:
                raise AslError(f"{where}.{key}: must be a non-empty array of Choice Rules")
            for i, sub in enumerate(subs):
                self.rule(sub, f"{where}.Not" if key == "Not" else f"{where}.{key}[{i}]", False, states)
            return
        if "Variable" not in rule:
            raise AslError(f'{where}.Variable: missing; write "Variable": "$.field" and one comparison operator, '
                           "or use And/Or/Not")
        _check_path(rule["Variable"], f"{where}.Variable")
        if len(ops) != 1:
            raise AslError(f"{where}: {'no' if not ops else 'more than one'} comparison operator; a rule takes exactly "
                           'one, e.g. "StringEquals": "x" (combine several with And)')
        op = ops[0]
        value, w = rule[op], f"{where}.{op}"
        family, _, is_path = _OPS[op]
        kind = {"Is": "Boolean", "Matches": "String"}.get(family, family)
        if is_path:
            _check_path(value, w)
        elif not _TYPE_OK[kind](value):
            hint = "" if family in ("Is", "Matches") else f"; to compare with another field use {op}Path"
            raise AslError(f"{w}: must be {_DESCRIBE[kind]}, got {value!r}{hint}")
        elif family == "Matches":
            try:
                _wildcard(value)
            except ValueError as exc:
                raise AslError(f"{w}: {exc}; write \\\\* for a literal star and \\\\\\\\ for a backslash") from None

    def check_parallel(self, state: dict, where: str, states: dict) -> list[StateMachine]:
        branches = state.get("Branches")
        if not isinstance(branches, list) or not branches:
            raise AslError(f'{where}.Branches: must be a non-empty array of machines, e.g. [{{"StartAt": "A", '
                           '"States": {"A": {"Type": "Pass", "End": true}}}]')
        return [self.machine(b, f"{where}.Branches[{i}]", "branch") for i, b in enumerate(branches)]

    def check_map(self, state: dict, where: str, states: dict) -> list[StateMachine]:
        key = "ItemProcessor" if "ItemProcessor" in state else "Iterator"
        if key not in state:
            raise AslError(f'{where}.ItemProcessor: missing; a Map state needs "ItemProcessor" (or the older '
                           '"Iterator"): {"StartAt": ..., "States": {...}}')
        return [self.machine(state[key], f"{where}.{key}", "processor")]


def validate(doc: dict) -> StateMachine:
    """Validate an ASL document; raise AslError naming the place (``States.<State>.<Field>: ...``)."""
    return _Validator().machine(doc, "", "top")


# ------------------------------------------------------------------------------- input and output processing

def state_input(state: dict, raw_input: Any, context: Mapping[str, Any] | None = None) -> Any:
    """The effective input: InputPath (null gives {}), then Parameters (not for Map, whose Parameters are its
    per-item selector)."""
    if "InputPath" in state and state["InputPath"] is None:
        data: Any = {}
    else:
        data = get_path(raw_input, state.get("InputPath", "$"), context)
    if "Parameters" in state and state.get("Type") != "Map":
        data = apply_template(state["Parameters"], data, context)
    return data


def state_output(state: dict, raw_input: Any, result: Any, context: Mapping[str, Any] | None = None) -> Any:
    """The effective output: ResultSelector on the result, ResultPath into the raw input, then OutputPath (null
    gives {}). For Choice, Wait and Succeed, pass the effective input as ``result``."""
    if "ResultSelector" in state:
        result = apply_template(state["ResultSelector"], result, context)
    output = apply_result_path(raw_input, state.get("ResultPath", "$"), result)
    if "OutputPath" in state and state["OutputPath"] is None:
        return {}
    return get_path(output, state.get("OutputPath", "$"), context)


def wait_until(state: dict, data: Any, now: float) -> float:
    """When (epoch seconds) a Wait state with effective input ``data`` entered at ``now`` resumes."""
    if "Seconds" in state:
        return now + state["Seconds"]
    if "SecondsPath" in state:
        seconds = get_path(data, state["SecondsPath"])
        if not (isinstance(seconds, int) and not isinstance(seconds, bool) and seconds >= 0):
            raise AslRuntimeError("States.Runtime", f"SecondsPath selected {seconds!r}, not an integer >= 0")
        return now + seconds
    value = state["Timestamp"] if "Timestamp" in state else get_path(data, state["TimestampPath"])
    moment = _timestamp(value)
    if moment is None:
        raise AslRuntimeError("States.Runtime", f"{value!r} is not an RFC 3339 timestamp")
    return moment.timestamp()


# ----------------------------------------------------------------------------------------------------- errors

def error_matches(error_equals: list[str], error: str) -> bool:
    """Does ``error`` match one of the names? States.ALL matches any error; States.TaskFailed any but a timeout
    (States.Timeout, States.HeartbeatTimeout); States.Timeout also matches States.HeartbeatTimeout."""
    for name in error_equals:
        if name in (error, "States.ALL"):
            return True
        if name == "States.TaskFailed" and error not in _TIMEOUTS:
            return True
        if name == "States.Timeout" and error == "States.HeartbeatTimeout":
            return True
    return False


def retry_delay(retriers: list[dict], error: str, attempts: dict[int, int]) -> float | None:
    """Seconds to wait before retrying after ``error``, or None (no retrier matches, or the first one that does
    has used its MaxAttempts). ``attempts`` (retrier index -> retries done) is updated in place; keep one per
    state visit. Delay: IntervalSeconds * BackoffRate ** retries done, capped by MaxDelaySeconds."""
    for i, retrier in enumerate(retriers):
        if error_matches(retrier["ErrorEquals"], error):
            done = attempts.get(i, 0)
            if done >= retrier.get("MaxAttempts", 3):
                return None
            attempts[i] = done + 1
            delay = float(retrier.get("IntervalSeconds", 1) * retrier.get("BackoffRate", 2.0) ** done)
            if "MaxDelaySeconds" in retrier:
                delay = min(delay, float(retrier["MaxDelaySeconds"]))
            if retrier.get("JitterStrategy") == "FULL":
                delay = random.uniform(0.0, delay)
            return delay
    return None


def find_catcher(catchers: list[dict], error: str) -> dict | None:
    """The first Catcher whose ErrorEquals matches ``error``."""
    return next((c for c in catchers if error_matches(c["ErrorEquals"], error)), None)


def error_output(error: str, cause: str) -> dict:
    """The Error Output a Catcher passes on."""
    return {"Error": error, "Cause": cause}


# -------------------------------------------------------------------------------------- reference interpreter

def _describe(exc: Exception) -> tuple[str, str]:
    if isinstance(exc, AslRuntimeError):
        return exc.error, exc.cause
    return type(exc).__name__, str(exc)


def fail_field(state: dict, key: str, raw: Any, context: Mapping[str, Any]) -> str:
    if key + "Path" not in state:
        return state.get(key, "")
    value = _dynamic(state[key + "Path"], raw, context, "States.Runtime")
    if not isinstance(value, str):
        raise AslRuntimeError("States.Runtime", f"{key}Path must select a string, got {value!r}")
    return value


def _invoke(machine: StateMachine, name: str, state: dict, data: Any, tasks: Mapping[str, Callable[[Any], Any]],
            context: dict[str, Any], sleep: Callable[[float], None]) -> Any:
    kind = state["Type"]
    if kind == "Task":
        if state["Resource"] not in tasks:
            raise AslRuntimeError("States.Runtime", f"no task named {state['Resource']!r}")
        return tasks[state["Resource"]](copy.deepcopy(data))  # JSON in, as across the network
    if kind == "Parallel":
        return [run(branch, copy.deepcopy(data), tasks, context, sleep) for branch in machine.children[name]]
    items = get_path(data, state.get("ItemsPath", "$"), context)
    if not isinstance(items, list):
        raise AslRuntimeError("States.Runtime", f"ItemsPath selected {type(items).__name__}, not an array")
    selector = state.get("ItemSelector", state.get("Parameters"))
    results = []
    for index, item in enumerate(items):
        item_context = {**context, "Map": {"Item": {"Index": index, "Value": item}}}
        item_input = apply_template(selector, data, item_context) if selector is not None else item
        results.append(run(machine.children[name][0], item_input, tasks, item_context, sleep))
    return results


def _step(machine: StateMachine, name: str, raw: Any, tasks: Mapping[str, Callable[[Any], Any]],
          context: dict[str, Any], sleep: Callable[[float], None]) -> tuple[Any, str | None]:
    """Run one state: (its output, the next state's name or None at the end)."""
    state = machine.states[name]
    kind = state["Type"]
    after = None if kind == "Succeed" or state.get("End") else state.get("Next")
    if kind == "Fail":
        raise AslRuntimeError(fail_field(state, "Error", raw, context), fail_field(state, "Cause", raw, context))
    if kind in ("Task", "Parallel", "Map"):
        attempts: dict[int, int] = {}
        while True:
            try:
                data = state_input(state, raw, context)
                result = _invoke(machine, name, state, data, tasks, context, sleep)
                return state_output(state, raw, result, context), after
            except Exception as exc:  # any failure is an ASL error (a task's: named after its class)
                error, cause = _describe(exc)
                delay = retry_delay(state.get("Retry", []), error, attempts)
                if delay is not None:
                    sleep(delay)
                    context["State"]["RetryCount"] = sum(attempts.values())
                    continue
                catcher = find_catcher(state.get("Catch", []), error)
                if catcher is None:
                    if isinstance(exc, AslRuntimeError):
                        raise
                    raise AslRuntimeError(error, cause) from exc
                output = apply_result_path(raw, catcher.get("ResultPath", "$"), error_output(error, cause))
                return output, catcher["Next"]
    data = state_input(state, raw, context)
    if kind == "Choice":
        after = choose(state, data, context)
        if after is None:
            raise AslRuntimeError("States.NoChoiceMatched", f"no Choice Rule of {name!r} matched and it has no Default")
    elif kind == "Wait":
        now = time.time()
        sleep(max(0.0, wait_until(state, data, now) - now))
    result = copy.deepcopy(state["Result"]) if kind == "Pass" and "Result" in state else data
    return state_output(state, raw, result, context), after


def run(machine: StateMachine, data: Any, tasks: Mapping[str, Callable[[Any], Any]], context: dict | None = None,
        sleep: Callable[[float], None] = time.sleep) -> Any:
    """Run ``machine`` in-process on ``data`` and return its output; an unhandled error raises AslRuntimeError.
    A Task calls ``tasks[Resource](effective input)``; Parallel branches and Map iterations run one after another.
    Not enforced: TimeoutSeconds/HeartbeatSeconds (of tasks and of the machine), MaxConcurrency."""
    context = dict(context or {})
    name: str | None = machine.start
    while name is not None:
        context["State"] = {"Name": name, "RetryCount": 0}
        data, name = _step(machine, name, data, tasks, context, sleep)
    return data
