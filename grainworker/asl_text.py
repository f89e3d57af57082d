"""How ASL speaks: its two errors, values shown as JSON, and the one "did you mean" rule.

The frontend's validator (``sand.contracts.asl``) writes the same messages: values as ``json.dumps`` shows them
(``[{"a": "b"}, true, null, 1e+20]``) and suggestions by ``sand.common.Suggest``'s rule, which ``suggest`` copies.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any


class AslError(ValueError):
    """An invalid state machine. The message starts with where: ``States.<State>.<Field>: ...``."""


class AslRuntimeError(Exception):
    """An ASL error while running: ``error`` is the Error Name, ``cause`` human-readable text."""

    def __init__(self, error: str, cause: str = "") -> None:
        super().__init__(f"{error}: {cause}" if cause else error)
        self.error = error
        self.cause = cause


def show(value: Any) -> str:
    """A JSON value as a message shows it: JSON, non-ASCII characters as they are."""
    return json.dumps(value, ensure_ascii=False)


def distance(a: str, b: str) -> int:
    """Edit distance (insertions, deletions, substitutions) in code points."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(cur[j - 1] + 1, prev[j] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[len(b)]


def nearest(word: str, choices: Iterable[str]) -> str | None:
    """sand.common.Suggest's rule: the first choice nearest to ``word`` by edit distance, if that distance is at
    most 3 and smaller than the word's length (so that "B" does not suggest "A")."""
    best, best_d = None, 0
    for choice in choices:
        d = distance(choice, word)
        if best is None or d < best_d:
            best, best_d = choice, d
    return best if best is not None and best_d <= 3 and best_d < len(word) else None


def suggest(word: str, choices: Iterable[str]) -> str:
    """' (did you mean "X"?)' or ""."""
    close = nearest(word, choices)
    return f" (did you mean {show(close)}?)" if close is not None else ""


__all__ = ["AslError", "AslRuntimeError", "distance", "nearest", "show", "suggest"]
