"""The sandbox's supervisor (paper §4.1): PID 1 of an application's sandbox, one grain worker per grain.

    python3 -m grainworker.supervisor --config /sand/app/sandbox.json

It is the sandbox's zygote: it imports the grain worker (Thrift clients, envelope, context) once, freezes
those objects out of the garbage collector, and ``fork()``s the grain worker of every grain the sandbox hosts,
so all workers share those pages instead of each interpreter loading its own copy (~22 MB private per worker
started as a new ``python3``: 100 grains would not fit a 512 MB sandbox; forked, each costs ~2 MB, see
docs/benchmarks.md). A forked worker shows in ``ps`` as ``python3 -m grainworker --grain G`` (its argv is
rewritten in place), as a spawned one did. The supervisor restarts a worker that exits while the sandbox runs
(with exponential back-off and a log line), reaps every process that ends up as its child (as PID 1 it inherits
orphaned grain instances of a dead worker), and on SIGTERM forwards SIGTERM to the workers, waits for them
(bounded) and kills what is left.

Events are never held by a worker between polls: they wait in the grain's local queue on the host's
local bus, so a worker restart loses nothing that was queued.

``sandbox.json`` (written by the host agent, ``sand.hostagent.sandbox.SandboxManager``)::

    {"app": "hello", "host": "h1", "workflow": "/sand/app/workflow.json", "code": "/sand/app/code",
     "lib": "/sand/app/lib", "bus": "unix:/sand/sockets/bus.sock", "data": "unix:/sand/sockets/data.sock",
     "local_grains": ["greet", "shout"],
     "grains": {"greet": {"concurrency": 32, "timeout_s": 60, "memory_mb": 0, "standby": true,
                          "session_timeout_s": 600, "session_functions_max": 64}, ...},
     "restart": {"initial_s": 0.5, "max_s": 30, "stable_s": 30}, "stop_grace_s": 15}

The credential comes from the environment (``SAND_GRAINWORKER_CREDENTIAL``) and is inherited by the
workers; it is never written to a file or a command line.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import logging
import os
import signal
import sys
import time
from dataclasses import dataclass
from typing import Any

from grainworker import _logs, appenv
from grainworker._fork import fork
from grainworker.cgroup import memory_limit, oom_kills
from grainworker.workflow import (
    DEFAULT_CONCURRENCY,
    DEFAULT_SESSION_FUNCTIONS_MAX,
    DEFAULT_SESSION_TIMEOUT_S,
    DEFAULT_TIMEOUT_S,
)

__all__ = ["SupervisorConfig", "Supervisor", "load_config", "main"]

log = logging.getLogger(__name__)

_SIGNALS = {signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
_PR_SET_CHILD_SUBREAPER = 36
CRASH_LOOP_FAILURES = 3  # short-lived runs in a row after which a worker is reported as crash-looping


class ConfigError(ValueError):
    """sandbox.json cannot run; the message names the field."""


@dataclass(frozen=True)
class GrainSettings:
    concurrency: int = DEFAULT_CONCURRENCY
    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_mb: int = 0
    standby: bool = True
    session_timeout_s: float = DEFAULT_SESSION_TIMEOUT_S
    session_functions_max: int = DEFAULT_SESSION_FUNCTIONS_MAX


@dataclass(frozen=True)
class SupervisorConfig:
    app: str
    workflow: str
    code: str
    bus: str
    data: str
    grains: dict[str, GrainSettings]
    host: str = ""
    lib: str = ""
    local_grains: tuple[str, ...] = ()
    restart_initial_s: float = 0.5
    restart_max_s: float = 30.0
    restart_stable_s: float = 30.0
    stop_grace_s: float = 15.0
    env_file: str = ""  # settings.env and the secrets (grainworker/appenv.py; AppFolder.ENV_FILE); "": none
    reload_file: str = ""  # what SIGHUP reads: {"grains": [...]} whose workers restart with new code (sand update);
    #                         the host agent names it (AppFolder.RELOAD_FILE); "": SIGHUP only logs that it has none


def _get(doc: dict[str, Any], key: str, kind: type | tuple[type, ...], default: Any = None) -> Any:
    value = doc.get(key, default)
    if value is None or not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ConfigError(f"sandbox.json: '{key}' must be of type {kind}, got {value!r}")
    return value


def load_config(doc: dict[str, Any]) -> SupervisorConfig:
    """Check and convert the parsed sandbox.json; raises ConfigError naming the bad field."""
    raw_grains = _get(doc, "grains", dict)
    if not raw_grains:
        raise ConfigError("sandbox.json: 'grains' is empty: a sandbox hosts at least one grain")
    grains = {}
    for name, g in raw_grains.items():
        if not isinstance(g, dict):
            raise ConfigError(f"sandbox.json: grains.{name} must be an object")
        try:
            grains[name] = GrainSettings(
                int(g.get("concurrency", DEFAULT_CONCURRENCY)),
                float(g.get("timeout_s", DEFAULT_TIMEOUT_S)),
                int(g.get("memory_mb", 0)),
                bool(g.get("standby", True)),
                float(g.get("session_timeout_s", DEFAULT_SESSION_TIMEOUT_S)),
                int(g.get("session_functions_max", DEFAULT_SESSION_FUNCTIONS_MAX)),
            )
        except (TypeError, ValueError) as e:
            raise ConfigError(f"sandbox.json: grains.{name} has a bad setting: {e}") from None
    restart = _get(doc, "restart", dict, {})
    for key in ("initial_s", "max_s", "stable_s"):
        if not isinstance(restart.get(key, 1), int | float):
            raise ConfigError(f"sandbox.json: restart.{key} must be a number of seconds")
    return SupervisorConfig(
        app=_get(doc, "app", str),
        workflow=_get(doc, "workflow", str),
        code=_get(doc, "code", str),
        bus=_get(doc, "bus", str),
        data=_get(doc, "data", str),
        grains=grains,
        host=_get(doc, "host", str, ""),
        lib=_get(doc, "lib", str, ""),
        local_grains=tuple(_get(doc, "local_grains", list, list(grains))),
        restart_initial_s=float(restart.get("initial_s", 0.5)),
        restart_max_s=float(restart.get("max_s", 30)),
        restart_stable_s=float(restart.get("stable_s", 30)),
        stop_grace_s=float(_get(doc, "stop_grace_s", (int, float), 15)),
        reload_file=_get(doc, "reload_file", str, ""),
        env_file=_get(doc, "env_file", str, ""),
    )


@dataclass
class _Worker:
    grain: str
    pid: int = 0  # 0 = not running
    started: float = 0.0  # monotonic
    failures: int = 0  # consecutive short-lived runs, for the back-off
    restart_at: float = 0.0  # monotonic time of the next start when pid == 0
    reported: bool = False  # told the host agent it crash-loops (and not yet that it recovered)
    retiring: bool = False  # stopped for new code: started again at once when it has exited
    announce: bool = False  # the next start is for new code: the worker says "reloaded" once it has loaded it


class Supervisor:
    def __init__(self, cfg: SupervisorConfig, env: dict[str, str] | None = None) -> None:
        self.cfg = cfg
        self.env = self._worker_env(dict(os.environ if env is None else env))
        self.workers = {g: _Worker(g) for g in cfg.grains}
        self.restarts = 0
        self._stopping = False
        self.workflow: Any = None
        self._oom_kills = oom_kills()  # the sandbox's OOM-kill count when last looked at (-1: unknown)

    # ---- the workers' environment
    def _worker_env(self, env: dict[str, str]) -> dict[str, str]:
        # The platform's packages (the grain worker, thrift) come first so an application's own
        # requirements cannot replace them under the worker; the application's come next.
        paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        if self.cfg.lib and self.cfg.lib not in paths:
            paths.append(self.cfg.lib)
        env["PYTHONPATH"] = os.pathsep.join(paths)
        if self.cfg.env_file:
            # the application's settings.env and secrets, read once per sandbox; each worker reads the file again
            # for the grain API (appenv.install_from_environ). Never logged: only the count of names is.
            app_env = appenv.read(self.cfg.env_file)
            env.update(app_env.environ())
            env[appenv.ENV_FILE_VAR] = self.cfg.env_file
        return env

    # ---- lifecycle
    def run(self) -> int:
        """Supervise until SIGTERM/SIGINT; returns the exit status."""
        for sig in _SIGNALS:
            # A handler (not SIG_DFL) so that, as PID 1 of a PID namespace, the kernel delivers these;
            # they are blocked and taken synchronously with sigtimedwait (no races with handlers).
            signal.signal(sig, lambda *_: None)
        signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
        _become_subreaper()
        self.workflow = self._parse_workflow()
        os.environ.update(self.env)  # the workers' environment, set once here rather than in every worker
        preload()
        log.info(
            "[%s] supervisor up on host %s: %d grain worker(s) %s",
            self.cfg.app,
            self.cfg.host or "-",
            len(self.workers),
            sorted(self.workers),
        )
        for w in self.workers.values():
            self._start(w)
        while not self._stopping:
            info = signal.sigtimedwait(_SIGNALS, self._next_wakeup())
            if info is not None and info.si_signo == signal.SIGHUP:
                self.reload()
            elif info is not None and info.si_signo in (signal.SIGTERM, signal.SIGINT):
                log.info(
                    "[%s] supervisor got %s: stopping the grain workers",
                    self.cfg.app,
                    signal.Signals(info.si_signo).name,
                )
                self._stopping = True
                break
            self.reap()
            self._start_due()
            self._report_recovered()
        return self.stop()

    def reload(self) -> None:
        """SIGHUP: the host agent wrote new code for some grains (``reload_file`` names them): stop their workers (they
        finish their running instances; what is queued waits in the local queue) and start them again at once, each
        saying "reloaded" when the new code has loaded (or "load-failed", as at a deploy). The sandbox, the other
        workers and the queues stay as they are."""
        if not self.cfg.reload_file:
            log.error("[%s] SIGHUP but sandbox.json names no reload_file: nothing to reload", self.cfg.app)
            return
        try:
            with open(self.cfg.reload_file, "rb") as f:
                doc = json.load(f)
            grains = [g for g in doc.get("grains", []) if g in self.workers]
        except (OSError, ValueError, AttributeError) as e:
            log.error("[%s] SIGHUP but %s cannot be read: %s", self.cfg.app, self.cfg.reload_file, e)
            return
        log.info("[%s] new code for grain(s) %s: restarting their grain workers", self.cfg.app, grains)
        for g in grains:
            w = self.workers[g]
            w.announce = True
            if w.pid:
                w.retiring = True
                _signal(w.pid, signal.SIGTERM)
            else:  # waiting out a restart back-off: start it now, with the new code
                w.failures, w.restart_at = 0, time.monotonic()
        self._start_due()

    def _parse_workflow(self) -> Any:
        """The workflow, parsed once for every worker; None if it cannot be (each worker then says why)."""
        from grainworker.workflow import WorkflowError, parse_workflow

        try:
            with open(self.cfg.workflow, "rb") as f:
                return parse_workflow(f.read())
        except (OSError, WorkflowError) as e:
            log.error("[%s] cannot read the workflow %s: %s", self.cfg.app, self.cfg.workflow, e)
            return None

    def _next_wakeup(self) -> float:
        due = [w.restart_at for w in self.workers.values() if w.pid == 0]
        due += [w.started + self.cfg.restart_stable_s for w in self.workers.values() if w.pid and w.reported]
        return 60.0 if not due else max(0.0, min(due) - time.monotonic())

    def _start(self, w: _Worker) -> None:
        try:
            pid = fork()
        except OSError as e:
            log.error("[%s] could not start the grain worker of %s: %s", self.cfg.app, w.grain, e)
            self._schedule_restart(w, 0.0)
            return
        if pid == 0:
            self._worker_main(w.grain, w.announce)
        w.announce = False
        w.pid = pid
        w.started = time.monotonic()
        log.info("[%s] grain worker %s started (pid %d)", self.cfg.app, w.grain, w.pid)

    def _worker_main(self, grain: str, announce: bool = False) -> None:
        """In the forked grain worker: become what ``python3 -m grainworker <command>`` would be. Never returns."""
        code = 70
        try:
            # The worker must not keep the supervisor's blocked signals or its no-op handlers.
            for sig in _SIGNALS:
                signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_SETMASK, ())
            if self.cfg.lib and self.cfg.lib not in sys.path:
                sys.path.append(self.cfg.lib)
            set_title(f"python3 -m grainworker --grain {grain}")
            from grainworker.__main__ import serve

            c, g = self.cfg, self.cfg.grains[grain]
            code = serve(
                c.app,
                grain,
                c.code,
                self.workflow or c.workflow,
                c.bus,
                c.data,
                frozenset(c.local_grains),
                g.concurrency,
                g.timeout_s,
                g.memory_mb,
                g.standby,
                announce,
                g.session_timeout_s,
                g.session_functions_max,
            )
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
        except BaseException:  # noqa: BLE001 - logged; the supervisor restarts the worker
            log.exception("[%s] grain worker %s failed", self.cfg.app, grain)
        finally:
            sys.stderr.flush()
            os._exit(code)

    def _start_due(self) -> None:
        now = time.monotonic()
        for w in self.workers.values():
            if w.pid == 0 and w.restart_at <= now and not self._stopping:
                self.restarts += 1
                self._start(w)

    def reap(self) -> None:
        """Collect every exited child: workers are scheduled for restart, orphans just disappear."""
        by_pid = {w.pid: w for w in self.workers.values() if w.pid}
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            w = by_pid.pop(pid, None)
            if w is None:
                log.info("[%s] reaped orphaned process %d: it %s", self.cfg.app, pid, _describe(status))
                continue
            w.pid = 0
            if w.retiring and not self._stopping:
                w.retiring, w.failures, w.restart_at = False, 0, time.monotonic()
                # Said before the new worker starts, as for any exit: what the old one had taken and not finished
                # runs again (it finished its instances, so usually nothing).
                self.report_health(w.grain, "exited", f"grain worker {w.grain} stopped for new code")
                log.info(
                    "[%s] grain worker %s stopped for new code (it %s); starting it again",
                    self.cfg.app,
                    w.grain,
                    _describe(status),
                )
            elif not self._stopping:
                what = self._death(status)
                # Said before the restart (restart.initial_s later at the earliest): the host agent re-delivers what
                # the dead worker had taken and not finished, which then cannot be what the next worker takes.
                self.report_health(w.grain, "exited", f"grain worker {w.grain} {what}")
                self._schedule_restart(w, time.monotonic() - w.started, what)

    def _death(self, status: int) -> str:
        """How a worker died, in words a developer can act on: a SIGKILL while the sandbox's OOM-kill count went up
        was the kernel enforcing the sandbox's memory limit."""
        what = _describe(status)
        kills = oom_kills()
        oom = kills > self._oom_kills >= 0
        self._oom_kills = kills
        if oom and os.waitstatus_to_exitcode(status) == -signal.SIGKILL:
            limit = memory_limit()
            reached = f"is {limit // (1024 * 1024)} MB" if limit else "was reached"
            what = (
                f"was killed for memory (the sandbox's limit {reached}: raise settings.sandbox_memory_mb in "
                "workflow.json, or use less, e.g. at import)"
            )
        return what

    def _schedule_restart(self, w: _Worker, ran_s: float, what: str = "did not start") -> None:
        c = self.cfg
        w.failures = 1 if ran_s >= c.restart_stable_s else w.failures + 1
        delay = min(c.restart_initial_s * 2 ** (w.failures - 1), c.restart_max_s)
        w.restart_at = time.monotonic() + delay
        log.warning(
            "[%s] grain worker %s %s after %.1fs; restarting in %.1fs (failure %d in a row)",
            c.app,
            w.grain,
            what,
            ran_s,
            delay,
            w.failures,
        )
        if w.failures >= CRASH_LOOP_FAILURES:
            w.reported = True
            self.report_health(
                w.grain,
                "crash-looping",
                f"grain worker {w.grain} {what}; {w.failures} times in a row, the last {ran_s:.1f}s after it started",
            )

    def _report_recovered(self) -> None:
        now = time.monotonic()
        for w in self.workers.values():
            if w.reported and w.pid and now - w.started >= self.cfg.restart_stable_s:
                w.reported = False
                self.report_health(w.grain, "running", f"grain worker {w.grain} has run {now - w.started:.0f}s")

    def report_health(self, grain: str, state: str, message: str) -> None:
        """Tell the host agent how a grain's worker is doing (localbus.report_worker)."""
        from grainworker.localbus import report_worker

        try:
            report_worker(
                self.cfg.bus, os.environ.get("SAND_GRAINWORKER_CREDENTIAL", ""), self.cfg.app, grain, state, message
            )
        except Exception as e:  # noqa: BLE001 - the status is a courtesy; the log line above says it all
            log.warning("[%s] could not report grain worker %s as %s: %s", self.cfg.app, grain, state, e)

    def stop(self) -> int:
        """SIGTERM to every worker, wait up to stop_grace_s, SIGKILL the rest; reap everything."""
        self._stopping = True
        live = {w.pid: w for w in self.workers.values() if w.pid}
        for pid in live:
            _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + self.cfg.stop_grace_s
        while live and time.monotonic() < deadline:
            signal.sigtimedwait({signal.SIGCHLD}, max(0.0, deadline - time.monotonic()))
            self._reap_into(live)
        for pid, w in live.items():
            log.warning(
                "[%s] grain worker %s (pid %d) did not stop within %.0fs: killed",
                self.cfg.app,
                w.grain,
                pid,
                self.cfg.stop_grace_s,
            )
            _signal(pid, signal.SIGKILL)
        while live:
            signal.sigtimedwait({signal.SIGCHLD}, 1.0)
            self._reap_into(live)
        log.info("[%s] supervisor stopped (%d worker restarts)", self.cfg.app, self.restarts)
        return 0

    def _reap_into(self, live: dict[int, _Worker]) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                live.clear()
                return
            if pid == 0:
                return
            w = live.pop(pid, None)
            if w is not None:
                w.pid = 0
                log.info("[%s] grain worker %s (pid %d) %s", self.cfg.app, w.grain, pid, _describe(status))


def _describe(status: int) -> str:
    code = os.waitstatus_to_exitcode(status)
    return f"was killed by {signal.Signals(-code).name}" if code < 0 else f"exited with code {code}"


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def preload() -> None:
    """The zygote's one import of the grain worker: every worker forked after it shares these pages. Frozen
    out of the garbage collector, so a collection in a worker does not touch (and so copy) them."""
    import grainworker.__main__  # noqa: F401 - imported for the pages it fills

    gc.collect()
    gc.freeze()


def set_title(title: str) -> None:
    """Show ``title`` as this process's command line (``ps``, ``docker top``): the original argv area is
    overwritten in place (its size is the limit: a longer title is cut)."""
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[45]), int(fields[46])  # proc(5) fields 48 and 49: arg_start, arg_end
        room = end - start
        data = title.encode()[: room - 1]
        ctypes.memmove(start, data + b"\0" * (room - len(data)), room)
    except (OSError, ValueError, IndexError):
        log.debug("could not set the process title %r", title)


def _become_subreaper() -> None:
    """Outside a container (tests, the emulator) adopt orphaned instances as PID 1 would."""
    if os.getpid() == 1:
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        log.debug("prctl(PR_SET_CHILD_SUBREAPER) unavailable: orphans go to init")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m grainworker.supervisor", description="SAND sandbox supervisor")
    ap.add_argument(
        "--config",
        default=os.environ.get("SAND_SUPERVISOR_CONFIG", "/sand/app/sandbox.json"),
        help="the sandbox's sandbox.json [SAND_SUPERVISOR_CONFIG]",
    )
    args = ap.parse_args(argv)
    _logs.configure()
    if not os.environ.get("SAND_GRAINWORKER_CREDENTIAL"):
        print(
            "Error: SAND_GRAINWORKER_CREDENTIAL is not set: the host agent passes the application's "
            "credential in the sandbox's environment",
            file=sys.stderr,
        )
        return 2
    try:
        with open(args.config, "rb") as f:
            doc = json.load(f)
        if not isinstance(doc, dict):
            raise ConfigError("sandbox.json must be a JSON object")
        cfg = load_config(doc)
    except (OSError, ValueError) as e:
        print(f"Error: {args.config}: {e}", file=sys.stderr)
        return 2
    return Supervisor(cfg).run()


if __name__ == "__main__":
    sys.exit(main())
