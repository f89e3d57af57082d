"""Client of the host's local message bus (paper §4.1), used by grain workers and grain instances.

A connection is a socket: never share one across ``fork()``. A grain instance opens its own (the
worker can open it for a pre-forked standby ahead of time, off the critical path).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import cast

from grainworker._gen.localbus import LocalBus
from grainworker._gen.localbus.constants import HOST_AGENT_QUEUE
from grainworker._gen.localbus.ttypes import BusError, BusErrorCode, Delivery
from grainworker._thrift_client import ThriftClient

__all__ = ["HOST_AGENT_QUEUE", "LocalBusClient", "LocalBusError", "queue_name", "report_worker"]


class LocalBusError(Exception):
    """A call the local bus refused: ``code`` is UNAUTHORIZED, QUEUE_FULL, TOO_LARGE, BAD_REQUEST or QUOTA_EXCEEDED
    (the application's share of the bus is used up: its grains are not keeping up; back off and retry)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def queue_name(application: str, grain: str) -> str:
    """The local queue of a grain of an application."""
    return f"{application}/{grain}"


def report_worker(address: str, credential: str, app: str, grain: str, state: str, message: str) -> None:
    """Tell the host agent (on LQ_HA) how a grain's worker is doing, on a connection of its own: "exited" (it
    died: the agent re-delivers what it had taken), "load-failed" (its code does not import) and "crash-looping"
    (both fail a deploy in progress, and show in the application's status), "running" (well again)."""
    report = {"type": "worker", "app": app, "grain": grain, "state": state, "message": message}
    with LocalBusClient(address, credential) as bus:
        bus.publish(HOST_AGENT_QUEUE, json.dumps(report, separators=(",", ":")).encode())


class LocalBusClient(ThriftClient):
    """One connection to the local bus, acting with one credential."""

    client_class = LocalBus.Client
    error_class = BusError
    codes = BusErrorCode._VALUES_TO_NAMES

    def _raise(self, code: str, message: str) -> None:
        raise LocalBusError(code, message) from None

    def publish(self, queue: str, payload: bytes) -> None:
        """Append one message to ``queue`` (``<app>/<grain>`` or LQ_HA)."""
        self._call("publish", queue, payload)

    def publish_batch(self, deliveries: Iterable[tuple[str, bytes]]) -> None:
        """Append every (queue, payload), all or nothing."""
        self._call("publishBatch", [Delivery(queue=q, payload=p) for q, p in deliveries])

    def poll(self, queue: str, max_messages: int = 1, timeout_ms: int = 1000) -> list[bytes]:
        """Up to ``max_messages`` from the head of ``queue``, waiting up to ``timeout_ms`` for one."""
        return cast(list[bytes], self._call("poll", queue, max_messages, timeout_ms))

    def send_poll(self, queue: str, max_messages: int = 1, timeout_ms: int = 1000) -> None:
        """The first half of ``poll``: once ``fileno()`` is readable, ``receive_poll()`` has the messages."""
        self._send("poll", queue, max_messages, timeout_ms)

    def receive_poll(self) -> list[bytes]:
        return cast(list[bytes], self._receive("poll"))

    def poll_host_agent(self, max_messages: int = 1, timeout_ms: int = 1000) -> list[tuple[str, bytes]]:
        """Host agent only: (application, payload) pairs from LQ_HA."""
        msgs = self._call("pollHostAgent", max_messages, timeout_ms)
        return [(m.application, m.payload) for m in msgs]

    def length(self, queue: str) -> int:
        return cast(int, self._call("length", queue))

    def delete_queue(self, queue: str) -> int:
        return cast(int, self._call("deleteQueue", queue))

    def grant_application(self, application: str, credential: str) -> None:
        """Host agent only: let ``credential`` act for ``application``."""
        self._call("grantApplication", application, credential)

    def revoke_application(self, application: str) -> None:
        self._call("revokeApplication", application)
