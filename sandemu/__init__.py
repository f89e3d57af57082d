"""The SAND emulator (paper §5): run an application on a laptop, no Docker, Kafka or Cassandra.

It runs the real grain worker code (the `grainworker` package: one process per grain, fork per event,
pre-forked standby) against in-memory local bus and data layer servers speaking the same Thrift interface,
plus a small stand-in for the host agent that collects LQ_HA reports, prints the grains' logs and answers
requests. `sand emulate` (sandclient.cli) runs it from the command line; `sandemu._http` is its HTTP front.

    from sandemu import Emulator
    with Emulator("examples/hello") as emu:
        result, execution_id = emu.invoke({"name": "sand"})
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from thrift.protocol.TBinaryProtocol import TBinaryProtocolAcceleratedFactory
from thrift.server.TServer import TThreadedServer
from thrift.transport.TSocket import TServerSocket
from thrift.transport.TTransport import TBufferedTransportFactory

import grainworker
from grainworker._gen.datalayer import LocalDataLayer
from grainworker._gen.localbus import LocalBus
from grainworker.appenv import ENV_FILE_VAR, AppEnvError
from grainworker.envelope import decode, encode, is_error, new_id
from grainworker.localbus import LocalBusClient
from grainworker.workflow import DEFAULT_TIMEOUT_S, END, Workflow, WorkflowError, parse_workflow
from sandemu import _bus, _env, _requirements
from sandemu._bus import InMemoryLocalBus
from sandemu._datalayer import InMemoryDataLayer, Jittered

__all__ = ["Emulator", "EmulatorError", "load_app"]

# The folder the grain workers import `grainworker` from (the repository, or site-packages).
ROOT = Path(grainworker.__file__).resolve().parent.parent


LOAD_WAIT_S = 60.0  # how long the grains' workers may take to import their code (a deploy waits as long)


class EmulatorError(Exception):
    """The application folder cannot run; the message says what to fix."""


def load_app(app_dir: str | Path) -> Workflow:
    """Read and check an application folder: workflow.json plus <resource>.py for every grain."""
    d = Path(app_dir)
    wf_file = d / "workflow.json"
    if not wf_file.is_file():
        raise EmulatorError(f"{wf_file} is missing: an application folder holds workflow.json and grain .py files")
    try:
        wf = parse_workflow(wf_file.read_bytes())
    except WorkflowError as e:
        raise EmulatorError(f"{wf_file}: {e}") from None
    for g in wf.grains.values():
        if g.code and not (d / f"{g.code}.py").is_file():  # no code: an ASL state that runs built-in code
            raise EmulatorError(f"grain {g.name!r} runs code {g.code!r} but {d / (g.code + '.py')} does not exist")
    return wf


def settings_timeout_s(app_dir: Path) -> float:
    """The grain timeout a deploy of the folder gets: settings.json's timeout_s, else the platform's default."""
    try:
        settings = json.loads((app_dir / "settings.json").read_text())
    except FileNotFoundError:
        return DEFAULT_TIMEOUT_S
    except (OSError, ValueError) as e:
        raise EmulatorError(f"{app_dir / 'settings.json'}: {e}") from None
    value = settings.get("timeout_s", DEFAULT_TIMEOUT_S) if isinstance(settings, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise EmulatorError(
            f"{app_dir / 'settings.json'}: timeout_s must be a positive number of seconds, got {value!r}"
        )
    return float(value)


class _Server(TThreadedServer):
    def handle(self, client: Any) -> None:
        _bus.CONNECTION.sock = client.handle  # the bus's polls watch their caller's socket
        super().handle(client)


def _serve(processor: Any, path: str) -> TThreadedServer:
    server = _Server(
        processor,
        TServerSocket(unix_socket=path),
        TBufferedTransportFactory(),
        TBinaryProtocolAcceleratedFactory(),
        daemon=True,
    )
    server.serverTransport.listen()  # listening before any worker connects
    server.serverTransport.listen = lambda: None  # serve() must not re-listen
    threading.Thread(target=server.serve, daemon=True, name=f"emulator-{Path(path).stem}").start()
    return server


class Emulator:
    def __init__(
        self,
        app_dir: str | Path,
        *,
        timeout_s: float | None = None,
        standby: bool = True,
        echo: Callable[[str], None] | None = None,
        worker_args: list[str] | None = None,
        data_jitter_s: float = 0.0,
    ) -> None:
        self.app_dir = Path(app_dir).resolve()
        self.workflow = load_app(self.app_dir)
        self.app = self.workflow.name
        # as deployed: the folder's settings.json timeout_s, else the platform's default
        self.timeout_s = timeout_s if timeout_s is not None else settings_timeout_s(self.app_dir)
        try:  # settings.env and .env, as the platform's supervisor gives them (os.environ and the grain API)
            self.app_env = _env.app_environment(self.app_dir)
        except AppEnvError as e:
            raise EmulatorError(str(e)) from None
        self.standby = standby
        self.worker_args = worker_args or []
        self.data_jitter_s = data_jitter_s  # > 0: each data layer call waits up to this long first (race tests)
        self.echo = echo or (lambda line: print(line, file=sys.stderr, flush=True))
        self._agent_cred = new_id()
        self._app_cred = new_id()
        self._tmp = tempfile.TemporaryDirectory(prefix="sand-emulator-")
        self._workers: dict[str, subprocess.Popen[bytes]] = {}
        self._results: dict[str, tuple[threading.Event, list[Any]]] = {}
        self._lock = threading.Lock()
        self._running = False
        self._loaded = False
        self.reports: list[dict[str, Any]] = []
        self.load_errors: dict[str, str] = {}  # grain -> why its code did not load (as a deploy would fail)

    # ---- lifecycle
    def __enter__(self) -> Emulator:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        tmp = Path(self._tmp.name)
        self.bus_address, self.data_address = f"unix:{tmp / 'bus.sock'}", f"unix:{tmp / 'data.sock'}"
        bus, data = InMemoryLocalBus(self._agent_cred), InMemoryDataLayer(self._agent_cred)
        self._bus = bus
        bus.grantApplication(self._agent_cred, self.app, self._app_cred)
        data.grantApplication(self._agent_cred, self.app, self._app_cred)
        _serve(LocalBus.Processor(bus), str(tmp / "bus.sock"))
        _serve(
            LocalDataLayer.Processor(Jittered(data, self.data_jitter_s) if self.data_jitter_s else data),
            str(tmp / "data.sock"),
        )
        wf_file = tmp / "workflow.json"
        wf_file.write_bytes(encode(self.workflow.to_json()))
        pythonpath = [str(ROOT), *self._requirements()]
        app_env = self.app_env
        env_file = tmp / "env.json"
        env_file.write_text(json.dumps({"config": app_env.config, "secrets": app_env.secrets}))
        env_file.chmod(0o600)
        env = {
            **os.environ,
            **app_env.environ(),
            ENV_FILE_VAR: str(env_file),
            "SAND_GRAINWORKER_CREDENTIAL": self._app_cred,
            "PYTHONPATH": os.pathsep.join(pythonpath + [os.environ.get("PYTHONPATH", "")]),
        }
        for g in self.workflow.grains:
            self._workers[g] = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "grainworker",
                    "--app",
                    self.app,
                    "--grain",
                    g,
                    "--code",
                    str(self.app_dir),
                    "--workflow",
                    str(wf_file),
                    "--bus",
                    self.bus_address,
                    "--data",
                    self.data_address,
                    "--timeout",
                    str(self.timeout_s),
                    "--standby",
                    "1" if self.standby else "0",
                    *self.worker_args,
                ],
                env=env,
                stdout=subprocess.DEVNULL,
            )
        self._agent = LocalBusClient(self.bus_address, self._agent_cred)
        self._running = True
        threading.Thread(target=self._host_agent_loop, daemon=True, name="emulator-host-agent").start()

    def stop(self) -> None:
        self._running = False
        for w in self._workers.values():
            w.terminate()
        for w in self._workers.values():
            try:
                w.wait(timeout=15)
            except subprocess.TimeoutExpired:
                w.kill()
        self._workers.clear()
        self._tmp.cleanup()

    def _requirements(self) -> list[str]:
        """requirements.txt installed as a deploy installs it (sandemu._requirements), once per content."""
        try:
            return _requirements.install(self.app_dir, self.echo)
        except _requirements.RequirementsError as e:
            raise EmulatorError(str(e)) from None

    def wait_loaded(self, timeout_s: float = LOAD_WAIT_S) -> None:
        """Wait until every grain's worker polls its queue or says its code did not load, then raise if any did
        not: as on the platform, where such a grain fails the deploy whether or not a request would reach it."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for g, w in self._workers.items():
                if g not in self.load_errors and w.poll() is not None and f"{self.app}/{g}" not in self._bus.polled:
                    time.sleep(0.2)  # its report may still be on the way
                    self.load_errors.setdefault(g, f"grain {g}: its worker exited with status {w.returncode}")
            if all(f"{self.app}/{g}" in self._bus.polled or g in self.load_errors for g in self._workers):
                break
            time.sleep(0.02)
        else:
            waiting = sorted(g for g in self._workers if f"{self.app}/{g}" not in self._bus.polled)
            raise EmulatorError(f"grains {', '.join(waiting)} did not start in {timeout_s:g} s")
        self._raise_load_errors()

    def worker_pid(self, grain: str) -> int:
        return self._workers[grain].pid

    # ---- requests
    def invoke(self, value: Any, timeout_s: float | None = None) -> tuple[Any, str]:
        """Run the workflow on ``value``; returns (output, execution id). Raises TimeoutError, and EmulatorError
        when a grain's code did not load (any grain: see wait_loaded)."""
        if not self._loaded:
            self.wait_loaded()
            self._loaded = True
        self._raise_load_errors()
        execution_id = new_id()
        done: tuple[threading.Event, list[Any]] = (threading.Event(), [])
        with self._lock:
            self._results[execution_id] = done
        event = {
            "id": new_id(),
            "execution_id": execution_id,
            "app": self.app,
            "grain": self.workflow.entry,
            "from": "",
            "frontend": "emulator",
            "value": value,
            "sent_ns": time.time_ns(),
        }
        with LocalBusClient(self.bus_address, self._agent_cred) as c:
            c.publish(f"{self.app}/{self.workflow.entry}", encode(event))
        try:
            if not done[0].wait(timeout_s or self.timeout_s + 5):
                raise TimeoutError(f"execution {execution_id} did not finish in time")
            if not done[1]:
                self._raise_load_errors()
            return done[1][0], execution_id
        finally:
            with self._lock:
                self._results.pop(execution_id, None)

    def _raise_load_errors(self) -> None:
        """A grain whose code does not load fails the application, as it fails a deploy on the platform."""
        if self.load_errors:
            raise EmulatorError("; ".join(self.load_errors[g] for g in sorted(self.load_errors)))

    def _host_agent_loop(self) -> None:
        while self._running:
            try:
                msgs = self._agent.poll_host_agent(max_messages=100, timeout_ms=200)
            except Exception:  # noqa: BLE001 - the emulator is stopping
                return
            for _app, payload in msgs:
                self._on_report(decode(payload))

    def _on_report(self, rep: dict[str, Any]) -> None:
        if rep.get("type") == "worker":  # a grain worker's word on itself: its code did not load
            if rep.get("state") == "load-failed":
                self.load_errors[rep["grain"]] = rep["message"]
                self.echo(f"[{rep['grain']}] ERROR: {rep['message']}")
                with self._lock:
                    waiting = list(self._results.values())
                for event, _ in waiting:
                    event.set()  # invoke() raises the load error
            return
        self.reports.append(rep)
        tag = f"{rep['grain']} {rep['execution_id'][:8]}"
        for _ns, level, text in rep.get("logs", []):
            for line in str(text).rstrip("\n").splitlines():
                self.echo(f"[{tag}] {level}: {line}")
        for out in rep.get("outputs", []):
            if out["grain"] == END:
                if is_error(out["value"]):
                    err = out["value"]["error"]
                    self.echo(f"[{tag}] ERROR: {err['type']}: {err['message']}")
                with self._lock:
                    waiter = self._results.get(out["execution_id"])
                if waiter and not waiter[1]:  # (its event may be set already: woken by a load error)
                    waiter[1].append(out["value"])
                    waiter[0].set()
            elif not out.get("local"):
                # The emulator is one host: an event for a grain "elsewhere" is delivered here.
                body = {k: v for k, v in out.items() if k != "local"}
                self._agent.publish(f"{self.app}/{out['grain']}", encode(body))
