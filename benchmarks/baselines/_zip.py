"""Zip actions for the baselines, as OpenWhisk's: the function's files at the zip's root and the Python packages it
needs in ``packages/`` (what ``pip install --target`` makes), unpacked in the container by the action server."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

__all__ = ["zip_action"]

ZIP_DATE = (2020, 1, 1, 0, 0, 0)  # fixed: the same files give the same bytes
SKIP_DIRS = {"__pycache__"}


def _add(z: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, ZIP_DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    z.writestr(info, data, compresslevel=1)  # level 1: most of the size gain, a fraction of the time


def zip_action(files: dict[str, Path | bytes], packages: Path | None = None) -> bytes:
    """The zip of a function: ``files`` (name in the zip -> a file, or its bytes) at the root, and every file under
    ``packages`` (a ``pip install --target`` folder; ``__pycache__`` and ``bin/`` left out) under ``packages/``."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, src in sorted(files.items()):
            _add(z, name, src if isinstance(src, bytes) else Path(src).read_bytes())
        if packages is not None:
            root = Path(packages)
            if not root.is_dir():
                raise FileNotFoundError(f"packages folder {root} does not exist")
            for path in sorted(p for p in root.rglob("*") if p.is_file()):
                rel = path.relative_to(root)
                if rel.parts[0] == "bin" or SKIP_DIRS & set(rel.parts):
                    continue  # console scripts name the host's python; caches are rebuilt
                _add(z, f"packages/{rel.as_posix()}", path.read_bytes())
    return buf.getvalue()
