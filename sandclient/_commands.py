"""The `sand` commands that talk to a SAND deployment: each is a `Client` call (sandclient.client) and what
it prints.

Each `cmd_*` takes the parsed arguments and returns the exit code: 0 done, 1 failed (the message on
stderr as `Error: ...`). Results go to stdout, progress to stderr, so `sand invoke hello '{}' | jq` works.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sandclient.client import NO_INPUT, ApiError, Client, app_hosts, load_folder

__all__ = ["cmd_admin", "cmd_deploy", "cmd_execution", "cmd_invoke", "cmd_login", "cmd_logs", "cmd_signup",
           "cmd_status", "cmd_undeploy", "error", "read_json_arg"]


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
        return error(str(e))


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
    try:
        path = client.login()
    except ApiError as e:
        if e.status in (401, 403):
            return error(f"{args.url} refused the API key: {e}")
        raise
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


# --- the operator's commands ------------------------------------------------------------------------------------

def admin_client(args: argparse.Namespace) -> Client:
    """A client with the operator's admin key: --admin-key, $SAND_ADMIN_KEY, --admin-key-file, or the file `make up`
    writes ($SAND_HOME/admin-key, .sand/admin-key here); the address from --url, $SAND_URL or the stored login."""
    import os

    key = args.admin_key or os.environ.get("SAND_ADMIN_KEY", "")
    files = [args.admin_key_file] if args.admin_key_file else [
        str(Path(os.environ["SAND_HOME"]) / "admin-key") if os.environ.get("SAND_HOME") else "", ".sand/admin-key"]
    for f in filter(None, files):
        if not key and Path(f).is_file():
            key = Path(f).read_text().strip()
    if not key:
        raise ApiError(0, "config", "no admin key: pass --admin-key, set SAND_ADMIN_KEY, or --admin-key-file "
                       "$SAND_HOME/admin-key (make up writes it there)")
    url = args.url or os.environ.get("SAND_URL", "")
    if not url:
        try:
            url = Client.from_login().url
        except ApiError:
            raise ApiError(0, "config", "no SAND address: pass --url http://127.0.0.1:8080 or set SAND_URL") from None
    return Client(url, key)


def _admin(args: argparse.Namespace) -> int:
    client = admin_client(args)
    if args.admin_command == "apps":
        rows = client.admin_apps()
        if args.json:
            print(json.dumps(rows, indent=2))
            return 0
        print(f"{'APP':<24} {'OWNER':<16} {'STATUS':<12} {'VER':>3}  HOSTS / ERROR")
        for a in rows:
            hosts = " ".join(f"{h}:{s}" for h, s, _ in app_hosts(a)) or "-"
            error_line = (a.get("error") or "").splitlines()[0][:100] if a.get("error") else ""
            print(f"{a['name']:<24} {a['owner']:<16} {a['status']:<12} {a['version']:>3}  {hosts}"
                  + (f"  {error_line}" if error_line else ""))
    elif args.admin_command == "hosts":
        rows = client.admin_hosts()
        if args.json:
            print(json.dumps(rows, indent=2))
            return 0
        print(f"{'HOST':<12} {'ALIVE':<6} {'HEARTBEAT':<26} SANDBOXES")
        for h in rows:
            boxes = " ".join(f"{s['app']}:{s['status']}" for s in h["sandboxes"]) or "-"
            print(f"{h['host']:<12} {'yes' if h['alive'] else 'NO':<6} {h['heartbeat'] or '-':<26} {boxes}")
    elif args.admin_command == "undeploy":
        a = client.admin_undeploy(args.app)
        print(f"{a['name']} (account {a['owner']}): {a['status']}")
    elif args.admin_command == "disable":
        d = client.admin_disable(args.account, args.reason or "")
        print(f"account {d['account']}: disabled ({d['reason']}); undeployed: {', '.join(d['undeployed']) or 'none'}")
    else:
        client.admin_enable(args.account)
        print(f"account {args.account}: enabled (its applications stay undeployed: `sand deploy` them again)")
    return 0


def cmd_admin(args: argparse.Namespace) -> int:
    return _run(_admin, args)


# --- deploy / status / undeploy -------------------------------------------------------------------------------

def _deploy(args: argparse.Namespace) -> int:
    folder = load_folder(args.app_dir, name=args.name)
    if args.settings:
        try:
            folder = folder.with_settings(read_json_arg(args.settings))
        except (OSError, ValueError) as e:
            return error(f"settings: {e}")
    client = Client.from_login()
    try:
        with _waiting(folder.name) as progress:
            d = client.deploy(folder, wait=not args.no_wait, timeout_s=args.timeout, progress=progress)
    except ApiError as e:
        if e.status == 409 and e.method == "PUT" and e.path.startswith("/api/v1/apps/"):
            # names are global: say how to pick another
            return error(f"{e}; deploy under another name with `sand deploy {args.app_dir} --name <name>`")
        raise
    if args.no_wait:
        print(f"{d.name}: deploying" + (f" (version {d.version})" if d.version else ""))
        return 0
    hosts = ", ".join(h for h, _, _ in d.hosts) or "?"
    print(f"{d.name}: deployed on {hosts} (version {d.app.get('version', d.version or '?')}) in "
          f"{d.seconds:.1f}s; invoke it with `sand invoke {d.name} '<json>'`")
    return 0


def cmd_deploy(args: argparse.Namespace) -> int:
    return _run(_deploy, args)


def _status(args: argparse.Namespace) -> int:
    app = Client.from_login().status(args.app)
    if args.json or not isinstance(app, dict):
        print(json.dumps(app, indent=2))
        return 0
    wf = app.get("workflow") if isinstance(app.get("workflow"), dict) else {}
    version = f" (version {app['version']})" if app.get("version") is not None else ""
    print(f"app:     {app.get('name', args.app)}")
    print(f"status:  {app.get('status', '?')}{version}")
    if wf:
        print(f"entry:   {wf.get('entry', '?')}")
        print(f"grains:  {', '.join(str(f.get('name')) for f in wf.get('functions', []) if isinstance(f, dict))}")
    for h, s, e in app_hosts(app):
        print(f"host:    {h} {s}" + (f": {e}" if e else ""))
    if app.get("error"):
        print(f"error:   {app['error']}")
    return 0


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
        r = client.invoke(args.app, value, async_=args.async_, timeout_s=args.timeout)
    except ApiError as e:
        exec_id = e.execution_id
        if e.status == 500:  # the platform's own failure
            return error(f"{e}" + (f" (execution id {exec_id})" if exec_id else ""))
        return error(f"{e}" + (f" (execution id {exec_id}; `sand logs {exec_id}`)" if exec_id else ""))
    if args.async_:
        print(r.execution_id)
        return 0
    print(json.dumps(r.output, indent=2))
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
    print(json.dumps(body, indent=2))
    return 0


def cmd_execution(args: argparse.Namespace) -> int:
    return _run(_execution, args)


def _logs(args: argparse.Namespace) -> int:
    client = Client.from_login()
    if args.json:
        print(json.dumps(client.logs(args.execution_id, raw=True), indent=2))
        return 0
    for line in client.logs(args.execution_id):
        if isinstance(line, dict):
            ts = str(line.get("ts") or line.get("time") or "")
            text = line.get("text", line.get("message", ""))
            print(f"{ts + ' ' if ts else ''}[{line.get('grain', '?')}] {line.get('level', 'INFO')}: {text}")
        else:
            print(line)
    return 0


def cmd_logs(args: argparse.Namespace) -> int:
    return _run(_logs, args)
