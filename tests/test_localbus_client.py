"""The Python local bus client against the real Java local bus server (standalone, free port)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from grainworker.localbus import HOST_AGENT_QUEUE, LocalBusClient, LocalBusError, queue_name
from tests.javaserver import java_server

AGENT = "agent-credential-0123456789"
CRED_A = "app-a-credential-0123456789"
CRED_B = "app-b-credential-0123456789"


@pytest.fixture(scope="module")
def bus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    sock = tmp_path_factory.mktemp("bus") / "bus.sock"
    env = {
        "SAND_LOCALBUS_CREDENTIAL": AGENT,
        "SAND_LOCALBUS_PORT": "0",
        "SAND_LOCALBUS_QUEUE_CAPACITY": "5",
        "SAND_LOCALBUS_MESSAGE_MAX_BYTES": str(1 << 20),
        "SAND_LOCALBUS_UNIX_SOCKET": str(sock),
    }
    with java_server("localbus", "sand.localbus.LocalBusServer", env) as address:
        with LocalBusClient(address, AGENT) as admin:
            admin.grant_application("appa", CRED_A)
            admin.grant_application("appb", CRED_B)
        yield {"tcp": address, "unix": f"unix:{sock}"}


@pytest.fixture
def app_a(bus: dict[str, str]) -> Iterator[LocalBusClient]:
    with LocalBusClient(bus["tcp"], CRED_A, timeout_s=60) as c:
        yield c


def test_publish_then_poll_in_fifo_order(app_a: LocalBusClient) -> None:
    q = queue_name("appa", "fifo")
    for i in range(4):
        app_a.publish(q, f"m{i}".encode())
    assert app_a.length(q) == 4
    assert app_a.poll(q, max_messages=3, timeout_ms=0) == [b"m0", b"m1", b"m2"]
    assert app_a.poll(q, max_messages=3, timeout_ms=0) == [b"m3"]
    assert app_a.poll(q, max_messages=3, timeout_ms=50) == []


def test_long_poll_is_woken_by_a_publish(bus: dict[str, str], app_a: LocalBusClient) -> None:
    q = queue_name("appa", "wake")
    got: list[list[bytes]] = []
    waited: list[float] = []

    def poller() -> None:
        with LocalBusClient(bus["tcp"], CRED_A, timeout_s=60) as c:
            t0 = time.monotonic()
            got.append(c.poll(q, timeout_ms=30_000))
            waited.append(time.monotonic() - t0)

    t = threading.Thread(target=poller)
    t.start()
    time.sleep(0.3)  # let the poller block first
    app_a.publish(q, b"wake up")
    t.join(timeout=40)
    assert got == [[b"wake up"]]
    assert waited[0] < 10, "the poller was not woken by the publish; it waited for its timeout"


def test_batch_is_all_or_nothing_when_a_queue_is_full(app_a: LocalBusClient) -> None:
    full, other = queue_name("appa", "full"), queue_name("appa", "other")
    for i in range(5):
        app_a.publish(full, b"x%d" % i)
    with pytest.raises(LocalBusError) as err:
        app_a.publish(full, b"one too many")
    assert err.value.code == "QUEUE_FULL"
    with pytest.raises(LocalBusError) as err:
        app_a.publish_batch([(other, b"a"), (full, b"b")])
    assert err.value.code == "QUEUE_FULL"
    assert app_a.length(other) == 0, "a refused batch must enqueue nothing"
    assert app_a.poll(full, max_messages=10, timeout_ms=0) == [b"x0", b"x1", b"x2", b"x3", b"x4"]
    app_a.publish_batch([(other, b"a"), (full, b"b")])
    assert app_a.poll(other, timeout_ms=0) == [b"a"] and app_a.poll(full, timeout_ms=0) == [b"b"]


def test_an_application_cannot_touch_another_applications_queues(bus: dict[str, str]) -> None:
    theirs = queue_name("appb", "secret")
    with LocalBusClient(bus["tcp"], CRED_B) as b:
        b.publish(theirs, b"b's event")
    with LocalBusClient(bus["tcp"], CRED_A) as a:
        for call in (
            lambda: a.publish(theirs, b"x"),
            lambda: a.poll(theirs, timeout_ms=0),
            lambda: a.length(theirs),
            lambda: a.delete_queue(theirs),
            lambda: a.publish_batch([(queue_name("appa", "mine"), b"ok"), (theirs, b"x")]),
            lambda: a.poll(HOST_AGENT_QUEUE, timeout_ms=0),
            lambda: a.poll_host_agent(timeout_ms=0),
            lambda: a.grant_application("appb", "stolen-credential-0123456789"),
        ):
            with pytest.raises(LocalBusError) as err:
                call()
            assert err.value.code == "UNAUTHORIZED"
        assert a.length(queue_name("appa", "mine")) == 0
    with LocalBusClient(bus["tcp"], CRED_B) as b:
        assert b.poll(theirs, timeout_ms=0) == [b"b's event"], "b's event must be untouched"


def test_unknown_credential_is_refused(bus: dict[str, str]) -> None:
    with LocalBusClient(bus["tcp"], "not-a-credential-at-all-000") as c:
        with pytest.raises(LocalBusError) as err:
            c.publish(queue_name("appa", "x"), b"x")
    assert err.value.code == "UNAUTHORIZED"


def test_lq_ha_messages_carry_the_publishing_application(bus: dict[str, str]) -> None:
    with LocalBusClient(bus["tcp"], CRED_B) as b:
        b.publish(HOST_AGENT_QUEUE, b'{"application": "appa", "claim": "I am appa"}')
    with LocalBusClient(bus["tcp"], AGENT) as agent:
        msgs = agent.poll_host_agent(max_messages=10, timeout_ms=5000)
    assert msgs == [("appb", b'{"application": "appa", "claim": "I am appa"}')]


def test_oversized_and_malformed_input_get_clear_errors(app_a: LocalBusClient) -> None:
    with pytest.raises(LocalBusError) as err:
        app_a.publish(queue_name("appa", "big"), b"x" * ((1 << 20) + 1))
    assert err.value.code == "TOO_LARGE"
    for bad in ("no-slash", "appa/", "appa/a/b", "appa/sp ace", ""):
        with pytest.raises(LocalBusError) as err:
            app_a.publish(bad, b"x")
        assert err.value.code in ("BAD_REQUEST", "UNAUTHORIZED"), bad
    assert app_a.length(queue_name("appa", "big")) == 0


def test_unix_socket_transport(bus: dict[str, str]) -> None:
    with LocalBusClient(bus["unix"], CRED_A) as c:
        c.publish(queue_name("appa", "unix"), b"over a unix socket")
        assert c.poll(queue_name("appa", "unix"), timeout_ms=1000) == [b"over a unix socket"]


def test_client_imports_nothing_heavier_than_thrift() -> None:
    # thrift itself needs six; the editable-install finder is pip machinery, not an import of ours.
    code = (
        "import sys, sysconfig, grainworker.localbus, grainworker.datalayer\n"
        "std = sysconfig.get_paths()['stdlib']\n"
        "for name, m in sorted(sys.modules.items()):\n"
        "    f = getattr(m, '__file__', None) or ''\n"
        "    top = name.split('.')[0]\n"
        "    if (f and not f.startswith(std) and top not in ('thrift', 'six', 'grainworker')\n"
        "            and not top.startswith(('__editable__', '_distutils_hack'))):\n"
        "        print(name)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert out.stdout.split() == []


def test_an_application_past_its_share_of_the_bus_gets_quota_exceeded(tmp_path: Path) -> None:
    # A bus of its own: the shared one's quotas are the defaults, far above what a test should queue.
    env = {
        "SAND_LOCALBUS_CREDENTIAL": AGENT,
        "SAND_LOCALBUS_PORT": "0",
        "SAND_LOCALBUS_MESSAGE_MAX_BYTES": "1000",
        # two 1000-byte messages and their overhead (64 bytes each), not a third of any size
        "SAND_LOCALBUS_APP_QUEUED_MAX_BYTES": "2150",
        "SAND_LOCALBUS_APP_QUEUES_MAX": "2",
        "SAND_LOCALBUS_UNIX_SOCKET": str(tmp_path / "bus.sock"),
    }
    with java_server("localbus", "sand.localbus.LocalBusServer", env) as address:
        with LocalBusClient(address, AGENT) as admin:
            admin.grant_application("appa", CRED_A)
        with LocalBusClient(address, CRED_A) as a:
            q, other = queue_name("appa", "q"), queue_name("appa", "other")
            a.publish(q, b"x" * 1000)
            a.publish(q, b"y" * 1000)
            with pytest.raises(LocalBusError) as err:
                a.publish(q, b"z")
            assert err.value.code == "QUOTA_EXCEEDED"
            assert "appa" in str(err.value) and "app.queued.max.bytes" in str(err.value)
            with pytest.raises(LocalBusError) as err:
                a.publish_batch([(other, b"a"), (q, b"b")])
            assert err.value.code == "QUOTA_EXCEEDED"
            assert a.length(other) == 0 and a.length(q) == 2, "a refused publish enqueues nothing"
            assert a.poll(q, max_messages=1, timeout_ms=0) == [b"x" * 1000]
            a.publish(other, b"z")  # what was taken is given back; a second queue is within app.queues.max
            with pytest.raises(LocalBusError) as err:
                a.publish(queue_name("appa", "third"), b"t")
            assert err.value.code == "QUOTA_EXCEEDED" and "app.queues.max" in str(err.value)
