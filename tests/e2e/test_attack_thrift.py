"""Thrift length bombs against the host agent (issue 26, finding 1), on the real system.

TBinaryProtocol allocated a string's declared length before its bytes arrived, and the credential was checked only
once every argument was read: 8 bytes declaring a 100 MB method name on each of ~16-24 connections took the host agent
(its heap ~1.6 GB, ExitOnOutOfMemoryError) down, with every application on the host. Here:

- a grain (deployed through the public API) opens many connections to its own bus.sock and data.sock, sends such
  headers, and holds them; another variant presents its real credential and then declares a 15 MiB payload (under the
  bus's 16 MiB cap) that it never sends, on 150 connections (2.4 GB if allocated up front);
- the test process sends the same headers straight at the TCP bus and data ports with no credential, and opens
  silent connections there.

After each, the host agent is the same process (no exit, no restart by its supervisor), the bombs' connections were
closed by the agent, and another tenant's application answers.

Settings (environment): SAND_BIND, SAND_LOCALBUS_PORT (9190), SAND_DATALAYER_PORT (9191), SAND_HOME.
"""

from __future__ import annotations

import os
import socket
import struct
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.api import Http, put_app, raw_remove, sign_up

RUN = uuid.uuid4().hex[:8]
BIND = os.environ.get("SAND_BIND", "127.0.0.1")
BUS_PORT = int(os.environ.get("SAND_LOCALBUS_PORT", "9190"))
DATA_PORT = int(os.environ.get("SAND_DATALAYER_PORT", "9191"))
METRICS = f"http://{BIND}:{os.environ.get('SAND_HOSTAGENT_METRICS_PORT', '9100')}/metrics"
SAND_HOME = Path(os.environ.get("SAND_HOME", Path(__file__).resolve().parents[2] / ".sand"))
ECHO = "def handle(event, context):\n    return event\n"
# A versioned CALL header and a method name's length: 100 MB, never sent.
BOMB = struct.pack(">iI", -2147418111, 100_000_000)
AUTH_TIMEOUT_S = 5  # ThriftLimits.AUTH_TIMEOUT_MS

# The attacker's grain: it has its sandbox's sockets and credential, like any grain.
BOMBER = r'''
import os, socket, struct, time

BOMB = struct.pack(">iI", -2147418111, 100_000_000)

def _publish_declaring(credential, queue, size):
    """A publish call with the real credential whose payload declares size bytes and sends none."""
    name, cred, q = b"publish", credential.encode(), queue.encode()
    return (struct.pack(">iI", -2147418111, len(name)) + name + struct.pack(">i", 1)
            + struct.pack(">bhI", 11, 1, len(cred)) + cred
            + struct.pack(">bhI", 11, 2, len(q)) + q
            + struct.pack(">bhI", 11, 3, size))

def _open(path, n, first_bytes):
    out = []
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            s.sendall(first_bytes)
        except OSError:
            s.close()  # refused at accept: what a cap does
            continue
        out.append(s)
    return out

def _closed(s):
    s.setblocking(False)
    try:
        return s.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True

def handle(event, context):
    n, hold = event.get("n", 24), event.get("hold_s", 8)
    if event["mode"] == "bomb":
        socks = {name: _open("/sand/sockets/%s.sock" % name, n, BOMB) for name in ("bus", "data")}
    else:
        me = context._event
        call = _publish_declaring(os.environ["SAND_GRAINWORKER_CREDENTIAL"], me["app"] + "/sink", event["size"])
        socks = {"bus": _open("/sand/sockets/bus.sock", n, call)}
    time.sleep(hold)
    result = {"opened": {k: len(v) for k, v in socks.items()},
              "closed": {k: sum(_closed(s) for s in v) for k, v in socks.items()}}
    for v in socks.values():
        for s in v:
            s.close()
    return result
'''


def agent() -> tuple[str, ...]:
    """Who the host agent is: its pid file, and (when supervised) its JVM's pid and restart count."""
    run = SAND_HOME / "run"
    ident = [(run / "hostagent.pid").read_text().strip()]
    sup = run / "hostagent.supervisor"
    if sup.exists():
        state = dict(line.split("=", 1) for line in sup.read_text().splitlines() if "=" in line)
        ident += [state.get("child", ""), state.get("restarts", "")]
    return tuple(ident)


def agent_alive() -> None:
    r = requests.get(METRICS, timeout=10)
    assert r.status_code == 200, r.text[:200]


def sign_up_retrying(http: Http, name: str) -> str:
    """Sign up; a busy shared Cassandra may answer 'unavailable' for a moment (and sign-ups may be rate limited)."""
    for _ in range(20):
        r = http("POST", "/api/v1/accounts", json_body={"name": name})
        if r.status_code in (200, 201):
            return str(r.json()["api_key"])
        assert r.status_code >= 500 or r.status_code == 429, r.text
        time.sleep(3)
    return sign_up(http, name)


@pytest.fixture(scope="module")
def tenants(http: Http) -> dict[str, str]:
    return {who: sign_up_retrying(http, f"thrift-{who}-{RUN}") for who in ("mallory", "alice")}


@pytest.fixture(scope="module")
def bomber(http: Http, tenants: dict[str, str]) -> Iterator[str]:
    name = f"bomber-{RUN}"
    grains = [{"name": "bomb", "next": ["end"]}, {"name": "sink", "next": ["end"]}]
    app = put_app(http, tenants["mallory"], name, grains, {"bomb": BOMBER, "sink": ECHO}, settings={"timeout_s": 120})
    assert app["status"] == "deployed", app
    yield name
    raw_remove(http, tenants["mallory"], name)


@pytest.fixture(scope="module")
def victim(http: Http, tenants: dict[str, str]) -> Iterator[str]:
    name = f"victim-{RUN}"
    app = put_app(http, tenants["alice"], name, [{"name": "echo", "next": ["end"]}], {"echo": ECHO})
    assert app["status"] == "deployed", app
    yield name
    raw_remove(http, tenants["alice"], name)


def victim_answers(http: Http, victim: str) -> None:
    r = http("POST", f"/app/{victim}", json_body={"hello": "alice"}, timeout=30)
    assert r.status_code == 200 and r.json() == {"hello": "alice"}, r.text


def bomb(http: Http, bomber: str, body: dict[str, Any]) -> dict[str, Any]:
    r = http("POST", f"/app/{bomber}", json_body=body, timeout=120)
    assert r.status_code == 200, f"the bomber's call failed (did the host agent die?): {r.status_code} {r.text[:300]}"
    return dict(r.json())


def test_length_bombs_from_a_grain_on_its_own_sockets(http: Http, bomber: str, victim: str) -> None:
    before = agent()
    victim_answers(http, victim)
    got = bomb(http, bomber, {"mode": "bomb", "n": 24, "hold_s": 8})
    assert got["opened"] == {"bus": 24, "data": 24}, got
    assert got["closed"] == {"bus": 24, "data": 24}, f"every bomb's connection is closed by the agent: {got}"
    agent_alive()
    assert agent() == before, "the host agent did not exit or restart"
    victim_answers(http, victim)


def test_declared_but_unsent_payloads_under_the_cap_pin_nothing(http: Http, bomber: str, victim: str) -> None:
    before = agent()
    # 150 connections x 15 MiB declared with the grain's own credential: 2.4 GB if allocated before the bytes come
    # (an old standalone bus with the agent's -Xmx1592m died of it; 100 connections were not enough).
    got = bomb(http, bomber, {"mode": "payload", "n": 150, "size": 15 << 20, "hold_s": 8})
    assert got["opened"] == {"bus": 150}, got
    agent_alive()
    assert agent() == before, "the host agent did not exit or restart"
    victim_answers(http, victim)


def _tcp(port: int, first: bytes) -> socket.socket:
    s = socket.create_connection((BIND, port), timeout=10)
    if first:
        s.sendall(first)
    return s


def _closed_by_agent(s: socket.socket, within_s: float) -> bool:
    s.settimeout(within_s)
    try:
        return s.recv(1) == b""
    except TimeoutError:
        return False
    except OSError:
        return True


def test_length_bombs_and_silent_connections_at_the_tcp_ports(http: Http, victim: str) -> None:
    before = agent()
    victim_answers(http, victim)
    bombs = [_tcp(port, BOMB) for port in (BUS_PORT, DATA_PORT) for _ in range(24)]
    silent = [_tcp(port, b"") for port in (BUS_PORT, DATA_PORT) for _ in range(50)]
    try:
        time.sleep(3)  # held: with the old protocol each holds 100 MB by now
        assert all(_closed_by_agent(s, 5) for s in bombs), "a bomb without a credential is closed at once"
        assert all(_closed_by_agent(s, AUTH_TIMEOUT_S + 10) for s in silent), (
            "a connection that presents no credential is closed after the deadline"
        )
    finally:
        for s in bombs + silent:
            s.close()
    agent_alive()
    assert agent() == before, "the host agent did not exit or restart"
    victim_answers(http, victim)
