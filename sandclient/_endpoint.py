"""The credentials of a protected end-user endpoint (docs/api.md, "Protecting an application's endpoint").

An invoke key goes in X-Sand-Key; a signed request carries X-Sand-Timestamp (unix seconds) and X-Sand-Signature,
`sha256=` and the hex HMAC-SHA256 of "<timestamp>.<raw body>" under the endpoint's signing secret.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import os
import time

__all__ = [
    "KEY_ENV",
    "KEY_HEADER",
    "SECRET_ENV",
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "endpoint_headers",
    "invoke_credentials",
    "signature",
]

KEY_HEADER = "X-Sand-Key"
TIMESTAMP_HEADER = "X-Sand-Timestamp"
SIGNATURE_HEADER = "X-Sand-Signature"
KEY_ENV = "SAND_INVOKE_KEY"
SECRET_ENV = "SAND_SIGNING_SECRET"


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """`sha256=<hex>` of "<timestamp>.<body>" under `secret`: what X-Sand-Signature carries."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def endpoint_headers(body: bytes, key: str | None = None, secret: str | None = None) -> dict[str, str]:
    """The headers a request with `body` needs for an invoke key and/or a signing secret (none: {})."""
    headers: dict[str, str] = {}
    if key:
        headers[KEY_HEADER] = key
    if secret:
        ts = int(time.time())
        headers[TIMESTAMP_HEADER] = str(ts)
        headers[SIGNATURE_HEADER] = signature(secret, ts, body)
    return headers


def invoke_credentials(args: argparse.Namespace) -> dict[str, str | None]:
    """The key and signing secret `sand invoke` sends: its options, else the environment."""
    return {
        "key": getattr(args, "key", None) or os.environ.get(KEY_ENV) or None,
        "sign": getattr(args, "sign", None) or os.environ.get(SECRET_ENV) or None,
    }
