"""ASL Intrinsic Functions: parsing a call (``States.Format('{}', $.x)``) and evaluating it.

The signatures come from contracts/asl.json; literal arguments are checked against them when the call is parsed,
so a machine with ``States.MathAdd(1, '-1')`` is refused at upload, not when it runs.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import random
import re
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from grainworker.asl_paths import TOKEN, VARIABLE, VARIABLES, get_path, parse_path, unescape
from grainworker.asl_spec import ARGUMENT_KINDS, INTRINSICS, Signature
from grainworker.asl_text import AslRuntimeError, show, suggest

Node = tuple[Any, ...]  # ("str", raw) | ("lit", value) | ("path", path) | ("call", name, args)


def need(ok: Any, message: str) -> bool:
    """Raise ValueError(message) unless ``ok``; False otherwise, so that ``need(...) or value`` reads in a lambda."""
    if not ok:
        raise ValueError(message)
    return False


def is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


_KINDS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "number": is_num,
    "any": lambda v: True,
    "integer": lambda v: is_num(v) and (isinstance(v, int) or v.is_integer()),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "boolean": lambda v: isinstance(v, bool),
}


def _check_argument(name: str, n: int, value: Any) -> None:
    kind = INTRINSICS[name].kind(n)
    need(_KINDS[kind](value), f"argument {n + 1} of {name} must be {ARGUMENT_KINDS[kind]}, got {show(value)}")


def _split(s: str, delimiters: str) -> list[str]:
    """AWS's States.StringSplit: split at any of the delimiter's characters, drop the empty pieces."""
    if not delimiters:
        return [s] if s else []
    return [p for p in re.split("[" + re.escape(delimiters) + "]", s) if p]


_HASHES = {"MD5": "md5", "SHA-1": "sha1", "SHA-256": "sha256", "SHA-384": "sha384", "SHA-512": "sha512"}
# States.Format is done in evaluate(); the rest take their (checked) arguments in order.
_IMPLS: dict[str, Callable[..., Any]] = {
    "States.StringToJson": json.loads,
    "States.JsonToString": lambda v: json.dumps(v, separators=(",", ":"), ensure_ascii=False),
    "States.Array": lambda *a: list(a),
    "States.ArrayPartition": lambda a, n: (
        need(n > 0, "the chunk size must be positive") or [a[k : k + int(n)] for k in range(0, len(a), int(n))]
    ),
    "States.ArrayContains": lambda a, v: any(_same(x, v) for x in a),
    "States.ArrayRange": lambda lo, hi, s: (
        need(s and 0 <= (hi - lo) / s < 1000, "bad range or step")
        or list(range(int(lo), int(hi) + (1 if s > 0 else -1), int(s)))
    ),
    "States.ArrayGetItem": lambda a, k: a[int(k)],
    "States.ArrayLength": len,
    "States.ArrayUnique": lambda a: [v for k, v in enumerate(a) if not any(_same(v, w) for w in a[:k])],
    "States.Base64Encode": lambda s: base64.b64encode(s.encode()).decode(),
    "States.Base64Decode": lambda s: base64.b64decode(s, validate=True).decode(),
    "States.Hash": lambda d, alg: (
        need(alg in _HASHES, f"the algorithm must be one of {', '.join(_HASHES)}")
        or hashlib.new(_HASHES[alg], d.encode()).hexdigest()
    ),
    "States.JsonMerge": lambda a, b, deep: need(not deep, "only shallow merging (false) is supported") or {**a, **b},
    "States.MathRandom": lambda lo, hi, seed=None: random.Random(seed).randint(int(lo), int(hi)),
    "States.MathAdd": lambda a, b: int(a) + int(b),  # the spec's integers; 2.0 counts as one
    "States.StringSplit": _split,
    "States.UUID": lambda: str(uuid.uuid4()),
}


def _arity(s: Signature) -> tuple[int, float]:
    return len(s.args), float("inf") if s.rest else len(s.args) + len(s.optional)


_ARG = re.compile(
    rf"""\s*(?:(?P<str>'(?:[^'\\]|\\.)*')
    | (?P<lit>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|null|true|false)(?=\s*[,)])
    | (?P<path>\$\$?(?:{TOKEN.pattern})*) | (?P<call>[A-Za-z0-9._]+\s*\())""",
    re.VERBOSE,
)
_CALL = re.compile(r"\s*([A-Za-z0-9._]+)\s*\(")
_SEPARATOR = re.compile(r"\s*([,)])")
_CLOSE = re.compile(r"\s*\)")


def _parse_call(text: str, pos: int) -> tuple[Node, int]:
    """Parse ``States.Name(arg, ...)`` at ``pos``: ("call", name, args) and the position after it. Arguments:
    'strings' (escapes \\' \\{ \\} \\\\), numbers, null, true, false, Paths and nested calls, parsed as ("str", raw
    text), ("lit", value), ("path", path), ("call", ...). Literal arguments must be of the kind the function
    takes."""
    m = _CALL.match(text, pos)
    if m is None:
        raise ValueError("expected an intrinsic function call such as States.Format('{}', $.x)")
    name, pos, args = m[1], m.end(), list[Node]()
    need(name in INTRINSICS, f"unknown intrinsic function {show(name)}{suggest(name, INTRINSICS)}")
    close = _CLOSE.match(text, pos)
    pos = close.end() if close else pos
    while close is None:
        arg: Node
        m = _ARG.match(text, pos)
        if m is None:
            rest = text[pos:].strip()
            raise ValueError(
                "unterminated string: close it with '" if rest.startswith("'") else f"cannot read {show(rest)}"
            )
        if m["call"]:
            arg, pos = _parse_call(text, m.start("call"))
        elif m["str"]:
            need(
                re.fullmatch(r"(?:[^\\]|\\['{}\\])*", m["str"][1:-1]),
                "open escape in a string: only \\' \\{ \\} and \\\\ are allowed",
            )
            arg, pos = ("str", m["str"][1:-1]), m.end()
            _check_argument(name, len(args), unescape(arg[1]))
        elif m["path"]:
            need(not VARIABLE.match(text, m.start("path")), VARIABLES)
            parse_path(m["path"].rstrip())
            arg, pos = ("path", m["path"].rstrip()), m.end()
        else:
            arg, pos = ("lit", json.loads(m["lit"])), m.end()
            _check_argument(name, len(args), arg[1])
        args.append(arg)
        sep = _SEPARATOR.match(text, pos)
        need(sep is not None, f"expected ',' or ')' after argument {len(args)} of {name}, not {show(text[pos:])}")
        assert sep is not None
        pos, close = sep.end(), sep if sep[1] == ")" else None
    low, high = _arity(INTRINSICS[name])
    count = f"{low}" if low == high else f"{low}+" if high == float("inf") else f"{low}-{high:.0f}"
    need(low <= len(args) <= high, f"{name} takes {count} argument(s), got {len(args)}")
    return ("call", name, tuple(args)), pos


@functools.lru_cache(maxsize=1024)
def parse_intrinsic(text: str) -> Node:
    """Parse a whole intrinsic call; ValueError says what is wrong."""
    call, pos = _parse_call(text, 0)
    need(not text[pos:].strip(), f"unexpected text after the call: {show(text[pos:])}")
    return call


def _format(raw: str, values: list[Any]) -> str:
    parts = re.split(r"(\\.|\{\})", raw)  # text, then alternately an escape or a {} and text
    holes = parts[1::2].count("{}")
    need(holes == len(values), f"States.Format has {holes} {{}} but {len(values)} value(s) to insert")
    need(not any(isinstance(v, dict | list) for v in values), "States.Format cannot insert an object or array")
    it = iter(v if isinstance(v, str) else json.dumps(v) for v in values)
    return "".join(p if k % 2 == 0 else next(it) if p == "{}" else p[1] for k, p in enumerate(parts))


def _evaluate(node: Node, data: Any, context: Mapping[str, Any] | None) -> Any:
    kind = node[0]
    if kind == "str":
        return unescape(node[1])
    if kind == "lit":
        return node[1]
    if kind == "path":
        return get_path(data, node[1], context)
    name, args = node[1], node[2]
    values = [_evaluate(a, data, context) for a in args]
    for n, value in enumerate(values):
        _check_argument(name, n, value)
    if name == "States.Format":  # escapes count in a literal template, not in one read from a Path
        return _format(args[0][1] if args[0][0] == "str" else values[0].replace("\\", "\\\\"), values[1:])
    return _IMPLS[name](*values)


def call_intrinsic(expression: str, data: Any, context: Mapping[str, Any] | None = None) -> Any:
    """Evaluate an Intrinsic Function call against ``data``; failures raise States.IntrinsicFailure."""
    try:
        return _evaluate(parse_intrinsic(expression), data, context)
    except AslRuntimeError as exc:
        raise AslRuntimeError("States.IntrinsicFailure", f"{expression}: {exc.cause}") from None
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        raise AslRuntimeError("States.IntrinsicFailure", f"{expression}: {exc}") from None


__all__ = ["Node", "call_intrinsic", "is_num", "need", "parse_intrinsic"]
