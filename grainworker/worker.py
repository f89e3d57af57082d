"""The grain worker (paper §4.1): one long-lived process per grain inside the application's sandbox.

It imports the grain's code once, long-polls the grain's local queue, and ``fork()``s a grain instance
for every event. It reaps its children, caps how many run at once (excess events wait in the queue),
kills an instance past the grain's timeout, and answers for an instance that died without publishing
(timeout, kill, crash) with an error event to the workflow's end, so the caller always gets an answer.

Pre-forked standby (beyond the paper): one child is forked ahead of time, opens its own bus connection and
waits on the grain's local queue itself, so an event wakes the process that will run it and nobody else (one
wake-up per hop: no worker in between, no pipe hand-off). The standby tells the worker what it took (a pipe
write the worker reads in parallel: it tracks the instance's timeout and answers for it if it dies), and the
worker forks the next standby once no event came for STANDBY_DEFER_S (right after a hop, the instance and the
next grain's worker need the CPU; on 2 vCPUs a fork there added ~1 ms to the hop); meanwhile it polls the queue
itself and forks per event. Exactly one of them polls the queue at any time. Each event still gets a fresh process.
A standby costs memory (~1.5 MB of pages it and the worker no longer share), so a worker keeps one only
for a grain that was called in the last STANDBY_IDLE_S seconds, and only while the sandbox uses less than
STANDBY_MEMORY_SHARE of its memory limit: a sandbox of 100 grains fits its default 512 MB, and its busy
grains still start instances from standbys (docs/grain-worker.md).

Idle, a worker and its standby sleep in the kernel: the worker in select() on its poll's socket, its children and
a signal pipe; the poll waits the bus's longest (MAX_POLL_TIMEOUT_MS), so an idle grain wakes once a minute.
"""

from __future__ import annotations

import fcntl
import importlib
import inspect
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

from grainworker._fork import die_with_parent, fork
from grainworker._gen.localbus.constants import MAX_POLL_TIMEOUT_MS
from grainworker.cgroup import memory_share as sandbox_memory_share
from grainworker.envelope import decode
from grainworker.instance import InstanceSpec, failure_batch, rehearse, run_instance
from grainworker.localbus import queue_name
from grainworker.session import SessionRegistry, function_id, session_id, session_queue
from grainworker.workflow import DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT_S

__all__ = ["GrainWorker", "WorkerConfig", "load_grain", "load_handler"]

log = logging.getLogger(__name__)

STOP_MESSAGE = b'{"control":"stop"}'
STANDBY_IDLE_S = 600.0  # a grain not called for this long gives its standby back
STANDBY_MEMORY_SHARE = 0.75  # no new standby while the sandbox uses more than this share of its memory limit
STANDBY_DEFER_S = 0.003  # after a hand-off, the next standby is forked once no event came for this long
_NOTICE = struct.Struct(">IQ")  # what a standby tells its worker it took: the event's length, when it was polled
POLL_MAX_S = MAX_POLL_TIMEOUT_MS / 1000
REHEARSE_AFTER_MS = 50  # a standby with no event this long after it was forked rehearses (off a busy moment)
_PIPE_BYTES = 1 << 20  # a notice of any event up to this size is one write that does not wait for the worker


INIT_HOOK = "init"  # a grain module's warm-up function, run once by its worker before it forks instances


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
    memory_mb: int = 0  # extra address space an instance may map beyond the worker's (0 = no limit)
    standby: bool = True
    stop_grace_s: float = 10.0  # on stop, how long running instances may finish before they are killed


@dataclass
class _Child:
    raw: bytes
    deadline: float
    pidfd: int
    killed_for: str = ""


@dataclass
class _Standby:
    """A pre-forked instance waiting on the grain's queue itself."""

    pid: int
    pidfd: int
    notice: int  # read end: what it took (_NOTICE + the event), EOF if it left without taking one
    release: int = -1  # write end of its release pipe: closed, the standby leaves at its next empty poll


def load_grain(code_dir: str, module: str) -> tuple[Callable[[Any, Any], Any], str]:
    """Import the grain's code once: its handler, and "" or why it did not load (what a developer needs to fix it:
    the exception and where in the grain's code it was raised). A grain that did not load gets a handler that
    raises its error.

    The worker (and so every instance forked from it) runs in the grain's code folder, where a zip grain's files
    are: `open("data.txt")` finds the file beside the code, as on Lambda and KNIX. A module-level `init()` (no
    arguments) runs once here, after the import and before any fork: what it sets up (a model loaded, a library's
    lazy first-use set-up done) is inherited by every instance instead of paid by each (docs/developing-grains.md);
    an error in it is a load failure like an import error."""
    if code_dir not in sys.path:
        sys.path.insert(0, code_dir)
    try:
        os.chdir(code_dir)
        mod = importlib.import_module(module)
        handler = getattr(mod, "handle", None)
        if not callable(handler):
            raise AttributeError(f"grain module {module!r} has no function handle(event, context)")
        init = getattr(mod, INIT_HOOK, None)
        if init is not None:
            if not callable(init):
                raise TypeError(f"grain module {module!r}: {INIT_HOOK} must be a function init() (it is {init!r})")
            if _takes_no_arguments(init):  # an init(event, context) is the grain's own helper (KNIX's reducers)
                init()
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


def _takes_no_arguments(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: called as before
        return True
    required = (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.KEYWORD_ONLY,
    )
    return not any(p.kind in required and p.default is inspect.Parameter.empty for p in params)


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
    def __init__(
        self,
        cfg: WorkerConfig,
        handler: Callable[[Any, Any], Any],
        bus_factory: Callable[[], Any],
        data_factory: Callable[[], Any],
    ) -> None:
        self.cfg = cfg
        self.handler = handler
        self.queue = queue_name(cfg.app, cfg.grain)
        self._bus_factory = bus_factory
        self._data_factory = data_factory
        self.bus = bus_factory()
        self.children: dict[int, _Child] = {}
        self._standby: _Standby | None = None
        self._polling = False  # a poll of the worker's own is on its way (sent, its answer not read yet)
        self._wakeup = -1  # read end of the pipe a signal writes to: a signal ends the worker's select()
        self._stopping = False
        self.instances_started = 0
        self._last_event = -STANDBY_IDLE_S  # monotonic; no standby until the grain is first called
        self._standby_due = 0.0  # monotonic; no new standby before (the hop the last hand-off started needs the CPU)
        # A bus connection opened ahead for the next process forked (standby or instance): none is opened on the path.
        self._spare: Any | None = None
        self._spare_due = 0.0  # monotonic; the next spare is opened then (after the fork that took the last one)
        self._memory_read_at = -1.0
        self._memory_ok = True

    # ---- lifecycle
    def stop(self, *_: object) -> None:
        self._stopping = True

    def run(self) -> None:
        log.info(
            "[%s/%s] grain worker up: concurrency %d, timeout %.1fs, standby %s",
            self.cfg.app,
            self.cfg.grain,
            self.cfg.max_concurrency,
            self.cfg.timeout_s,
            self.cfg.standby,
        )
        r, w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._wakeup = r
        signal.set_wakeup_fd(w)
        while not self._stopping:
            self.step()
        self.shutdown()

    def step(self) -> None:
        """One round: reap, enforce timeouts, keep a standby, then wait for an event, a child's exit or a signal."""
        self.reap()
        self.kill_expired()
        self._keep_standby()
        wait = self._until_deadline(POLL_MAX_S)
        fds = [c.pidfd for c in self.children.values()]
        if self._wakeup >= 0:
            fds.append(self._wakeup)
        if self._standby is not None:  # the standby polls the queue: the worker only listens to it
            ready = self._select(fds + [self._standby.notice], wait)
            if self._standby.notice in ready:
                self._take_notice()
            return
        free = self.cfg.max_concurrency - len(self.children)
        if free <= 0 and not self._polling:
            self._select(fds, wait)
            return
        if not self._polling:
            defer = self._standby_due - time.monotonic()
            if self.cfg.standby and defer > 0 and self._recent():
                wait = min(wait, defer)  # the poll ends when the standby is due
            if self._spare is None and self._spare_due > time.monotonic():
                wait = min(wait, self._spare_due - time.monotonic())  # and when the next spare connection is
            self.bus.send_poll(self.queue, max_messages=min(free, 32), timeout_ms=max(1, math.ceil(wait * 1000)))
            self._polling = True
        if self.bus.fileno() not in self._select(fds + [self.bus.fileno()], POLL_MAX_S + 5):
            return  # a child exited or a signal came: the poll stays on its way
        msgs = self.bus.receive_poll()
        self._polling = False
        polled = time.monotonic_ns()
        if msgs:
            self._last_event = polled / 1e9
        for raw in msgs:
            if raw == STOP_MESSAGE:
                self._stopping = True
                continue
            self.dispatch(raw, polled)

    def _select(self, fds: list[int], timeout: float) -> list[int]:
        ready = select.select(fds, [], [], max(0.0, timeout))[0]
        if self._wakeup in ready:
            try:
                os.read(self._wakeup, 512)
            except BlockingIOError:
                pass
        return ready

    def _recent(self) -> bool:
        return time.monotonic() - self._last_event < STANDBY_IDLE_S

    def shutdown(self) -> None:
        """Finish running instances (bounded wait), kill the rest, release the standby."""
        if self._polling:
            self.bus.close()  # the bus puts back whatever it was handing over on a closed connection
            self._polling = False
        if self._spare is not None:
            self._spare.close()
            self._spare = None
        self._stop_standby()
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
        log.info(
            "[%s/%s] grain worker stopped after %d instances", self.cfg.app, self.cfg.grain, self.instances_started
        )

    # ---- instances
    def dispatch(self, raw: bytes, polled_ns: int = 0) -> None:
        """Fork an instance for an event the worker polled itself."""
        self.instances_started += 1
        spare = self._take_spare()
        pid = fork()
        if pid == 0:
            self._child_main(raw=raw, polled_ns=polled_ns, bus=spare)
        if spare is not None:
            spare.close()  # the child's now (a close, no shutdown: the child's copy stays connected)
        self._track(pid, raw)

    def _take_spare(self) -> Any | None:
        spare, self._spare = self._spare, None
        self._spare_due = time.monotonic() + STANDBY_DEFER_S
        return spare

    def _keep_spare(self) -> None:
        if self._spare is None and self._standby is None and time.monotonic() >= self._spare_due:
            try:
                self._spare = self._bus_factory()
            except Exception as e:  # noqa: BLE001 - the next fork opens its own
                log.warning("[%s/%s] could not open a spare bus connection: %s", self.cfg.app, self.cfg.grain, e)
                self._spare_due = time.monotonic() + 1.0

    def _track(self, pid: int, raw: bytes, pidfd: int = -1) -> None:
        self.children[pid] = _Child(
            raw, time.monotonic() + self._timeout_s(), pidfd if pidfd >= 0 else os.pidfd_open(pid)
        )

    def _timeout_s(self) -> float:
        """A session function's instances live up to the application's session_timeout_s, others its timeout_s."""
        return self.cfg.spec.session_timeout_s if self.cfg.spec.session is not None else self.cfg.timeout_s

    def _take_notice(self) -> None:
        """The standby took an event (it is an instance now), told the worker to stop, or left without one."""
        sb = self._standby
        assert sb is not None
        header = _read_exact(sb.notice, _NOTICE.size)
        raw = _read_exact(sb.notice, _NOTICE.unpack(header)[0]) if header is not None else None
        self._standby = None
        os.close(sb.notice)
        if sb.release >= 0:
            os.close(sb.release)
        if raw is None or raw == STOP_MESSAGE:
            # It left (released, stopped, or died before telling what it took: then the host agent's recovery
            # runs the event again when this worker exits, or its in-flight expiry does).
            self._stopping = self._stopping or raw == STOP_MESSAGE
            os.waitpid(sb.pid, 0)
            os.close(sb.pidfd)
            return
        self.instances_started += 1
        self._last_event = time.monotonic()
        self._track(sb.pid, raw, sb.pidfd)
        self._standby_due = self._spare_due = time.monotonic() + STANDBY_DEFER_S

    def _keep_standby(self) -> None:
        """Fork a standby for a recently called grain while the sandbox has memory to spare; release an idle one."""
        self._keep_spare()
        now = time.monotonic()
        recent = self._recent()
        if self._standby is None:
            if (
                self.cfg.standby
                and recent
                and now >= self._standby_due
                and not self._polling
                and len(self.children) < self.cfg.max_concurrency
                and self._memory_to_spare()
            ):
                self._fork_standby()
        elif not recent and self._standby.release >= 0:
            # It leaves at its next empty poll (within POLL_MAX_S); an event it takes meanwhile still runs.
            os.close(self._standby.release)
            self._standby.release = -1

    def _memory_to_spare(self) -> bool:
        """The sandbox's memory, read at most once a second: not two file reads before every poll when short."""
        now = time.monotonic()
        if now - self._memory_read_at >= 1.0:
            self._memory_read_at = now
            self._memory_ok = sandbox_memory_share() < STANDBY_MEMORY_SHARE
        return self._memory_ok

    def _fork_standby(self) -> None:
        notice_r, notice_w = os.pipe2(os.O_CLOEXEC)
        release_r, release_w = os.pipe2(os.O_CLOEXEC)
        try:
            fcntl.fcntl(notice_w, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
        except OSError:
            pass  # a smaller pipe: a large event's notice waits for the worker to read it
        spare = self._take_spare()
        pid = fork()
        if pid == 0:
            os.close(notice_r)
            os.close(release_w)
            self._child_main(notice=notice_w, release=release_r, bus=spare)
        if spare is not None:
            spare.close()
        os.close(notice_w)
        os.close(release_r)
        self._standby = _Standby(pid, os.pidfd_open(pid), notice_r, release_w)

    def _stop_standby(self) -> None:
        """On shutdown: a standby still waiting is killed (an event it had just taken is the host agent's to
        recover when this worker's exit is reported); one that already took an event is an instance."""
        sb = self._standby
        if sb is None:
            return
        if not self._ready(sb.notice):
            os.kill(sb.pid, signal.SIGKILL)
        self._take_notice()

    @staticmethod
    def _ready(fd: int) -> bool:
        return bool(select.select([fd], [], [], 0)[0])

    def _child_main(
        self, raw: bytes | None = None, notice: int = -1, release: int = -1, polled_ns: int = 0, bus: Any | None = None
    ) -> None:
        """In the forked process: never returns. A standby (``notice`` >= 0) first waits for its event itself.
        ``bus``: the connection the worker opened ahead for it (else it opens its own)."""
        code = 1
        worker = os.getppid()
        try:
            if self._wakeup >= 0:
                signal.set_wakeup_fd(-1)
                os.close(self._wakeup)
            # This process's copy of the worker's bus connection: closed (no shutdown: the worker keeps using it),
            # so that when the worker dies its long poll's socket closes and the bus puts back what it was handing
            # over, instead of writing it into a socket a child still holds open.
            self.bus.close()
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            self._limit_memory()
            if bus is None:
                bus = self._bus_factory()  # its own connection: a socket is never shared across fork
            if notice >= 0:
                # A standby that waits dies with its worker (the restarted worker forks its own; the host agent's
                # recovery covers an event it had just taken); once it runs an event it outlives the worker, as
                # an instance the worker forked does.
                die_with_parent(worker)
                raw, polled_ns = self._wait_as_standby(bus, notice, release)
            assert raw is not None
            run_instance(
                raw, self.cfg.spec, self.handler, bus, self._data_factory, polled_ns, bus_factory=self._bus_factory
            )
            code = 0
        except BaseException:  # noqa: BLE001 - the worker reports this instance's failure
            logging.getLogger(__name__).exception("[%s/%s] grain instance failed", self.cfg.app, self.cfg.grain)
        finally:
            os._exit(code)

    def _wait_as_standby(self, bus: Any, notice: int, release: int) -> tuple[bytes, int]:
        """Poll the grain's queue until an event comes, tell the worker, and return it to run. A standby not
        needed at once rehearses first (instance.rehearse): not at once, when it would take the CPU from the
        instances of the request that just passed (the next grain of a chain runs in the same sandbox)."""
        rehearsed = False
        while True:
            wait_ms = MAX_POLL_TIMEOUT_MS if rehearsed else REHEARSE_AFTER_MS
            msgs = bus.poll(self.queue, max_messages=1, timeout_ms=wait_ms)
            polled_ns = time.monotonic_ns()
            if msgs:
                break
            if not rehearsed:
                rehearsed = True
                try:
                    rehearse(self.cfg.spec)
                except Exception:  # noqa: BLE001 - a rehearsal only saves time
                    log.exception("[%s/%s] a standby's rehearsal failed", self.cfg.app, self.cfg.grain)
                continue
            if self._ready(release):
                os._exit(0)  # released (idle grain) or the worker is gone
        raw = msgs[0]
        die_with_parent(0, on=False)
        try:
            _write_all(notice, _NOTICE.pack(len(raw), polled_ns) + raw)
        except OSError:
            pass  # the worker died: the event still runs, nobody is left to time it
        os.close(notice)
        if raw == STOP_MESSAGE:
            os._exit(0)
        return raw, polled_ns

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

    def _report_failure(self, pid: int, child: _Child, code: int) -> None:
        if child.killed_for == "Timeout" and self.cfg.spec.session is not None:
            kind, msg = (
                "Timeout",
                (
                    f"session function {self.cfg.grain} ran past session_timeout_s "
                    f"({self.cfg.spec.session_timeout_s:g}s) and was killed: send it --stop to end it, "
                    "or raise that setting"
                ),
            )
        elif child.killed_for == "Timeout":
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
        if self.cfg.spec.session is not None:
            self._leave_session(child.raw)
        try:
            # On a connection of its own: the worker's may have a poll on its way (answers come in order).
            with self._bus_factory() as bus:
                bus.publish_batch(failure_batch(self.cfg.spec, child.raw, kind, msg, status))
        except Exception as e:  # noqa: BLE001 - the worker must outlive a failed report
            log.error("[%s/%s] could not report failed instance %d: %s", self.cfg.app, self.cfg.grain, pid, e)

    def _leave_session(self, raw: bytes) -> None:
        """A session function that died without leaving its session (killed, crashed): take it out, drop its queue."""
        try:
            event = decode(raw)
            sid = session_id(event.get("value"), str(event.get("execution_id", "")))
            fid = function_id(self.cfg.app, str(event.get("id", "")))
            dl = self._data_factory()
            try:
                SessionRegistry(dl, sid).remove(fid)
            finally:
                dl.close()
            with self._bus_factory() as bus:
                bus.delete_queue(session_queue(self.cfg.app, fid))
        except Exception as e:  # noqa: BLE001 - the worker must outlive a failed clean-up
            log.warning(
                "[%s/%s] could not remove a dead session function from its session: %s", self.cfg.app, self.cfg.grain, e
            )

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
        view = view[os.write(fd, view) :]


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        chunk = os.read(fd, n - got)
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)
