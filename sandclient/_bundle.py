"""What `Client.deploy` (and so `sand deploy`) uploads from an application folder: one grain code per
resource of the workflow.

A folder with only `workflow.json` and `<resource>.py` files uploads each file as `text/x-python`. A
folder that also holds `requirements.txt` or other files the grains read (e.g. `examples/webserver/site/`,
or a helper module) needs zips. On a host every zip of an application unpacks into the same code folder
and a file may come from one resource only (docs/host-agent.md, "The application's folder"), so the
shared files and `requirements.txt` ride in ONE zip, the entry grain's resource; the other resources
stay plain `.py` uploads (or a zip of their own package folder).
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path

from grainworker.workflow import Workflow

__all__ = ["BundleError", "Upload", "bundle"]

PYTHON = "text/x-python"
ZIP = "application/zip"
# Never uploaded: the folder's description of itself and what tools leave behind.
SKIP_FILES = {"workflow.json", "settings.json"}
SKIP_DIRS = {"__pycache__", "node_modules"}
# A fixed timestamp keeps a zip's bytes (and so its sha256) the same for the same files.
ZIP_DATE = (2020, 1, 1, 0, 0, 0)


class BundleError(ValueError):
    """The folder cannot be uploaded as it is; the message says what to fix."""


@dataclass(frozen=True)
class Upload:
    resource: str
    content_type: str
    body: bytes
    files: tuple[str, ...]  # what is in it, relative to the app folder (for the progress lines)

    def requirements(self) -> str:
        """The zip's top-level requirements.txt ("" for a .py grain or a zip without one): what the platform
        installs for this grain."""
        if self.content_type != ZIP:
            return ""
        with zipfile.ZipFile(io.BytesIO(self.body)) as z:
            try:
                return z.read("requirements.txt").decode("utf-8", "replace")
            except KeyError:
                return ""


def _skipped(rel: Path) -> bool:
    parts = rel.parts
    return (
        any(p.startswith(".") or p in SKIP_DIRS for p in parts)
        or rel.suffix in (".pyc", ".pyo")
        or (len(parts) == 1 and (rel.name in SKIP_FILES or rel.name.upper().startswith("README")))
    )


def _files(d: Path) -> list[Path]:
    return sorted(p.relative_to(d) for p in d.rglob("*") if p.is_file() and not _skipped(p.relative_to(d)))


def _zip(d: Path, files: list[Path]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for rel in files:
            info = zipfile.ZipInfo(rel.as_posix(), ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, (d / rel).read_bytes())
    return buf.getvalue()


def bundle(app_dir: str | Path, wf: Workflow) -> list[Upload]:
    """The uploads for every resource the workflow names, the entry grain's resource first."""
    d = Path(app_dir)
    codes = [g.code for g in wf.grains.values() if g.code]  # "": an ASL state that runs built-in code
    entry = wf.grain(wf.entry).code or (codes[0] if codes else "")
    resources = ([entry] if entry else []) + sorted(set(codes) - {entry})
    own: dict[str, list[Path]] = {}
    for r in resources:
        if (d / f"{r}.py").is_file():
            own[r] = [Path(f"{r}.py")]
        elif (d / r / "__init__.py").is_file():
            own[r] = [f for f in _files(d) if f.parts[0] == r]
        else:
            users = sorted(g.name for g in wf.grains.values() if g.code == r)
            raise BundleError(
                f"grain(s) {', '.join(users)} run code {r!r} but neither {d / (r + '.py')} nor "
                f"{d / r / '__init__.py'} exists"
            )
    taken = {f for fs in own.values() for f in fs}
    shared = [f for f in _files(d) if f not in taken]
    uploads = []
    for r in resources:
        files = own[r] + (shared if r == entry else [])
        if len(files) == 1 and files[0].suffix == ".py" and files[0].parent == Path("."):
            uploads.append(Upload(r, PYTHON, (d / files[0]).read_bytes(), (files[0].as_posix(),)))
        else:
            uploads.append(Upload(r, ZIP, _zip(d, files), tuple(f.as_posix() for f in files)))
    return uploads
