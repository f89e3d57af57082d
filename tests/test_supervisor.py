"""The sandbox supervisor, for real on the host: `python -m grainworker.supervisor` starting real grain
workers against the emulator's in-memory bus and data layer (Thrift over Unix sockets), observed through
LQ_HA reports, `ps` and its log. Inside a container it runs as PID 1; here it is a subreaper instead."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from grainworker._gen.datalayer import LocalDataLayer
from grainworker._gen.localbus import LocalBus
from grainworker.envelope import decode, encode, new_id
from grainworker.localbus import LocalBusClient
from sandemu import _serve
from sandemu._bus import InMemoryLocalBus
from sandemu._datalayer import InMemoryDataLayer

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
APP = "suptest"
AGENT_CRED = "agent-" + new_id()
APP_CRED = "app-" + new_id()

GRAINS = {
    "sleepy": "import os, time\ndef handle(e, c):\n    time.sleep(e['s'])\n    return {'pid': os.getpid()}\n",
    "uselib": "import sandhelper\ndef handle(e, c):\n    return sandhelper.VALUE\n",
    # polls its queue (so the worker is up), then dies: a worker that crash-loops after its deploy
    "dier": "import os, threading\nthreading.Timer(0.3, lambda: os._exit(1)).start()\n"
    "def handle(e, c):\n    return 1\n",
    "noload": "\nraise RuntimeError('no config')\n",
}


@dataclass
class Host:
    bus: str
    data: str
    app_dir: Path


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Host:
    """The host agent's side: in-memory bus + data layer on Unix sockets, an application folder."""
    tmp = tmp_path_factory.mktemp("sup")
    bus, data = InMemoryLocalBus(AGENT_CRED), InMemoryDataLayer(AGENT_CRED)
    bus.grantApplication(AGENT_CRED, APP, APP_CRED)
    data.grantApplication(AGENT_CRED, APP, APP_CRED)
    _serve(LocalBus.Processor(bus), str(tmp / "bus.sock"))
    _serve(LocalDataLayer.Processor(data), str(tmp / "data.sock"))
    app = tmp / "app"
    (app / "code").mkdir(parents=True)
    (app / "lib").mkdir()
    for f in ("greet.py", "shout.py"):
        (app / "code" / f).write_text((EXAMPLES / "hello" / f).read_text())
    for g, code in GRAINS.items():
        (app / "code" / f"{g}.py").write_text(code)
    (app / "lib" / "sandhelper.py").write_text("VALUE = 'from lib'\n")  # what pip --target would install
    wf = {
        "name": APP,
        "entry": "greet",
        "functions": [
            {"name": "greet", "next": ["shout"]},
            {"name": "shout", "next": ["end"]},
            {"name": "sleepy", "next": ["end"]},
            {"name": "uselib", "next": ["end"]},
            {"name": "dier", "next": ["end"]},
            {"name": "noload", "next": ["end"]},
        ],
    }
    (app / "workflow.json").write_text(json.dumps(wf))
    return Host(f"unix:{tmp / 'bus.sock'}", f"unix:{tmp / 'data.sock'}", app)


class Sandbox:
    """One supervisor process and the host agent's view of it."""

    def __init__(self, host: Host, tmp: Path, **overrides: Any) -> None:
        cfg = {
            "app": APP,
            "host": "h1",
            "workflow": str(host.app_dir / "workflow.json"),
            "code": str(host.app_dir / "code"),
            "lib": str(host.app_dir / "lib"),
            "bus": host.bus,
            "data": host.data,
            "grains": {g: {"timeout_s": 20} for g in ("greet", "shout", "sleepy", "uselib")},
            "restart": {"initial_s": 0.2, "max_s": 2, "stable_s": 30},
            "stop_grace_s": 10,
        } | overrides
        self.config = tmp / "sandbox.json"
        self.config.write_text(json.dumps(cfg))
        self.log = tmp / "supervisor.log"
        env = {**os.environ, "PYTHONPATH": str(ROOT), "SAND_GRAINWORKER_CREDENTIAL": APP_CRED}
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "grainworker.supervisor", "--config", str(self.config)],
                env=env,
                stderr=log,
                stdout=log,
            )
        self.agent = LocalBusClient(host.bus, AGENT_CRED)

    def workers(self) -> dict[str, int]:
        """grain -> pid of the supervisor's grain worker children."""
        out = subprocess.run(
            ["ps", "-ww", "--ppid", str(self.proc.pid), "-o", "pid=,args="], capture_output=True, text=True
        ).stdout
        found = {}
        for line in out.splitlines():
            pid, args = line.strip().split(None, 1)
            if "-m grainworker " in args:
                found[args.split("--grain ")[1].split()[0]] = int(pid)
        return found

    def wait_workers(self, n: int, exclude: set[int] = frozenset(), timeout: float = 20) -> dict[str, int]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            w = self.workers()
            if len(w) == n and not exclude & set(w.values()):
                return w
            time.sleep(0.05)
        raise AssertionError(f"expected {n} workers (not {exclude}), have {self.workers()}\n{self.log_text()}")

    def wait_ready(self, n: int, timeout: float = 20) -> None:
        """Until n grain workers have logged that they poll their queues."""
        deadline = time.monotonic() + timeout
        while self.log_text().count("grain worker up") < n:
            assert time.monotonic() < deadline, self.log_text()
            time.sleep(0.05)

    def publish(self, grain: str, value: Any) -> str:
        execution_id = new_id()
        event = {
            "id": new_id(),
            "execution_id": execution_id,
            "app": APP,
            "grain": grain,
            "from": "",
            "frontend": "test",
            "value": value,
            "sent_ns": time.time_ns(),
        }
        self.agent.publish(f"{APP}/{grain}", encode(event))
        return execution_id

    def result(self, execution_id: str, timeout: float = 30) -> Any:
        """Act as the host agent: read LQ_HA until the execution's output reaches 'end'."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for _app, payload in self.agent.poll_host_agent(100, 200):
                report = decode(payload)
                for out in report.get("outputs", []):
                    if out["execution_id"] == execution_id and out["grain"] == "end":
                        return out["value"]
        raise AssertionError(f"no result for {execution_id}\n{self.log_text()}")

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.agent.close()


@pytest.fixture
def sandbox(host: Host, tmp_path: Path) -> Iterator[Sandbox]:
    s = Sandbox(host, tmp_path)
    s.wait_ready(4)
    yield s
    s.close()


def zombies_of(pid: int) -> list[str]:
    out = subprocess.run(["ps", "--ppid", str(pid), "-o", "pid=,stat="], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line.split()[1].startswith("Z")]


def test_one_worker_per_grain_runs_the_workflow(sandbox: Sandbox) -> None:
    workers = sandbox.workers()
    assert sorted(workers) == ["greet", "shout", "sleepy", "uselib"]
    run = sandbox.publish("greet", {"name": "sand"})
    assert sandbox.result(run) == {"greeting": "HELLO, SAND!", "execution_id": run}


def test_workers_import_the_applications_libraries(sandbox: Sandbox) -> None:
    assert sandbox.result(sandbox.publish("uselib", {})) == "from lib"


def test_killed_worker_is_restarted_and_an_event_queued_meanwhile_is_processed(host: Host, tmp_path: Path) -> None:
    # Restart after 1.5 s, publish 1.1 s after the kill: past the dead worker's last long poll (at most
    # 1 s), which the bus still counts as a poller until it times out (see docs/host-agent.md, Sandbox).
    s = Sandbox(host, tmp_path, restart={"initial_s": 1.5, "max_s": 2, "stable_s": 30})
    try:
        s.wait_ready(4)
        old = s.workers()["greet"]
        os.kill(old, signal.SIGKILL)
        time.sleep(1.1)
        assert "greet" not in s.workers(), "the worker must still be down when the event is published"
        run = s.publish("greet", {"name": "again"})  # waits in the local queue: no worker polls it
        new = s.wait_workers(4, exclude={old})["greet"]
        assert s.result(run) == {"greeting": "HELLO, AGAIN!", "execution_id": run}
        log = s.log_text()
        assert "grain worker greet was killed by SIGKILL" in log and "restarting in 1.5s" in log
        assert f"grain worker greet started (pid {new})" in log
    finally:
        s.close()


def test_a_dead_worker_is_reported_exited_before_it_is_restarted(host: Host, tmp_path: Path) -> None:
    # the host agent re-delivers what the worker had taken: it must hear of the death before a new worker polls
    s = Sandbox(host, tmp_path, restart={"initial_s": 1.0, "max_s": 2, "stable_s": 30})
    try:
        s.wait_ready(4)
        old = s.workers()["shout"]
        os.kill(old, signal.SIGKILL)
        deadline = time.monotonic() + 10
        exited = None
        while exited is None and time.monotonic() < deadline:
            for app, payload in s.agent.poll_host_agent(100, 200):
                r = decode(payload)
                if r.get("type") == "worker" and r.get("state") == "exited":
                    exited = (app, r)
        assert exited is not None, s.log_text()
        assert exited[0] == APP and exited[1]["grain"] == "shout"
        assert exited[1]["message"] == "grain worker shout was killed by SIGKILL"
        assert "shout" not in s.workers(), "reported before the next worker of shout starts"
        s.wait_workers(4, exclude={old})
    finally:
        s.close()


def test_orphaned_instance_finishes_and_is_reaped(sandbox: Sandbox) -> None:
    run = sandbox.publish("sleepy", {"s": 1.0})
    time.sleep(0.4)  # the instance is running
    os.kill(sandbox.workers()["sleepy"], signal.SIGKILL)
    assert "pid" in sandbox.result(run), "the orphaned instance still publishes its output"
    sandbox.wait_workers(4)
    deadline = time.monotonic() + 10
    while "reaped orphaned process" not in sandbox.log_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "reaped orphaned process" in sandbox.log_text()
    assert zombies_of(sandbox.proc.pid) == []


def test_sigterm_is_forwarded_and_running_instances_finish(sandbox: Sandbox) -> None:
    sandbox.result(sandbox.publish("sleepy", {"s": 0}))  # the worker is up and polling
    workers = sandbox.workers()
    run = sandbox.publish("sleepy", {"s": 1.0})
    time.sleep(0.4)
    sandbox.proc.send_signal(signal.SIGTERM)
    assert "pid" in sandbox.result(run), "the running instance was not allowed to finish"
    assert sandbox.proc.wait(timeout=20) == 0
    log = sandbox.log_text()
    assert "supervisor got SIGTERM" in log
    for grain, pid in workers.items():
        assert f"grain worker {grain} (pid {pid}) exited with code 0" in log  # each stopped on its own SIGTERM
    assert "grain worker stopped after" in log  # the worker's own shutdown line
    assert "restarting" not in log


def test_restarts_back_off(host: Host, tmp_path: Path) -> None:
    s = Sandbox(
        host,
        tmp_path,
        bus=f"unix:{tmp_path / 'no-such.sock'}",
        grains={"greet": {}},
        restart={"initial_s": 0.1, "max_s": 0.4, "stable_s": 30},
    )
    try:
        deadline = time.monotonic() + 30
        while s.log_text().count("restarting in") < 5 and time.monotonic() < deadline:
            time.sleep(0.1)
        delays = [
            line.split("restarting in ")[1].split("s")[0]
            for line in s.log_text().splitlines()
            if "restarting in" in line
        ]
        assert delays[:5] == ["0.1", "0.2", "0.4", "0.4", "0.4"]
    finally:
        s.close()
    assert s.proc.returncode == 0


def _worker_report(host: Host, s: Sandbox, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The first worker report on LQ_HA that `wanted` accepts (within 30 s)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for _app, payload in s.agent.poll_host_agent(100, 200):
            report = decode(payload)
            if report.get("type") == "worker" and wanted(report):
                return report
    raise AssertionError(s.log_text())


def _drain_reports(host: Host) -> None:
    with LocalBusClient(host.bus, AGENT_CRED) as agent:
        while agent.poll_host_agent(100, 100):
            pass  # later reports of this worker are not the next test's


def test_sighup_restarts_only_the_named_grain_workers_with_their_new_code(host: Host, tmp_path: Path) -> None:
    code = tmp_path / "code"  # the host agent's copy of the application's code, rewritten by `sand update`
    code.mkdir()
    for f in ("greet.py", "shout.py", "sleepy.py", "uselib.py"):
        (code / f).write_text((host.app_dir / "code" / f).read_text())
    s = Sandbox(host, tmp_path, code=str(code), reload_file=str(tmp_path / "reload.json"))
    try:
        s.wait_ready(4)
        before = s.workers()
        run = s.publish("greet", {"name": "old"})
        assert s.result(run) == {"greeting": "HELLO, OLD!", "execution_id": run}
        (code / "greet.py").write_text("def handle(e, c):\n    return {'greeting': 'bonjour ' + e['name']}\n")
        (tmp_path / "reload.json").write_text(json.dumps({"grains": ["greet", "not-here"]}))
        os.kill(s.proc.pid, signal.SIGHUP)
        found = _worker_report(host, s, lambda r: r["state"] not in ("exited",))
        assert found == {
            "type": "worker",
            "app": APP,
            "grain": "greet",
            "state": "reloaded",
            "message": "grain worker greet runs its new code",
        }
        after = s.workers()
        assert after["greet"] != before["greet"]
        assert {g: p for g, p in after.items() if g != "greet"} == {g: p for g, p in before.items() if g != "greet"}
        run = s.publish("greet", {"name": "new"})
        assert s.result(run) == {"greeting": "BONJOUR NEW!", "execution_id": run}
        assert "grain worker greet stopped for new code" in s.log_text()
        assert "restarting in" not in s.log_text(), "a restart for new code is not a failure with a back-off"

        (code / "greet.py").write_text("raise ImportError('no module named nope')\n")  # the new code does not load
        os.kill(s.proc.pid, signal.SIGHUP)
        found = _worker_report(host, s, lambda r: r["state"] not in ("exited",))
        assert found["state"] == "load-failed" and "ImportError: no module named nope" in found["message"], found
    finally:
        s.close()
        _drain_reports(host)


def test_without_local_grains_every_output_goes_to_the_host_agent(host: Host, tmp_path: Path) -> None:
    # sandbox.local.shortcut=false: the host agent sends every hop through Kafka (a benchmark's baseline)
    s = Sandbox(host, tmp_path, local_grains=[])
    try:
        s.wait_ready(4)
        run = s.publish("greet", {"name": "far"})
        deadline, outputs = time.monotonic() + 30, []
        while not outputs and time.monotonic() < deadline:
            for _app, payload in s.agent.poll_host_agent(100, 200):
                outputs += [o for o in decode(payload).get("outputs", []) if o.get("execution_id") == run]
        assert [(o["grain"], o["local"]) for o in outputs] == [("shout", False)], outputs
        assert s.agent.length(f"{APP}/shout") == 0, "not put into shout's local queue"
    finally:
        s.close()
        _drain_reports(host)


def test_a_crash_looping_worker_is_reported_to_the_host_agent(host: Host, tmp_path: Path) -> None:
    s = Sandbox(host, tmp_path, grains={"dier": {}}, restart={"initial_s": 0.1, "max_s": 0.4, "stable_s": 30})
    try:
        found = _worker_report(host, s, lambda r: r["grain"] == "dier" and r["state"] != "exited")
        assert found["state"] == "crash-looping" and found["app"] == APP
        assert "exited with code 1" in found["message"] and "3 times in a row" in found["message"], found
    finally:
        s.close()
        _drain_reports(host)


def test_a_grain_that_does_not_load_is_reported_with_where_and_never_polls(host: Host, tmp_path: Path) -> None:
    s = Sandbox(host, tmp_path, grains={"noload": {}}, restart={"initial_s": 5, "max_s": 5, "stable_s": 30})
    try:
        found = _worker_report(host, s, lambda r: r["state"] == "load-failed")
        assert found == {
            "type": "worker",
            "app": APP,
            "grain": "noload",
            "state": "load-failed",
            "message": "grain noload failed to load: RuntimeError: no config (noload.py, line 2)",
        }
        assert s.agent.length(f"{APP}/noload") == 0
        deadline = time.monotonic() + 30
        while "grain worker noload exited with code 3" not in s.log_text():
            assert time.monotonic() < deadline, s.log_text()
            time.sleep(0.05)
    finally:
        s.close()
        _drain_reports(host)


def test_a_worker_killed_while_the_sandbox_counted_an_oom_kill_died_for_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    from grainworker import supervisor as sup

    kills = [0]
    monkeypatch.setattr(sup, "oom_kills", lambda: kills[0])
    monkeypatch.setattr(sup, "memory_limit", lambda: 512 * 1024 * 1024)
    s = sup.Supervisor.__new__(sup.Supervisor)
    s._oom_kills = 0
    sigkill = signal.SIGKILL  # a wait status of "killed by SIGKILL"
    assert s._death(sigkill) == "was killed by SIGKILL", "no OOM kill counted: someone else's SIGKILL"
    kills[0] = 1
    assert s._death(sigkill) == (
        "was killed for memory (the sandbox's limit is 512 MB: raise "
        "settings.sandbox_memory_mb in workflow.json, or use less, e.g. at import)"
    )
    assert s._death(sigkill) == "was killed by SIGKILL", "that OOM kill is counted once"
    kills[0] = 2
    assert s._death(3 << 8) == "exited with code 3", "an exit is an exit"


def test_without_a_credential_it_refuses_to_start(host: Host, tmp_path: Path) -> None:
    (tmp_path / "sandbox.json").write_text("{}")
    env = {k: v for k, v in os.environ.items() if k != "SAND_GRAINWORKER_CREDENTIAL"} | {"PYTHONPATH": str(ROOT)}
    r = subprocess.run(
        [sys.executable, "-m", "grainworker.supervisor", "--config", str(tmp_path / "sandbox.json")],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 2 and "SAND_GRAINWORKER_CREDENTIAL is not set" in r.stderr


@pytest.mark.parametrize(
    "doc,message",
    [
        ({"app": "a"}, "'grains' must be of type"),
        ({"app": "a", "workflow": "w", "code": "c", "bus": "b", "data": "d", "grains": {}}, "'grains' is empty"),
        ({"app": "a", "workflow": "w", "code": "c", "data": "d", "grains": {"g": {}}}, "'bus' must be"),
        (
            {"app": "a", "workflow": "w", "code": "c", "bus": "b", "data": "d", "grains": {"g": {"concurrency": "x"}}},
            "grains.g has a bad setting",
        ),
    ],
)
def test_a_bad_config_names_the_field(tmp_path: Path, doc: dict[str, Any], message: str) -> None:
    (tmp_path / "sandbox.json").write_text(json.dumps(doc))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SAND_GRAINWORKER_CREDENTIAL": APP_CRED}
    r = subprocess.run(
        [sys.executable, "-m", "grainworker.supervisor", "--config", str(tmp_path / "sandbox.json")],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 2 and message in r.stderr, r.stderr
