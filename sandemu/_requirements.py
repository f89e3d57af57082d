"""An application's requirements.txt, installed for the emulator the way a deploy installs it: the same installer
code (grainworker._deps: the same pip options, and the same environment, so an sdist's build dependencies are
fetched the same way) into a cache folder per requirements file, never into the host's Python."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from grainworker import _deps

CACHE_VAR = "SAND_EMULATOR_CACHE"  # where the installed requirements live (default: ~/.cache/sand/emulator)
_PASSED = ("PATH", "http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")


class RequirementsError(Exception):
    """pip could not install the requirements; the message is one line, ``output`` all of pip's."""

    def __init__(self, message: str, output: str) -> None:
        super().__init__(message)
        self.output = output


def cache_root() -> Path:
    if os.environ.get(CACHE_VAR):
        return Path(os.environ[CACHE_VAR])
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "sand" / "emulator"


def host_pip_setting(name: str) -> str:
    """The index (or CA bundle) this machine's pip uses, as deploy/pip-index.sh gives the platform its own: pip
    runs --isolated, so the index comes from here, not from the machine's pip configuration."""
    value = os.environ.get("PIP_" + name.upper().replace("-", "_"), "")
    if value:
        return value
    try:  # pip's own word (its configuration files), as `pip config list` prints it: section.name='value'
        listed = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, timeout=60
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""  # no pip to ask: pip's default
    values = dict(line.split("=", 1) for line in listed.splitlines() if "=" in line)
    for section in ("install", "global"):
        if f"{section}.{name}" in values:
            return values[f"{section}.{name}"].strip().strip("'\"")
    return ""


def install(app_dir: Path, echo: Callable[[str], None]) -> list[str]:
    """The folders to put on the grain workers' path: the requirements installed once per content and Python."""
    req = app_dir / "requirements.txt"
    if not req.is_file() or not req.read_text().strip():
        return []
    digest = hashlib.sha256(req.read_bytes() + sys.version.encode()).hexdigest()[:16]
    folder = cache_root() / digest
    if folder.is_dir():
        return [str(folder)]
    echo(f"[emulator] installing {req} into {folder}")
    folder.parent.mkdir(parents=True, exist_ok=True)
    cert = host_pip_setting("cert")
    cert = cert if cert and os.path.isfile(cert) else ""
    base = {k: os.environ[k] for k in _PASSED if k in os.environ}
    with tempfile.TemporaryDirectory(prefix=f"{digest}-", dir=folder.parent) as tmp:
        target, out = Path(tmp) / "target", Path(tmp) / "out"
        out.mkdir()
        log = Path(tmp) / "pip.log"
        with log.open("w") as output:
            pip = [sys.executable, "-m", "pip"]
            code = _deps.install(
                pip,
                str(target),
                str(out),
                [str(req)],
                host_pip_setting("index-url"),
                cert,
                "",
                env=_deps.pip_environment("", cert, base),
                output=output,
            )
        if code != 0:
            text = log.read_text().strip()
            errors = [line for line in text.splitlines() if line.startswith("ERROR:")]
            last = (errors or text.splitlines() or ["(no output)"])[-1]
            raise RequirementsError(f"{req} could not be installed: pip install exited with {code}: {last}", text)
        try:
            out.rename(folder)  # whole or not at all: a second emulator may have finished first
        except OSError:
            if not folder.is_dir():
                raise
    return [str(folder)]
