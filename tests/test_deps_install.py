"""grainworker._deps, the one installer of an application's requirements (the platform's install container and the
emulator): an sdist whose build needs a build dependency (langdetect==1.0.9 needs setuptools) installs when the
package index is reachable only through the proxy, as in the install container."""

from __future__ import annotations

import base64
import hashlib
import io
import sys
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from grainworker import _deps

INDEX = "http://localhost:9/simple"  # nothing listens there: only the proxy reaches this index (a secure origin)

BACKEND = """
import base64, hashlib, os, zipfile

def _record(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name = "tinypkg-0.1-py3-none-any.whl"
    files = {
        "tinypkg.py": open("tinypkg.py", "rb").read(),
        "tinypkg-0.1.dist-info/METADATA": b"Metadata-Version: 2.1\\nName: tinypkg\\nVersion: 0.1\\n",
        "tinypkg-0.1.dist-info/WHEEL": b"Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
    }
    record = [_record(n, d) for n, d in files.items()] + ["tinypkg-0.1.dist-info/RECORD,,"]
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as z:
        for n, d in files.items():
            z.writestr(n, d)
        z.writestr("tinypkg-0.1.dist-info/RECORD", "\\n".join(record) + "\\n")
    return name
"""


def _wheel(files: dict[str, bytes]) -> bytes:
    """The tiny build backend's own wheel (the build dependency pip's build isolation must fetch)."""
    files = {
        **files,
        "tinybuild-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tinybuild\nVersion: 1.0\n",
        "tinybuild-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for n, d in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode()
        record.append(f"{n},sha256={digest},{len(d)}")
    record.append("tinybuild-1.0.dist-info/RECORD,,")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for n, d in files.items():
            z.writestr(n, d)
        z.writestr("tinybuild-1.0.dist-info/RECORD", "\n".join(record) + "\n")
    return buf.getvalue()


def _sdist() -> bytes:
    files = {
        "pyproject.toml": b'[build-system]\nrequires = ["tinybuild==1.0"]\nbuild-backend = "tinybuild"\n',
        "PKG-INFO": b"Metadata-Version: 2.1\nName: tinypkg\nVersion: 0.1\n",
        "tinypkg.py": b"HELLO = 'built from an sdist'\n",
    }
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for n, d in files.items():
            info = tarfile.TarInfo(f"tinypkg-0.1/{n}")
            info.size = len(d)
            t.addfile(info, io.BytesIO(d))
    return buf.getvalue()


@pytest.fixture
def proxy() -> Iterator[tuple[str, list[str]]]:
    """A forward proxy that is also the index: it answers any absolute URL of the index's host from memory."""
    files = {
        "/files/tinypkg-0.1.tar.gz": _sdist(),
        "/files/tinybuild-1.0-py3-none-any.whl": _wheel({"tinybuild/__init__.py": BACKEND.encode()}),
    }
    for name, file in (("tinypkg", "tinypkg-0.1.tar.gz"), ("tinybuild", "tinybuild-1.0-py3-none-any.whl")):
        files[f"/simple/{name}/"] = f'<html><body><a href="/files/{file}">{file}</a></body></html>'.encode()
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            seen.append(self.path)
            u = urlsplit(self.path)
            body = files.get(u.path) if u.hostname == urlsplit(INDEX).hostname else None
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Type", "text/html" if u.path.endswith("/") else "application/octet-stream")
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()


def test_an_sdist_whose_build_needs_a_package_installs_through_the_proxy(
    tmp_path: Path, proxy: tuple[str, list[str]]
) -> None:
    url, seen = proxy
    req = tmp_path / "requirements.txt"
    req.write_text("tinypkg==0.1\n")
    target, out = tmp_path / "target", tmp_path / "out"
    out.mkdir()
    code = _deps.install([sys.executable, "-m", "pip"], str(target), str(out), [str(req)], INDEX, "", url)
    assert code == 0
    assert (out / "tinypkg.py").read_text() == "HELLO = 'built from an sdist'\n"
    assert any(p.endswith("/simple/tinybuild/") for p in seen)  # the build isolation's pip went through the proxy


def test_the_build_isolation_pip_gets_the_proxy_and_ca_bundle_from_its_environment() -> None:
    """pip 24 (the image's) starts the build-isolation pip without --proxy and --cert: only these reach it."""
    env = _deps.pip_environment("http://127.0.0.1:9", "/deps/in/ca.pem")
    assert env["PIP_PROXY"] == env["HTTPS_PROXY"] == env["https_proxy"] == "http://127.0.0.1:9"
    assert env["PIP_CERT"] == "/deps/in/ca.pem"
    assert "PIP_PROXY" not in _deps.pip_environment("", "")
    cmd = _deps.pip_command(["pip"], "/t", ["/r.txt"], INDEX, "/ca.pem", "http://127.0.0.1:9")
    assert cmd[:3] == ["pip", "install", "--isolated"]
    assert cmd[cmd.index("--proxy") + 1] == "http://127.0.0.1:9" and cmd[-2:] == ["-r", "/r.txt"]


def test_the_emulator_installs_requirements_with_the_same_installer_into_its_cache(
    tmp_path: Path, proxy: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from sandemu import Emulator, EmulatorError

    url, _ = proxy
    monkeypatch.setenv("SAND_EMULATOR_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PIP_INDEX_URL", INDEX)  # this machine's pip's index, as pip-index.sh reads it
    monkeypatch.setenv("HTTP_PROXY", url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    app = tmp_path / "app"
    app.mkdir()
    (app / "workflow.json").write_text('{"name": "deps", "entry": "g", "functions": [{"name": "g", "next": ["end"]}]}')
    (app / "g.py").write_text("import tinypkg\ndef handle(e, c):\n    return tinypkg.HELLO\n")
    (app / "requirements.txt").write_text("tinypkg==0.1\n")
    with Emulator(app, echo=lambda line: None) as emu:
        assert emu.invoke({})[0] == "built from an sdist"
    installed = list((tmp_path / "cache").glob("*/tinypkg.py"))
    assert len(installed) == 1  # one folder per requirements file and Python, not the host's site-packages
    (app / "requirements.txt").write_text("no-such-package==1.0\n")
    with pytest.raises(
        EmulatorError, match=r"requirements.txt could not be installed: pip install exited with 1: ERROR: "
    ):
        Emulator(app, echo=lambda line: None).start()
