"""`sand executions <app>`: an application's executions, newest first (GET /api/v1/apps/{app}/executions)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from sandclient._commands import _first_line, _run, _since_ms, error, info
from sandclient.client import Client, _q, without_app_ids

__all__ = ["add_parser", "cmd_executions", "print_instances"]


def add_parser(sub: Any) -> None:
    p = sub.add_parser("executions", help="an application's executions, newest first: id, status, start, duration")
    p.add_argument("app", help="application name")
    p.add_argument("--status", choices=["running", "succeeded", "failed", "timeout"], help="only those in this state")
    p.add_argument("--since", default="1d", help="started this long ago or later: 30s, 10m, 2h, 1d (default 1d)")
    p.add_argument("--limit", type=int, default=20, help="how many (default 20; more than 100 takes several pages)")
    p.add_argument("--json", action="store_true", help="print the API's JSON (every page's executions)")
    p.set_defaults(func=cmd_executions)


def list_executions(client: Client, app: str, *, status: str | None, since_ms: int, limit: int) -> list[dict[str, Any]]:
    """Up to `limit` executions of `app`, newest first, following the API's pages."""
    out: list[dict[str, Any]] = []
    cursor: str | None = None
    while len(out) < limit:
        query = {"since": str(since_ms), "limit": str(min(100, limit - len(out)))}
        if status:
            query["status"] = status
        if cursor:
            query["cursor"] = cursor
        body = client.call("GET", f"/api/v1/apps/{_q(app)}/executions", query=query).body
        body = body if isinstance(body, dict) else {}
        out.extend(e for e in body.get("executions") or [] if isinstance(e, dict))
        cursor = body.get("next")
        if not cursor:
            break
    return out[:limit]


def _said(error: Any) -> Any:
    """An execution's error as a person reads it: "ValueError: bad input" for the error event's JSON."""
    try:
        e = json.loads(error) if isinstance(error, str) else error
    except ValueError:
        return error
    if isinstance(e, dict) and "type" in e:
        return f"{e['type']}: {e.get('message', '')}"
    return error


def _executions(args: argparse.Namespace) -> int:
    if args.limit < 1:
        return error(f"--limit {args.limit}: give a number of executions, 1 or more")
    try:
        since = _since_ms(args.since)
    except ValueError as bad:
        return error(str(bad))
    rows = list_executions(Client.from_login(), args.app, status=args.status, since_ms=since, limit=args.limit)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        info(
            f"no executions of {args.app} since {args.since} ago{' with status ' + args.status if args.status else ''}"
        )
        return 0
    print(f"{'EXECUTION':<32}  {'STATUS':<9}  {'STARTED':<24}  {'TOOK':>10}  ERROR")
    for e in rows:
        ms = e.get("duration_ms")
        took = f"{ms:.1f}ms" if isinstance(ms, int | float) else "-"
        err = without_app_ids(_first_line(_said(e.get("error"))), args.app)[:80]
        started = e.get("started") or "-"
        row = f"{e.get('execution_id', '?'):<32}  {e.get('status', '?'):<9}  {started:<24}  {took:>10}  {err}"
        print(row.rstrip())
    return 0


def cmd_executions(args: argparse.Namespace) -> int:
    return _run(_executions, args)


def print_instances(body: dict[str, Any]) -> None:
    """`sand execution <id> --instances`: one line per grain instance (a fan-out's branches and items too), with its
    parent's row number and, in a Parallel or Map, the state and branch or item."""
    print(f"{'#':>4} {'parent':>6} {'polled ms':>10} {'ended ms':>10}  {'host':<12} grain")
    for row in body.get("instances", []):
        parent = "-" if row.get("parent") is None else str(row["parent"])
        where = next((f" ({row['state']} {k} {row[k]})" for k in ("item", "branch") if k in row), "")
        host = row.get("host") or "-"
        times = f"{row['polled_ms']:10.3f} {row['ended_ms']:10.3f}"
        print(f"{row['instance']:>4} {parent:>6} {times}  {host:<12} {row['grain']}{where}")
