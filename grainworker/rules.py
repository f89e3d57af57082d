"""The defaults and rules both sides of SAND apply, declared once in ``contracts/rules.json``.

The Java modules read that file from the contracts jar (``sand.contracts.Rules``); this reads the same file: in a
checkout from ``contracts/``, in a sandbox from the copy ``deploy/install.sh`` puts in ``grainworker/_gen/``
(``tests/test_workflow.py`` checks the copy is the file). Standard library only: the supervisor imports this
before anything else of the grain worker.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent


def contract(name: str) -> tuple[dict[str, Any], Path, Path]:
    """A JSON table of ``contracts/`` (``rules.json``, ``asl.json``): from the checkout, or in a sandbox from its
    copy in ``grainworker/_gen/``; with both paths (the tests compare them)."""
    source, copy = _HERE.parent / "contracts" / name, _HERE / "_gen" / name
    for path in (source, copy):
        if path.is_file():
            table: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            return table, source, copy
    raise RuntimeError(f"neither {source} nor {copy} exists: run deploy/install.sh")


RULES, SOURCE, COPY = contract("rules.json")

__all__ = ["RULES", "contract"]
