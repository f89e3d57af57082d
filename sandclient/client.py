"""The `sand` CLI's side of the REST API: credentials and a small HTTP client (standard library only).

The grain worker never imports this module: it only serves the developer's commands.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ApiError", "Credentials", "Response", "SandClient", "credentials_path", "load_credentials",
           "save_credentials"]

USER_AGENT = "sand-cli/0.1"


class ApiError(Exception):
    """The API answered with an error (or could not be reached: status 0); str() is the message to show."""

    def __init__(self, status: int, code: str, message: str, body: Any = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.body = body
        self.headers = headers or {}


@dataclass(frozen=True)
class Credentials:
    url: str
    api_key: str


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]
    body: Any  # parsed JSON, or the text when the answer is not JSON


def credentials_path() -> Path:
    """$XDG_CONFIG_HOME/sand/credentials.json, by default ~/.config/sand/credentials.json."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "sand" / "credentials.json"


def save_credentials(url: str, api_key: str) -> Path:
    """Write url and key readable by the owner only (0600, folder 0700); returns the file."""
    path = credentials_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        os.fchmod(f.fileno(), 0o600)  # the file may have existed with a wider mode
        json.dump({"url": url, "api_key": api_key}, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
    return path


def load_credentials() -> Credentials:
    """The stored login, with SAND_URL / SAND_API_KEY overriding each part; ApiError if either is missing."""
    stored: dict[str, Any] = {}
    path = credentials_path()
    if path.is_file():
        try:
            stored = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise ApiError(0, "config", f"cannot read {path}: {e}; run `sand login <url> <api-key>` again") from None
    url = os.environ.get("SAND_URL") or stored.get("url") or ""
    key = os.environ.get("SAND_API_KEY") or stored.get("api_key") or ""
    if not url or not key:
        raise ApiError(0, "config", "not logged in: run `sand login <url> <api-key>` (or `sand signup <url> <name>`),"
                                    " or set SAND_URL and SAND_API_KEY")
    return Credentials(url.rstrip("/"), key)


def _parse(raw: bytes, content_type: str) -> Any:
    if not raw:
        return None
    text = raw.decode("utf-8", "replace")
    if "json" in content_type or text[:1] in "{[":
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            pass
    return text


def _error_of(status: int, body: Any, headers: dict[str, str]) -> ApiError:
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict) and isinstance(err.get("message"), str):
        return ApiError(status, str(err.get("code", "")), err["message"], body, headers)
    text = body if isinstance(body, str) and body.strip() else f"HTTP {status}"
    return ApiError(status, "http", f"{text.strip()[:500]} (HTTP {status})", body, headers)


class SandClient:
    """One frontend (or nginx in front of several): `call` sends a request and returns the parsed answer."""

    def __init__(self, url: str, api_key: str | None = None, timeout_s: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self.api_key = api_key
        self.timeout_s = timeout_s

    def call(self, method: str, path: str, body: bytes | str | Any = None, *, content_type: str | None = None,
             query: dict[str, str] | None = None, ok: tuple[int, ...] = (), timeout_s: float | None = None) -> Response:
        """Send; raise ApiError for a status >= 400 unless it is in `ok`. A non-bytes, non-str body is sent
        as JSON."""
        data: bytes | None
        if body is None:
            data = None
        elif isinstance(body, bytes):
            data = body
        elif isinstance(body, str):
            data = body.encode()
        else:
            data = json.dumps(body).encode()
            content_type = content_type or "application/json"
        url = self.url + path + ("?" + urllib.parse.urlencode(query) if query else "")
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("User-Agent", USER_AGENT)
        req.add_header("Accept", "application/json")
        if content_type:
            req.add_header("Content-Type", content_type)
        if self.api_key:
            req.add_header("Authorization", f"Bearer {self.api_key}")
        try:
            with urllib.request.urlopen(req, timeout=timeout_s or self.timeout_s) as r:
                headers = dict(r.headers.items())
                return Response(r.status, headers, _parse(r.read(), r.headers.get("Content-Type", "")))
        except urllib.error.HTTPError as e:
            headers = dict(e.headers.items()) if e.headers else {}
            parsed = _parse(e.read(), headers.get("Content-Type", ""))
            if e.code in ok:
                return Response(e.code, headers, parsed)
            raise _error_of(e.code, parsed, headers) from None
        except urllib.error.URLError as e:
            raise ApiError(0, "unreachable", f"cannot reach {self.url}: {e.reason}; is the frontend running "
                                             "(`make up`), and is the URL right (`sand login`)?") from None
        except TimeoutError:
            raise ApiError(0, "unreachable", f"{method} {path}: no answer from {self.url} within "
                                             f"{timeout_s or self.timeout_s:g}s") from None
