"""`sand bucket create|list|show|delete|bind|unbind`: triggerable buckets, whose writes start applications
(docs/data-triggers.md)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from sandclient._commands import _run, info
from sandclient.client import Client

__all__ = ["add_parsers"]


def add_parsers(sub: Any) -> None:
    bucket = sub.add_parser("bucket", help="triggerable buckets: a grain's write into one starts applications")
    what = bucket.add_subparsers(dest="bucket_command", required=True)
    p = what.add_parser("create", help="create a bucket of your account")
    p.add_argument("bucket", help="the bucket's name (letters, digits, . _ -)")
    p = what.add_parser("list", help="your account's buckets and the applications each starts")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p = what.add_parser("show", help="one bucket and its targets")
    p.add_argument("bucket")
    p = what.add_parser("delete", help="delete a bucket (its targets are no longer started)")
    p.add_argument("bucket")
    p = what.add_parser("bind", help="a write into the bucket starts this application (deployed)")
    p.add_argument("bucket")
    p.add_argument("app", help="your application's name")
    p.add_argument(
        "--when-deployed", action="store_true", help="accept an undeployed application: it fires once deployed"
    )
    p = what.add_parser("unbind", help="a write into the bucket no longer starts this application")
    p.add_argument("bucket")
    p.add_argument("app")
    bucket.set_defaults(func=lambda a: _run(_bucket, a))


def _targets(b: dict[str, Any]) -> str:
    names = [t["app"] + ("" if t.get("deployed") else " (not deployed)") for t in b.get("targets") or []]
    return ", ".join(names) or "-"


def _bucket(args: argparse.Namespace) -> int:
    client = Client.from_login()
    cmd = args.bucket_command
    if cmd == "list":
        rows = client.buckets()
        if args.json:
            print(json.dumps({"buckets": rows}, indent=2))
        elif not rows:
            info("your account has no buckets: `sand bucket create NAME` creates one")
        else:
            print(f"{'BUCKET':<32} TARGETS")
            for b in rows:
                print(f"{b['name']:<32} {_targets(b)}")
        return 0
    if cmd == "show":
        print(json.dumps(client.bucket(args.bucket), indent=2))
        return 0
    if cmd == "create":
        b = client.put_bucket(args.bucket)
        info(f"bucket {b['name']}: targets {_targets(b)}")
        return 0
    if cmd == "delete":
        client.delete_bucket(args.bucket)
        info(f"deleted bucket {args.bucket}")
        return 0
    if cmd == "bind":
        b = client.put_bucket_target(args.bucket, args.app, args.when_deployed)
    else:
        b = client.delete_bucket_target(args.bucket, args.app)
    info(f"bucket {b['name']}: targets {_targets(b)}")
    return 0
