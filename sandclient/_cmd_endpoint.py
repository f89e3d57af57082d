"""`sand endpoint` and `sand keys`: who may call an application's end-user endpoint (docs/api.md, "Protecting an
application's endpoint"). Keys and signing secrets are printed once, on stdout, and never again.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from sandclient._commands import _run, info
from sandclient._endpoint import KEY_ENV, SECRET_ENV
from sandclient.client import Client

__all__ = ["add_endpoint_commands", "add_invoke_options"]


def add_endpoint_commands(sub: Any) -> None:
    p = sub.add_parser("endpoint", help="show or set who may call an application: public, key or hmac")
    p.add_argument("app", help="application name")
    p.add_argument("mode", nargs="?", choices=["public", "key", "hmac"], help="the new mode (none: show it)")
    p.add_argument(
        "--new-secret",
        action="store_true",
        help="create (or rotate) the HMAC signing secret and print it once (done anyway for hmac without one)",
    )
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p.set_defaults(func=lambda a: _run(_endpoint, a))
    keys = sub.add_parser("keys", help="an application's invoke keys: create (printed once), list, revoke")
    what = keys.add_subparsers(dest="keys_command", required=True)
    p = what.add_parser("create", help="create an invoke key; callers send it as X-Sand-Key")
    p.add_argument("app", help="application name")
    p.add_argument("--name", default="", help="a label for the key (letters, digits, . _ -; at most 64)")
    p = what.add_parser("list", help="the keys: id, name, prefix, created (never the key)")
    p.add_argument("app", help="application name")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p = what.add_parser("revoke", help="revoke a key (refused by every frontend within about a second)")
    p.add_argument("app", help="application name")
    p.add_argument("id", help="the key's id (sand keys list)")
    keys.set_defaults(func=lambda a: _run(_keys, a))


def add_invoke_options(p: argparse.ArgumentParser) -> None:
    """`sand invoke`'s credentials for a protected endpoint."""
    p.add_argument("--key", help=f"an invoke key for a protected endpoint (default: ${KEY_ENV})")
    p.add_argument(
        "--idempotency-key",
        metavar="KEY",
        help="a repeat with the same key within a day runs nothing and answers the first execution's result",
    )
    p.add_argument(
        "--sign",
        metavar="SECRET",
        help=f"sign the request with this signing secret (default: ${SECRET_ENV}; prefer it: arguments show in ps)",
    )


def _endpoint(args: argparse.Namespace) -> int:
    client = Client.from_login()
    state = client.endpoint(args.app, args.mode)
    if args.new_secret or (args.mode == "hmac" and not state.get("signing_secret")):
        secret = client.endpoint_call("POST", args.app, "signing-secret")["secret"]
        state = client.endpoint(args.app)
        print(secret)
        info(f"the signing secret of {args.app}, shown only now: keep it, e.g. export {SECRET_ENV}=...")
    if args.json:
        print(json.dumps(state, indent=2))
        return 0
    info(
        f"endpoint of {args.app}: {state['auth']} ({state['keys']} invoke keys, "
        f"signing secret {'set' if state.get('signing_secret') else 'none'})"
    )
    if state.get("note"):
        info(state["note"])
    return 0


def _keys(args: argparse.Namespace) -> int:
    client = Client.from_login()
    if args.keys_command == "create":
        k = client.endpoint_call("POST", args.app, "keys", {"name": args.name} if args.name else None)
        print(k["key"])
        info(f"invoke key {k['id']} of {args.app}, shown only now: callers send it as X-Sand-Key (or {KEY_ENV})")
        return 0
    if args.keys_command == "revoke":
        client.endpoint_call("DELETE", args.app, f"keys/{args.id}")
        info(f"revoked key {args.id} of {args.app}")
        return 0
    rows = client.endpoint_call("GET", args.app, "keys")["keys"]
    if args.json:
        print(json.dumps({"app": args.app, "keys": rows}, indent=2))
    elif not rows:
        info(f"application {args.app} has no invoke keys: `sand keys create {args.app}` makes one")
    else:
        print(f"{'ID':<18} {'NAME':<20} {'PREFIX':<12} CREATED")
        for k in rows:
            print(f"{k['id']:<18} {k['name']:<20} {k['prefix']:<12} {k['created']}")
    return 0
