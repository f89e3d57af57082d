"""`sand trigger add|list|delete` and `sand dead`: events from the world and the events that failed every attempt
(docs/triggers.md)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from sandclient._commands import _run, info, read_json_arg
from sandclient.client import Client, _q

__all__ = ["add_parsers"]


def add_parsers(sub: Any) -> None:
    trigger = sub.add_parser("trigger", help="an application's timers and queue triggers: add, list, delete")
    what = trigger.add_subparsers(dest="trigger_command", required=True)
    p = what.add_parser("add", help="add (or replace) a trigger: --every, --cron or --topic")
    p.add_argument("app", help="application name (deployed)")
    p.add_argument("name", help="the trigger's name (letters, digits, . _ -)")
    kind = p.add_mutually_exclusive_group(required=True)
    kind.add_argument("--every", help="a timer: every 10s, 5m, 1h, 1d (at least 1s)")
    kind.add_argument("--cron", help="a timer: a 5-field cron expression in UTC, e.g. '*/5 * * * *'")
    kind.add_argument("--topic", help="a queue: run the application for each record of this Kafka topic")
    p.add_argument("--input", help="timers: the event each tick sends (JSON, or @file)")
    p.add_argument("--group", help="queues: the consumer group (default: the trigger's own)")
    p.add_argument("--batch-size", type=int, help="queues: records per poll, 1..100 (default 10)")
    p.add_argument("--start", choices=["earliest", "latest"], help="queues: where a new group begins (latest)")
    p.add_argument("--per", choices=["record", "batch"], help="queues: an execution per record (default) or batch")
    p.add_argument("--grain", help="the grain the events go to (an ASL state's grain; default: the workflow's entry)")
    p = what.add_parser("list", help="the application's triggers, with each timer's next tick")
    p.add_argument("app", help="application name")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p = what.add_parser("delete", help="delete a trigger")
    p.add_argument("app", help="application name")
    p.add_argument("name", help="the trigger's name")
    trigger.set_defaults(func=lambda a: _run(_trigger, a))
    p = sub.add_parser("dead", help="an application's dead letters: events that failed every attempt")
    p.add_argument("app", help="application name")
    p.add_argument("--limit", type=int, default=20, help="how many, newest first (default 20, at most 100)")
    p.add_argument("--redrive", metavar="ID", help="run this dead letter's event again, and remove it")
    p.add_argument("--delete", metavar="ID", help="remove this dead letter")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p.set_defaults(func=lambda a: _run(_dead, a))


def _spec(args: argparse.Namespace) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if args.every:
        spec["every"] = args.every
    elif args.cron:
        spec["cron"] = args.cron
    else:
        spec["topic"] = args.topic
    if args.input is not None:
        spec["input"] = read_json_arg(args.input)
    fields = (("group", args.group), ("batch_size", args.batch_size), ("start", args.start), ("grain", args.grain))
    for field, value in fields:
        if value is not None:
            spec[field] = value
    if args.per is not None:
        spec["per"] = args.per
    return spec


def _describe(t: dict[str, Any]) -> str:
    at = f", at grain {t['grain']}" if t.get("grain") else ""
    if t.get("kind") == "timer":
        return f"{t.get('schedule', '')}, next {t.get('next', '?')}{at}"
    lag = f", lag here {t['lag_here']}" if "lag_here" in t else ""
    return f"topic {t.get('topic')} (group {t.get('group')}, batch {t.get('batch_size')}, per {t.get('per')}){lag}{at}"


def _trigger(args: argparse.Namespace) -> int:
    client = Client.from_login()
    if args.trigger_command == "list":
        rows = client.triggers(args.app)
        if args.json:
            print(json.dumps({"app": args.app, "triggers": rows}, indent=2))
        elif not rows:
            info(f"application {args.app} has no triggers: `sand trigger add {args.app} NAME --every 1m` adds one")
        else:
            print(f"{'NAME':<24} {'KIND':<6} {'FROM':<9} WHEN / WHAT")
            for t in rows:
                print(f"{t['name']:<24} {t['kind']:<6} {t.get('origin', ''):<9} {_describe(t)}")
        return 0
    if args.trigger_command == "delete":
        client.delete_trigger(args.app, args.name)
        info(f"deleted trigger {args.name} of {args.app}")
        return 0
    t = client.put_trigger(args.app, args.name, _spec(args))
    info(f"trigger {t['name']} of {args.app}: {t['kind']}, {_describe(t)}")
    return 0


def _dead(args: argparse.Namespace) -> int:
    client = Client.from_login()
    base = f"/api/v1/apps/{_q(args.app)}/dead-letters"
    if args.redrive:
        body = client.call("POST", f"{base}/{_q(args.redrive)}/redrive").body
        info(f"dead letter {args.redrive} runs again as execution {body['execution_id']}")
        return 0
    if args.delete:
        client.call("DELETE", f"{base}/{_q(args.delete)}")
        info(f"deleted dead letter {args.delete}")
        return 0
    page = client.dead_letters(args.app, args.limit)
    rows = page.get("dead_letters") or []
    if args.json:
        print(json.dumps(page, indent=2))
        return 0
    if not rows:
        info(f"application {args.app} has no dead letters")
        return 0
    print(f"{'ID':<22} {'AT':<24} {'SOURCE':<20} {'ATTEMPTS':>8}  ERROR")
    for d in rows:
        err = d.get("error") or {}
        what = f"{err.get('type', '')}: {err.get('message', '')}" if isinstance(err, dict) else str(err)
        print(f"{d['id']:<22} {d['at'][:23]:<24} {d['source'][:20]:<20} {d['attempts']:>8}  {what[:80]}")
    return 0
