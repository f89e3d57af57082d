"""Opening a Thrift connection to the host agent's local bus or data layer.

Shared by the bus and data layer clients. Addresses are ``host:port`` (TCP) or ``unix:/path``
(a Unix domain socket, what a sandbox started with ``--network none`` is given).
"""

from __future__ import annotations

import socket
from typing import Any, Self

from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport.TSocket import TSocket
from thrift.transport.TTransport import TBufferedTransport


def parse_address(address: str) -> tuple[str | None, int | None, str | None]:
    """Split an address into (host, port, unix_path); exactly one form is set."""
    if address.startswith("unix:"):
        path = address[len("unix:") :]
        if not path:
            raise ValueError(f"bad address {address!r}: expected unix:/path/to/socket")
        return None, None, path
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"bad address {address!r}: expected host:port or unix:/path")
    return host, int(port), None


def connect(address: str, client_class: Any, timeout_s: float | None = None) -> tuple[Any, Any, socket.socket]:
    """Open a connection; returns (generated client, transport, its socket). The caller closes the transport."""
    host, port, path = parse_address(address)
    sock = TSocket(unix_socket=path) if path else TSocket(host, port)
    if timeout_s is not None:
        sock.setTimeout(timeout_s * 1000)
    transport = TBufferedTransport(sock, rbuf_size=64 * 1024)
    transport.open()
    if not path:
        # Request/response of small messages: never wait for Nagle.
        sock.handle.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return client_class(TBinaryProtocolAccelerated(transport)), transport, sock.handle


# A call that only shows the credential (its answer, often a refusal of the empty argument, is ignored):
# the host agent closes a connection that has not presented a known credential within seconds of
# connecting, and a pre-forked standby opens its connection long before its first real call.
# (a method only that service has, the hello's method, its arguments after the credential)
_HELLOS: tuple[tuple[str, str, tuple[object, ...]], ...] = (
    ("pollHostAgent", "length", ("",)),  # the bus: the length of no queue
    ("verifyGlobal", "flush", (0,)),  # the data layer: wait 0 ms for this application's writes
)


def _hello(client_class: Any) -> tuple[str, tuple[object, ...]] | None:
    for marker, method, args in _HELLOS:
        if hasattr(client_class, "send_" + marker):
            return method, args
    return None


class ThriftClient:
    """One connection acting with one credential: every call passes it first, and a service's Thrift
    exception (``error_class``) becomes ``raise_as(code name, message)``.

    On connecting it sends a hello (a call with the credential) without waiting for its answer, which is
    read before the first call's: an idle connection stays open, and no round trip is added."""

    client_class: Any
    error_class: type[Exception]
    codes: dict[int, str]

    def __init__(self, address: str, credential: str, timeout_s: float | None = None) -> None:
        self.address = address
        self._credential = credential
        self._client, self._transport, self._socket = connect(address, self.client_class, timeout_s)
        self._hello_pending: str | None = None
        hello = _hello(self.client_class)
        if hello is not None:
            method, args = hello
            getattr(self._client, "send_" + method)(credential, *args)
            self._hello_pending = method

    def _raise(self, code: str, message: str) -> None:
        raise NotImplementedError

    def _call(self, method: str, *args: object) -> Any:
        self._read_hello()
        try:
            return getattr(self._client, method)(self._credential, *args)
        except self.error_class as e:
            self._raise(self.codes.get(e.code, str(e.code)), e.message or "")  # type: ignore[attr-defined]

    def _read_hello(self) -> None:
        if self._hello_pending is not None:
            hello, self._hello_pending = self._hello_pending, None
            try:
                getattr(self._client, "recv_" + hello)()
            except self.error_class:
                pass  # the hello's argument is refused; its credential was seen

    # A call in two halves, for a caller that waits on this connection and other things at once (select on
    # fileno()): send it, and once the socket is readable, read its answer. Nothing else may be sent between.
    def _send(self, method: str, *args: object) -> None:
        self._read_hello()
        getattr(self._client, "send_" + method)(self._credential, *args)

    def _receive(self, method: str) -> Any:
        try:
            return getattr(self._client, "recv_" + method)()
        except self.error_class as e:
            self._raise(self.codes.get(e.code, str(e.code)), e.message or "")  # type: ignore[attr-defined]

    def fileno(self) -> int:
        """The connection's socket: readable when the answer of a call sent with ``_send`` has arrived."""
        return self._socket.fileno()

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
