"""The emulator's stand-in for settings.env and secrets: the folder's ``settings.env`` and its ``.env`` file.

``settings.env`` comes from ``settings.json`` (else the ``settings`` of ``workflow.json``), as ``sand deploy`` sends
it; the ``.env`` file holds what ``sand secret set`` stores on the platform (``sand deploy`` never uploads it). The
grains get both exactly as on the platform: in ``os.environ`` and through ``context.get_config`` /
``context.get_secret`` (grainworker/appenv.py), with the platform's name rules (contracts/rules.json).

``.env`` syntax (a small parser: python-dotenv is not a dependency), one ``NAME=value`` a line::

    # a comment
    GREETING=hello world        # unquoted: trimmed, an inline comment after " #" dropped
    export API_TOKEN='s3cr3t'   # "export " is allowed; single quotes: taken as written
    MOTTO="line one\\nline two"  # double quotes: \\n \\t \\" \\\\ are escapes
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from grainworker.appenv import AppEnvError, AppEnvironment, check_name, check_value

__all__ = ["app_environment", "parse_dotenv"]

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


def _unquote(raw: str, where: str) -> str:
    value = raw.strip()
    if value[:1] == "'":
        end = value.find("'", 1)
        if end < 0:
            raise AppEnvError(f"{where}: the single quote is not closed")
        return value[1:end]
    if value[:1] == '"':
        out, i = [], 1
        while i < len(value) and value[i] != '"':
            if value[i] == "\\" and i + 1 < len(value):
                i += 1
                out.append(_ESCAPES.get(value[i], "\\" + value[i]))
            else:
                out.append(value[i])
            i += 1
        if i >= len(value):
            raise AppEnvError(f"{where}: the double quote is not closed")
        return "".join(out)
    hash_at = value.find(" #")
    return (value[:hash_at] if hash_at >= 0 else value).strip()


def parse_dotenv(text: str, source: str = ".env") -> dict[str, str]:
    """``NAME=value`` lines to a dict; AppEnvError naming the line for anything else."""
    out: dict[str, str] = {}
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("export "):
            stripped = stripped[len("export ") :].lstrip()
        name, eq, raw = stripped.partition("=")
        where = f"{source} line {n}"
        if not eq:
            raise AppEnvError(f"{where}: expected NAME=value")
        name = check_name(name.strip(), f"{where}:")
        out[name] = check_value(name, _unquote(raw, where), f"{where}:")
    return out


def _settings(app_dir: Path) -> Any:
    for path, pick in ((app_dir / "settings.json", None), (app_dir / "workflow.json", "settings")):
        if path.is_file():
            doc = json.loads(path.read_text(encoding="utf-8"))
            return doc.get(pick) if pick and isinstance(doc, dict) else doc if not pick else None
    return None


def app_environment(app_dir: Path) -> AppEnvironment:
    """The folder's settings.env and .env, checked with the platform's rules."""
    try:
        settings = _settings(app_dir)
    except (OSError, ValueError) as e:
        raise AppEnvError(f"{app_dir}: the settings cannot be read: {e}") from None
    raw = settings.get("env") if isinstance(settings, dict) else None
    if raw is not None and not isinstance(raw, dict):
        raise AppEnvError("settings.env must be an object of NAME -> string")
    config = {check_name(k): check_value(k, v) for k, v in (raw or {}).items()}
    dotenv = app_dir / ".env"
    secrets = parse_dotenv(dotenv.read_text(encoding="utf-8"), str(dotenv)) if dotenv.is_file() else {}
    return AppEnvironment(config, secrets)
