"""`sand versions <app>` and `sand rollback <app> [version]` (docs/api.md "Versions and rollback")."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from sandclient._commands import _run, _waiting, error
from sandclient.client import ApiError, Client, _q, app_hosts, without_app_ids

__all__ = ["add_parsers", "cmd_rollback", "cmd_versions"]


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("versions", help="an application's versions (every deploy, update, rollback), newest first")
    p.add_argument("app", help="application name")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p.set_defaults(func=cmd_versions)
    p = sub.add_parser(
        "rollback", help="run an earlier version again (as a new version): its code, workflow, settings, requirements"
    )
    p.add_argument("app", help="application name")
    # dest: `sand --version` is args.to_version already
    p.add_argument(
        "to_version", metavar="version", nargs="?", type=int, help="the version to run again (default: the one before)"
    )
    p.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for deployed/failed")
    p.set_defaults(func=cmd_rollback)


def _versions(args: argparse.Namespace) -> int:
    body = Client.from_login().call("GET", f"/api/v1/apps/{_q(args.app)}/versions").body
    if args.json:
        print(json.dumps(body, indent=2))
        return 0
    print(f"{'VER':>4}  {'CREATED':<24}  DESCRIPTION")
    for v in (body or {}).get("versions") or []:
        mark = "*" if v.get("running") else " "
        print(f"{v.get('version', '?'):>3}{mark}  {v.get('created', '?'):<24}  {v.get('description', '')}")
    return 0


def cmd_versions(args: argparse.Namespace) -> int:
    return _run(_versions, args)


def _rollback(args: argparse.Namespace) -> int:
    client = Client.from_login()
    start = time.monotonic()
    body = {} if args.to_version is None else {"version": args.to_version}
    r = client.call("POST", f"/api/v1/apps/{_q(args.app)}/rollback", body, content_type="application/json")
    version = r.body.get("version") if isinstance(r.body, dict) else None
    with _waiting(args.app) as progress:
        app = client.wait(args.app, "deployed", args.timeout, version if isinstance(version, int) else None, progress)
    problem = app.get("error") or "; ".join(f"{h}: {e}" for h, _, e in app_hosts(app) if e)
    if app.get("status") != "deployed" or problem:
        raise ApiError(
            0, "failed", f"rollback of {args.app} failed: {without_app_ids(problem or 'no error', args.app)}"
        )
    hosts = ", ".join(h for h, _, _ in app_hosts(app)) or "?"
    what = f"version {args.to_version}" if args.to_version is not None else "the version before"
    print(f"{args.app}: {what} runs again as version {version} on {hosts} in {time.monotonic() - start:.1f}s")
    return 0


def cmd_rollback(args: argparse.Namespace) -> int:
    if args.to_version is not None and args.to_version < 1:
        return error(f"version {args.to_version}: versions are 1, 2, 3, ... (`sand versions {args.app}`)")
    return _run(_rollback, args)
