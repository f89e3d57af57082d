"""The action server that runs inside every baseline container (a model of OpenWhisk's action proxy).

Standard library only: it runs on the image's own ``python3``. It listens on one address, ``unix:<path>`` or
``tcp:<host>:<port>``, and answers two requests, as OpenWhisk's runtimes do:

  POST /init  {"value": {"name": ..., "main": "handle", "code": <python source>}}
              loads the code once; 200 {"ok": true}, or 502 {"error": ...} (a second /init is refused with 403)
              A zip action, as OpenWhisk's: {"value": {"name", "main", "code": <the zip, base64>, "binary": true,
              "entry": <module>}}: the zip is unpacked into a new folder, which goes first on sys.path, with its
              ``packages/`` folder (what ``pip install --target`` made) after it; then ``import <entry>`` and its
              ``main``. Without "entry", the zip's ``__main__.py`` is run (OpenWhisk's convention).
  POST /run   {"value": <input>, "activation_id": ..., "deadline_ms": ...}
              calls handle(value, context); 200 {"result": ..., "start_ns": ..., "end_ns": ...}, or
              502 {"error": ..., "start_ns": ..., "end_ns": ...} if it raised or its result is not JSON

One connection and one request at a time (HTTP/1.1 keep-alive): the invoker sends a container one activation at a
time. ``start_ns``/``end_ns`` are time.time_ns() just before and just after the handler.

The context the function gets has SAND's identity calls (get_execution_id: the activation's id, get_grain_name,
log) and, when the environment names a folder in BASELINE_DATA_DIR (the platform's ``data_layer=True`` mounts one
host folder into all its containers), a stand-in for SAND's key-value data layer: put/get/delete of one value per
file, shared by every function of the platform (SAND's semantics: str or bytes in; get gives str when the bytes are
valid UTF-8, else bytes, None when absent).

    python3 _action_server.py unix:/run/action/action.sock
"""

import base64
import binascii
import importlib
import io
import json
import os
import runpy
import socket
import sys
import tempfile
import time
import traceback
import urllib.parse
import zipfile

DATA_DIR = os.environ.get("BASELINE_DATA_DIR") or None


class ActionContext:
    """A small stand-in for a SAND grain's context: identity, deadline and a log."""

    def __init__(self, name, activation_id, deadline_ms):
        self.function_name = name
        self.activation_id = activation_id
        self.deadline_ms = deadline_ms
        self.logs = []

    def get_execution_id(self):
        return self.activation_id

    def get_remaining_time_ms(self):
        return max(0, int(self.deadline_ms - time.time() * 1000)) if self.deadline_ms else None

    def get_grain_name(self):
        return self.function_name

    def log(self, text, level="INFO"):
        self.logs.append([level, str(text)])

    # ---- the data-layer stand-in: one file per key in the shared folder
    def _path(self, key):
        if DATA_DIR is None:
            raise RuntimeError("this platform has no data layer: create it with data_layer=True")
        if not isinstance(key, str) or not key:
            raise ValueError(f"a key is a non-empty str, not {key!r}")
        return os.path.join(DATA_DIR, urllib.parse.quote(key, safe=""))

    def put(self, key, value, is_private=False, is_queued=False):
        if isinstance(value, str):
            value = value.encode()
        if not isinstance(value, (bytes, bytearray)):
            raise TypeError(f"a value is str or bytes, not {type(value).__name__}: encode it (json.dumps)")
        path = self._path(key)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(value)
        os.replace(tmp, path)  # readers see the old value or the new one, never half of it

    def get(self, key, is_private=False):
        try:
            with open(self._path(key), "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return None
        try:
            return data.decode()
        except UnicodeDecodeError:
            return data

    def delete(self, key, is_private=False, is_queued=False):
        try:
            os.unlink(self._path(key))
        except FileNotFoundError:
            pass


def load_zip(code, entry):
    """Unpack a zip action (base64) into a new folder, put it (and its packages/) on sys.path, load the entry
    module (or run __main__.py); the namespace that holds the function."""
    try:
        data = base64.b64decode(code, validate=True)
    except (binascii.Error, TypeError) as e:
        raise ValueError(f"a binary action's code is the zip, base64-encoded: {e}") from None
    folder = tempfile.mkdtemp(prefix="action-")
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        z.extractall(folder)  # member names with .. or a leading / are made safe by zipfile
    del data
    packages = os.path.join(folder, "packages")
    if os.path.isdir(packages):
        sys.path.insert(0, packages)
    sys.path.insert(0, folder)
    if entry:
        return vars(importlib.import_module(entry))
    main = os.path.join(folder, "__main__.py")
    if not os.path.isfile(main):
        raise ValueError("the zip has no __main__.py and the init names no entry module")
    return runpy.run_path(main, run_name="action_main")


class Action:
    def __init__(self):
        self.name = None
        self.main = None

    def init(self, value):
        if self.main is not None:
            return 403, {"error": "Cannot initialize the action more than once."}
        try:
            if value.get("binary"):
                namespace = load_zip(value["code"], value.get("entry"))
            else:
                namespace = {"__name__": "action_" + str(value.get("name", "main"))}
                exec(compile(value["code"], str(value.get("name", "action")) + ".py", "exec"), namespace)
            main = namespace.get(value.get("main") or "handle")
            if not callable(main):
                return 502, {"error": f"the code defines no function {value.get('main') or 'handle'!r}"}
        except Exception:  # noqa: BLE001 - the action's own error, reported to the invoker
            return 502, {"error": "init failed: " + traceback.format_exc(limit=5)}
        self.name, self.main = value.get("name", "action"), main
        return 200, {"ok": True}

    def run(self, body):
        if self.main is None:
            return 502, {"error": "the action is not initialized"}
        ctx = ActionContext(self.name, body.get("activation_id", ""), body.get("deadline_ms"))
        start = time.time_ns()
        try:
            result = self.main(body.get("value"), ctx)
            end = time.time_ns()
        except Exception:  # noqa: BLE001
            end = time.time_ns()
            return 502, {
                "error": "the function raised: " + traceback.format_exc(limit=5),
                "start_ns": start,
                "end_ns": end,
            }
        try:
            json.dumps(result)
        except (TypeError, ValueError) as e:
            return 502, {"error": f"the function's result is not JSON: {e}", "start_ns": start, "end_ns": end}
        return 200, {"result": result, "start_ns": start, "end_ns": end}


REASONS = {200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 502: "Bad Gateway"}


def respond(conn, status, payload):
    body = json.dumps(payload).encode()
    head = (
        f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    conn.sendall(head.encode() + body)  # one write: no Nagle/delayed-ACK stall between head and body


def serve_connection(conn, action):
    reader = conn.makefile("rb")
    while True:
        line = reader.readline(65537)
        if not line:
            return
        parts = line.decode("latin-1").split()
        length = 0
        while True:
            header = reader.readline(65537)
            if header in (b"\r\n", b"\n", b""):
                break
            name, _, value = header.decode("latin-1").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        raw = reader.read(length) if length else b""
        if len(parts) < 2 or parts[0] != "POST":
            respond(conn, 400, {"error": "POST /init or POST /run"})
            continue
        try:
            body = json.loads(raw or b"{}")
        except ValueError as e:
            respond(conn, 400, {"error": f"the body is not JSON: {e}"})
            continue
        if parts[1] == "/init":
            respond(conn, *action.init(body.get("value") or {}))
        elif parts[1] == "/run":
            respond(conn, *action.run(body))
        else:
            respond(conn, 404, {"error": f"no such path {parts[1]}: POST /init or POST /run"})


def listen(address):
    kind, _, where = address.partition(":")
    if kind == "unix":
        if os.path.exists(where):
            os.unlink(where)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        tmp = where + ".tmp"
        s.bind(tmp)
        os.chmod(tmp, 0o777)
        s.listen(8)
        os.rename(tmp, where)  # the socket appears under its name only once it accepts connections
        return s
    if kind == "tcp":
        host, _, port = where.rpartition(":")
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host or "0.0.0.0", int(port)))
        s.listen(8)
        return s
    raise SystemExit(f"address must be unix:<path> or tcp:<host>:<port>, not {address!r}")


def main():
    listener = listen(sys.argv[1])
    action = Action()
    while True:
        conn, _ = listener.accept()
        if conn.family == socket.AF_INET:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            serve_connection(conn, action)
        except OSError:
            pass
        finally:
            conn.close()


if __name__ == "__main__":
    main()
