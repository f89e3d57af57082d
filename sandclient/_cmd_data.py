"""`sand data <app> [key]`: a read-only look at an application's key-value data (GET /api/v1/apps/{app}/data)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from sandclient._commands import _run, info
from sandclient.client import Client, _q

__all__ = ["add_parser", "cmd_data"]


def add_parser(sub: Any) -> None:
    p = sub.add_parser("data", help="an application's keys in the data layer (read-only), or one key's value")
    p.add_argument("app", help="application name")
    p.add_argument("key", nargs="?", help="print this key's value")
    p.add_argument("--prefix", default="", help="only keys starting with this")
    p.add_argument("--limit", type=int, default=100, help="how many keys (default 100)")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p.set_defaults(func=cmd_data)


def _data(args: argparse.Namespace) -> int:
    client = Client.from_login()
    path = f"/api/v1/apps/{_q(args.app)}/data"
    if args.key is not None:
        body = client.call("GET", path, query={"key": args.key}).body
        print(json.dumps(body, indent=2) if args.json or body.get("encoding") != "utf-8" else body.get("value"))
        return 0
    keys: list[str] = []
    cursor = None
    while len(keys) < args.limit:
        query = {"prefix": args.prefix, "limit": str(min(1000, args.limit - len(keys)))}
        if cursor:
            query["cursor"] = cursor
        body = client.call("GET", path, query=query).body or {}
        keys += [str(k) for k in body.get("keys") or []]
        cursor = body.get("next")
        if not cursor:
            break
    if args.json:
        print(json.dumps(keys, indent=2))
    elif not keys:
        info(f"no keys{' starting with ' + repr(args.prefix) if args.prefix else ''} in {args.app}'s data layer")
    else:
        print("\n".join(keys))
    return 0


def cmd_data(args: argparse.Namespace) -> int:
    return _run(_data, args)
