"""The `sand` commands that talk to a SAND deployment: each is a `Client` call (sandclient.client) and what
it prints.

Each `cmd_*` takes the parsed arguments and returns the exit code: 0 done, 1 failed (the message on
stderr as `Error: ...`). Results go to stdout, progress to stderr, so `sand invoke hello '{}' | jq` works.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sandclient._endpoint import invoke_credentials
from sandclient._hints import explain
from sandclient.client import (
    NO_INPUT,
    ApiError,
    Client,
    app_hosts,
    credentials_path,
    load_folder,
    names_app_id,
    without_app_ids,
)

__all__ = [
    "cmd_account",
    "cmd_apps",
    "cmd_deploy",
    "cmd_execution",
    "cmd_grain",
    "cmd_grains",
    "cmd_invoke",
    "cmd_login",
    "cmd_logs",
    "cmd_signup",
    "cmd_status",
    "cmd_undeploy",
    "error",
    "read_json_arg",
]


def error(message: str) -> int:
    print(f"Error: {message}", file=sys.stderr)
    return 1


def info(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def read_json_arg(text: str) -> Any:
    """A JSON value given inline, as @file, or @- for stdin; raises ValueError naming where it failed."""
    source = "the input"
    if text.startswith("@"):
        source = "stdin" if text == "@-" else text[1:]
        text = sys.stdin.read() if text == "@-" else Path(text[1:]).read_text()
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{source} is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None


def _run(fn: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    try:
        return fn(args)
    except ApiError as e:
        return error(explain(args, e))


def _first_line(text: Any) -> str:
    return str(text).strip().splitlines()[0] if text and str(text).strip() else ""


def _scrubbed(value: Any, app: str) -> Any:
    """An error (text, or the error event's JSON) of application `app` with its internal id replaced by `app`."""
    if isinstance(value, str):
        return without_app_ids(value, app)
    if isinstance(value, dict):
        return {k: _scrubbed(v, app) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(v, app) for v in value]
    return value


class _Progress:
    """Shows a Client's progress on stderr: steps one a line; while waiting, one line rewritten in place on
    a terminal (with the seconds waited), else a line per change."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.last = ""
        self.open = False  # a tty line without its newline yet

    def __call__(self, line: str, elapsed_s: float | None) -> None:
        if elapsed_s is None:
            self.end()
            info(line)
            return
        if self.tty:
            print(f"\r{line} {elapsed_s:.0f}s\033[K", end="", file=sys.stderr, flush=True)
            self.open = True
        elif line != self.last:
            info(line)
        self.last = line

    def end(self) -> None:
        if self.open:
            print(file=sys.stderr)
            self.open = False


@contextmanager
def _waiting(app: str) -> Iterator[_Progress]:
    """A progress display for a wait on `app`; a wait that times out says how to go on."""
    progress = _Progress()
    try:
        yield progress
    except ApiError as e:
        if e.status == 0 and e.code == "timeout":
            raise ApiError(0, "timeout", f"{e}; see `sand status {app}`, or wait longer with --timeout") from None
        raise
    finally:
        progress.end()


# --- accounts -------------------------------------------------------------------------------------------------


def _login(args: argparse.Namespace) -> int:
    client = Client(args.url, args.api_key)
    path = client.login()  # a refused key: sandclient._hints says what to do
    print(f"Logged in to {client.url}; credentials stored in {path}")
    return 0


def cmd_login(args: argparse.Namespace) -> int:
    return _run(_login, args)


def _signup(args: argparse.Namespace) -> int:
    import os

    admin = Client(args.url, args.admin_key or os.environ.get("SAND_ADMIN_KEY"))
    account = admin.signup(args.name)
    path = Client(admin.url, account["api_key"]).save_login()
    print(f"Account {account.get('name', args.name)} created at {admin.url}")
    print(f"API key: {account['api_key']}")
    info(f"(stored in {path}; keep it: it is not shown again)")
    return 0


def cmd_signup(args: argparse.Namespace) -> int:
    return _run(_signup, args)


def _account(args: argparse.Namespace) -> int:
    # "delete" is the only subcommand (argparse requires one)
    client = Client.from_login()
    d = client.delete_account(args.name)
    apps = ", ".join(d.get("applications") or []) or "none"
    print(f"account {args.name}: deleted, with its applications ({apps}) and grains")
    path = credentials_path()
    try:
        stored = json.loads(path.read_text())
    except (OSError, ValueError):
        stored = {}
    if stored.get("api_key") == client.api_key:
        path.unlink()
        info(f"(its key is removed from {path})")
    return 0


def cmd_account(args: argparse.Namespace) -> int:
    return _run(_account, args)


# --- deploy / status / undeploy -------------------------------------------------------------------------------


def _deploy(args: argparse.Namespace) -> int:
    folder = load_folder(args.app_dir, name=args.name)
    if args.settings:
        try:
            folder = folder.with_settings(read_json_arg(args.settings))
        except (OSError, ValueError) as e:
            return error(f"settings: {e}")
    client = Client.from_login()
    with _waiting(folder.name) as progress:
        d = client.deploy(folder, wait=not args.no_wait, timeout_s=args.timeout, progress=progress)
    if args.no_wait:
        print(f"{d.name}: deploying" + (f" (version {d.version})" if d.version else ""))
        return 0
    hosts = ", ".join(h for h, _, _ in d.hosts) or "?"
    print(
        f"{d.name}: deployed on {hosts} (version {d.app.get('version', d.version or '?')}) in "
        f"{d.seconds:.1f}s; invoke it with `sand invoke {d.name} '<json>'`"
    )
    return 0


def cmd_deploy(args: argparse.Namespace) -> int:
    return _run(_deploy, args)


def _update(args: argparse.Namespace) -> int:
    client = Client.from_login()
    with _waiting(args.app) as progress:
        d = client.update(
            args.app, args.grains, args.dir, wait=not args.no_wait, timeout_s=args.timeout, progress=progress
        )
    if args.no_wait:
        print(f"{args.app}: updating (version {d.version})")
        return 0
    hosts = ", ".join(h for h, _, _ in app_hosts(d.app)) or "?"
    print(
        f"{args.app}: {', '.join(args.grains)} updated on {hosts} (version {d.app.get('version', d.version)}) in "
        f"{d.seconds:.1f}s"
    )
    return 0


def cmd_update(args: argparse.Namespace) -> int:
    return _run(_update, args)


def _status(args: argparse.Namespace) -> int:
    app = Client.from_login().status(args.app)
    if args.json or not isinstance(app, dict):
        print(json.dumps(app, indent=2))
        return 0
    shape = app.get("shape") if isinstance(app.get("shape"), dict) else {}
    version = f" (version {app['version']})" if app.get("version") is not None else ""
    print(f"app:     {app.get('name', args.app)}")
    print(f"status:  {app.get('status', '?')}{version}")
    if shape:
        asl = " (Amazon States Language)" if shape.get("format") == "asl" else ""
        print(f"entry:   {shape.get('entry', '?')}{asl}")
        grains = [g for g in shape.get("grains") or [] if isinstance(g, dict)]
        named = [
            f"{g.get('name')}" + (f" ({g['resource']})" if g.get("resource") not in (None, g.get("name")) else "")
            for g in grains
        ]
        print(f"grains:  {', '.join(named)}")
    name = str(app.get("name") or args.app)
    hosts = app_hosts(app)
    for h, s, e in hosts:
        print(f"host:    {h} {s}" + (f": {without_app_ids(e, name)}" if e else ""))
    placement = app.get("placement")
    if isinstance(placement, dict):  # placed by the cluster's scheduler (settings max_hosts)
        why = (
            f" ({placement['reason']}, by {placement.get('by')} at {placement.get('at')})"
            if placement.get("reason")
            else ""
        )
        print(f"placed:  {', '.join(placement.get('hosts') or []) or 'every live host'}{why}")
    for t in app.get("triggers") or []:
        if isinstance(t, dict):
            when = t.get("schedule") or f"topic {t.get('topic')}"
            print(f"trigger: {t.get('name')} ({t.get('kind')}, {when})")
    rest = _not_said(str(app.get("error") or ""), hosts)
    if rest:
        print(f"error:   {without_app_ids(rest, name)}")
    return 0


def _not_said(app_error: str, hosts: list[tuple[str, str, str]]) -> str:
    """What the application's `error` says beyond its hosts' errors: the platform builds it from them as
    "<host>: <error>" lines, and pip's message shown twice hides more than it tells."""
    for h, _, e in hosts:
        if e:
            app_error = app_error.replace(f"{h}: {e}", "")
    return app_error.strip()


def cmd_status(args: argparse.Namespace) -> int:
    return _run(_status, args)


def _undeploy(args: argparse.Namespace) -> int:
    client = Client.from_login()
    with _waiting(args.app) as progress:
        client.undeploy(args.app, wait=not args.no_wait, timeout_s=args.timeout, progress=progress)
    if args.delete:
        client.delete(args.app)
        print(f"{args.app}: undeployed and deleted")
    else:
        print(f"{args.app}: undeployed" if not args.no_wait else f"{args.app}: undeploying")
    return 0


def cmd_undeploy(args: argparse.Namespace) -> int:
    return _run(_undeploy, args)


# --- invoke / executions --------------------------------------------------------------------------------------


def _invoke(args: argparse.Namespace) -> int:
    try:
        value = read_json_arg(args.input) if args.input is not None else NO_INPUT
    except (OSError, ValueError) as e:
        return error(str(e))
    client = Client.from_login(need_key=False)
    try:
        creds = invoke_credentials(args)
        r = client.invoke(
            args.app,
            value,
            async_=args.async_,
            timeout_s=args.timeout,
            idempotency_key=getattr(args, "idempotency_key", None),
            **creds,
        )
    except ApiError as e:
        message, exec_id = explain(args, e), e.execution_id
        if not exec_id or exec_id in message:
            return error(message)
        if e.status == 500:  # the platform's own failure
            return error(f"{message} (execution id {exec_id})")
        return error(f"{message} (execution id {exec_id}; `sand logs {exec_id}`)")
    if args.async_:
        print(r.execution_id)
        return 0
    print(json.dumps(_scrubbed(r.output, args.app) if r.error is not None else r.output, indent=2))
    if r.execution_id:
        info(f"execution id: {r.execution_id}")
    return 1 if r.error is not None else 0


def cmd_invoke(args: argparse.Namespace) -> int:
    return _run(_invoke, args)


def _execution(args: argparse.Namespace) -> int:
    body = Client.from_login().execution(args.execution_id)
    if getattr(args, "timings", False):
        print(f"{'at ms':>9} {'+ms':>8}  step (where)")
        for hop in body.get("timings", {}).get("hops", []):
            print(f"{hop['at_ms']:9.3f} {hop['delta_ms']:8.3f}  {hop['step']} ({hop['where']})")
        return 0
    if getattr(args, "instances", False):
        from sandclient._cmd_executions import print_instances  # it imports this module

        print_instances(body)
        return 0
    if isinstance(body, dict) and body.get("error") and body.get("app"):
        body = body | {"error": _scrubbed(body["error"], str(body["app"]))}
    print(json.dumps(body, indent=2))
    return 0


def cmd_execution(args: argparse.Namespace) -> int:
    return _run(_execution, args)


_EXECUTION_ID = re.compile(r"^[0-9a-f]{32}$")
_DURATION = re.compile(r"^(\d+)([smhd])$")


def _since_ms(text: str) -> int:
    """Epoch milliseconds `text` (30s, 10m, 2h, 1d) ago; ValueError naming the forms."""
    m = _DURATION.match(text.strip())
    if not m:
        raise ValueError(f"--since {text!r}: write a duration like 30s, 10m, 2h or 1d")
    seconds = int(m.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
    return int(time.time() * 1000) - seconds * 1000


def _print_execution_lines(app: str, execution: dict[str, Any]) -> None:
    tag = str(execution.get("execution_id", "?"))[:8]
    for line in execution.get("logs") or []:
        text = without_app_ids(str(line.get("text", "")), app)
        print(f"{line.get('time', '')} [{tag} {line.get('grain', '?')}] {line.get('level', 'INFO')}: {text}")
    if execution.get("error"):
        print(
            f"{execution.get('finished') or ''} [{tag}] {execution.get('status')}: "
            f"{without_app_ids(str(execution['error']), app)}"
        )


def _app_logs(client: Client, args: argparse.Namespace) -> int:
    """`sand logs <app>`: the recent executions' lines, oldest first; --follow asks again every 2 s for what
    started since (an execution still running when first shown is shown once, with what it had logged)."""
    try:
        since = _since_ms(args.since)
    except ValueError as e:
        return error(str(e))
    seen: set[str] = set()
    while True:
        body = client.app_logs(args.execution_id, since, limit=100 if args.follow else 20)
        if args.json:
            print(json.dumps(body, indent=2))
        for x in body.get("executions") or []:
            if x.get("execution_id") in seen:
                continue
            seen.add(str(x.get("execution_id")))
            if not args.json:
                _print_execution_lines(args.execution_id, x)
            started = x.get("started")
            if started:
                since = max(since, _epoch_ms(started))
        if not args.follow:
            if not seen:
                info(f"no executions of {args.execution_id} since {args.since} ago")
            return 0
        sys.stdout.flush()
        time.sleep(2)


def _epoch_ms(iso: str) -> int:
    from datetime import datetime

    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def _logs(args: argparse.Namespace) -> int:
    client = Client.from_login()
    if not _EXECUTION_ID.match(args.execution_id):  # an application's name (or an id of another form: tried next)
        try:
            return _app_logs(client, args)
        except KeyboardInterrupt:
            return 0
        except ApiError as e:
            if e.status != 404:
                raise
    if args.json:
        print(json.dumps(client.logs(args.execution_id, raw=True), indent=2))
        return 0
    lines = client.logs(args.execution_id)
    app = _app_of(client, args.execution_id, lines)
    for line in lines:
        if isinstance(line, dict):
            ts = str(line.get("ts") or line.get("time") or "")
            text = line.get("text", line.get("message", ""))
            text = without_app_ids(str(text), app) if app else text
            print(f"{ts + ' ' if ts else ''}[{line.get('grain', '?')}] {line.get('level', 'INFO')}: {text}")
        else:
            print(line)
    return 0


def cmd_logs(args: argparse.Namespace) -> int:
    return _run(_logs, args)


def _app_of(client: Client, execution_id: str, lines: list[Any]) -> str | None:
    """The name of the execution's application when a log line names it by its internal id (a grain's
    traceback of a data-layer error): the logs do not say it, the execution does. None when not needed."""
    if not any(isinstance(x, dict) and names_app_id(str(x.get("text", ""))) for x in lines):
        return None
    try:
        body = client.execution(execution_id)
    except ApiError:
        return None  # the lines are still worth showing as they are
    return str(body["app"]) if isinstance(body, dict) and body.get("app") else None


# --- the account's applications and grains --------------------------------------------------------------------


def _apps(args: argparse.Namespace) -> int:
    client = Client.from_login()
    if args.json:
        print(json.dumps(client.apps(raw=True), indent=2))
        return 0
    rows = client.apps()
    if not rows:
        info("no applications yet: deploy one with `sand deploy <folder>`")
        return 0
    print(f"{'APP':<24} {'STATUS':<12} {'VER':>3}  ERROR")
    for a in rows:
        name = str(a.get("name", "?"))
        err = without_app_ids(_first_line(a.get("error")), name)
        print(f"{name:<24} {str(a.get('status', '?')):<12} {str(a.get('version', '?')):>3}  {err}".rstrip())
    failing = [str(a.get("name")) for a in rows if a.get("error")]
    if failing:
        info(f"the whole error: `sand status {failing[0] if len(failing) == 1 else '<app>'}`")
    return 0


def cmd_apps(args: argparse.Namespace) -> int:
    return _run(_apps, args)


def _grains(args: argparse.Namespace) -> int:
    client = Client.from_login()
    if args.json:
        print(json.dumps(client.grains(args.app, raw=True), indent=2))
        return 0
    rows = client.grains(args.app)
    if not rows:
        info("no grains yet: `sand deploy <folder>` uploads an application's grains")
        return 0
    print(f"{'GRAIN':<24} {'VER':>3}  {'KIND':<4} {'BYTES':>8}  CREATED")
    for g in rows:
        print(
            f"{str(g.get('name', '?')):<24} {str(g.get('version', '?')):>3}  {str(g.get('kind', '?')):<4} "
            f"{str(g.get('size', '?')):>8}  {g.get('created') or '-'}"
        )
    return 0


def cmd_grains(args: argparse.Namespace) -> int:
    return _run(_grains, args)


def _grain(args: argparse.Namespace) -> int:
    # "delete" is the only subcommand (argparse requires one)
    Client.from_login().delete_grain(args.grain, app=args.app)
    print(f"grain {args.grain}{f' of {args.app}' if args.app else ''}: deleted (every version)")
    return 0


def cmd_grain(args: argparse.Namespace) -> int:
    return _run(_grain, args)
