"""The `sand` commands that talk to a SAND deployment through its REST API (docs/api.md).

Each `cmd_*` takes the parsed arguments and returns the exit code: 0 done, 1 failed (the message on
stderr as `Error: ...`). Results go to stdout, progress to stderr, so `sand invoke hello '{}' | jq` works.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any

from grainworker.workflow import WorkflowError, parse_workflow
from sandclient._bundle import BundleError, bundle
from sandclient.client import ApiError, SandClient, load_credentials, save_credentials

__all__ = ["cmd_deploy", "cmd_execution", "cmd_invoke", "cmd_login", "cmd_logs", "cmd_signup", "cmd_status",
           "cmd_undeploy", "error", "read_json_arg"]

POLL_S = 0.5


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


def _q(name: str) -> str:
    return urllib.parse.quote(name, safe="")


def _client(args: argparse.Namespace, need_key: bool = True) -> SandClient:
    try:
        creds = load_credentials()
        return SandClient(creds.url, creds.api_key)
    except ApiError:
        if need_key:
            raise
        import os

        url = os.environ.get("SAND_URL")  # invoking an application needs no account
        if not url:
            raise
        return SandClient(url)


def _run(fn: Any, args: argparse.Namespace) -> int:
    try:
        return fn(args)
    except ApiError as e:
        return error(str(e))


# --- accounts -------------------------------------------------------------------------------------------------

def _login(args: argparse.Namespace) -> int:
    client = SandClient(args.url, args.api_key)
    try:
        client.call("GET", "/api/v1/apps")
    except ApiError as e:
        if e.status in (401, 403):
            return error(f"{args.url} refused the API key: {e}")
        raise
    path = save_credentials(client.url, args.api_key)
    print(f"Logged in to {client.url}; credentials stored in {path}")
    return 0


def cmd_login(args: argparse.Namespace) -> int:
    return _run(_login, args)


def _signup(args: argparse.Namespace) -> int:
    import os

    admin = args.admin_key or os.environ.get("SAND_ADMIN_KEY")
    client = SandClient(args.url, admin)
    r = client.call("POST", "/api/v1/accounts", {"name": args.name})
    key = r.body.get("api_key") if isinstance(r.body, dict) else None
    if not key:
        return error(f"sign-up answered without an api_key: {r.body!r}")
    path = save_credentials(client.url, key)
    print(f"Account {r.body.get('name', args.name)} created at {client.url}")
    print(f"API key: {key}")
    info(f"(stored in {path}; keep it: it is not shown again)")
    return 0


def cmd_signup(args: argparse.Namespace) -> int:
    return _run(_signup, args)


# --- deploy / status / undeploy -------------------------------------------------------------------------------

def _hosts(app: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(host, status, error) for each target host, whatever shape the API gives them in."""
    hosts = app.get("hosts")
    out = []
    if isinstance(hosts, dict):
        hosts = [{"host": k} | (v if isinstance(v, dict) else {"status": v}) for k, v in hosts.items()]
    for h in hosts or []:
        if isinstance(h, dict):
            out.append((str(h.get("host") or h.get("host_id") or h.get("id") or "?"), str(h.get("status") or ""),
                        str(h.get("error") or "")))
        else:
            out.append((str(h), "", ""))
    return out


def _progress(app: dict[str, Any], want: str) -> str:
    hosts = _hosts(app)
    done = sum(1 for _, s, _ in hosts if s == want or (want == "undeployed" and s == "stopped"))
    parts = f" ({done}/{len(hosts)} hosts)" if hosts and any(s for _, s, _ in hosts) else ""
    return f"{app.get('status', '?')}{parts}"


def _wait(client: SandClient, name: str, want: str, timeout_s: float, version: int | None = None) -> dict[str, Any]:
    """Poll GET /api/v1/apps/{name} until status is `want` or `failed`; shows one line per change."""
    start = time.monotonic()
    tty = sys.stderr.isatty()
    last = ""
    while True:
        app = client.call("GET", f"/api/v1/apps/{_q(name)}").body
        app = app if isinstance(app, dict) else {}
        stale = version is not None and isinstance(app.get("version"), int) and app["version"] < version
        status = "" if stale else app.get("status", "")
        line = f"{name}: {_progress(app, want) if not stale else 'waiting for version ' + str(version)}"
        elapsed = time.monotonic() - start
        if tty:
            print(f"\r{line} {elapsed:.0f}s\033[K", end="", file=sys.stderr, flush=True)
        elif line != last:
            info(line)
        last = line
        if status in (want, "failed"):
            if tty:
                print(file=sys.stderr)
            return app
        if elapsed > timeout_s:
            if tty:
                print(file=sys.stderr)
            raise ApiError(0, "timeout", f"{name} is still {app.get('status', '?')} after {timeout_s:g}s; "
                                         f"see `sand status {name}`, or wait longer with --timeout")
        time.sleep(POLL_S)


def _load_folder(args: argparse.Namespace) -> tuple[dict[str, Any], Any, dict[str, Any] | None]:
    d = Path(args.app_dir)
    wf_file = d / "workflow.json"
    if not wf_file.is_file():
        raise ApiError(0, "usage", f"{wf_file} is missing: an application folder holds workflow.json and the "
                                   "grains' .py files")
    try:
        doc = json.loads(wf_file.read_text())
        if isinstance(doc, dict) and args.name:
            doc["name"] = args.name
        wf = parse_workflow(doc)
    except (json.JSONDecodeError, WorkflowError) as e:
        raise ApiError(0, "usage", f"{wf_file}: {e}") from None
    settings = None
    try:
        if (d / "settings.json").is_file():
            settings = read_json_arg("@" + str(d / "settings.json"))
        if args.settings:
            settings = (settings or {}) | read_json_arg(args.settings)
    except (OSError, ValueError) as e:
        raise ApiError(0, "usage", f"settings: {e}") from None
    return doc, wf, settings


def _deploy(args: argparse.Namespace) -> int:
    doc, wf, settings = _load_folder(args)
    try:
        uploads = bundle(args.app_dir, wf)
    except BundleError as e:
        return error(str(e))
    client = _client(args)
    for u in uploads:
        r = client.call("PUT", f"/api/v1/grains/{_q(u.resource)}", u.body, content_type=u.content_type)
        meta = r.body if isinstance(r.body, dict) else {}
        what = "zip of " + ", ".join(u.files) if u.content_type == "application/zip" else u.files[0]
        info(f"grain {u.resource}: version {meta.get('version', '?')} ({what}, {len(u.body)} bytes)")
    if settings is not None:
        doc = doc | {"settings": settings}
    try:
        client.call("PUT", f"/api/v1/apps/{_q(wf.name)}", json.dumps(doc, indent=2), content_type="application/json")
    except ApiError as e:
        if e.status == 409:  # names are global: say how to pick another
            return error(f"{e}; deploy under another name with `sand deploy {args.app_dir} --name <name>`")
        raise
    info(f"workflow {wf.name}: entry {wf.entry}, grains {', '.join(wf.grains)}")
    r = client.call("POST", f"/api/v1/apps/{_q(wf.name)}/deploy")
    version = r.body.get("version") if isinstance(r.body, dict) else None
    if args.no_wait:
        print(f"{wf.name}: deploying" + (f" (version {version})" if version else ""))
        return 0
    start = time.monotonic()
    app = _wait(client, wf.name, "deployed", args.timeout, version if isinstance(version, int) else None)
    if app.get("status") == "failed":
        detail = app.get("error") or "; ".join(f"{h}: {e}" for h, _, e in _hosts(app) if e) or "no error text"
        return error(f"deploy of {wf.name} failed: {detail}")
    hosts = ", ".join(h for h, _, _ in _hosts(app)) or "?"
    print(f"{wf.name}: deployed on {hosts} (version {app.get('version', version or '?')}) in "
          f"{time.monotonic() - start:.1f}s; invoke it with `sand invoke {wf.name} '<json>'`")
    return 0


def cmd_deploy(args: argparse.Namespace) -> int:
    return _run(_deploy, args)


def _status(args: argparse.Namespace) -> int:
    app = _client(args).call("GET", f"/api/v1/apps/{_q(args.app)}").body
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
    for h, s, e in _hosts(app):
        print(f"host:    {h} {s}" + (f": {e}" if e else ""))
    if app.get("error"):
        print(f"error:   {app['error']}")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    return _run(_status, args)


def _undeploy(args: argparse.Namespace) -> int:
    client = _client(args)
    client.call("POST", f"/api/v1/apps/{_q(args.app)}/undeploy")
    if not args.no_wait:
        app = _wait(client, args.app, "undeployed", args.timeout)
        if app.get("status") == "failed":
            return error(f"undeploy of {args.app} failed: {app.get('error') or 'no error text'}")
    if args.delete:
        client.call("DELETE", f"/api/v1/apps/{_q(args.app)}")
        print(f"{args.app}: undeployed and deleted")
    else:
        print(f"{args.app}: undeployed" if not args.no_wait else f"{args.app}: undeploying")
    return 0


def cmd_undeploy(args: argparse.Namespace) -> int:
    return _run(_undeploy, args)


# --- invoke / executions --------------------------------------------------------------------------------------

def _invoke(args: argparse.Namespace) -> int:
    try:
        value = read_json_arg(args.input) if args.input is not None else None
    except (OSError, ValueError) as e:
        return error(str(e))
    client = _client(args, need_key=False)
    body = json.dumps(value) if args.input is not None else b""
    query = {"async": "1"} if args.async_ else None
    try:
        r = client.call("POST", f"/app/{_q(args.app)}", body, content_type="application/json", query=query,
                        ok=(500,), timeout_s=args.timeout)
    except ApiError as e:
        exec_id = e.headers.get("X-Sand-Execution-Id") or (
            e.body["error"].get("execution_id") if isinstance(e.body, dict) and isinstance(e.body.get("error"), dict)
            else None)
        return error(f"{e}" + (f" (execution id {exec_id}; `sand logs {exec_id}`)" if exec_id else ""))
    exec_id = r.headers.get("X-Sand-Execution-Id") or (r.body.get("execution_id") if isinstance(r.body, dict) else "")
    err = r.body.get("error") if isinstance(r.body, dict) and set(r.body) == {"error"} else None
    if r.status == 500 and not (isinstance(err, dict) and ("type" in err or "grain" in err)):
        # A 500 that is not a grain's error event is the platform's own failure.
        message = err.get("message") if isinstance(err, dict) else None
        return error(f"{message or repr(r.body)} (HTTP 500)" + (f" (execution id {exec_id})" if exec_id else ""))
    if args.async_:
        print(exec_id)
        return 0
    print(json.dumps(r.body, indent=2))
    if exec_id:
        info(f"execution id: {exec_id}")
    return 1 if err is not None else 0


def cmd_invoke(args: argparse.Namespace) -> int:
    return _run(_invoke, args)


def _execution(args: argparse.Namespace) -> int:
    body = _client(args).call("GET", f"/api/v1/executions/{_q(args.execution_id)}").body
    if getattr(args, "timings", False):
        print(f"{'at ms':>9} {'+ms':>8}  step (where)")
        for hop in body.get("timings", {}).get("hops", []):
            print(f"{hop['at_ms']:9.3f} {hop['delta_ms']:8.3f}  {hop['step']} ({hop['where']})")
        return 0
    print(json.dumps(body, indent=2))
    return 0


def cmd_execution(args: argparse.Namespace) -> int:
    return _run(_execution, args)


def _log_lines(body: Any) -> list[Any]:
    if isinstance(body, dict):
        for k in ("logs", "lines", "items"):
            if isinstance(body.get(k), list):
                return body[k]
    return body if isinstance(body, list) else []


def _logs(args: argparse.Namespace) -> int:
    body = _client(args).call("GET", f"/api/v1/executions/{_q(args.execution_id)}/logs").body
    if args.json:
        print(json.dumps(body, indent=2))
        return 0
    for line in _log_lines(body):
        if isinstance(line, dict):
            ts = str(line.get("ts") or line.get("time") or "")
            text = line.get("text", line.get("message", ""))
            print(f"{ts + ' ' if ts else ''}[{line.get('grain', '?')}] {line.get('level', 'INFO')}: {text}")
        else:
            print(line)
    return 0


def cmd_logs(args: argparse.Namespace) -> int:
    return _run(_logs, args)
