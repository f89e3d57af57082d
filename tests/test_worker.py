"""The grain worker, for real: `python -m grainworker` processes forking instances, against the
in-memory bus and data layer served over Thrift (the emulator's), observed through LQ_HA reports."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandemu import Emulator, EmulatorError

GRAINS = {
    "pid": "import os\ndef handle(e, c):\n    return {'pid': os.getpid(), 'ppid': os.getppid()}\n",
    "boom": "def handle(e, c):\n    raise ValueError('boom')\n",
    "sleepy": "import os, time\ndef handle(e, c):\n    t0 = time.time()\n    time.sleep(e['s'])\n"
    "    return {'pid': os.getpid(), 't0': t0, 't1': time.time()}\n",
    "badout": "def handle(e, c):\n    return {'not json': object()}\n",
    "broken": "def handle(e, c)\n    return 1\n",
    "printer": "def handle(e, c):\n    print('to stdout')\n    c.log('to the log', 'WARNING')\n    return 'printed'\n",
    "hog": "def handle(e, c):\n    block = bytearray(e['mb'] * 1024 * 1024)\n    return len(block)\n",
    "quitter": "import os\ndef handle(e, c):\n    os._exit(3)\n",
    "marker": "import os, time\ndef handle(e, c):\n    open(e['path'], 'w').write(str(os.getpid()))\n"
    "    time.sleep(e['s'])\n    return 'slept'\n",
    # init() runs once in the worker, in the code folder; every instance inherits what it did
    "warm": "import os\nWARM = []\ndef init():\n    WARM.append(os.getpid())\n"
    "    open('init-runs.txt', 'a').write('x')\n"
    "def handle(e, c):\n    return {'warm_pid': WARM[0], 'ppid': os.getppid(), 'cwd': os.getcwd(),"
    " 'data': open('data.txt').read()}\n",
}


def make_app(root: Path, name: str = "wtest") -> Path:
    d = root / name
    d.mkdir()
    for grain, code in GRAINS.items():
        (d / f"{grain}.py").write_text(code)
    wf = {"name": name, "entry": "pid", "functions": [{"name": g, "next": ["end"]} for g in GRAINS]}
    (d / "workflow.json").write_text(json.dumps(wf))
    (d / "data.txt").write_text("beside the code")
    return d


@pytest.fixture(scope="module")
def app_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_app(tmp_path_factory.mktemp("apps"))


@pytest.fixture(scope="module")
def emu(app_dir: Path) -> Iterator[Emulator]:
    with Emulator(
        app_dir, timeout_s=2, echo=lambda line: None, worker_args=["--concurrency", "2", "--memory-mb", "64"]
    ) as e:
        yield e


def call(emu: Emulator, grain: str, value: object, timeout: float = 20) -> object:
    """Publish straight to a grain's queue (not the entry) and wait for its output at 'end'."""
    from grainworker.envelope import encode, new_id
    from grainworker.localbus import LocalBusClient

    execution_id = new_id()
    done = threading.Event()
    result: list[object] = []
    with emu._lock:
        emu._results[execution_id] = (done, result)
    event = {
        "id": new_id(),
        "execution_id": execution_id,
        "app": emu.app,
        "grain": grain,
        "from": "",
        "frontend": "test",
        "value": value,
        "sent_ns": time.time_ns(),
    }
    with LocalBusClient(emu.bus_address, emu._agent_cred) as c:
        c.publish(f"{emu.app}/{grain}", encode(event))
    deadline = time.monotonic() + timeout
    while not result:  # woken without a result: another grain's load error (the emulator wakes every caller)
        assert time.monotonic() < deadline, f"no answer from {grain}"
        done.wait(0.05)
    return result[0]


def children(pid: int) -> list[tuple[int, str]]:
    out = subprocess.run(["ps", "--ppid", str(pid), "-o", "pid=,stat="], capture_output=True, text=True).stdout
    return [(int(p), s) for p, s in (line.split() for line in out.splitlines())]


def test_every_event_gets_its_own_forked_process(emu: Emulator) -> None:
    results = [call(emu, "pid", {}) for _ in range(4)]
    pids = {r["pid"] for r in results}
    assert len(pids) == 4
    assert {r["ppid"] for r in results} == {emu.worker_pid("pid")}


def test_exception_becomes_an_error_event(emu: Emulator) -> None:
    assert call(emu, "boom", {}) == {"error": {"type": "ValueError", "message": "boom", "grain": "boom"}}
    report = next(r for r in reversed(emu.reports) if r["grain"] == "boom")
    assert report["status"] == "error"
    assert any("Traceback" in text and "boom" in text for _, _, text in report["logs"])


def test_timeout_kills_the_instance(emu: Emulator) -> None:
    t0 = time.monotonic()
    result = call(emu, "sleepy", {"s": 60})
    assert result["error"]["type"] == "Timeout"
    assert "timeout of 2s" in result["error"]["message"]
    assert time.monotonic() - t0 < 15
    assert all(stat[0] != "Z" for _, stat in children(emu.worker_pid("sleepy")))


def test_output_that_is_not_json_is_an_error(emu: Emulator) -> None:
    result = call(emu, "badout", {})
    assert result["error"]["type"] == "BadOutput"


def test_a_grain_with_a_syntax_error_fails_the_application_with_where_it_is(emu: Emulator) -> None:
    deadline = time.monotonic() + 20
    while "broken" not in emu.load_errors and time.monotonic() < deadline:
        time.sleep(0.05)
    assert emu.load_errors["broken"].startswith("grain broken failed to load: SyntaxError: ")
    assert emu.load_errors["broken"].endswith("(broken.py, line 1)")
    with pytest.raises(EmulatorError, match="grain broken failed to load: SyntaxError"):
        emu.invoke({})


def test_where_a_grain_failed_to_load_is_the_line_of_its_own_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from grainworker.worker import load_grain

    monkeypatch.chdir(tmp_path)
    (tmp_path / "exits.py").write_text("import sys\n\nsys.exit(3)\n")
    (tmp_path / "nohandle.py").write_text("x = 1\n")
    handler, why = load_grain(str(tmp_path), "exits")
    assert why == "SystemExit: 3 (exits.py, line 3)"
    with pytest.raises(SystemExit):
        handler({}, None)
    assert load_grain(str(tmp_path), "nohandle")[1] == (
        "AttributeError: grain module 'nohandle' has no function handle(event, context)"
    )


def test_instances_run_in_the_code_folder_after_the_workers_init(emu: Emulator, app_dir: Path) -> None:
    first, second = call(emu, "warm", {}), call(emu, "warm", {})
    for r in (first, second):
        assert isinstance(r, dict)
        assert r["data"] == "beside the code"  # a relative path opens the file beside the grain's code
        assert r["cwd"] == str(app_dir)
        assert r["warm_pid"] == r["ppid"] == emu.worker_pid("warm")  # init ran in the worker, before the fork
    assert (app_dir / "init-runs.txt").read_text() == "x", "init runs once per worker, not per event"


def test_an_init_that_fails_is_a_load_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from grainworker.worker import load_grain

    monkeypatch.chdir(tmp_path)  # load_grain moves into the code folder; this puts the test's back afterwards
    (tmp_path / "initfails.py").write_text(
        "def init():\n    raise RuntimeError('no model')\n\ndef handle(e, c):\n    return 1\n"
    )
    (tmp_path / "initvalue.py").write_text("init = 3\ndef handle(e, c):\n    return 1\n")
    assert load_grain(str(tmp_path), "initfails")[1] == "RuntimeError: no model (initfails.py, line 2)"
    assert "init must be a function init()" in load_grain(str(tmp_path), "initvalue")[1]


def test_an_init_with_arguments_is_the_grains_own_function(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from grainworker.worker import load_grain

    monkeypatch.chdir(tmp_path)
    (tmp_path / "helper.py").write_text(  # KNIX's reducers: init(event, context) is called by handle, not a warm-up
        "def init(event, context):\n    raise RuntimeError('not a warm-up')\n\ndef handle(e, c):\n    return 1\n"
    )
    (tmp_path / "optional.py").write_text(
        "RAN = []\ndef init(n=1):\n    RAN.append(n)\ndef handle(e, c):\n    return 1\n"
    )
    assert load_grain(str(tmp_path), "helper")[1] == ""
    assert load_grain(str(tmp_path), "optional")[1] == ""
    import optional  # type: ignore[import-not-found]

    assert optional.RAN == [1]


def test_instance_that_dies_without_publishing_is_reported(emu: Emulator) -> None:
    result = call(emu, "quitter", {})
    assert result["error"] == {
        "type": "Crashed",
        "message": "grain instance of quitter exited with code 3",
        "grain": "quitter",
    }


def report_of(emu: Emulator, grain: str) -> dict:
    return [r for r in emu.reports if r["grain"] == grain][-1]


def test_an_instance_killed_from_outside_is_reported_lost_and_a_crash_is_an_error(
    emu: Emulator, tmp_path: Path
) -> None:
    # SIGKILL not sent by the worker (OOM killer, operator): "lost", so the host agent may run the event again
    pidfile = tmp_path / "pid"
    answer: list[object] = []
    caller = threading.Thread(target=lambda: answer.append(call(emu, "marker", {"path": str(pidfile), "s": 30})))
    caller.start()
    deadline = time.monotonic() + 10
    while not (pidfile.exists() and pidfile.read_text()):
        assert time.monotonic() < deadline, "the instance never started"
        time.sleep(0.02)
    os.kill(int(pidfile.read_text()), signal.SIGKILL)
    caller.join(20)
    assert answer and answer[0]["error"]["type"] == "Killed"
    assert answer[0]["error"]["message"] == "grain instance of marker was killed by signal 9"
    assert report_of(emu, "marker")["status"] == "lost"
    # the grain's own death and its timeout are its errors, never re-run
    call(emu, "quitter", {})
    assert report_of(emu, "quitter")["status"] == "error"
    call(emu, "sleepy", {"s": 60})
    assert report_of(emu, "sleepy")["status"] == "error"


def test_memory_limit_applies_per_instance(emu: Emulator) -> None:
    assert call(emu, "hog", {"mb": 8}) == 8 * 1024 * 1024
    assert call(emu, "hog", {"mb": 512})["error"]["type"] == "MemoryError"


def test_stdout_and_log_lines_reach_the_report(emu: Emulator) -> None:
    assert call(emu, "printer", {}) == "printed"
    report = next(r for r in reversed(emu.reports) if r["grain"] == "printer")
    lines = {(level, text.strip()) for _, level, text in report["logs"]}
    assert ("STDOUT", "to stdout") in lines and ("WARNING", "to the log") in lines


def test_concurrency_cap_queues_the_excess(emu: Emulator) -> None:
    results: list[object] = []
    threads = [threading.Thread(target=lambda: results.append(call(emu, "sleepy", {"s": 0.6}, 30))) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 5 and all("pid" in r for r in results)
    spans = [(r["t0"], r["t1"]) for r in results]
    overlap = max(sum(1 for a, b in spans if a <= t < b) for t, _ in spans)
    assert overlap <= 2, f"{overlap} instances ran at once with a cap of 2"


def test_no_zombies_and_a_standby_waits(emu: Emulator) -> None:
    for _ in range(3):
        call(emu, "pid", {})
    time.sleep(1.2)  # one poll round: the worker reaps between polls
    kids = children(emu.worker_pid("pid"))
    assert [s for _, s in kids if s.startswith("Z")] == []
    assert len(kids) == 1, f"expected exactly the pre-forked standby, got {kids}"


def test_a_grain_gets_its_standby_once_it_is_called(app_dir: Path) -> None:
    with Emulator(app_dir, echo=lambda line: None) as e:
        time.sleep(1.2)
        assert children(e.worker_pid("pid")) == [], "a grain never called keeps no standby (memory)"
        call(e, "pid", {})
        time.sleep(1.2)
        assert len(children(e.worker_pid("pid"))) == 1


def _bare_worker(monkeypatch: pytest.MonkeyPatch, share: float) -> tuple[object, list[str]]:
    from grainworker import worker as w
    from grainworker.instance import InstanceSpec
    from grainworker.workflow import parse_workflow

    wf = parse_workflow(b'{"name": "a", "entry": "g", "functions": [{"name": "g", "next": ["end"]}]}')
    cfg = w.WorkerConfig("a", "g", InstanceSpec("a", "g", wf), "/nonexistent", "unix:/x", "unix:/x", "c")
    worker = w.GrainWorker(cfg, lambda e, c: e, lambda: None, lambda: None)
    forks: list[str] = []
    monkeypatch.setattr(worker, "_fork_standby", lambda: forks.append("fork"))
    monkeypatch.setattr(w, "sandbox_memory_share", lambda: share)
    return worker, forks


def test_no_new_standby_while_the_sandbox_is_short_of_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    worker, forks = _bare_worker(monkeypatch, 0.9)
    worker._last_event = time.monotonic()
    worker._keep_standby()
    assert forks == []
    worker, forks = _bare_worker(monkeypatch, 0.5)
    worker._keep_standby()
    assert forks == [], "never called: no standby"
    worker._last_event = time.monotonic()
    worker._keep_standby()
    assert forks == ["fork"]


def test_the_sandbox_memory_is_read_from_cgroup_v2_or_v1(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from grainworker import cgroup

    used, limit, events = tmp_path / "current", tmp_path / "max", tmp_path / "oom_control"
    used.write_text("100\n")
    limit.write_text("400\n")
    events.write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
    missing = str(tmp_path / "missing")
    monkeypatch.setattr(cgroup, "MEMORY_FILES", [(missing, missing, missing), (str(used), str(limit), str(events))])
    assert cgroup.memory_share() == 0.25
    assert cgroup.memory_limit() == 400
    assert cgroup.oom_kills() == 2
    limit.write_text("max\n")  # cgroup v2: no limit
    assert cgroup.memory_share() == 0.0
    assert cgroup.memory_limit() == 0
    monkeypatch.setattr(cgroup, "MEMORY_FILES", [(missing, missing, missing)])
    assert cgroup.oom_kills() == -1


def test_without_standby_no_child_waits(app_dir: Path) -> None:
    with Emulator(app_dir, standby=False, echo=lambda line: None) as e:
        assert call(e, "pid", {})["ppid"] == e.worker_pid("pid")
        time.sleep(1.2)
        assert children(e.worker_pid("pid")) == []


def test_sigterm_lets_running_instances_finish(app_dir: Path) -> None:
    with Emulator(app_dir, echo=lambda line: None) as e:
        call(e, "sleepy", {"s": 0})  # the worker is up and has its SIGTERM handler
        got: list[object] = []
        t = threading.Thread(target=lambda: got.append(call(e, "sleepy", {"s": 1.0})))
        t.start()
        time.sleep(0.5)
        worker = e._workers["sleepy"]
        os.kill(worker.pid, signal.SIGTERM)
        t.join(20)
        assert got and "pid" in got[0], "the running instance was not allowed to finish"
        assert worker.wait(timeout=15) == 0


def test_worker_imports_only_stdlib_thrift_and_itself() -> None:
    code = (
        "import sys, sysconfig, grainworker.worker, grainworker.__main__\n"
        "std = sysconfig.get_paths()['stdlib']\n"
        "bad = [n for n, m in sys.modules.items() if (getattr(m, '__file__', None) or '').find(std) != 0\n"
        "       and getattr(m, '__file__', None)\n"
        "       and n.split('.')[0] not in ('thrift', 'six', 'grainworker')\n"
        "       and not n.startswith(('__editable__', '_distutils_hack'))]\n"
        "print(sorted(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_instances_forked_without_at_fork_handlers_still_draw_different_random_numbers() -> None:
    code = (
        "import os, random, sys\n"
        "from grainworker._fork import fork\n"
        "random.random()\n"
        "r, w = os.pipe()\n"
        "for _ in range(2):\n"
        "    if fork() == 0:\n"
        "        os.write(w, f'{os.getpid()} {random.random()}\\n'.encode()); os._exit(0)\n"
        "os.wait(); os.wait(); os.close(w)\n"
        "sys.stdout.write(os.read(r, 1000).decode())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=20).stdout.split("\n")
    rows = [line.split() for line in out if line]
    assert len(rows) == 2 and rows[0][0] != rows[1][0], out
    assert rows[0][1] != rows[1][1], "both children drew the same number: random was not reseeded"


def _switches(pid: int) -> int:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    return int(fields["voluntary_ctxt_switches"]) + int(fields["nonvoluntary_ctxt_switches"])


def _standby_of(emu: Emulator, grain: str, ran: frozenset[int] = frozenset()) -> int:
    """The worker's one waiting standby. Right after a call, the instance that ran it may still be exiting (or a
    zombie) while the next standby is not forked yet: a child that ran an event, is a zombie, or is not the only
    live child for a few looks in a row is not taken for the standby."""
    deadline, seen, looks = time.monotonic() + 10, 0, 0
    while time.monotonic() < deadline:
        kids = [pid for pid, stat in children(emu.worker_pid(grain)) if "Z" not in stat and pid not in ran]
        if len(kids) == 1 and kids[0] == seen:
            looks += 1
            if looks >= 3:
                return seen
        else:
            seen, looks = (kids[0] if len(kids) == 1 else 0), 0
        time.sleep(0.05)
    raise AssertionError(f"no single standby under {grain}'s worker: {children(emu.worker_pid(grain))}")


def test_the_standby_takes_the_event_itself_and_its_worker_still_times_it_and_answers_for_it(emu: Emulator) -> None:
    ran = frozenset({call(emu, "pid", {})["pid"]})
    standby = _standby_of(emu, "pid", ran)
    assert call(emu, "pid", {})["pid"] == standby, "the waiting standby ran the event"
    call(emu, "quitter", {})  # once called, quitter keeps a standby too
    _standby_of(emu, "quitter")
    result = call(emu, "quitter", {})
    assert result["error"]["type"] == "Crashed", "the worker answers for an instance its standby started"
    call(emu, "sleepy", {"s": 0})
    _standby_of(emu, "sleepy")
    assert call(emu, "sleepy", {"s": 60})["error"]["type"] == "Timeout", "and kills it past the grain's timeout"


def test_an_idle_worker_and_its_standby_do_not_wake_up(emu: Emulator) -> None:
    ran = frozenset({call(emu, "pid", {})["pid"]})
    worker, standby = emu.worker_pid("pid"), _standby_of(emu, "pid", ran)
    time.sleep(0.3)  # the hop's aftermath (the deferred standby, reaping) is over
    before = _switches(worker), _switches(standby)
    time.sleep(3)
    after = _switches(worker), _switches(standby)
    # A worker that polled every second woke 3 times and more here; now both wait on a 60 s poll.
    assert after[0] - before[0] <= 1 and after[1] - before[1] <= 1, (before, after)


def test_a_crash_while_the_worker_waits_on_its_poll_is_answered(app_dir: Path) -> None:
    # No standby: the worker's own poll is on its way when the instance dies; its answer goes on another connection.
    with Emulator(app_dir, standby=False, echo=lambda line: None) as e:
        for _ in range(3):
            assert call(e, "quitter", {})["error"]["type"] == "Crashed"
        assert call(e, "pid", {})["ppid"] == e.worker_pid("pid")


def test_a_rehearsed_standby_pays_its_page_faults_before_the_event_comes() -> None:
    # In forked children of this (warm) process: the faults of run_instance on a real event, with and without a
    # rehearsal first. A count of page faults, not a time.
    code = r"""
import os, resource, sys, time
from grainworker._fork import fork
from grainworker.envelope import encode, new_id
from grainworker.instance import InstanceSpec, rehearse, run_instance
from grainworker.workflow import parse_workflow
wf = parse_workflow(b'{"name": "a", "entry": "g", "functions": [{"name": "g", "next": ["h"]},'
                    b' {"name": "h", "next": ["end"]}]}')
spec = InstanceSpec("a", "g", wf, frozenset({"g", "h"}))
class Bus:
    def publish_batch(self, deliveries): self.sent = deliveries
raw = encode({"id": new_id(), "execution_id": new_id(), "app": "a", "grain": "g", "from": "", "frontend": "f",
              "value": {"n": 1}, "sent_ns": 1, "tag": "", "trace": []})
for rehearsed in (False, True):
    r, w = os.pipe()
    if fork() == 0:
        nice = os.getpriority(os.PRIO_PROCESS, 0)
        if rehearsed:
            rehearse(spec)
        assert os.getpriority(os.PRIO_PROCESS, 0) == nice and sys.stdout is sys.__stdout__
        bus = Bus()
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        run_instance(raw, spec, lambda v, c: v, bus, lambda: None)
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
        os.write(w, f"{faults} {len(bus.sent)}".encode()); os._exit(0)
    os.close(w); print(os.read(r, 100).decode()); os.wait()
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    (cold, sent_cold), (warm, sent_warm) = (map(int, line.split()) for line in out[:2])
    assert sent_cold == sent_warm == 2, "the output to h and the report: a rehearsal changes nothing the run sends"
    assert warm * 2 < cold, f"{warm} page faults after a rehearsal, {cold} without"


def test_a_waiting_standby_dies_with_its_worker(app_dir: Path) -> None:
    # A standby left waiting by a dead worker would keep polling the grain's queue beside the restarted worker.
    with Emulator(app_dir, echo=lambda line: None) as e:
        ran = frozenset({call(e, "pid", {})["pid"]})
        worker = e.worker_pid("pid")
        standby = _standby_of(e, "pid", ran)
        os.kill(worker, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and Path(f"/proc/{standby}").exists():
            try:
                os.waitpid(standby, os.WNOHANG)  # not our child: only for a zombie's sake (ignored)
            except ChildProcessError:
                pass
            if "Z" in (
                Path(f"/proc/{standby}/stat").read_text().split()[2] if Path(f"/proc/{standby}").exists() else "Z"
            ):
                break
            time.sleep(0.05)
        alive = Path(f"/proc/{standby}").exists() and Path(f"/proc/{standby}/stat").read_text().split()[2] != "Z"
        assert not alive, "the standby outlived its worker"
