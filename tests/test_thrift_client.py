"""The Thrift clients against the real Java servers' credential deadline: a connection must present a
known credential within seconds of connecting, or the server closes it. The clients send a hello on
connecting, so a connection opened ahead of its first call (a pre-forked standby's) stays usable."""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Iterator

import pytest

from grainworker.datalayer import DataLayerClient
from grainworker.localbus import LocalBusClient, queue_name
from tests.javaserver import java_server

AGENT = "agent-credential-0123456789"
CRED_A = "app-a-credential-0123456789"
DEADLINE_S = 5.0  # ThriftLimits.AUTH_TIMEOUT_MS


@pytest.fixture(scope="module")
def bus() -> Iterator[str]:
    env = {"SAND_LOCALBUS_CREDENTIAL": AGENT, "SAND_LOCALBUS_PORT": "0"}
    with java_server("localbus", "sand.localbus.LocalBusServer", env) as address:
        with LocalBusClient(address, AGENT) as admin:
            admin.grant_application("appa", CRED_A)
        yield address


@pytest.fixture(scope="module")
def data() -> Iterator[str]:
    env = {"SAND_DATALAYER_CREDENTIAL": AGENT, "SAND_DATALAYER_PORT": "0", "SAND_DATALAYER_GLOBAL": "memory"}
    with java_server("datalayer", "sand.datalayer.DataLayerServer", env) as address:
        with DataLayerClient(address, AGENT) as admin:
            admin.grant_application("appa", CRED_A)
        yield address


def _closed_by_server(address: str, send: bytes, wait_s: float) -> bool:
    host, _, port = address.rpartition(":")
    with socket.create_connection((host, int(port))) as s:
        s.settimeout(wait_s)
        if send:
            s.sendall(send)
        try:
            return s.recv(1) == b""
        except TimeoutError:
            return False
        except ConnectionResetError:
            return True


def test_idle_clients_outlive_the_credential_deadline(bus: str, data: str) -> None:
    with LocalBusClient(bus, CRED_A) as b, DataLayerClient(data, CRED_A) as d:
        time.sleep(DEADLINE_S + 1.5)
        q = queue_name("appa", "idle")
        b.publish(q, b"after the deadline")
        assert b.poll(q, max_messages=1, timeout_ms=0) == [b"after the deadline"]
        d.put("k", b"v")
        assert d.get("k") == b"v"


@pytest.mark.parametrize("which", ["bus", "data"])
def test_a_silent_stranger_and_a_length_bomb_are_closed(which: str, bus: str, data: str) -> None:
    address = bus if which == "bus" else data
    assert _closed_by_server(address, b"", DEADLINE_S + 5), "a silent connection is closed after the deadline"
    bomb = struct.pack(">iI", -2147418111, 100_000_000)  # a versioned CALL header, a 100 MB method name
    assert _closed_by_server(address, bomb, 5), "a declared 100 MB method name closes the connection at once"
