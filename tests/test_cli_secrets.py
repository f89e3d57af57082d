"""`sand secret set|list|delete` against the fake REST API of test_cli: the value goes in the body, never on the
command line, never printed."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from sandclient.cli import main as sand
from tests.test_cli import FakeApi, api, logged_in  # noqa: F401 - pytest fixtures

__all__ = ["api", "logged_in"]


def test_set_reads_stdin_sends_the_value_and_never_prints_it(
    logged_in: FakeApi,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    logged_in.on("PUT", "/api/v1/apps/shop/secrets/API_TOKEN", 200, {"name": "API_TOKEN", "bytes": 7})
    monkeypatch.setattr("sys.stdin", io.StringIO("hunter2\n"))
    assert sand(["secret", "set", "shop", "API_TOKEN"]) == 0
    [req] = logged_in.requests
    assert req.method == "PUT" and req.json() == {"value": "hunter2"}
    out = capsys.readouterr()
    assert "hunter2" not in out.out + out.err
    assert "takes effect at the next deploy" in out.err


def test_set_from_a_file_and_an_empty_value_is_refused(
    logged_in: FakeApi,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    logged_in.on("PUT", "/api/v1/apps/shop/secrets/KEY", 200, {"name": "KEY", "bytes": 3})
    f = tmp_path / "key.pem"
    f.write_text("abc\n")
    assert sand(["secret", "set", "shop", "KEY", "--from-file", str(f)]) == 0
    assert logged_in.requests[-1].json() == {"value": "abc"}
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert sand(["secret", "set", "shop", "KEY"]) == 1
    assert "is empty" in capsys.readouterr().err
    assert len(logged_in.requests) == 1


def test_list_and_delete(logged_in: FakeApi, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    rows = [{"name": "API_TOKEN", "bytes": 7, "updated": "2026-01-01T00:00:00Z"}]
    logged_in.on("GET", "/api/v1/apps/shop/secrets", 200, {"app": "shop", "secrets": rows})
    logged_in.on("DELETE", "/api/v1/apps/shop/secrets/API_TOKEN", 200, {"deleted": True})
    assert sand(["secret", "list", "shop"]) == 0
    assert "API_TOKEN" in capsys.readouterr().out
    assert sand(["secret", "delete", "shop", "API_TOKEN"]) == 0
    assert "deleted secret API_TOKEN" in capsys.readouterr().err
    assert sand(["secret", "delete", "shop", "NOPE"]) == 1  # the API's 404, said on stderr
    assert "Error:" in capsys.readouterr().err
