"""What crosses between the controller and the invoker (both import this module; nothing else defines it).

Topics: ``baseline.<run>.invoker0`` carries activations to the invoker, ``baseline.<run>.completed0`` carries
completions (and the invoker's "ready") back to the controller: OpenWhisk's ``invoker0`` and ``completed0``.
Messages are JSON objects with a ``type``:

  activation  {"type": "activation", "id", "function", "revision", "value", "sent_ns", "timeout_s"}
  completion  {"type": "completion", "id", "ok", "result" | "error", "hop": <Hop fields, invoker side>}
  ready       {"type": "ready", "pid"}          the invoker is consuming (sent once at its start)

The code of function F, revision R, is the file ``<workdir>/actions/F.R.py`` (the stand-in for OpenWhisk's
action store, CouchDB): deploy() writes it, the invoker reads it once per revision. A zip action (deploy_zip()) is
``F.R.zip`` with ``F.R.json`` beside it ({"entry": <module>}); the invoker reads both at each container's /init.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["activations_topic", "code_path", "completions_topic", "decode", "encode", "manifest_path", "zip_path"]


def activations_topic(run_id: str) -> str:
    return f"baseline.{run_id}.invoker0"


def completions_topic(run_id: str) -> str:
    return f"baseline.{run_id}.completed0"


def code_path(workdir: Path, function: str, revision: int) -> Path:
    return Path(workdir) / "actions" / f"{function}.{revision}.py"


def zip_path(workdir: Path, function: str, revision: int) -> Path:
    return Path(workdir) / "actions" / f"{function}.{revision}.zip"


def manifest_path(workdir: Path, function: str, revision: int) -> Path:
    """A zip action's manifest, {"entry": <module>}; written after its zip, so its presence says the zip is whole."""
    return Path(workdir) / "actions" / f"{function}.{revision}.json"


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def decode(data: bytes) -> dict[str, Any]:
    return json.loads(data)
