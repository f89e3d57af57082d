"""`sand alias set|list|delete`: an application's aliases (docs/api.md "Aliases").

An alias names a version (`sand alias set hello prod 3`), optionally with a second version taking a share of the
requests (`--canary 4 --weight 0.1`); end users call it as `POST /app/hello@prod` (`sand invoke hello@prod`).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from sandclient._commands import _run, error, info
from sandclient.client import Client, _q

__all__ = ["add_alias_commands", "cmd_alias"]


def add_alias_commands(sub: Any) -> None:
    alias = sub.add_parser("alias", help="an application's aliases (app@alias): set, list, delete")
    what = alias.add_subparsers(dest="alias_command", required=True)
    p = what.add_parser("set", help="point an alias at a version, optionally with a canary version taking a share")
    p.add_argument("app", help="application name")
    p.add_argument("alias", help="the alias's name (1-32 of a-z 0-9 _ -, starting with a letter), e.g. prod")
    p.add_argument("to_version", metavar="version", type=int, help="the version it runs (sand versions <app>)")
    p.add_argument("--canary", type=int, help="a second version taking --weight of the requests")
    p.add_argument("--weight", type=float, help="the canary's share of the requests, 0..1 (e.g. 0.1)")
    p = what.add_parser("list", help="the application's aliases, their versions and weights")
    p.add_argument("app", help="application name")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p = what.add_parser("delete", help="delete an alias (app@alias answers 404 after)")
    p.add_argument("app", help="application name")
    p.add_argument("alias", help="the alias's name")
    alias.set_defaults(func=cmd_alias)


def _describe(a: dict[str, Any]) -> str:
    weights = a.get("weights") or {}
    split = "".join(f" + version {v} ({float(w):.0%})" for v, w in weights.items())
    note = "" if a.get("serves", True) else "  (answers 409: " + str(a.get("note", "")) + ")"
    return f"{a.get('name')} -> version {a.get('version')}{split}{note}"


def _alias(args: argparse.Namespace) -> int:
    client = Client.from_login()
    base = f"/api/v1/apps/{_q(args.app)}/aliases"
    if args.alias_command == "list":
        listed = client.call("GET", base).body or {}
        if args.json:
            print(json.dumps(listed, indent=2))
        elif not listed.get("aliases"):
            info(f"application {args.app} has no aliases: `sand alias set {args.app} prod <version>` adds one")
        else:
            for a in listed["aliases"]:
                print(_describe(a))
        return 0
    if args.alias_command == "delete":
        client.call("DELETE", f"{base}/{_q(args.alias)}")
        print(f"{args.app}: alias {args.alias} deleted")
        return 0
    body: dict[str, Any] = {"version": args.to_version}
    if args.canary is not None:
        body["weights"] = {str(args.canary): args.weight}
    r = client.call("PUT", f"{base}/{_q(args.alias)}", body, content_type="application/json")
    print(f"{args.app}: {_describe(r.body if isinstance(r.body, dict) else {})}")
    return 0


def cmd_alias(args: argparse.Namespace) -> int:
    if args.alias_command == "set":
        if (args.canary is None) != (args.weight is None):
            return error("--canary and --weight go together: --canary <version> --weight 0.1")
        if args.weight is not None and not 0 <= args.weight <= 1:
            return error(f"--weight {args.weight}: a share of the requests, from 0 to 1")
    return _run(_alias, args)
