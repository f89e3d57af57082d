"""Sessions (KNIX's session functions, docs/sessions.md): long-running grain instances that exchange messages.

A grain marked ``sessionFunction`` in the workflow is a session function: each of its instances is a grain instance
like any other (forked by the grain's worker for one event) that stays alive until its handler returns, and polls a
local queue of its own on the host's local message bus, ``<app>/session.<id>``, for the messages other grains send
it. A helper thread of the instance polls that queue: it keeps ``--stop`` and ``--update-heartbeat`` for itself, hands
every other message to ``context.get_session_update_messages()``, and sends the session function's heartbeats.

A session is named by its id: the ``sessionId`` (or ``session_id``) of the event's value when it has one, else the
execution's id, so every grain of one execution is in the same session. Who is running in a session is kept in the
application's data layer, in maps under ``__sand.session.`` (its session functions and their aliases), so a grain
of any later execution that names the session can reach them.

Bounded: an instance of a session function is killed at the application's ``session_timeout_s`` (the grain worker
then removes it from its session), and at most ``session_functions_max`` of them run at once per application and
host (a slot file in the sandbox's /tmp that the instance holds locked; the kernel releases it when the process
ends, however it ends). Messages reach session functions on the same host (the sandbox that runs them): the local
bus is per host, and a session function stays where it started.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import queue
import socket
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

from grainworker.envelope import decode, encode
from grainworker.localbus import queue_name

__all__ = [
    "SESSION_QUEUE_PREFIX",
    "SessionError",
    "SessionFunction",
    "SessionRegistry",
    "SessionSlots",
    "function_id",
    "session_id",
    "session_queue",
]

log = logging.getLogger(__name__)

SESSION_QUEUE_PREFIX = "session."
MAP_PREFIX = "__sand.session."  # the data layer maps of sessions: a grain's own maps never start so
SESSION_ALIASES = MAP_PREFIX + "aliases"  # alias -> session id, for the whole application
SESSION_ALIAS_OF = MAP_PREFIX + "alias-of"  # session id -> alias
STOP = "--stop"
UPDATE_HEARTBEAT = "--update-heartbeat"
HEARTBEAT_METHODS = ("function", "data_layer")
MIN_HEARTBEAT_MS = 100.0  # a faster heartbeat would flood its handler's queue
MAX_PENDING = 10_000  # messages taken from the bus and not yet asked for; beyond it they wait in the bus queue
POLL_S = 0.5  # the helper's longest poll: how soon it notices its session function ended
SLOTS_DIR = os.path.join(tempfile.gettempdir(), "sand-sessions")


class SessionError(Exception):
    """A session call that cannot be done; the message says why and what to do."""


def session_id(value: Any, execution_id: str) -> str:
    """The session an event is in: the ``sessionId``/``session_id`` its value names, else its execution's."""
    if isinstance(value, dict):
        for key in ("sessionId", "session_id"):
            sid = value.get(key)
            if isinstance(sid, str) and sid:
                return sid
    return execution_id


def function_id(app: str, event_id: str) -> str:
    """A session function instance's id, from the event that started it: the grain worker computes the same to clean
    up after an instance it killed."""
    return hashlib.sha256(f"{app}\0{event_id}".encode()).hexdigest()[:32]


def session_queue(app: str, fid: str) -> str:
    return queue_name(app, SESSION_QUEUE_PREFIX + fid)


def _text(data: Any) -> str | None:
    if data is None:
        return None
    return data.decode() if isinstance(data, bytes) else str(data)


class SessionRegistry:
    """Who runs in a session, and the aliases, in the application's data layer (``dl``: a DataLayerClient)."""

    def __init__(self, dl: Any, sid: str) -> None:
        self.dl = dl
        self.sid = sid
        self.functions = f"{MAP_PREFIX}{sid}.functions"  # function id -> {"grain", "sandbox", "queue", "started"}
        self.aliases = f"{MAP_PREFIX}{sid}.aliases"  # alias -> function id
        self.alias_of = f"{MAP_PREFIX}{sid}.alias-of"  # function id -> alias

    # ---- session functions
    def add(self, fid: str, grain: str, name: str, queue_: str) -> None:
        """``name``: what KNIX calls the function (an ASL state's name; a grain's own name otherwise)."""
        meta = {"grain": grain, "name": name, "sandbox": socket.gethostname(), "queue": queue_, "started": time.time()}
        self.dl.put_map_entry(self.functions, fid, json.dumps(meta).encode())

    def remove(self, fid: str) -> None:
        alias = _text(self.dl.get_map_entry(self.alias_of, fid))
        if alias:
            self.dl.delete_map_entry(self.aliases, alias)
            self.dl.delete_map_entry(self.alias_of, fid)
        self.dl.delete_map_entry(self.functions, fid)

    def get(self, fid: str) -> dict[str, Any] | None:
        raw = _text(self.dl.get_map_entry(self.functions, fid))
        if not raw:
            return None
        try:
            meta = json.loads(raw)
        except ValueError:
            return None
        return meta if isinstance(meta, dict) else None

    def all(self) -> dict[str, dict[str, Any]]:
        out = {}
        for fid, raw in self.dl.retrieve_map(self.functions).items():
            try:
                meta = json.loads(raw)
            except ValueError:
                continue
            if isinstance(meta, dict):
                out[fid] = meta
        return out

    def ids(self) -> list[str]:
        return sorted(self.dl.get_map_keys(self.functions))

    # ---- aliases of the session (application-wide) and of its functions (per session)
    def session_alias(self) -> str | None:
        return _text(self.dl.get_map_entry(SESSION_ALIAS_OF, self.sid)) or None

    def set_session_alias(self, alias: str) -> str:
        """ "" when set; else why not (the alias names another session)."""
        other = _text(self.dl.get_map_entry(SESSION_ALIASES, alias))
        if other and other != self.sid:
            return f"session alias {alias!r} is in use by session {other}; unset it there first or pick another"
        old = self.session_alias()
        if old and old != alias:
            self.dl.delete_map_entry(SESSION_ALIASES, old)
        self.dl.put_map_entry(SESSION_ALIASES, alias, self.sid.encode())
        self.dl.put_map_entry(SESSION_ALIAS_OF, self.sid, alias.encode())
        return ""

    def unset_session_alias(self) -> None:
        alias = self.session_alias()
        if alias:
            self.dl.delete_map_entry(SESSION_ALIASES, alias)
            self.dl.delete_map_entry(SESSION_ALIAS_OF, self.sid)

    def function_alias(self, fid: str) -> str | None:
        return _text(self.dl.get_map_entry(self.alias_of, fid)) or None

    def set_function_alias(self, fid: str, alias: str) -> str:
        other = _text(self.dl.get_map_entry(self.aliases, alias))
        if other and other != fid:
            return f"alias {alias!r} is in use by session function {other}; unset it there first or pick another"
        old = self.function_alias(fid)
        if old and old != alias:
            self.dl.delete_map_entry(self.aliases, old)
        self.dl.put_map_entry(self.aliases, alias, fid.encode())
        self.dl.put_map_entry(self.alias_of, fid, alias.encode())
        return ""

    def unset_function_alias(self, fid: str) -> None:
        alias = self.function_alias(fid)
        if alias:
            self.dl.delete_map_entry(self.aliases, alias)
            self.dl.delete_map_entry(self.alias_of, fid)

    def with_alias(self, alias: str) -> str | None:
        return _text(self.dl.get_map_entry(self.aliases, alias)) or None

    def aliases_by_function(self) -> dict[str, str]:
        return {_text(fid) or "": alias for alias, fid in self.dl.retrieve_map(self.aliases).items()}


class SessionSlots:
    """At most ``limit`` session functions of the application at once in this sandbox (one per host): each holds one
    of ``limit`` slot files locked (flock). The kernel drops the lock when the process ends, killed or not, so a slot
    is never leaked."""

    def __init__(self, limit: int, directory: str = SLOTS_DIR) -> None:
        self.limit = limit
        self.directory = directory

    def claim(self) -> int:
        """A locked slot's file descriptor (close it to give the slot back); SessionError when all are taken."""
        os.makedirs(self.directory, exist_ok=True)
        for i in range(self.limit):
            fd = os.open(os.path.join(self.directory, f"slot-{i}"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                os.close(fd)
        raise SessionError(
            f"{self.limit} session functions of this application already run on this host (session_functions_max): "
            "stop some (send them --stop) or raise the application's session_functions_max"
        )


def check_heartbeat(params: dict[str, Any], grains: Any) -> tuple[str, str, float]:
    """(method, function, interval ms) of heartbeat parameters, ("", "", 0) for none; SessionError when wrong."""
    method = params.get("heartbeat_method")
    if method is None:
        return "", "", 0.0
    if method not in HEARTBEAT_METHODS:
        raise SessionError(f"heartbeat_method {method!r} is not one of {list(HEARTBEAT_METHODS)}")
    interval = params.get("heartbeat_interval_ms", 10_000)
    if isinstance(interval, bool) or not isinstance(interval, int | float) or interval < MIN_HEARTBEAT_MS:
        raise SessionError(
            f"heartbeat_interval_ms {interval!r} must be a number of milliseconds >= {MIN_HEARTBEAT_MS:g}"
        )
    function = params.get("heartbeat_function", "")
    if method == "function" and function not in grains:
        raise SessionError(f"heartbeat_function {function!r} is not a grain of the workflow; name one that is")
    return str(method), str(function), float(interval)


class SessionFunction:
    """The running side of one session function instance: its queue, its helper thread, its place in the session.

    ``send(bus, grain, value)`` sends an event of the instance's execution to a grain (a heartbeat) on the helper's own
    bus connection; ``bus_factory`` and ``data_factory`` open connections for the helper thread (a connection is never
    shared across threads)."""

    def __init__(
        self,
        app: str,
        grain: str,
        name: str,
        fid: str,
        registry: SessionRegistry,
        params: dict[str, Any],
        grains: Any,
        bus_factory: Callable[[], Any],
        data_factory: Callable[[], Any],
        send: Callable[[Any, str, Any], None],
    ) -> None:
        self.app = app
        self.grain = grain
        self.name = name
        self.fid = fid
        self.queue = session_queue(app, fid)
        self.registry = registry
        self.grains = grains
        self.heartbeat = check_heartbeat(params, grains)
        self._bus_factory = bus_factory
        self._data_factory = data_factory
        self._send = send
        self.running = True
        self.pending: queue.Queue[Any] = queue.Queue(MAX_PENDING)
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self.error = ""  # why the helper stopped early ("" while it runs or after a normal end)
        self.slot = -1  # the locked slot file (SessionSlots), held for the process's life

    def start(self) -> None:
        self.registry.add(self.fid, self.grain, self.name, self.queue)
        self._thread = threading.Thread(target=self._helper, name=f"session-{self.fid[:8]}", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """The handler returned: stop the helper, leave the session, drop the queue (messages still in it are lost)."""
        self._done.set()
        if self._thread is not None:
            self._thread.join(POLL_S * 4)
        try:
            self.registry.remove(self.fid)
        except Exception as e:  # noqa: BLE001 - the grain worker cleans up after a failed instance too
            log.warning(
                "[%s/%s] session function %s: could not leave its session: %s", self.app, self.grain, self.fid, e
            )

    def messages(self, count: int, block: bool) -> list[Any]:
        """Up to ``count`` messages; with ``block``, wait for ``count`` of them (or the end of the session function)."""
        out: list[Any] = []
        while len(out) < max(1, count):
            try:
                out.append(self.pending.get(block=block, timeout=POLL_S if block else None))
            except queue.Empty:
                if not block or not self.running or self._done.is_set():
                    break
        return out

    # ---- the helper thread
    def _helper(self) -> None:
        bus = None
        try:
            bus = self._bus_factory()
            next_beat = time.monotonic()
            while not self._done.is_set():
                method, _, interval = self.heartbeat
                if method and time.monotonic() >= next_beat:
                    self._beat(bus)
                    next_beat = time.monotonic() + interval / 1000
                wait = POLL_S if not method else max(0.0, min(POLL_S, next_beat - time.monotonic()))
                if self.pending.qsize() >= MAX_PENDING - 100:
                    self._done.wait(wait)  # the handler is behind: the rest wait in the bus queue (its bound)
                    continue
                for raw in bus.poll(self.queue, max_messages=100, timeout_ms=max(1, int(wait * 1000))):
                    self._take(raw)
            bus.delete_queue(self.queue)
        except Exception as e:  # noqa: BLE001 - the handler sees is_still_running() False
            self.error = f"{type(e).__name__}: {e}"
            self.running = False
            log.warning("[%s/%s] session function %s: helper stopped: %s", self.app, self.grain, self.fid, self.error)
        finally:
            if bus is not None:
                bus.close()

    def _take(self, raw: bytes) -> None:
        try:
            message = decode(raw).get("value")
        except ValueError:
            return
        action = message.get("action") if isinstance(message, dict) else None
        if action == STOP:
            self.running = False
        elif action == UPDATE_HEARTBEAT and isinstance(message, dict):
            params = message.get("heartbeat_parameters")
            try:
                self.heartbeat = check_heartbeat(params if isinstance(params, dict) else {}, self.grains)
            except SessionError as e:
                log.warning("[%s/%s] session function %s: %s ignored: %s", self.app, self.grain, self.fid, action, e)
        else:
            self.pending.put(message)

    def _beat(self, bus: Any) -> None:
        method, function, _ = self.heartbeat
        beat = {
            "action": "--heartbeat",
            "session_id": self.registry.sid,
            "session_function_id": self.fid,
            "timestamp": time.time() * 1000.0,
        }
        if method == "function":
            self._send(bus, function, beat)
        else:
            dl = self._data_factory()
            try:
                dl.put(f"heartbeat_{self.registry.sid}_{self.fid}", json.dumps(beat).encode())
            finally:
                dl.close()


def message_payload(value: Any, sender: str, execution_id: str) -> bytes:
    """What goes into a session function's queue."""
    return encode({"value": value, "from": sender, "execution_id": execution_id})
