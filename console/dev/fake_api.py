"""A fake of SAND's REST API for working on the console without the system: console/dist at /console/ with the
frontend's headers, and canned answers shaped as docs/api.md's. For development only; the e2e tests use the real
system (tests/e2e/test_console_e2e.py).

    cd console && npm run build && python3 dev/fake_api.py 18080   # then open http://127.0.0.1:18080/console/

Keys: ``sand_dev`` is a developer's, ``admin-key-for-the-fake-only`` the operator's.
"""

from __future__ import annotations

import json
import mimetypes
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

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
        if n:
            self.rfile.read(n)
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
        if not self.path.startswith("/app/") and key not in (DEV_KEY, ADMIN_KEY):
            self._send(401, b'{"error":{"code":"unauthorized","message":"unknown API key"}}', "application/json")
            return
        status, body = routes(self.command, self.path, key == ADMIN_KEY)
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        ctype = "text/x-python" if isinstance(body, str) else "application/json"
        self._send(status, data, ctype, {"X-Sand-Execution-Id": EXEC} if self.path.startswith("/app/") else None)

    do_GET = do_PUT = do_POST = do_DELETE = _any

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class' name
        pass


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 18080
    print(f"fake SAND API on http://127.0.0.1:{port}/console/ (keys: {DEV_KEY}, {ADMIN_KEY})")
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
