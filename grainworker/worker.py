"""The grain worker (paper §4.1): one long-lived process per grain inside the application's sandbox.

It imports the grain's code once, long-polls the grain's local queue, and ``fork()``s a grain instance
for every event. It reaps its children, caps how many run at once (excess events wait in the queue),
kills an instance past the grain's timeout, and answers for an instance that died without publishing
(timeout, kill, crash) with an error event to the workflow's end, so the caller always gets an answer.

Pre-forked standby (beyond the paper): one child is forked ahead of time, has opened its own bus
connection and waits on a pipe; an event is handed to it (a pipe write instead of a fork on the
critical path) and the next standby is forked once no event came for STANDBY_DEFER_S after the hand-off
(right after it, the instance and the next grain's worker need the CPU; on 2 vCPUs a fork there added ~1 ms
to the hop). Each event still gets a fresh process.
A standby costs memory (~1.5 MB of pages it and the worker no longer share), so a worker keeps one only
for a grain that was called in the last STANDBY_IDLE_S seconds, and only while the sandbox uses less than
STANDBY_MEMORY_SHARE of its memory limit: a sandbox of 100 grains fits its default 512 MB, and its busy
grains still start instances from standbys (docs/grain-worker.md).
"""

from __future__ import annotations

import importlib
import logging
import math
import os
import resource
import select
import signal
import struct
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from grainworker._fork import fork
from grainworker.cgroup import memory_share as sandbox_memory_share
from grainworker.instance import InstanceSpec, failure_batch, run_instance
from grainworker.localbus import queue_name
from grainworker.workflow import DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT_S

__all__ = ["GrainWorker", "WorkerConfig", "load_grain", "load_handler"]

log = logging.getLogger(__name__)

STOP_MESSAGE = b'{"control":"stop"}'
STANDBY_IDLE_S = 600.0       # a grain not called for this long gives its standby back
STANDBY_MEMORY_SHARE = 0.75  # no new standby while the sandbox uses more than this share of its memory limit
STANDBY_DEFER_S = 0.003      # after a hand-off, the next standby is forked once no event came for this long
_HANDOFF = struct.Struct(">IQ")  # what the worker writes to a standby: the event's length, when it was polled


@dataclass
class WorkerConfig:
    app: str
    grain: str
    spec: InstanceSpec
    code_dir: str
    bus_address: str
    data_address: str
    credential: str
    max_concurrency: int = DEFAULT_CONCURRENCY
    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_mb: int = 0          # extra address space an instance may map beyond the worker's (0 = no limit)
    standby: bool = True
    stop_grace_s: float = 10.0  # on stop, how long running instances may finish before they are killed


@dataclass
class _Child:
    raw: bytes
    deadline: float
    pidfd: int
    killed_for: str = ""


def load_grain(code_dir: str, module: str) -> tuple[Callable[[Any, Any], Any], str]:
    """Import the grain's code once: its handler, and "" or why it did not load (what a developer needs to fix it:
    the exception and where in the grain's code it was raised). A grain that did not load gets a handler that
    raises its error."""
    if code_dir not in sys.path:
        sys.path.insert(0, code_dir)
    try:
        mod = importlib.import_module(module)
        handler = getattr(mod, "handle", None)
        if not callable(handler):
            raise AttributeError(f"grain module {module!r} has no function handle(event, context)")
        return handler, ""
    except BaseException as e:  # noqa: BLE001 - SyntaxError, ImportError, SystemExit, anything at import time
        err = e
        why = f"{type(e).__name__}: {e}{_where(e, code_dir)}"
        log.error("grain code %r failed to load: %s", module, why)

        def broken(event: Any, context: Any) -> Any:
            raise err

        return broken, why


def load_handler(code_dir: str, module: str) -> Callable[[Any, Any], Any]:
    """Import the grain's code once. A grain that cannot load still answers every event, with its error (the
    emulator's way; on the platform the grain worker reports it and the deploy fails)."""
    return load_grain(code_dir, module)[0]


def _where(e: BaseException, code_dir: str) -> str:
    """' (file.py, line N)': the innermost place in the application's own code the error came from."""
    if isinstance(e, SyntaxError):
        return ""  # its message already says where: "expected ':' (g.py, line 1)"
    place = ""
    tb = e.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename.startswith(code_dir.rstrip("/") + "/"):
            place = f" ({os.path.relpath(filename, code_dir)}, line {tb.tb_lineno})"
        tb = tb.tb_next
    return place


class GrainWorker:
    def __init__(self, cfg: WorkerConfig, handler: Callable[[Any, Any], Any],
                 bus_factory: Callable[[], Any], data_factory: Callable[[], Any]) -> None:
        self.cfg = cfg
        self.handler = handler
        self.queue = queue_name(cfg.app, cfg.grain)
        self._bus_factory = bus_factory
        self._data_factory = data_factory
        self.bus = bus_factory()
        self.children: dict[int, _Child] = {}
        self._standby: tuple[int, int] | None = None  # (pid, write end of its pipe)
        self._stopping = False
        self.instances_started = 0
        self._last_event = -STANDBY_IDLE_S  # monotonic; no standby until the grain is first called
        self._standby_due = 0.0  # monotonic; no new standby before (the hop the last hand-off started needs the CPU)
        self._memory_read_at = -1.0
        self._memory_ok = True

    # ---- lifecycle
    def stop(self, *_: object) -> None:
        self._stopping = True

    def run(self) -> None:
        log.info("[%s/%s] grain worker up: concurrency %d, timeout %.1fs, standby %s", self.cfg.app,
                 self.cfg.grain, self.cfg.max_concurrency, self.cfg.timeout_s, self.cfg.standby)
        while not self._stopping:
            self.step()
        self.shutdown()

    def step(self) -> None:
        """One round: reap, enforce timeouts, keep a standby, then wait for events or for a free slot."""
        self.reap()
        self.kill_expired()
        self._keep_standby()
        free = self.cfg.max_concurrency - len(self.children)
        if free <= 0:
            self._wait_children(self._until_deadline(1.0))
            return
        wait = self._until_deadline(1.0)
        defer = self._standby_due - time.monotonic()
        if self._standby is None and self.cfg.standby and defer > 0:
            wait = min(wait, defer)  # wake up to fork the standby once the deferral is over
        msgs = self.bus.poll(self.queue, max_messages=min(free, 32), timeout_ms=max(1, math.ceil(wait * 1000)))
        polled = time.monotonic_ns()
        if msgs:
            self._last_event = polled / 1e9
        for raw in msgs:
            if raw == STOP_MESSAGE:
                self._stopping = True
                continue
            self.dispatch(raw, polled)

    def shutdown(self) -> None:
        """Finish running instances (bounded wait), kill the rest, release the standby."""
        if self._standby:
            os.close(self._standby[1])  # the standby sees EOF and exits quietly
            self._reap_standby(block=True)
        deadline = time.monotonic() + self.cfg.stop_grace_s
        while self.children and time.monotonic() < deadline:
            self._wait_children(deadline - time.monotonic())
            self.reap()
        for pid, child in list(self.children.items()):
            child.killed_for = "Stopped"
            os.kill(pid, signal.SIGKILL)
        while self.children:
            self._wait_children(1.0)
            self.reap()
        log.info("[%s/%s] grain worker stopped after %d instances", self.cfg.app, self.cfg.grain,
                 self.instances_started)

    # ---- instances
    def dispatch(self, raw: bytes, polled_ns: int = 0) -> None:
        self.instances_started += 1
        if self._standby is not None:
            pid, w = self._standby
            self._standby = None
            try:
                os.write(w, _HANDOFF.pack(len(raw), polled_ns))
                _write_all(w, raw)
                os.close(w)
                self._track(pid, raw)
                self._standby_due = time.monotonic() + STANDBY_DEFER_S
                return
            except OSError:
                os.close(w)  # the standby died: reap it and fall back to a fresh fork
                os.waitpid(pid, 0)
        pid = fork()
        if pid == 0:
            self._child_main(raw=raw, polled_ns=polled_ns)
        self._track(pid, raw)

    def _track(self, pid: int, raw: bytes) -> None:
        self.children[pid] = _Child(raw, time.monotonic() + self.cfg.timeout_s, os.pidfd_open(pid))

    def _keep_standby(self) -> None:
        """Fork a standby for a recently called grain while the sandbox has memory to spare; release an idle one."""
        now = time.monotonic()
        recent = now - self._last_event < STANDBY_IDLE_S
        if self._standby is None:
            if self.cfg.standby and recent and now >= self._standby_due and self._memory_to_spare():
                self._fork_standby()
        elif not recent:
            pid, w = self._standby
            os.close(w)  # it sees EOF and exits quietly
            self._standby = None
            os.waitpid(pid, 0)

    def _memory_to_spare(self) -> bool:
        """The sandbox's memory, read at most once a second: not two file reads before every poll when short."""
        now = time.monotonic()
        if now - self._memory_read_at >= 1.0:
            self._memory_read_at = now
            self._memory_ok = sandbox_memory_share() < STANDBY_MEMORY_SHARE
        return self._memory_ok

    def _fork_standby(self) -> None:
        r, w = os.pipe()
        pid = fork()
        if pid == 0:
            os.close(w)
            self._child_main(pipe=r)
        os.close(r)
        self._standby = (pid, w)

    def _child_main(self, raw: bytes | None = None, pipe: int | None = None, polled_ns: int = 0) -> None:
        """In the forked process: never returns."""
        code = 1
        try:
            # This process's copy of the worker's bus connection: closed (no shutdown: the worker keeps using it),
            # so that when the worker dies its long poll's socket closes and the bus puts back what it was handing
            # over, instead of writing it into a socket a child still holds open.
            self.bus.close()
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            self._limit_memory()
            bus = self._bus_factory()  # its own connection: a socket is never shared across fork
            if pipe is not None:
                header = _read_exact(pipe, _HANDOFF.size)
                if header is None:
                    os._exit(0)  # the worker is stopping: an unused standby leaves quietly
                length, polled_ns = _HANDOFF.unpack(header)
                raw = _read_exact(pipe, length)
            assert raw is not None
            run_instance(raw, self.cfg.spec, self.handler, bus, self._data_factory, polled_ns)
            code = 0
        except BaseException:  # noqa: BLE001 - the worker reports this instance's failure
            logging.getLogger(__name__).exception("[%s/%s] grain instance failed", self.cfg.app, self.cfg.grain)
        finally:
            os._exit(code)

    def _limit_memory(self) -> None:
        if self.cfg.memory_mb > 0:
            with open("/proc/self/statm") as f:
                current = int(f.read().split()[0]) * resource.getpagesize()
            limit = current + self.cfg.memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    # ---- reaping and timeouts
    def reap(self) -> None:
        for pid in list(self.children):
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done, status = pid, 0
            if done == 0:
                continue
            child = self.children.pop(pid)
            os.close(child.pidfd)
            code = os.waitstatus_to_exitcode(status)
            if code != 0:
                self._report_failure(pid, child, code)
        if self._standby is not None:
            self._reap_standby(block=False)

    def _reap_standby(self, block: bool) -> None:
        assert self._standby is not None
        pid, w = self._standby
        done, _ = os.waitpid(pid, 0 if block else os.WNOHANG)
        if done:
            if not block:
                os.close(w)
            self._standby = None

    def _report_failure(self, pid: int, child: _Child, code: int) -> None:
        if child.killed_for == "Timeout":
            kind, msg = "Timeout", f"grain {self.cfg.grain} exceeded its timeout of {self.cfg.timeout_s:g}s"
        elif child.killed_for == "Stopped":
            kind, msg = "Stopped", f"grain worker of {self.cfg.grain} stopped before the instance finished"
        elif code < 0:
            kind, msg = "Killed", f"grain instance of {self.cfg.grain} was killed by signal {-code}"
        else:
            kind, msg = "Crashed", f"grain instance of {self.cfg.grain} exited with code {code}"
        # SIGKILL from outside (the OOM killer, an operator) says nothing about the grain's code: the run was
        # lost, and the host agent may run the event again (bounded); any other death is the grain's error.
        status = "lost" if code == -signal.SIGKILL and not child.killed_for else "error"
        log.warning("[%s/%s] instance %d: %s", self.cfg.app, self.cfg.grain, pid, msg)
        try:
            self.bus.publish_batch(failure_batch(self.cfg.spec, child.raw, kind, msg, status))
        except Exception as e:  # noqa: BLE001 - the worker must outlive a failed report
            log.error("[%s/%s] could not report failed instance %d: %s", self.cfg.app, self.cfg.grain, pid, e)

    def kill_expired(self) -> None:
        now = time.monotonic()
        for pid, child in self.children.items():
            if not child.killed_for and now >= child.deadline:
                child.killed_for = "Timeout"
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                select.select([child.pidfd], [], [], 0.1)  # so the next reap reports it at once

    def _until_deadline(self, cap: float) -> float:
        live = [c.deadline for c in self.children.values() if not c.killed_for]
        if not live:
            return cap
        return max(0.0, min(cap, min(live) - time.monotonic()))

    def _wait_children(self, timeout: float) -> None:
        """Block until a child exits or the timeout passes (no polling loop)."""
        fds = [c.pidfd for c in self.children.values()]
        if fds:
            select.select(fds, [], [], max(0.0, timeout))


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        chunk = os.read(fd, n - got)
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)
