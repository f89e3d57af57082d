"""An in-memory local message bus with the Java server's Thrift interface and rules, for the emulator
(and tests that need no JVM). The real one is localbus/ (Java)."""

from __future__ import annotations

import socket
import threading
import time
from collections import deque

from grainworker._gen.localbus.constants import HOST_AGENT_QUEUE
from grainworker._gen.localbus.ttypes import BusError, BusErrorCode, Delivery, HostAgentMessage

__all__ = ["InMemoryLocalBus"]


# The client socket of the connection a server thread is serving (set by the emulator's server): a long poll of a
# process that died is dropped, as the host agent's bus does, instead of handing a message to a closed socket.
CONNECTION = threading.local()
_LIVENESS_S = 0.25  # how often a waiting poll checks that its caller is still there


def _caller_gone() -> bool:
    sock = getattr(CONNECTION, "sock", None)
    if sock is None:
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


class InMemoryLocalBus:
    """Implements grainworker._gen.localbus.LocalBus.Iface."""

    def __init__(self, agent_credential: str, capacity: int = 10_000) -> None:
        self._agent = agent_credential
        self._apps: dict[str, str] = {}
        self._queues: dict[str, deque[tuple[str, bytes]]] = {}
        self._capacity = capacity
        self._cond = threading.Condition()
        self.polled: set[str] = set()  # the queues a poller has asked for: their grain's code loaded

    def _who(self, credential: str) -> str | None:
        """None for the host agent, the application otherwise."""
        if credential == self._agent:
            return None
        app = self._apps.get(credential)
        if app is None:
            raise BusError(BusErrorCode.UNAUTHORIZED, "unknown credential")
        return app

    def _check(self, credential: str, queue: str, publish: bool) -> str:
        app = self._who(credential)
        if queue == HOST_AGENT_QUEUE:
            if app is not None and not publish:
                raise BusError(BusErrorCode.UNAUTHORIZED, f"application {app} may not poll LQ_HA")
            return app or ""
        parts = queue.split("/")
        if len(parts) != 2 or not all(parts):
            raise BusError(BusErrorCode.BAD_REQUEST, f"bad queue name {queue!r}: expected <app>/<grain>")
        if app is not None and parts[0] != app:
            raise BusError(BusErrorCode.UNAUTHORIZED, f"application {app} may not use queue {queue}")
        return app or ""

    def publish(self, credential: str, queue: str, payload: bytes) -> None:
        self.publishBatch(credential, [Delivery(queue, payload)])

    def publishBatch(self, credential: str, deliveries: list) -> None:  # noqa: N802, ANN001
        senders = [self._check(credential, d.queue, publish=True) for d in deliveries]
        with self._cond:
            for d in deliveries:
                q = self._queues.setdefault(d.queue, deque())
                if len(q) >= self._capacity:
                    raise BusError(BusErrorCode.QUEUE_FULL, f"queue {d.queue} is full")
            for sender, d in zip(senders, deliveries, strict=True):
                self._queues[d.queue].append((sender, d.payload))
            self._cond.notify_all()

    def _take(self, queue: str, max_messages: int, timeout_ms: int) -> list[tuple[str, bytes]]:
        with self._cond:
            q = self._queues.setdefault(queue, deque())
            deadline = time.monotonic() + max(0, timeout_ms) / 1000
            while not q and time.monotonic() < deadline:
                self._cond.wait_for(lambda: q, timeout=min(_LIVENESS_S, max(0.0, deadline - time.monotonic())))
                if _caller_gone():
                    return []
            return [q.popleft() for _ in range(min(max(1, max_messages), len(q)))]

    def poll(self, credential: str, queue: str, maxMessages: int, timeoutMs: int) -> list[bytes]:  # noqa: N803
        self._check(credential, queue, publish=False)
        self.polled.add(queue)
        return [p for _, p in self._take(queue, maxMessages, timeoutMs)]

    def pollHostAgent(self, credential: str, maxMessages: int, timeoutMs: int) -> list:  # noqa: N802, N803
        if self._who(credential) is not None:
            raise BusError(BusErrorCode.UNAUTHORIZED, "pollHostAgent is for the host agent only")
        return [HostAgentMessage(a, p) for a, p in self._take(HOST_AGENT_QUEUE, maxMessages, timeoutMs)]

    def length(self, credential: str, queue: str) -> int:
        self._check(credential, queue, publish=False)
        with self._cond:
            return len(self._queues.get(queue, ()))

    def deleteQueue(self, credential: str, queue: str) -> int:  # noqa: N802
        self._check(credential, queue, publish=False)
        with self._cond:
            return len(self._queues.pop(queue, ()))

    def grantApplication(self, credential: str, application: str, applicationCredential: str) -> None:  # noqa: N802, N803
        if self._who(credential) is not None:
            raise BusError(BusErrorCode.UNAUTHORIZED, "grantApplication is for the host agent only")
        self._apps[applicationCredential] = application

    def revokeApplication(self, credential: str, application: str) -> None:  # noqa: N802
        if self._who(credential) is not None:
            raise BusError(BusErrorCode.UNAUTHORIZED, "revokeApplication is for the host agent only")
        self._apps = {c: a for c, a in self._apps.items() if a != application}
