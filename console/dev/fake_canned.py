"""The fake API's canned answers and its grains' pure helpers (console/dev/fake_api.py serves them): the canned
hello and asl-orders applications, an execution with its hops, a page of executions, the data layer's keys; a grain's
metadata, its source and requirements from a zip. A dev tool: no test uses it."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import time
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

ROOT = Path(__file__).resolve().parents[2]


def error(status: int, code: str, message: str) -> tuple[int, Any]:
    return status, {"error": {"code": code, "message": message}}


def stamp() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def meta(name: str, g: dict[str, Any]) -> dict[str, Any]:
    size = len(g["code"])
    return {"name": name, "version": g["version"], "kind": g["kind"], "sha256": g["sha256"], "size": size} | {
        "created": g["created"]
    }


def put_grain(store: dict[str, dict[str, Any]], name: str, body: bytes, ctype: str) -> tuple[int, Any]:
    """A new version of a grain, checked as GrainUpload does (a zip holds <name>.py or <name>/__init__.py)."""
    kind = "zip" if "zip" in ctype else "py"
    if kind == "zip":
        try:
            with zipfile.ZipFile(io.BytesIO(body)) as z:
                names = z.namelist()
        except zipfile.BadZipFile as e:
            return error(400, "bad_grain", f"grain {name}: not a zip archive ({e})")
        if f"{name}.py" not in names and f"{name}/__init__.py" not in names:
            return error(
                400, "bad_grain", f"grain {name}: holds neither {name}.py nor {name}/__init__.py at its top level"
            )
    elif not body.strip():
        return error(400, "bad_grain", f"grain {name}: the code is empty")
    v = store.get(name, {}).get("version", 0) + 1
    sha = hashlib.sha256(body).hexdigest()
    store[name] = {"code": body, "version": v, "kind": kind, "created": stamp(), "sha256": sha}
    return 200, meta(name, store[name])


def source(name: str, g: dict[str, Any]) -> str:
    """The Python a grain runs: the .py, or its module in the zip."""
    if g["kind"] == "py":
        return g["code"].decode()
    with zipfile.ZipFile(io.BytesIO(g["code"])) as z:
        for n in (f"{name}.py", f"{name}/__init__.py"):
            if n in z.namelist():
                return z.read(n).decode()
    return ""


def requirements(g: dict[str, Any]) -> list[str]:
    if g["kind"] != "zip":
        return []
    with zipfile.ZipFile(io.BytesIO(g["code"])) as z:
        if "requirements.txt" not in z.namelist():
            return []
        lines = z.read("requirements.txt").decode().splitlines()
    return [x.strip() for x in lines if x.strip() and not x.strip().startswith("#")]


def resources(wf: dict[str, Any]) -> list[str]:
    """The codes a workflow runs: a function's resource (else its name); an ASL Task's Resource, nested ones too."""
    if "StartAt" in wf:
        out: list[str] = []

        def machine(m: dict[str, Any]) -> None:
            for st in m.get("States", {}).values():
                if st.get("Type") == "Task" and st.get("Resource"):
                    out.append(st["Resource"])
                for b in st.get("Branches", []) + [st.get("ItemProcessor") or st.get("Iterator") or {}]:
                    machine(b)

        machine(wf)
        return list(dict.fromkeys(out))
    return list(dict.fromkeys(f.get("resource") or f["name"] for f in wf.get("functions", [])))


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


def iso(ms: float) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def epoch_ms(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000


def synthetic() -> list[dict[str, Any]]:
    """The canned hello's traffic: one execution every 2.5 s (120 in five minutes: more than a page of 100), about
    one in 23 failed and one in 97 timed out; the same ones at every call, as time goes by."""
    step = 2500
    last = int(time.time() * 1000) // step
    out = []
    for k in range(last - 200, last + 1):
        status = "timeout" if k % 97 == 0 else "failed" if k % 23 == 0 else "succeeded"
        error = {"type": "ValueError", "message": "no luck", "grain": "shout"} if status == "failed" else None
        if status == "timeout":
            error = "no result within 30 s"
        t = k * step
        e = {"execution_id": f"{k:032x}", "status": status, "started": iso(t), "finished": iso(t + 20 + k % 17)}
        out.append(e | {"duration_ms": 20.0 + k % 17, "error": error})
    return out


def listed(name: str, rows: list[dict[str, Any]], query: str) -> tuple[int, Any]:
    """A page of GET /api/v1/apps/{app}/executions: newest first; ?status=, ?since=/?until= (epoch ms, default the
    last 24 h), ?limit= 1-100 (default 20), ?cursor= the previous page's next."""
    q = parse_qs(query)
    now = time.time() * 1000
    try:
        since = float(q.get("since", [now - 86_400_000])[0])
        until = float(q.get("until", [now])[0])
        limit = int(q.get("limit", ["20"])[0])
        at = int(q.get("cursor", ["0"])[0])
    except ValueError as e:
        return error(400, "bad_request", f"bad query: {e}")
    if not 1 <= limit <= 100:
        return error(400, "bad_request", f"limit {limit} is out of 1-100")
    status = q.get("status", [""])[0]
    keep = [r for r in rows if since <= epoch_ms(r["started"]) <= until and (not status or r["status"] == status)]
    keep.sort(key=lambda r: epoch_ms(r["started"]), reverse=True)
    more = at + limit < len(keep)
    return 200, {"app": name, "executions": keep[at : at + limit], "next": str(at + limit) if more else None}


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
