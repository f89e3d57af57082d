"""A fake of SAND's REST API for working on the console without the system: console/dist at /console/ with the
frontend's headers, and canned answers shaped as docs/api.md's. For development only; the e2e tests use the real
system (tests/e2e/test_console_e2e.py).

    cd console && npm run build && python3 dev/fake_api.py 18080   # then open http://127.0.0.1:18080/console/

Keys: ``sand_dev`` is a developer's, ``admin-key-for-the-fake-only`` the operator's; ``POST /api/v1/accounts`` makes
more (``SAND_FAKE_OPEN_SIGNUP=false``: only with the admin key, as a frontend with open sign-up off answers).
Applications created through it are kept in memory: a deploy compiles their grains (a SyntaxError fails it as a host
would; a zip's requirement that the fake does not know fails it as pip would), an invocation runs SAND-format
workflows' grains in this process, one after the other, and records the execution with its hops and log lines.
``hello`` has keys in the data layer (``GET .../data``); ``/readyz`` and ``/metrics`` (the admin key) answer as
two frontends in turn would (fake_metrics.py). Enough to click through every view; not SAND.
"""

from __future__ import annotations

import contextlib
import io
import json
import mimetypes
import os
import re
import sys
import tempfile
import time
import uuid
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import fake_metrics
from fake_canned import (
    EXEC,
    HELLO_WF,
    ORDERS_WF,
    app,
    data,
    error,
    hops,
    listed,
    meta,
    put_grain,
    requirements,
    resources,
    source,
    stamp,
    synthetic,
)

DIST = Path(__file__).resolve().parent.parent / "dist"
ROOT = Path(__file__).resolve().parents[2]
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
    "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
DEV_KEY = "sand_dev"
ADMIN_KEY = "admin-key-for-the-fake-only"
ADMIN = "<admin>"  # who the admin key is, for live()
# SAND_FAKE_OPEN_SIGNUP=false: sign-up needs the admin key, as a frontend with open.signup=false answers
OPEN_SIGNUP = os.environ.get("SAND_FAKE_OPEN_SIGNUP", "true") != "false"


def routes(method: str, path: str, admin: bool) -> tuple[int, Any]:  # noqa: C901 - one table of canned answers
    parts = [p for p in path.split("?")[0].split("/") if p]
    if parts[:3] == ["api", "v1", "admin"]:
        if not admin:
            return 403, {"error": {"code": "forbidden", "message": "only the operator's admin key may do this"}}
        if parts[3:] == ["hosts"]:
            use = {"sandboxes": 2, "grains": 4, "sandbox_memory_mb": 1024, "sandbox_cpus": 2.0}
            use |= {"memory_percent": 25.0, "cpu_percent": 50.0}
            return 200, {
                "hosts": [
                    {
                        "host": "vm",
                        "alive": True,
                        "heartbeat": "2026-11-27T18:59:59Z",
                        "capacity": 4,
                        "schedule": "schedulable",
                        "resources": {"cpus": 4, "memory_mb": 4096},
                        "use": use,
                        "sandboxes": [{"app": "hello", "status": "deployed"}, {"app": "orders", "status": "failed"}],
                    }
                ]
            }
        if parts[3:] == ["apps"]:
            return 200, {"apps": [{**app("hello"), "owner": "alice"}, {**app("orders"), "owner": "bob"}]}
        if parts[3] == "accounts":
            return 200, {"account": parts[4], "disabled": parts[5] == "disable", "undeployed": ["hello"]}
        return 200, {"host": parts[4], "schedule": parts[5]}
    if admin:
        return 401, {"error": {"code": "unauthorized", "message": "the admin key belongs to no account"}}
    if parts == ["api", "v1", "apps"]:
        return 200, {
            "apps": [{k: app(n)[k] for k in ("name", "status", "version", "error")} for n in ("hello", "orders")]
        }
    if parts[:3] == ["api", "v1", "executions"]:
        if parts[4:] == ["logs"]:
            logs = [{"time": "2026-11-27T18:10:00.004Z", "grain": "greet", "level": "INFO", "text": "greeting sand"}]
            return 200, {"execution_id": parts[3], "logs": logs, "next": None}
        timings = {"started": "2026-11-27T18:10:00Z", "finished": "2026-11-27T18:10:00.021Z", "duration_ms": 21.1}
        return 200, {
            "execution_id": parts[3],
            "app": "hello",
            "status": "succeeded",
            "result": {"greeting": "HELLO, SAND!"},
            "error": None,
            "timings": {**timings, "hops": hops()},
            "frontend": "fe-8082",
        }
    if parts[:3] == ["api", "v1", "apps"]:
        name, rest = parts[3], parts[4:]
        if method == "PUT" and not rest:
            return 400, {
                "error": {"code": "bad_workflow", "message": "functions[1] (shout).next names unknown grain 'x'"}
            }
        if not rest:
            return 200, app(name)
        if rest == ["grains"]:
            return 200, {"grains": [{"name": g, "version": 4, "kind": "py"} for g in ("greet", "shout")]}
        if rest == ["data"]:
            return data(name, dict(parse_qsl(path.partition("?")[2])))
        if rest[0] == "grains":
            return 200, (ROOT / "examples/hello" / f"{rest[1]}.py").read_text()
        if rest == ["executions"]:
            e = {"execution_id": EXEC, "status": "succeeded", "started": "2026-11-27T18:10:00Z"}
            e |= {"finished": "2026-11-27T18:10:00.021Z", "duration_ms": 21.1, "error": None}
            return listed(name, [e, *(synthetic() if name == "hello" else [])], path.partition("?")[2])
        if rest == ["versions"]:
            v = [
                {"version": n, "created": "2026-11-27T18:00:00Z", "description": "deploy", "running": n == 4}
                for n in (4, 3)
            ]
            return 200, {"app": name, "versions": v}
        if rest == ["aliases"]:
            a = {"name": "prod", "version": 4, "weights": None, "invoke": f"/app/{name}@prod", "serves": True}
            return 200, {"app": name, "running_version": 4, "aliases": [a]}
        if rest == ["secrets"]:
            return 200, {"app": name, "secrets": [{"name": "API_TOKEN", "bytes": 6, "updated": "2026-11-26T22:30:00Z"}]}
        if rest == ["endpoint"]:
            return 200, {"app": name, "auth": "public", "keys": 1, "signing_secret": False}
        if rest == ["keys"]:
            k = {"id": "k1", "name": "ci", "prefix": "sik_abcdef", "created": "2026-11-27T18:00:00Z"}
            return 200, {"app": name, "keys": [k]}
        if rest == ["triggers"]:
            t = {"name": "nightly", "cron": "0 3 * * *", "next": "2026-11-28T03:00:00Z"}
            return 200, {"app": name, "triggers": [t]}
        if rest == ["dead-letters"]:
            d = {
                "id": "1795755219176-64fec7e1",
                "source": "timer:nightly",
                "attempts": 3,
                "error": {"type": "ValueError"},
            }
            return 200, {"app": name, "dead_letters": [d], "next": None}
        if rest == ["logs"]:
            logs = [{"time": "2026-11-27T18:10:00.004Z", "grain": "greet", "level": "INFO", "text": "greeting sand"}]
            x = {"execution_id": EXEC, "status": "succeeded", "started": "2026-11-27T18:10:00Z", "logs": logs}
            return 200, {"app": name, "executions": [x]}
        return 202, app(name)
    if parts[:1] == ["app"]:
        return 200, {"greeting": "HELLO, SAND!", "execution_id": EXEC}
    return 404, {"error": {"code": "not_found", "message": f"no route {path}"}}


# ---- a little state: accounts, applications created here, their executions ----
KEYS: dict[str, str] = {}
DISABLED: set[str] = set()
LIVE: dict[str, dict[str, Any]] = {}
SHARED: dict[str, dict[str, dict[str, Any]]] = {}  # account -> its shared grains (PUT /api/v1/grains/{g})
EXECS: dict[str, dict[str, Any]] = {}
LAST = [EXEC]  # the execution the last invocation made (its X-Sand-Execution-Id)


def code_of(a: dict[str, Any], r: str) -> tuple[str, dict[str, Any] | None]:
    """Which grain an application runs for resource r: its own, else the account's shared one."""
    if r in a["grains"]:
        return "application", a["grains"][r]
    g = SHARED.get(a["owner"], {}).get(r)
    return ("account", g) if g else ("", None)


def describe(a: dict[str, Any]) -> dict[str, Any]:
    """As GET /api/v1/apps/{app}: a deploy takes two seconds, host vm done after one, vm2 after two."""
    left = a.get("ready_at", 0) - time.monotonic()
    hosts = []
    for h, at in (("vm", 1.0), ("vm2", 0.0)):
        done = left <= at
        status = a["status"] if done else "deploying"
        error_ = a["error"] if done else None
        hosts.append({"host": h, "status": status, "error": error_, "alive": True, "updated": a["updated"]})
    status = a["status"] if left <= 0 else "deploying"
    grains = []
    for r in resources(a["workflow"]):
        scope, g = code_of(a, r)
        if g:
            grains.append({"name": r, "sha256": g["sha256"], "scope": scope, "current": True, "version": g["version"]})
    return {
        "name": a["name"],
        "id": a["id"],
        "status": status,
        "error": a["error"] if left <= 0 else None,
        "version": a["version"],
        "workflow": {k: v for k, v in a["workflow"].items() if k != "settings"},
        "settings": a["workflow"].get("settings", {}),
        "hosts": hosts if a["status"] != "undeployed" else [],
        "grains": grains,
    }


KNOWN_PACKAGES = {"requests", "six", "pillow", "numpy", "urllib3"}  # what the fake's "package index" has


def deploy(a: dict[str, Any]) -> None:
    a["version"] += 1
    a["ready_at"] = time.monotonic() + 2
    a["status"], a["error"] = "deployed", None
    a["updated"] = stamp()
    problems = []
    for r in resources(a["workflow"]):
        _, g = code_of(a, r)
        if g is None:
            problems.append(f"grain {r} has no code: upload it")
            continue
        for req in requirements(g):
            pkg = re.split(r"[<>=!~\[; ]", req)[0]
            if pkg.lower() not in KNOWN_PACKAGES:
                problems.append(
                    f"application {a['name']}: its requirements could not be installed: pip install exited with 1:\n"
                    f"ERROR: Could not find a version that satisfies the requirement {req} (from versions: none)\n"
                    f"ERROR: No matching distribution found for {req}"
                )
        try:
            compile(source(r, g), f"{r}.py", "exec")
        except SyntaxError as e:
            problems.append(f"grain {r} failed to load: SyntaxError: {e.msg} ({r}.py, line {e.lineno})")
    if problems:
        a["status"] = "failed"
        a["error"] = f"vm: {problems[0]} [host vm, attempt 1]"


@contextlib.contextmanager
def importable(g: dict[str, Any]) -> Iterator[None]:
    """A zip grain's other modules importable while it runs (zipimport), forgotten afterwards."""
    if g["kind"] != "zip":
        yield
        return
    path = Path(tempfile.gettempdir()) / f"sand-fake-{g['sha256'][:16]}.zip"
    path.write_bytes(g["code"])
    before = set(sys.modules)
    sys.path.insert(0, str(path))
    try:
        yield
    finally:
        sys.path.remove(str(path))
        for m in set(sys.modules) - before:
            del sys.modules[m]


def run(a: dict[str, Any], value: Any) -> dict[str, Any]:
    xid = uuid.uuid4().hex
    t0 = time.perf_counter()
    hops_: list[dict[str, Any]] = []
    logs: list[dict[str, Any]] = []

    def hop(step: str, where: str) -> None:
        at = round((time.perf_counter() - t0) * 1000, 3)
        hops_.append(
            {"step": step, "where": where, "at_ms": at, "delta_ms": round(at - (hops_[-1]["at_ms"] if hops_ else 0), 3)}
        )

    class Context:
        def __init__(self, grain: str) -> None:
            self.grain = grain

        def log(self, text: str) -> None:
            now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
            logs.append({"time": now, "grain": self.grain, "level": "INFO", "text": str(text)})

        def get_execution_id(self) -> str:
            return xid

    hop("frontend: request received", "fe-fake")
    hop("host agent: event queued", "vm")
    functions = {f["name"]: f for f in a["workflow"].get("functions", [])}
    grain, result, err = a["workflow"].get("entry"), value, None
    while grain and grain != "end" and err is None:
        hop(f"{grain}: worker polled", grain)
        scope: dict[str, Any] = {}
        try:
            code = functions.get(grain, {}).get("resource") or grain
            g = code_of(a, code)[1] or {"code": b"", "kind": "py"}
            with importable(g):
                exec(source(code, g), scope)  # noqa: S102 - the developer's own grain, in a development fake
                hop(f"{grain}: handler started", grain)
                result = scope["handle"](result, Context(grain))
        except Exception as e:  # noqa: BLE001 - a grain's error is the execution's
            err = {"type": type(e).__name__, "message": str(e), "grain": grain}
        hop(f"{grain}: handler ended", grain)
        grain = (functions.get(grain, {}).get("next") or ["end"])[0]
    hop("frontend: reply sent", "fe-fake")
    started = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    ms = hops_[-1]["at_ms"]
    EXECS[xid] = {
        "execution_id": xid,
        "app": a["name"],
        "status": "failed" if err else "succeeded",
        "result": None if err else result,
        "error": err,
        "timings": {"started": started, "finished": started, "duration_ms": ms, "hops": hops_},
        "frontend": "fe-fake",
        "logs": logs,
    }
    LAST[0] = xid
    return EXECS[xid]


CANNED = {"hello": ("deployed", HELLO_WF), "orders": ("failed", ORDERS_WF)}  # the dev account's canned applications


def users_of(who: str, name: str) -> list[tuple[str, str]]:
    """(application, status) of who's applications that run shared grain name: named, and none of their own."""
    out = [
        (a["name"], describe(a)["status"])
        for a in LIVE.values()
        if a["owner"] == who and name in resources(a["workflow"]) and name not in a["grains"]
    ]
    if who == "dev":  # the canned applications' own grains are greet and shout
        out += [(n, st) for n, (st, wf) in CANNED.items() if name in resources(wf) and name not in ("greet", "shout")]
    return sorted(out)


def shared_grains(method: str, rest: list[str], query: str, body: bytes, who: str, ctype: str) -> tuple[int, Any]:
    mine = SHARED.setdefault(who, {})
    if not rest:
        return 200, {"grains": [meta(n, g) for n, g in sorted(mine.items())]}
    name = rest[0]
    if method == "PUT":
        status, out = put_grain(mine, name, body, ctype)
        if status == 200:
            out["used_by"] = [a for a, _ in users_of(who, name)]
        return status, out
    g = mine.get(name)
    if g is None:
        return error(404, "not_found", f"no grain '{name}' in your account; upload it with PUT /api/v1/grains/{name}")
    if method == "DELETE":
        running = [a for a, st in users_of(who, name) if st != "undeployed"]
        if running and "keep_deployed" not in query:
            a = running[0]
            return error(
                409,
                "conflict",
                f"grain {name} is used by deployed application '{a}'; undeploy it first "
                f"(POST /api/v1/apps/{a}/undeploy), or delete with ?keep_deployed=1 to let it run the copy it was "
                "deployed with (its next deploy needs the grain)",
            )
        del mine[name]
        return 200, {"name": name, "deleted": True}
    return 200, g["code"] if "code" in query else meta(name, g)


def delete_account(name: str, who: str | None) -> tuple[int, Any]:
    if who not in (ADMIN, name):
        return error(403, "forbidden", f"an account can delete only itself; you are '{who}'")
    if name not in KEYS.values() and name != "dev":
        return error(404, "not_found", f"no account '{name}'")
    owned = [a["name"] for a in LIVE.values() if a["owner"] == name]
    running = [a for a in owned if describe(LIVE[a])["status"] != "undeployed"]
    running += [n for n, (st, _) in CANNED.items() if st != "undeployed"] if name == "dev" else []
    if running:
        return error(
            409,
            "conflict",
            f"account '{name}' still runs {', '.join(sorted(running))}; undeploy them first "
            "(POST /api/v1/apps/{app}/undeploy) and wait for status undeployed",
        )
    for a in owned:
        del LIVE[a]
    SHARED.pop(name, None)
    for k in [k for k, v in KEYS.items() if v == name]:
        del KEYS[k]
    return 200, {"name": name, "deleted": True, "applications": owned}


def seed() -> None:
    """The dev account's shared grains: price (run by the canned orders) and a zip that no application runs."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(
            "textutil.py", "import six\n\n\ndef handle(event, context):\n    return six.text_type(event).strip()\n"
        )
        z.writestr("requirements.txt", "six==1.16.0\n")
    put_grain(
        SHARED.setdefault("dev", {}), "price", (ROOT / "examples/asl-orders/price.py").read_bytes(), "text/x-python"
    )
    put_grain(SHARED["dev"], "textutil", buf.getvalue(), "application/zip")


def live(method: str, path: str, body: bytes, who: str | None, ctype: str = "") -> tuple[int, Any] | None:  # noqa: C901 - one table
    """The answer of the stateful part, or None for the canned answers."""
    parts = [p for p in path.split("?")[0].split("/") if p]
    query = path.partition("?")[2]
    if parts == ["api", "v1", "accounts"] and method == "POST":
        if not OPEN_SIGNUP and who != ADMIN:
            if who is None:
                return error(401, "unauthorized", "sign-up is closed on this platform: the operator creates accounts")
            return error(403, "forbidden", "only the operator's admin key may create accounts (open sign-up is off)")
        name = json.loads(body or b"{}").get("name")
        if not isinstance(name, str) or not re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,62}", name):
            return error(400, "bad_request", f"account name '{name}' is invalid: 1-63 of a-z 0-9 _ -")
        if name in KEYS.values() or name == "dev":
            return error(409, "conflict", f"account '{name}' exists; choose another name")
        key = "sand_" + uuid.uuid4().hex
        KEYS[key] = name
        return 201, {"name": name, "api_key": key}
    if parts[:4] == ["api", "v1", "admin", "accounts"] and len(parts) == 6:
        (DISABLED.add if parts[5] == "disable" else DISABLED.discard)(parts[4])
        reason = json.loads(body or b"{}").get("reason")
        return 200, {"account": parts[4], "disabled": parts[5] == "disable", "reason": reason, "undeployed": []}
    if parts == ["api", "v1", "admin", "apps"]:
        return 200, {
            "apps": [{**describe(a), "owner": a["owner"]} for a in LIVE.values()] + routes("GET", path, True)[1]["apps"]
        }
    if parts == ["api", "v1", "apps"] and method == "GET":
        mine = [
            {k: describe(a)[k] for k in ("name", "status", "version", "error")}
            for a in LIVE.values()
            if a["owner"] == who
        ]
        return 200, {"apps": mine + (routes("GET", path, False)[1]["apps"] if who == "dev" else [])}
    if parts[:3] == ["api", "v1", "accounts"] and len(parts) == 4 and method == "DELETE":
        return delete_account(parts[3], who)
    if parts[:3] == ["api", "v1", "grains"] and who != ADMIN:
        return shared_grains(method, parts[3:], query, body, who or "", ctype)
    if parts[:3] == ["api", "v1", "executions"] and parts[3] in EXECS:
        x = EXECS[parts[3]]
        if parts[4:] == ["logs"]:
            return 200, {"execution_id": x["execution_id"], "logs": x["logs"], "next": None}
        return 200, {k: v for k, v in x.items() if k != "logs"}
    if parts[:1] == ["app"] and len(parts) >= 2 and parts[1] in LIVE:
        a = LIVE[parts[1]]
        if len(parts) == 4:
            x = EXECS[parts[3]]
            LAST[0] = x["execution_id"]
            return (500, {"error": x["error"]}) if x["error"] else (200, x["result"])
        if describe(a)["status"] != "deployed":
            return error(409, "conflict", f"application '{a['name']}' is not deployed")
        x = run(a, json.loads(body or b"{}"))
        if "async" in query:
            return 202, {"execution_id": x["execution_id"]}
        return (500, {"error": x["error"]}) if x["error"] else (200, x["result"])
    if parts[:3] != ["api", "v1", "apps"] or len(parts) < 4 or parts[3] in ("hello", "orders"):
        return None
    name, rest = parts[3], parts[4:]
    a = LIVE.get(name)
    if a is not None and a["owner"] != who:
        return error(404, "not_found", f"no application '{name}' in your account")
    if method == "PUT" and not rest:
        wf = json.loads(body)
        names = {f["name"] for f in wf.get("functions", [])}
        for i, f in enumerate(wf.get("functions", [])):
            for n in f.get("next", []):
                if n != "end" and n not in names:
                    return error(400, "bad_workflow", f"functions[{i}] ({f['name']}).next names unknown grain '{n}'")
        a = a or {"name": name, "id": "a" + uuid.uuid4().hex[:12], "owner": who, "grains": {}, "version": 0}
        a |= {"workflow": wf, "status": a.get("status", "undeployed"), "error": None, "updated": None}
        LIVE[name] = a
        return 200, describe(a)
    if a is None:
        return error(
            404, "not_found", f"no application '{name}' in your account; create it with PUT /api/v1/apps/{name}"
        )
    if rest[:1] == ["grains"] and len(rest) == 2:
        if method == "PUT":
            return put_grain(a["grains"], rest[1], body, ctype)
        g = a["grains"].get(rest[1])
        if g is None:
            return error(404, "not_found", f"no grain '{rest[1]}' in application '{name}'")
        if method == "DELETE":
            del a["grains"][rest[1]]
            return 200, {"name": rest[1], "deleted": True}
        return 200, g["code"] if "code" in query else meta(rest[1], g)
    if rest == ["grains"]:
        return 200, {"grains": [meta(n, g) for n, g in a["grains"].items()]}
    if rest in (["deploy"], ["update"]):
        deploy(a)
        return 202, describe(a)
    if rest == ["undeploy"]:
        a["status"] = "undeployed"
        return 202, describe(a)
    if method == "DELETE" and not rest:
        del LIVE[name]
        return 200, {"name": name, "deleted": True}
    if not rest:
        return 200, describe(a)
    if rest == ["executions"]:
        xs = [x for x in EXECS.values() if x["app"] == name]
        rows = [
            {k: x[k] for k in ("execution_id", "status", "error")}
            | {
                "started": x["timings"]["started"],
                "finished": x["timings"]["finished"],
                "duration_ms": x["timings"]["duration_ms"],
            }
            for x in xs
        ]
        return listed(name, rows, query)
    if rest == ["logs"]:
        xs = [x for x in EXECS.values() if x["app"] == name]
        return 200, {
            "app": name,
            "executions": [
                {
                    "execution_id": x["execution_id"],
                    "status": x["status"],
                    "started": x["timings"]["started"],
                    "logs": x["logs"],
                }
                for x in xs
            ],
        }
    return None


class Handler(BaseHTTPRequestHandler):
    def _send(self, status: int, body: bytes, ctype: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _any(self) -> None:
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        if self.path == "/healthz":
            self._send(200, b'{"status":"ok","frontend":"fe-fake"}', "application/json")
            return
        if self.path == "/readyz":
            status, ready = fake_metrics.readyz()
            self._send(status, json.dumps(ready).encode(), "application/json")
            return
        if self.path == "/metrics":
            key = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            if key != ADMIN_KEY:
                status, code = (401, "unauthorized") if not key else (403, "forbidden")
                msg = json.dumps({"error": {"code": code, "message": "/metrics is the operator's: the admin key only"}})
                self._send(status, msg.encode(), "application/json")
                return
            self._send(200, fake_metrics.metrics().encode(), "text/plain; version=0.0.4; charset=utf-8")
            return
        if self.path.startswith("/console"):
            rel = self.path.split("?")[0][len("/console/") :] or "index.html"
            f = (DIST / rel).resolve()
            if not f.is_relative_to(DIST) or not f.is_file():
                f = DIST / "index.html"
            ctype = mimetypes.guess_type(f.name)[0] or "application/octet-stream"
            extra = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff"}
            self._send(200, f.read_bytes(), ctype, extra)
            return
        key = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
        who = KEYS.get(key, "dev" if key == DEV_KEY else None)
        open_ = self.path.startswith("/app/") or (self.path == "/api/v1/accounts" and self.command == "POST")
        if not open_ and who is None and key != ADMIN_KEY:
            self._send(401, b'{"error":{"code":"unauthorized","message":"unknown API key"}}', "application/json")
            return
        if who in DISABLED:
            self._send(403, b'{"error":{"code":"account_disabled","message":"disabled"}}', "application/json")
            return
        ctype = self.headers.get("Content-Type") or ""
        answer = live(self.command, self.path, body, ADMIN if key == ADMIN_KEY else who, ctype)
        if answer is None:
            answer = routes(self.command, self.path, key == ADMIN_KEY)
        status, out = answer
        if isinstance(out, bytes):  # a grain's code: a zip, or Python source
            data, ctype = out, "application/zip" if out[:2] == b"PK" else "text/x-python"
        else:
            data = out.encode() if isinstance(out, str) else json.dumps(out).encode()
            ctype = "text/x-python" if isinstance(out, str) else "application/json"
        xid = LAST[0] if self.path.startswith("/app/") and self.path.split("/")[2].split("?")[0] in LIVE else EXEC
        self._send(status, data, ctype, {"X-Sand-Execution-Id": xid} if self.path.startswith("/app/") else None)

    do_GET = do_PUT = do_POST = do_DELETE = _any

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class' name
        pass


if __name__ == "__main__":
    seed()
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 18080
    print(f"fake SAND API on http://127.0.0.1:{port}/console/ (keys: {DEV_KEY}, {ADMIN_KEY})")
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
