"""A fake of SAND's REST API for working on the console without the system: console/dist at /console/ with the
frontend's headers, and canned answers shaped as docs/api.md's. For development only; the e2e tests use the real
system (tests/e2e/test_console_e2e.py).

    cd console && npm run build && python3 dev/fake_api.py 18080   # then open http://127.0.0.1:18080/console/

Keys: ``sand_dev`` is a developer's, ``admin-key-for-the-fake-only`` the operator's; ``POST /api/v1/accounts`` makes
more. Applications created through it are kept in memory: a deploy compiles their grains (a SyntaxError fails it as a
host would), an invocation runs SAND-format workflows' grains in this process, one after the other, and records the
execution with its hops and log lines. ``hello`` has keys in the data layer (``GET .../data``); ``/readyz`` and
``/metrics`` (the admin key) answer as two frontends in turn would (fake_metrics.py). Enough to click through every
view; not SAND.
"""

from __future__ import annotations

import base64
import json
import mimetypes
import sys
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import fake_metrics

DIST = Path(__file__).resolve().parent.parent / "dist"
ROOT = Path(__file__).resolve().parents[2]
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
    "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
DEV_KEY = "sand_dev"
ADMIN_KEY = "admin-key-for-the-fake-only"
EXEC = "18374c36640775608d6dcd9c2ebfb41f"
HELLO_WF = {
    "name": "hello",
    "entry": "greet",
    "functions": [{"name": "greet", "next": ["shout"]}, {"name": "shout", "next": ["end"]}],
}
ORDERS_WF = json.loads((ROOT / "examples/asl-orders/workflow.json").read_text())
HOPS = [
    ("frontend: request received", "fe-8082", 0.0),
    ("host agent: event taken", "vm", 0.438),
    ("host agent: event queued", "vm", 0.567),
    ("greet: worker polled", "greet", 3.91),
    ("greet: instance started", "greet", 4.509),
    ("greet: handler started", "greet", 4.765),
    ("greet: handler ended", "greet", 4.862),
    ("greet: outputs published", "greet", 4.884),
    ("shout: worker polled", "shout", 7.407),
    ("shout: instance started", "shout", 8.971),
    ("shout: handler started", "shout", 15.336),
    ("shout: handler ended", "shout", 16.443),
    ("shout: outputs published", "shout", 16.472),
    ("host agent: report taken", "vm", 20.471),
    ("host agent: result sent", "vm", 20.663),
    ("frontend: result received", "fe-8082", 20.941),
    ("frontend: reply sent", "fe-8082", 21.092),
]


def hops() -> list[dict[str, Any]]:
    out, prev = [], 0.0
    for step, where, at in HOPS:
        out.append({"step": step, "where": where, "at_ms": at, "delta_ms": round(at - prev, 3)})
        prev = at
    return out


def app(name: str) -> dict[str, Any]:
    if name == "orders":
        err = "vm: grain price failed to load: SyntaxError: expected ':' (price.py, line 3) [host vm, attempt 1]"
        return {
            "name": "orders",
            "id": "a0000000000b2",
            "status": "failed",
            "error": err,
            "version": 2,
            "workflow": ORDERS_WF,
            "settings": {"request_timeout_s": 0, "hosts": []},
            "hosts": [
                {"host": "vm", "status": "failed", "error": err, "alive": True, "updated": "2026-11-27T18:00:00Z"}
            ],
            "grains": [],
        }
    return {
        "name": name,
        "id": "a2adfb59a56e3",
        "status": "deployed",
        "error": None,
        "version": 4,
        "workflow": HELLO_WF,
        "settings": {"request_timeout_s": 0, "hosts": []},
        "hosts": [
            {"host": "vm", "status": "deployed", "error": None, "alive": True, "updated": "2026-11-27T18:00:00Z"}
        ],
        "grains": [
            {"name": g, "sha256": "7fe717ad08ab155c", "scope": "application", "current": True, "version": 4}
            for g in ("greet", "shout")
        ],
    }


DATA: dict[str, bytes] = {
    "last-greeting": b"hi",
    "config": json.dumps({"greeting": "hi", "shout": True, "limits": {"per_minute": 60}}).encode(),
    "avatar.png": bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0xFF, 0x00]),
    **{f"user:{i:04d}": json.dumps({"name": f"user {i}", "visits": i * 3}).encode() for i in range(1, 131)},
}


def data(name: str, query: dict[str, str]) -> tuple[int, Any]:
    """GET /api/v1/apps/{app}/data as DataViewHandler answers it: hello has keys, every other application none."""
    kv = DATA if name == "hello" else {}
    if "key" in query:
        v = kv.get(query["key"])
        if v is None:
            return error(404, "not_found", f"application '{name}' has no key '{query['key']}' in the global data layer")
        try:
            return 200, {"key": query["key"], "bytes": len(v), "encoding": "utf-8", "value": v.decode()}
        except UnicodeDecodeError:
            return 200, {
                "key": query["key"],
                "bytes": len(v),
                "encoding": "base64",
                "value": base64.b64encode(v).decode(),
            }
    prefix, limit = query.get("prefix", ""), min(1000, max(1, int(query.get("limit") or 100)))
    after = base64.urlsafe_b64decode(query["cursor"] + "==").decode() if query.get("cursor") else ""
    keys = [k for k in sorted(kv) if k.startswith(prefix) and k > after]
    page = keys[:limit]
    more = len(keys) > limit
    nxt = base64.urlsafe_b64encode(page[-1].encode()).decode().rstrip("=") if more else None
    return 200, {"app": name, "prefix": prefix, "keys": page, "next": nxt}


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
            return 200, {"grains": [{"name": "greet", "version": 4}, {"name": "shout", "version": 4}]}
        if rest == ["data"]:
            return data(name, dict(parse_qsl(path.partition("?")[2])))
        if rest[0] == "grains":
            return 200, (ROOT / "examples/hello" / f"{rest[1]}.py").read_text()
        if rest == ["executions"]:
            e = {"execution_id": EXEC, "status": "succeeded", "started": "2026-11-27T18:10:00Z"}
            e |= {"finished": "2026-11-27T18:10:00.021Z", "duration_ms": 21.1, "error": None}
            return 200, {"app": name, "executions": [e], "next": None}
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
EXECS: dict[str, dict[str, Any]] = {}
LAST = [EXEC]  # the execution the last invocation made (its X-Sand-Execution-Id)


def error(status: int, code: str, message: str) -> tuple[int, Any]:
    return status, {"error": {"code": code, "message": message}}


def describe(a: dict[str, Any]) -> dict[str, Any]:
    if a.get("ready_at", 0) > time.monotonic():  # a deploy takes a couple of seconds, as on a host
        a = a | {"status": "deploying", "error": None}
    host = {"host": "vm", "status": a["status"], "error": a["error"], "alive": True, "updated": a["updated"]}
    grains = [{"name": g, "scope": "application", "current": True, "version": v} for g, (_, v) in a["grains"].items()]
    return {
        "name": a["name"],
        "id": a["id"],
        "status": a["status"],
        "error": a["error"],
        "version": a["version"],
        "workflow": a["workflow"],
        "settings": a["workflow"].get("settings", {}),
        "hosts": [host] if a["status"] != "undeployed" else [],
        "grains": grains,
    }


def deploy(a: dict[str, Any]) -> None:
    a["version"] += 1
    a["ready_at"] = time.monotonic() + 2
    a["status"], a["error"] = "deployed", None
    for g, (code, _) in a["grains"].items():
        try:
            compile(code, f"{g}.py", "exec")
        except SyntaxError as e:
            a["status"] = "failed"
            a["error"] = (
                f"vm: grain {g} failed to load: SyntaxError: {e.msg} ({g}.py, line {e.lineno}) [host vm, attempt 1]"
            )
    a["updated"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


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
            exec(a["grains"][grain][0], scope)  # noqa: S102 - the developer's own grain, in a development fake
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


def live(method: str, path: str, body: bytes, who: str | None) -> tuple[int, Any] | None:  # noqa: C901 - one table
    """The answer of the stateful part, or None for the canned answers."""
    parts = [p for p in path.split("?")[0].split("/") if p]
    query = path.partition("?")[2]
    if parts == ["api", "v1", "accounts"] and method == "POST":
        name = json.loads(body or b"{}").get("name") or uuid.uuid4().hex[:8]
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
        return 200, {"apps": mine + routes("GET", path, False)[1]["apps"]}
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
            v = a["grains"].get(rest[1], ("", 0))[1] + 1
            a["grains"][rest[1]] = (body.decode(), v)
            return 200, {"name": rest[1], "version": v, "kind": "py"}
        if "code" in query:
            return 200, a["grains"][rest[1]][0]
        return 200, {"name": rest[1], "version": a["grains"][rest[1]][1], "kind": "py"}
    if rest == ["grains"]:
        return 200, {"grains": [{"name": g, "version": v, "kind": "py"} for g, (_, v) in a["grains"].items()]}
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
        xs = [x for x in EXECS.values() if x["app"] == name][::-1]
        rows = [
            {k: x[k] for k in ("execution_id", "status", "error")}
            | {
                "started": x["timings"]["started"],
                "finished": x["timings"]["finished"],
                "duration_ms": x["timings"]["duration_ms"],
            }
            for x in xs
        ]
        return 200, {"app": name, "executions": rows, "next": None}
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
        answer = live(self.command, self.path, body, who)
        if answer is None:
            answer = routes(self.command, self.path, key == ADMIN_KEY)
        status, out = answer
        data = out.encode() if isinstance(out, str) else json.dumps(out).encode()
        ctype = "text/x-python" if isinstance(out, str) else "application/json"
        xid = LAST[0] if self.path.startswith("/app/") and self.path.split("/")[2].split("?")[0] in LIVE else EXEC
        self._send(status, data, ctype, {"X-Sand-Execution-Id": xid} if self.path.startswith("/app/") else None)

    do_GET = do_PUT = do_POST = do_DELETE = _any

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class' name
        pass


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 18080
    print(f"fake SAND API on http://127.0.0.1:{port}/console/ (keys: {DEV_KEY}, {ADMIN_KEY})")
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
