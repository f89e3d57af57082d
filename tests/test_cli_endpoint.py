"""`sand endpoint`, `sand keys` and `sand invoke --key/--sign` against the fake REST API of test_cli: keys and
secrets are printed once on stdout, and invoke sends X-Sand-Key or a signature of the exact body."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from sandclient._endpoint import endpoint_headers, signature
from sandclient.cli import main as sand
from tests.test_cli import FakeApi, api, logged_in  # noqa: F401 - pytest fixtures

__all__ = ["api", "logged_in"]


def _header(req: object, name: str) -> str | None:
    headers = {k.lower(): v for k, v in req.headers.items()}
    return headers.get(name.lower())


def test_the_signature_is_hmac_sha256_of_timestamp_dot_body() -> None:
    want = hmac.new(b"sss_x", b"1700000000.{}", hashlib.sha256).hexdigest()
    assert signature("sss_x", 1700000000, b"{}") == "sha256=" + want
    h = endpoint_headers(b"{}", None, "sss_x")
    assert h["X-Sand-Signature"] == signature("sss_x", int(h["X-Sand-Timestamp"]), b"{}")
    assert endpoint_headers(b"{}") == {}
    assert endpoint_headers(b"", "sik_a") == {"X-Sand-Key": "sik_a"}


def test_invoke_sends_the_key_from_the_option_or_the_environment(
    logged_in: FakeApi,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    logged_in.on("POST", "/app/shop", 200, {"ok": True})
    logged_in.on("POST", "/app/shop", 200, {"ok": True})
    assert sand(["invoke", "shop", "{}", "--key", "sik_opt"]) == 0
    assert _header(logged_in.requests[-1], "X-Sand-Key") == "sik_opt"
    monkeypatch.setenv("SAND_INVOKE_KEY", "sik_env")
    assert sand(["invoke", "shop", "{}"]) == 0
    assert _header(logged_in.requests[-1], "X-Sand-Key") == "sik_env"


def test_invoke_signs_the_exact_body_it_sends(
    logged_in: FakeApi,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    logged_in.on("POST", "/app/shop", 200, {"ok": True})
    monkeypatch.setenv("SAND_SIGNING_SECRET", "sss_env")
    assert sand(["invoke", "shop", '{"a": 1}']) == 0
    req = logged_in.requests[-1]
    ts = _header(req, "X-Sand-Timestamp")
    assert ts is not None
    assert _header(req, "X-Sand-Signature") == signature("sss_env", int(ts), req.body)


def test_keys_create_prints_the_key_once_and_list_and_revoke(
    logged_in: FakeApi,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    logged_in.on("POST", "/api/v1/apps/shop/keys", 201, {"id": "0123456789abcdef", "key": "sik_secret"})
    rows = [{"id": "0123456789abcdef", "name": "ci", "prefix": "sik_secr", "created": "2026-01-01T00:00:00Z"}]
    logged_in.on("GET", "/api/v1/apps/shop/keys", 200, {"app": "shop", "keys": rows})
    logged_in.on("DELETE", "/api/v1/apps/shop/keys/0123456789abcdef", 200, {"revoked": True})
    assert sand(["keys", "create", "shop", "--name", "ci"]) == 0
    assert logged_in.requests[-1].json() == {"name": "ci"}
    assert capsys.readouterr().out.strip() == "sik_secret"
    assert sand(["keys", "list", "shop"]) == 0
    out = capsys.readouterr().out
    assert "sik_secr" in out and "sik_secret" not in out
    assert sand(["keys", "revoke", "shop", "0123456789abcdef"]) == 0
    assert "revoked key" in capsys.readouterr().err


def test_endpoint_hmac_creates_a_secret_when_there_is_none(
    logged_in: FakeApi,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    state = {"app": "shop", "auth": "hmac", "keys": 0, "signing_secret": False}
    logged_in.on("PUT", "/api/v1/apps/shop/endpoint", 200, state)
    logged_in.on("POST", "/api/v1/apps/shop/signing-secret", 201, {"secret": "sss_new"})
    logged_in.on("GET", "/api/v1/apps/shop/endpoint", 200, {**state, "signing_secret": True})
    assert sand(["endpoint", "shop", "hmac"]) == 0
    assert logged_in.requests[0].json() == {"auth": "hmac"}
    out = capsys.readouterr()
    assert out.out.strip() == "sss_new"
    assert "signing secret set" in out.err
    with pytest.raises(SystemExit):  # argparse: not a mode
        sand(["endpoint", "shop", "token"])
