"""ASL Paths and Reference Paths (the spec's JSONPath subset): parsing, reading, and ResultPath."""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Mapping
from typing import Any

from grainworker.asl_text import AslRuntimeError, show

Seg = tuple[Any, ...]  # ("k", name) | ("i", index) | ("*",) | ("u", members) | ("s", start, end)
Q = r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*\""""
TOKEN = re.compile(
    rf"""\.(?P<dot>\*(?=[.\[]|$)|(?:[^.\[\]\\@?,:*'"()]|\\.)+)
    | \[\s*(?:(?P<names>(?:{Q})(?:\s*,\s*(?:{Q}))*)|(?P<star>\*)|(?P<slice>-?\d*\s*:\s*-?\d*)
              |(?P<ints>-?\d+(?:\s*,\s*-?\d+)*))\s*\]""",
    re.VERBOSE,
)
# "$name" and "$$name" are AWS's variables, not a Path: refused by name rather than as unreadable
VARIABLE = re.compile(r"\$\$?[A-Za-z_]")
VARIABLES = "variables (JSONata/Variables) are not supported"
FILTERS = "JSONPath filter expressions [?(...)] are not supported"


def unescape(raw: str) -> str:
    return re.sub(r"\\(.)", r"\1", raw)


def _path_problem(path: str, i: int) -> str:
    rest = path[i:]
    if rest.startswith(".."):
        return "recursive descent '..' is not supported"
    if rest.startswith(("[?", "[(")):
        return FILTERS
    c = rest[1:2] if rest.startswith(".") else rest[:1]
    if c and c in "]@?,:*'\"()\\":
        return f"{show(c)} in a field name must be escaped with a backslash or the name written as ['name']"
    return f"cannot read {show(rest)}; write .name, ['name'], [0], [-1], [*], [0,1] or [1:3]"


@functools.lru_cache(maxsize=2048)
def parse_path(path: str) -> tuple[bool, tuple[Seg, ...]]:
    """Parse a Path into (applies to the context object, segments); ValueError says what is wrong."""
    if not path.startswith("$"):
        raise ValueError("a path must begin with '$'")
    if VARIABLE.match(path):
        raise ValueError(VARIABLES)
    is_context = path.startswith("$$")
    i, segs = (2 if is_context else 1), list[Seg]()
    while i < len(path):
        m = TOKEN.match(path, i)
        if m is None:
            raise ValueError(_path_problem(path, i))
        if m["dot"] == "*" or m["star"]:
            segs.append(("*",))
        elif m["dot"]:  # the spec's examples escape any character with a backslash: $.store\.book
            segs.append(("k", unescape(m["dot"])))
        elif m["names"]:
            names = tuple(unescape(q[1:-1]) for q in re.findall(Q, m["names"]))
            segs.append(("k", names[0]) if len(names) == 1 else ("u", names))
        elif m["slice"]:
            lo, hi = (int(p) if p.strip() else None for p in m["slice"].split(":"))
            segs.append(("s", lo, hi))
        else:
            ints = tuple(int(p) for p in m["ints"].split(","))
            segs.append(("i", ints[0]) if len(ints) == 1 else ("u", ints))
        i = m.end()
    return is_context, tuple(segs)


def definite(segs: tuple[Seg, ...]) -> bool:
    return all(s[0] in ("k", "i") for s in segs)


def select(node: Any, seg: Seg) -> list[Any]:
    kind = seg[0]
    if kind == "k":
        return [node[seg[1]]] if isinstance(node, dict) and seg[1] in node else []
    if kind == "i":
        return [node[seg[1]]] if isinstance(node, list) and -len(node) <= seg[1] < len(node) else []
    if kind == "*":
        return list(node.values()) if isinstance(node, dict) else list(node) if isinstance(node, list) else []
    if kind == "u":
        return [v for m in seg[1] for v in select(node, ("k" if isinstance(m, str) else "i", m))]
    return list(node[seg[1] : seg[2]]) if isinstance(node, list) else []


def _parsed(path: object, error: str) -> tuple[bool, tuple[Seg, ...]]:
    if not isinstance(path, str):
        raise AslRuntimeError(error, f"a path must be a string beginning with '$', got {show(path)}")
    try:
        return parse_path(path)
    except ValueError as exc:
        raise AslRuntimeError(error, f"invalid path {show(path)}: {exc}") from None


def get_path(data: Any, path: str, context: Mapping[str, Any] | None = None) -> Any:
    """Apply a Path to ``data`` (``$$...`` paths to ``context``). A path selecting one node ($.a.b, $.a[0],
    $['a b'], $.a[-1]) returns it, or raises AslRuntimeError('States.Runtime') when it is missing; a path that
    can select several ([*], [0,1], [1:3], .*) returns the list of what it selects."""
    is_context, segs = _parsed(path, "States.Runtime")
    node = (context if context is not None else {}) if is_context else data
    if not definite(segs):
        nodes = [node]
        for seg in segs:
            nodes = [v for n in nodes for v in select(n, seg)]
        return nodes
    for seg in segs:
        found = select(node, seg)
        if not found:
            where = "context object" if is_context else "input"
            raise AslRuntimeError("States.Runtime", f"path {show(path)} not found in the {where} (no {show(seg[1])})")
        node = found[0]
    return node


def apply_result_path(state_input: Any, result_path: str | None, result: Any) -> Any:
    """Combine ``result`` into (a copy of) ``state_input`` at ``result_path``: None keeps the input, "$" is the
    result, "$.a.b" sets a.b, creating missing objects on the way. Fails with States.ResultPathMatchFailure."""
    if result_path is None:
        return state_input
    fail = "States.ResultPathMatchFailure"
    is_context, segs = _parsed(result_path, fail)
    if is_context or not definite(segs):
        raise AslRuntimeError(fail, f"ResultPath {show(result_path)} must be a Reference Path into the state input")
    if not segs:
        return result
    out = copy.deepcopy(state_input)
    node = out
    seg: Seg = segs[0]
    for n, seg in enumerate(segs):
        if n < len(segs) - 1 and seg[0] == "k" and isinstance(node, dict) and segs[n + 1][0] == "k":
            node.setdefault(seg[1], {})  # create the missing objects on the way
        if n == len(segs) - 1 and (seg[0] == "k" and isinstance(node, dict) or select(node, seg)):
            node[seg[1]] = result
            return out
        found = select(node, seg)
        if not found:
            break
        node = found[0]
    raise AslRuntimeError(
        fail, f"ResultPath {show(result_path)} cannot be applied to the state input at {show(seg[1])}"
    )


__all__ = [
    "FILTERS",
    "Q",
    "TOKEN",
    "VARIABLE",
    "VARIABLES",
    "Seg",
    "apply_result_path",
    "definite",
    "get_path",
    "parse_path",
    "select",
    "unescape",
]
