"""An application's environment: its ``settings.env`` and its secrets, as grain instances see them.

The host agent opens the secrets when it deploys the application and writes both into the application's folder
(``env.json``: ``{"config": {...}, "secrets": {...}}``); the sandbox's supervisor puts them in the grain workers'
environment and names the file in ``SAND_GRAINWORKER_ENV_FILE``; each grain worker reads it once when it starts
(:func:`install_from_environ`), before it loads the grain's code, so a request never looks anything up: every
instance, a fork of its worker, has them in ``os.environ`` and through ``context.get_config`` /
``context.get_secret``. The emulator does the same with the folder's ``settings.json`` ``env`` and ``.env`` file.
Names follow ``application_env`` of ``contracts/rules.json`` (:func:`check_name`).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from grainworker.rules import RULES

__all__ = ["AppEnvironment", "AppEnvError", "ENV_FILE_VAR", "check_name", "current", "install", "read"]

ENV_FILE_VAR = "SAND_GRAINWORKER_ENV_FILE"
_ENV_RULES = RULES["application_env"]
_NAME = re.compile(_ENV_RULES["name_pattern"])


class AppEnvError(ValueError):
    """The environment file or a name in it is bad; the message says which."""


@dataclass(frozen=True)
class AppEnvironment:
    config: dict[str, str] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)

    def environ(self) -> dict[str, str]:
        """What goes into ``os.environ``: settings.env, then the secrets (a secret wins over a variable of its name)."""
        return {**self.config, **self.secrets}

    def __repr__(self) -> str:  # names only: a secret's value must never reach a log line
        return f"AppEnvironment(config={sorted(self.config)}, secrets={sorted(self.secrets)})"


def check_name(name: str, what: str = "settings.env") -> str:
    """``name`` if it may be a variable of the application's environment, else AppEnvError saying the rule."""
    if not name or len(name) > _ENV_RULES["max_name_chars"] or not _NAME.fullmatch(name):
        raise AppEnvError(
            f"{what} name {name!r} is invalid: must match {_ENV_RULES['name_pattern']}, "
            f"at most {_ENV_RULES['max_name_chars']} characters"
        )
    if name.startswith(_ENV_RULES["reserved_prefix"]):
        raise AppEnvError(
            f"{what} name {name!r} is reserved: names starting {_ENV_RULES['reserved_prefix']} are the platform's"
        )
    if name in _ENV_RULES["reserved_names"]:
        raise AppEnvError(
            f"{what} name {name!r} is reserved: {_ENV_RULES['reserved_names']} would change what code the grain "
            "worker runs"
        )
    return name


def check_value(name: str, value: object, what: str = "settings.env") -> str:
    if not isinstance(value, str):
        raise AppEnvError(f"{what} {name}={value!r} must be a string")
    size = len(value.encode())
    if size > _ENV_RULES["max_value_bytes"] or "\0" in value:
        raise AppEnvError(
            f"{what} {name} is {size} bytes: at most {_ENV_RULES['max_value_bytes']}, with no NUL character"
        )
    return value


def _table(doc: dict[str, object], key: str, path: Path) -> dict[str, str]:
    raw = doc.get(key, {})
    if not isinstance(raw, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in raw.items()):
        raise AppEnvError(f"{path}: '{key}' must be an object of names to strings")
    return dict(raw)


def read(path: str | Path) -> AppEnvironment:
    """Read an ``env.json`` the host agent (or the emulator) wrote."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise AppEnvError(f"{p}: cannot read the application's environment: {e}") from None
    if not isinstance(doc, dict):
        raise AppEnvError(f"{p}: must be a JSON object")
    return AppEnvironment(_table(doc, "config", p), _table(doc, "secrets", p))


_current = AppEnvironment()


def install(env: AppEnvironment) -> None:
    """Make ``env`` what the grain API answers in this process and in every process forked from it."""
    global _current
    _current = env


def install_from_environ() -> None:
    """In a grain worker at start: read the file ``SAND_GRAINWORKER_ENV_FILE`` names, if it names one."""
    path = os.environ.get(ENV_FILE_VAR, "")
    if path:
        install(read(path))


def current() -> AppEnvironment:
    return _current
