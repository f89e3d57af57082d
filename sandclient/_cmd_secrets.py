"""`sand secret set|list|delete`: an application's secrets (docs/security.md, "Secrets").

A value is read from a hidden prompt on a terminal, else from stdin, or from --from-file; it is never echoed,
never an argument (a command line is visible to every user of the machine in `ps`), and never printed back.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from pathlib import Path
from typing import Any

from sandclient._commands import _run, error, info
from sandclient.client import Client

__all__ = ["add_secret_commands"]


def add_secret_commands(sub: Any) -> None:
    secret = sub.add_parser("secret", help="an application's secrets: set (hidden prompt or stdin), list, delete")
    what = secret.add_subparsers(dest="secret_command", required=True)
    p = what.add_parser("set", help="set a secret; it reaches the grains at the next deploy (sand deploy <app>)")
    p.add_argument("app", help="application name")
    p.add_argument("name", help="the secret's name, as an environment variable (e.g. API_TOKEN)")
    p.add_argument("--from-file", help="read the value from this file (as is, but one trailing newline dropped)")
    p = what.add_parser("list", help="the application's secrets: name, bytes, updated (never the values)")
    p.add_argument("app", help="application name")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p = what.add_parser("delete", help="delete a secret; the running sandbox keeps it until the next deploy")
    p.add_argument("app", help="application name")
    p.add_argument("name", help="the secret's name")
    secret.set_defaults(func=cmd_secret)


def _chomp(text: str) -> str:
    return text[:-2] if text.endswith("\r\n") else text[:-1] if text.endswith("\n") else text


def read_value(args: argparse.Namespace) -> str:
    """The secret's value: --from-file, else a hidden prompt on a terminal, else stdin."""
    if args.from_file:
        return _chomp(Path(args.from_file).read_text(encoding="utf-8"))
    if sys.stdin.isatty():
        return getpass.getpass(f"value of {args.name} (not shown): ")
    return _chomp(sys.stdin.read())


def _secret(args: argparse.Namespace) -> int:
    client = Client.from_login()
    if args.secret_command == "list":
        rows = client.secrets(args.app)
        if args.json:
            print(json.dumps({"app": args.app, "secrets": rows}, indent=2))
        elif not rows:
            info(f"application {args.app} has no secrets: `sand secret set {args.app} NAME` adds one")
        else:
            print(f"{'NAME':<32} {'BYTES':>6}  UPDATED")
            for s in rows:
                print(f"{s['name']:<32} {s['bytes']:>6}  {s['updated']}")
        return 0
    if args.secret_command == "delete":
        client.delete_secret(args.app, args.name)
        info(f"deleted secret {args.name} of {args.app}; takes effect at the next deploy (sand deploy <folder>)")
        return 0
    try:
        value = read_value(args)
    except (OSError, UnicodeDecodeError) as e:
        return error(f"cannot read the value of {args.name}: {e}")
    if not value:
        return error(f"the value of {args.name} is empty: give it on stdin, at the prompt, or with --from-file")
    answer = client.set_secret(args.app, args.name, value)
    info(
        f"set secret {args.name} of {args.app} ({answer.get('bytes')} bytes, stored encrypted); "
        f"takes effect at the next deploy (sand deploy <folder>)"
    )
    return 0


def cmd_secret(args: argparse.Namespace) -> int:
    return _run(_secret, args)
