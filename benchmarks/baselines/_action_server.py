"""The action server that runs inside every baseline container (a model of OpenWhisk's action proxy).

Standard library only: it runs on the image's own ``python3``. It listens on one address, ``unix:<path>`` or
``tcp:<host>:<port>``, and answers two requests, as OpenWhisk's runtimes do:

  POST /init  {"value": {"name": ..., "main": "handle", "code": <python source>}}
              loads the code once; 200 {"ok": true}, or 502 {"error": ...} (a second /init is refused with 403)
  POST /run   {"value": <input>, "activation_id": ..., "deadline_ms": ...}
              calls handle(value, context); 200 {"result": ..., "start_ns": ..., "end_ns": ...}, or
              502 {"error": ..., "start_ns": ..., "end_ns": ...} if it raised or its result is not JSON

One connection and one request at a time (HTTP/1.1 keep-alive): the invoker sends a container one activation at a
time. ``start_ns``/``end_ns`` are time.time_ns() just before and just after the handler.

    python3 _action_server.py unix:/run/action/action.sock
"""

import json
import os
import socket
import sys
import time
import traceback


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

    def log(self, text, level="INFO"):
        self.logs.append([level, str(text)])


class Action:
    def __init__(self):
        self.name = None
        self.main = None

    def init(self, value):
        if self.main is not None:
            return 403, {"error": "Cannot initialize the action more than once."}
        try:
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
            return 502, {"error": "the function raised: " + traceback.format_exc(limit=5), "start_ns": start,
                         "end_ns": end}
        try:
            json.dumps(result)
        except (TypeError, ValueError) as e:
            return 502, {"error": f"the function's result is not JSON: {e}", "start_ns": start, "end_ns": end}
        return 200, {"result": result, "start_ns": start, "end_ns": end}


REASONS = {200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 502: "Bad Gateway"}


def respond(conn, status, payload):
    body = json.dumps(payload).encode()
    head = (f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n")
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
