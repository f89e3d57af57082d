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
SOURCE = _HERE.parent / "contracts" / "rules.json"
COPY = _HERE / "_gen" / "rules.json"


def _load() -> dict[str, Any]:
    for path in (SOURCE, COPY):
        if path.is_file():
            rules: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            return rules
    raise RuntimeError(f"neither {SOURCE} nor {COPY} exists: run deploy/install.sh")


RULES: dict[str, Any] = _load()

__all__ = ["RULES"]
