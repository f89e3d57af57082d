"""benchmarks/baselines: the container pool's decisions, the controller/invoker path and the action server, with the
fakes (no Kafka, no Docker); one e2e test runs both platforms on the real Docker and Kafka of `make up`."""

from __future__ import annotations

import base64
import contextlib
import io
import os
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.baselines import ColdContainerPlatform, Result, WarmContainerPlatform, cleanup_leftovers, zip_action
from benchmarks.baselines._pool import ContainerPool, PoolTimeout
from benchmarks.baselines._runtime import DATA_DIR_IN_BOX, SERVER, ActionError, Box, DockerRuntime, HttpActionConnection
from benchmarks.baselines.fakes import FakeBus, FakeRuntime, ManualClock

F1 = """import time


def handle(event, context):
    return {"x": event["x"] + 1, "f1_end_ns": time.time_ns()}
"""
F2 = """import time


def handle(event, context):
    start = time.time_ns()
    return {"x": event["x"] * 10, "f1_end_ns": event["f1_end_ns"], "f2_start_ns": start}
"""
BOOM = """def handle(event, context):
    raise ValueError("boom")
"""
SLOW = """import time


def handle(event, context):
    time.sleep(2)
    return event
"""


def pool(runtime: FakeRuntime, clock: ManualClock | None = None, **kw) -> ContainerPool:
    return ContainerPool(runtime, name_prefix="t", clock=clock or ManualClock(), **kw)


# ---- the pool ------------------------------------------------------------------------------------------------------


def test_new_container_only_when_all_of_the_functions_containers_are_busy() -> None:
    rt, clock = FakeRuntime(), ManualClock()
    p = pool(rt, clock)
    a = p.acquire("f@1", 1)
    b = p.acquire("f@1", 1)  # a is busy: a second container
    assert (a.start, b.start) == ("cold", "cold")
    assert a.slot.name != b.slot.name and rt.ops("create") == [a.slot.name, b.slot.name]
    assert set(a.phases) >= {"create", "start", "acquire"}
    p.release(a.slot)
    c = p.acquire("f@1", 1)  # a is idle again: reused, nothing created
    assert (c.start, c.slot) == ("hot", a.slot) and len(rt.ops("create")) == 2
    d = p.acquire("g@1", 1)  # another function never shares a container
    assert d.start == "cold" and d.slot.name not in (a.slot.name, b.slot.name)
    assert p.count() == 3


def test_pause_after_the_grace_and_unpause_on_the_next_activation() -> None:
    rt, clock = FakeRuntime(), ManualClock()
    p = pool(rt, clock, pause_after_s=0.05)
    lease = p.acquire("f@1", 1)
    p.release(lease.slot)
    assert p.next_deadline() == pytest.approx(clock() + 0.05)
    clock.advance(0.049)
    p.tick()
    assert rt.ops("pause") == [] and p.states() == {"free": 1}
    clock.advance(0.002)
    assert p.tick() == pytest.approx(clock() - 0.051 + 600)  # next: the idle timeout
    assert rt.ops("pause") == [lease.slot.name] and p.states() == {"paused": 1}
    again = p.acquire("f@1", 1)
    assert again.start == "warm" and again.slot is lease.slot and "unpause" in again.phases
    assert rt.ops("unpause") == [lease.slot.name] and rt.state[lease.slot.name] == "running"


def test_a_container_used_within_the_grace_is_not_paused() -> None:
    rt, clock = FakeRuntime(), ManualClock()
    p = pool(rt, clock, pause_after_s=0.05)
    s = p.acquire("f@1", 1).slot
    p.release(s)
    clock.advance(0.03)
    assert p.acquire("f@1", 1).start == "hot"
    clock.advance(0.03)  # busy: no timer runs while it works
    p.tick()
    p.release(s)
    clock.advance(0.03)
    p.tick()
    assert rt.ops("pause") == []


def test_no_pause_when_pause_after_is_none() -> None:
    rt, clock = FakeRuntime(), ManualClock()
    p = pool(rt, clock, pause_after_s=None, idle_timeout_s=10)
    p.release(p.acquire("f@1", 1).slot)
    assert p.next_deadline() == pytest.approx(clock() + 10)
    clock.advance(5)
    p.tick()
    assert rt.ops("pause") == [] and p.states() == {"free": 1}


def test_idle_containers_are_removed_after_the_idle_timeout_paused_ones_unpaused_first() -> None:
    rt, clock = FakeRuntime(), ManualClock()
    p = pool(rt, clock, pause_after_s=0.05, idle_timeout_s=600)
    a = p.acquire("f@1", 1).slot
    b = p.acquire("f@1", 1).slot
    p.release(a)
    clock.advance(1)
    p.tick()  # a paused
    p.release(b)  # b idle from now
    clock.advance(599)
    p.tick()  # a: 600 s idle -> removed (unpaused first); b paused, 599 s idle
    assert rt.ops("remove") == [a.name] and rt.calls[-2:] == [("unpause", a.name), ("remove", a.name)]
    clock.advance(1)
    p.tick()
    assert rt.ops("remove") == [a.name, b.name] and p.count() == 0 and rt.count() == 0
    assert p.next_deadline() is None


def test_idle_timeout_none_keeps_containers() -> None:
    rt, clock = FakeRuntime(), ManualClock()
    p = pool(rt, clock, pause_after_s=None, idle_timeout_s=None)
    p.release(p.acquire("f@1", 1).slot)
    clock.advance(10**6)
    assert p.tick() is None and p.count() == 1


def test_a_full_pool_waits_for_a_release_then_times_out() -> None:
    rt = FakeRuntime()
    p = ContainerPool(rt, name_prefix="t", max_containers=1)
    s = p.acquire("f@1", 1).slot
    t0 = time.monotonic()
    with pytest.raises(PoolTimeout, match="max_containers"):
        p.acquire("f@1", 0.2)
    assert 0.15 < time.monotonic() - t0 < 2
    threading.Timer(0.1, p.release, args=(s,)).start()
    assert p.acquire("f@1", 5).start == "hot"


def test_no_reuse_creates_for_every_activation_and_removes_after_it() -> None:
    rt = FakeRuntime()
    p = pool(rt, reuse=False)
    a = p.acquire("f@1", 1)
    p.release(a.slot)
    b = p.acquire("f@1", 1)
    assert (a.start, b.start) == ("cold", "cold") and a.slot.name != b.slot.name
    assert rt.ops("remove") == [a.slot.name] and rt.ops("pause") == []


def test_unhealthy_container_is_removed() -> None:
    rt = FakeRuntime()
    p = pool(rt)
    s = p.acquire("f@1", 1).slot
    p.release(s, healthy=False)
    assert rt.ops("remove") == [s.name] and p.count() == 0


def test_failed_pause_removes_the_container_failed_unpause_starts_a_new_one() -> None:
    rt, clock = FakeRuntime(), ManualClock()
    p = pool(rt, clock)
    s = p.acquire("f@1", 1).slot
    p.release(s)
    rt.fail = {"pause"}
    clock.advance(1)
    p.tick()
    assert rt.ops("remove") == [s.name] and p.count() == 0
    rt.fail = set()
    s2 = p.acquire("f@1", 1).slot
    p.release(s2)
    clock.advance(1)
    p.tick()
    rt.fail = {"unpause"}
    lease = p.acquire("f@1", 1)
    assert lease.start == "cold" and lease.slot is not s2 and s2.name in rt.ops("remove")


def test_an_activation_arriving_while_its_container_pauses_waits_then_unpauses() -> None:
    gate = threading.Event()

    class SlowPause(FakeRuntime):
        def pause(self, box: Box) -> None:
            gate.wait(5)
            super().pause(box)

    rt, clock = SlowPause(), ManualClock()
    p = pool(rt, clock)
    s = p.acquire("f@1", 1).slot
    p.release(s)
    clock.advance(1)
    ticker = threading.Thread(target=p.tick)
    ticker.start()
    while p.states() != {"pausing": 1}:
        time.sleep(0.001)
    got = []
    taker = threading.Thread(target=lambda: got.append(p.acquire("f@1", 5)))
    taker.start()
    time.sleep(0.05)
    assert not got  # waiting for the pause to finish, not creating a second container
    gate.set()
    ticker.join(5)
    taker.join(5)
    assert got[0].start == "warm" and got[0].slot is s and rt.ops("create") == [s.name]


def test_close_removes_every_container() -> None:
    rt, clock = FakeRuntime(), ManualClock()
    p = pool(rt, clock)
    a = p.acquire("f@1", 1).slot
    b = p.acquire("f@1", 1).slot
    p.release(a)
    clock.advance(1)
    p.tick()  # a paused, b busy
    p.close(5)
    assert rt.count() == 0 and p.count() == 0 and set(rt.ops("remove")) == {a.name, b.name}
    assert ("unpause", a.name) in rt.calls
    with pytest.raises(RuntimeError, match="closed"):
        p.acquire("f@1", 1)


def test_janitor_pauses_on_time() -> None:
    rt = FakeRuntime()
    p = ContainerPool(rt, name_prefix="t", pause_after_s=0.05)
    p.start_janitor()
    try:
        s = p.acquire("f@1", 1).slot
        p.release(s)
        t0 = time.monotonic()
        while not rt.ops("pause") and time.monotonic() - t0 < 5:
            time.sleep(0.005)
        assert rt.ops("pause") == [s.name] and 0.04 < time.monotonic() - t0 < 1.0
    finally:
        p.close(5)


# ---- controller, Kafka-shaped bus, invoker: a platform on the fakes -----------------------------------------------


@pytest.fixture
def fakes():
    rt, bus = FakeRuntime(), FakeBus()
    yield rt, bus


def ordered(r: Result) -> None:
    for h in r.hops:
        seq = [h.sent_ns, h.invoker_received_ns, h.handler_start_ns, h.handler_end_ns, h.completed_ns, h.received_ns]
        assert all(v > 0 for v in seq) and seq == sorted(seq), (h.function, seq)
    for a, b in zip(r.hops, r.hops[1:], strict=False):
        assert a.received_ns <= b.sent_ns


def test_warm_platform_runs_a_sequence_and_reuses_containers(fakes) -> None:
    rt, bus = fakes
    with WarmContainerPlatform(runtime=rt, bus=bus) as p:
        assert p.invoker_mode == "thread"
        p.deploy("f1", F1)
        p.deploy("f2", F2)
        first = p.invoke(["f1", "f2"], {"x": 1}, timeout_s=10)
        assert first.ok and first.output["x"] == 20, first.error
        assert [h.start for h in first.hops] == ["cold", "cold"]
        assert {"create", "start", "ready", "init", "run"} <= set(first.hops[0].phases)
        ordered(first)
        second = p.invoke(["f1", "f2"], {"x": 2}, timeout_s=10)
        assert second.output["x"] == 30 and [h.start for h in second.hops] == ["hot", "hot"]
        assert "init" not in second.hops[0].phases  # init once per container
        gap = second.interactions_ns()
        assert len(gap) == 1 and gap[0] == second.hops[1].handler_start_ns - second.hops[0].handler_end_ns
        assert second.hops[0].handler_start_ns <= second.output["f1_end_ns"] <= second.hops[0].handler_end_ns
        assert second.hops[1].handler_start_ns <= second.output["f2_start_ns"] <= second.hops[1].handler_end_ns
        assert 0 < gap[0] < 5e9
        assert p.containers() == 2 and p.memory_mb() == 20
        topics = set(bus.topics)
        assert topics == {f"baseline.{p.run_id}.invoker0", f"baseline.{p.run_id}.completed0"}
        d = second.hops[1].durations_ms()
        assert {"kafka_to_invoker", "kafka_to_controller", "handler", "run", "hop"} <= set(d)
    assert rt.count() == 0 and not bus.topics and set(bus.deleted) == topics
    assert not p.workdir.exists()
    p.close()  # twice is fine


def test_concurrent_calls_get_a_container_each(fakes) -> None:
    rt, bus = fakes
    slow = """import time


def handle(event, context):
    time.sleep(0.3)
    return event
"""
    with WarmContainerPlatform(runtime=rt, bus=bus) as p:
        p.deploy("s", slow)
        results: list[Result] = []
        threads = [threading.Thread(target=lambda: results.append(p.invoke(["s"], 1, 10))) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        assert [r.output for r in results] == [1, 1, 1]
        assert len({r.hops[0].container for r in results}) == 3 and len(rt.ops("create")) == 3


def test_a_function_that_raises_gives_an_error_result_and_loses_its_container(fakes) -> None:
    rt, bus = fakes
    with WarmContainerPlatform(runtime=rt, bus=bus) as p:
        p.deploy("f1", F1)
        p.deploy("boom", BOOM)
        p.deploy("f2", F2)
        r = p.invoke(["f1", "boom", "f2"], {"x": 1}, timeout_s=10)
        assert not r.ok and r.output is None and "boom" in r.error and "ValueError" in r.error
        assert [h.function for h in r.hops] == ["f1", "boom"] and r.hops[1].error == r.error
        assert r.hops[1].handler_start_ns > 0
        deadline = time.monotonic() + 5
        while p.containers() != 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert p.containers() == 1  # f1's stays warm, boom's is removed (OpenWhisk: developer error)


def test_a_call_never_waits_longer_than_its_timeout(fakes) -> None:
    rt, bus = fakes
    with WarmContainerPlatform(runtime=rt, bus=bus) as p:
        p.deploy("slow", SLOW)
        t0 = time.monotonic()
        r = p.invoke(["slow"], 1, timeout_s=0.3)
        assert not r.ok and "did not complete within" in r.error and time.monotonic() - t0 < 1.5


def test_deploy_and_invoke_check_their_arguments(fakes) -> None:
    rt, bus = fakes
    with WarmContainerPlatform(runtime=rt, bus=bus) as p:
        with pytest.raises(ValueError, match="does not compile"):
            p.deploy("bad", "def handle(:\n")
        with pytest.raises(ValueError, match="must match"):
            p.deploy("no/slash", F1)
        with pytest.raises(ValueError, match="not deployed"):
            p.invoke(["nope"], 1)
        with pytest.raises(ValueError, match="empty"):
            p.invoke([], 1)
    with pytest.raises(RuntimeError, match="closed"):
        p.deploy("f1", F1)
    with pytest.raises(ValueError, match="thread"):
        WarmContainerPlatform(runtime=FakeRuntime(), bus=FakeBus(), invoker="process")


def test_redeploy_runs_the_new_code_in_a_new_container(fakes) -> None:
    rt, bus = fakes
    with WarmContainerPlatform(runtime=rt, bus=bus) as p:
        p.deploy("f", "def handle(e, c):\n    return 1\n")
        a = p.invoke(["f"], None)
        p.deploy("f", "def handle(e, c):\n    return 2\n")
        b = p.invoke(["f"], None)
        assert (a.output, b.output) == (1, 2) and a.hops[0].container != b.hops[0].container


def test_cold_platform_uses_a_new_container_for_every_call(fakes) -> None:
    rt, bus = fakes
    with ColdContainerPlatform(runtime=rt, bus=bus, pause_after_s=0.05) as p:
        assert p.settings["pause_after_s"] is None
        p.deploy("f1", F1)
        p.deploy("f2", F2)
        names = set()
        for x in (1, 2):
            r = p.invoke(["f1", "f2"], {"x": x}, timeout_s=10)
            assert r.ok and r.output["x"] == (x + 1) * 10 and [h.start for h in r.hops] == ["cold", "cold"]
            ordered(r)
            assert all("init" in h.phases for h in r.hops)
            names |= {h.container for h in r.hops}
        assert len(names) == 4
        deadline = time.monotonic() + 5
        while p.containers() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert p.containers() == 0 and rt.ops("pause") == []
    assert not bus.topics


# ---- the action server (the real one, on the host, over a Unix socket) --------------------------------------------


@contextlib.contextmanager
def _server(sock: Path, data_dir: Path | None = None) -> Iterator[HttpActionConnection]:
    env = {k: v for k, v in os.environ.items() if k != "BASELINE_DATA_DIR"}
    if data_dir is not None:
        env["BASELINE_DATA_DIR"] = str(data_dir)
    proc = subprocess.Popen([sys.executable, str(SERVER), f"unix:{sock}"], env=env, cwd=sock.parent)
    conn = HttpActionConnection(f"unix:{sock}")
    try:
        conn.wait_ready(10)
        yield conn
    finally:
        conn.close()
        proc.kill()
        proc.wait(5)


@pytest.fixture
def action_server(tmp_path: Path) -> Iterator[HttpActionConnection]:
    with _server(tmp_path / "a.sock") as conn:
        yield conn


def test_action_server_init_once_then_run(action_server: HttpActionConnection) -> None:
    action_server.init("f2", F2, 5)
    t0 = time.time_ns()
    out, start, end = action_server.run({"x": 3, "f1_end_ns": 7}, "a1", 5)
    assert out["x"] == 30 and t0 <= start <= out["f2_start_ns"] <= end <= time.time_ns()
    out2, _, _ = action_server.run({"x": 4, "f1_end_ns": 7}, "a2", 5)  # same connection (keep-alive)
    assert out2["x"] == 40
    with pytest.raises(ActionError, match="more than once") as e:
        action_server.init("f2", F2, 5)
    assert e.value.status == 403


def test_action_server_reports_a_raising_function_and_a_non_json_result(action_server: HttpActionConnection) -> None:
    action_server.init("x", "def handle(e, c):\n    if e == 'set':\n        return {1, 2}\n    raise KeyError(e)\n", 5)
    with pytest.raises(ActionError, match="KeyError") as e:
        action_server.run("k", "a1", 5)
    assert e.value.status == 502 and 0 < e.value.start_ns <= e.value.end_ns
    with pytest.raises(ActionError, match="not JSON"):
        action_server.run("set", "a2", 5)


def test_action_server_reports_code_that_does_not_load(action_server: HttpActionConnection) -> None:
    with pytest.raises(ActionError, match="ZeroDivisionError"):
        action_server.init("x", "1 / 0\n", 5)


# ---- zip actions and the data-layer stand-in ------------------------------------------------------------------------

# A zip action as the image pipeline's: an entry module importing a module beside it and a package from packages/,
# reading a data file next to itself, using the context's data layer.
ZIP_MAIN = """import json
from pathlib import Path

import helper
import tinypkg

SETTING = (Path(__file__).with_name("setting.txt")).read_text().strip()


def handle(event, context):
    key = f"k/{context.get_execution_id()}"
    context.put(key, json.dumps({"twice": helper.twice(event["x"])}))
    got = json.loads(context.get(key))
    context.put(key + "-raw", b"\\xff\\xfe")
    raw = context.get(key + "-raw")
    context.delete(key + "-raw")
    return {"twice": got["twice"], "package": tinypkg.NAME, "setting": SETTING, "grain": context.get_grain_name(),
            "raw_is_bytes": isinstance(raw, bytes), "gone": context.get(key + "-raw") is None, "key": key}
"""
READER = """def handle(event, context):
    return {"value": context.get(event["key"]), "missing": context.get("no/such/key")}
"""


def _pkgs(tmp_path: Path) -> Path:
    pkgs = tmp_path / "target"
    (pkgs / "tinypkg").mkdir(parents=True)
    (pkgs / "tinypkg" / "__init__.py").write_text('NAME = "tinypkg 1.0"\n')
    (pkgs / "tinypkg" / "__pycache__").mkdir()
    (pkgs / "tinypkg" / "__pycache__" / "x.pyc").write_bytes(b"stale")
    (pkgs / "bin").mkdir()
    (pkgs / "bin" / "tool").write_text("#!/host/python\n")
    return pkgs


def _zip_of_main(tmp_path: Path) -> bytes:
    return zip_action(
        {"main_mod.py": ZIP_MAIN.encode(), "helper.py": b"def twice(x):\n    return 2 * x\n", "setting.txt": b"blue\n"},
        packages=_pkgs(tmp_path),
    )


def test_zip_action_puts_the_files_at_the_root_and_the_packages_under_packages(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("def handle(e, c):\n    return e\n")
    z = zipfile.ZipFile(io.BytesIO(zip_action({"m.py": tmp_path / "m.py", "w.bin": b"\0\1"}, packages=_pkgs(tmp_path))))
    assert sorted(z.namelist()) == ["m.py", "packages/tinypkg/__init__.py", "w.bin"]  # no bin/, no __pycache__
    assert z.read("w.bin") == b"\0\1" and z.read("m.py").startswith(b"def handle")
    again = zip_action({"m.py": tmp_path / "m.py", "w.bin": b"\0\1"}, packages=_pkgs(tmp_path / "2"))
    assert again == zip_action({"w.bin": b"\0\1", "m.py": tmp_path / "m.py"}, packages=_pkgs(tmp_path / "3"))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        zip_action({}, packages=tmp_path / "none")


def test_action_server_runs_a_zip_action_with_its_modules_packages_data_and_the_data_layer(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    code = base64.b64encode(_zip_of_main(tmp_path)).decode()
    with _server(tmp_path / "a.sock", data) as a, _server(tmp_path / "b.sock", data) as b:
        a.init("f", code, 10, binary=True, entry="main_mod")
        out, start, end = a.run({"x": 21}, "act1", 10)
        assert (
            out
            == {
                "twice": 42,
                "package": "tinypkg 1.0",
                "setting": "blue",
                "grain": "f",
                "raw_is_bytes": True,
                "gone": True,
                "key": "k/act1",
            }
            and 0 < start <= end
        )
        assert [p.name for p in data.iterdir()] == ["k%2Fact1"]  # one file per key, the key quoted
        b.init("reader", READER, 10)  # another container of the platform sees the same values
        assert b.run({"key": "k/act1"}, "act2", 10)[0] == {"value": '{"twice": 42}', "missing": None}
        with pytest.raises(ActionError, match="more than once"):
            a.init("f", code, 10, binary=True, entry="main_mod")


def test_action_server_zip_errors_and_main_convention(tmp_path: Path) -> None:
    main_only = base64.b64encode(zip_action({"__main__.py": b"def handle(e, c):\n    return [e, 'main']\n"})).decode()
    with _server(tmp_path / "a.sock") as a, _server(tmp_path / "b.sock") as b, _server(tmp_path / "c.sock") as c:
        a.init("m", main_only, 10, binary=True)  # no entry: the zip's __main__.py, as OpenWhisk
        assert a.run(1, "x", 10)[0] == [1, "main"]
        with pytest.raises(ActionError, match="ModuleNotFoundError"):
            b.init("m", main_only, 10, binary=True, entry="nope")
        c.init("d", "def handle(e, c):\n    c.put('k', 'v')\n", 10)  # a platform without data_layer=True
        with pytest.raises(ActionError, match="data_layer=True"):
            c.run(None, "y", 10)


def test_deploy_zip_checks_the_archive_and_the_invoker_inits_it_as_binary(fakes, tmp_path: Path) -> None:
    rt, bus = fakes
    archive = zip_action({"f.py": b"def handle(event, context):\n    return event * 3\n"})
    with WarmContainerPlatform(runtime=rt, bus=bus) as p:
        with pytest.raises(ValueError, match="not a zip"):
            p.deploy_zip("f", b"PK no", entry="f")
        with pytest.raises(ValueError, match="has no g.py"):
            p.deploy_zip("f", archive, entry="g")
        with pytest.raises(ValueError, match="module name"):
            p.deploy_zip("f", archive, entry="f-1.py")
        p.deploy_zip("f", archive, entry="f")
        p.deploy("g", "def handle(e, c):\n    return e + 1\n")
        r = p.invoke(["f", "g"], 2, timeout_s=10)
        assert r.ok and r.output == 7, r.error
        assert rt.inits == [{"name": "f", "binary": True, "entry": "f"}, {"name": "g", "binary": False, "entry": None}]
        assert p.invoke(["f"], 1, timeout_s=10).output == 3 and len(rt.inits) == 2  # init once per container
        assert p.data_dir is None


def test_docker_runtime_mounts_the_data_folder_only_when_asked(tmp_path: Path) -> None:
    made: list[dict] = []

    class Client:
        class containers:  # noqa: N801 - the SDK's shape
            @staticmethod
            def create(image: str, command: list[str], **kw) -> object:
                made.append(kw)
                return type("C", (), {"id": "c1"})()

    DockerRuntime(image="i", run_id="r", workdir=tmp_path, client=Client).create("n1", "f")
    DockerRuntime(image="i", run_id="r", workdir=tmp_path, client=Client, data_dir=tmp_path / "d").create("n2", "f")
    assert "environment" not in made[0] and len(made[0]["volumes"]) == 1
    assert made[1]["volumes"][str(tmp_path / "d")] == {"bind": DATA_DIR_IN_BOX, "mode": "rw"}
    assert made[1]["environment"] == {"BASELINE_DATA_DIR": DATA_DIR_IN_BOX}


def test_wait_ready_gives_up_in_time(tmp_path: Path) -> None:
    t0 = time.monotonic()
    with pytest.raises(TimeoutError, match="did not accept"):
        HttpActionConnection(f"unix:{tmp_path / 'none.sock'}").wait_ready(0.2)
    assert time.monotonic() - t0 < 2


# ---- leftovers ------------------------------------------------------------------------------------------------------


class _C:
    def __init__(self, pid: int, status: str = "running") -> None:
        self.labels = {"sand.baseline.pid": str(pid)}
        self.status = status
        self.removed = self.unpaused = False

    def remove(self, force: bool) -> None:
        self.removed = True

    def unpause(self) -> None:
        self.unpaused = True


def test_cleanup_leftovers_removes_what_dead_processes_left(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    mine, gone, paused = _C(os.getpid()), _C(dead.pid), _C(dead.pid, "paused")

    class Client:
        class containers:  # noqa: N801 - the SDK's shape
            @staticmethod
            def list(all: bool, filters: dict) -> list[_C]:  # noqa: A002
                assert filters == {"label": "sand.component=baseline"}
                return [mine, gone, paused]

    (tmp_path / f"sand-baseline-{dead.pid}-abc-x").mkdir()
    (tmp_path / f"sand-baseline-{os.getpid()}-abc-y").mkdir()
    out = cleanup_leftovers(bootstrap="", client=Client, tmp=tmp_path)
    assert out == {"containers": 2, "topics": 0, "workdirs": 1}
    assert gone.removed and paused.removed and paused.unpaused and not mine.removed
    assert [d.name for d in tmp_path.iterdir()] == [f"sand-baseline-{os.getpid()}-abc-y"]


# ---- end to end: Docker and Kafka of `make up` ---------------------------------------------------------------------


@pytest.mark.e2e
@pytest.mark.parametrize("platform_class", [WarmContainerPlatform, ColdContainerPlatform])
def test_both_platforms_on_docker_and_kafka(platform_class, kafka_bootstrap: str, sandbox_image: str) -> None:
    import docker
    from kafka import KafkaAdminClient

    client = docker.from_env(timeout=60)
    p = platform_class(bootstrap=kafka_bootstrap, image=sandbox_image)
    run = p.run_id
    try:
        p.deploy("f1", F1)
        p.deploy("f2", F2)
        for x in (1, 2):
            r = p.invoke(["f1", "f2"], {"x": x}, timeout_s=60)
            assert r.ok, f"{r.error}\n{p.invoker_log()}"
            assert r.output["x"] == (x + 1) * 10
            ordered(r)
            assert r.hops[0].handler_start_ns <= r.output["f1_end_ns"] <= r.hops[0].handler_end_ns
            assert 0 < r.interactions_ns()[0] < 60e9
        if platform_class is WarmContainerPlatform:  # reused: running ("hot"), or paused after 50 ms idle ("warm")
            assert {h.start for h in r.hops} <= {"hot", "warm"}
            assert p.containers() == 2 and p.memory_mb() > 1
        else:
            assert [h.start for h in r.hops] == ["cold", "cold"]
        boom = p.invoke(["f1"], "not a dict", timeout_s=60)
        assert not boom.ok and "TypeError" in boom.error
    finally:
        p.close()
    assert client.containers.list(all=True, filters={"label": f"sand.baseline.run={run}"}) == []
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    try:
        deadline = time.monotonic() + 30
        while any(t.startswith(f"baseline.{run}.") for t in admin.list_topics()) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not [t for t in admin.list_topics() if t.startswith(f"baseline.{run}.")]
    finally:
        admin.close()
    assert not p.workdir.exists()


@pytest.mark.e2e
def test_zip_actions_share_the_data_layer_stand_in_on_docker(
    kafka_bootstrap: str, sandbox_image: str, tmp_path: Path
) -> None:
    """Two zip actions in two containers of the image (its uid 1000): the zip unpacked, its packages/ and files
    found, a value one puts the next gets through the mounted folder; close() removes containers and folder."""
    import docker

    client = docker.from_env(timeout=60)
    p = WarmContainerPlatform(bootstrap=kafka_bootstrap, image=sandbox_image, data_layer=True)
    run = p.run_id
    try:
        p.deploy_zip("writer", _zip_of_main(tmp_path), entry="main_mod")
        p.deploy_zip("reader", zip_action({"reader.py": READER.encode()}), entry="reader")
        r = p.invoke(["writer"], {"x": 5}, timeout_s=120)
        assert r.ok, f"{r.error}\n{p.invoker_log()}"
        assert {k: r.output[k] for k in ("twice", "package", "setting", "grain", "raw_is_bytes", "gone")} == {
            "twice": 10,
            "package": "tinypkg 1.0",
            "setting": "blue",
            "grain": "writer",
            "raw_is_bytes": True,
            "gone": True,
        }
        assert "init" in r.hops[0].phases
        read = p.invoke(["reader"], {"key": r.output["key"]}, timeout_s=120)
        assert read.ok and read.output == {"value": '{"twice": 10}', "missing": None}, read.error
        assert p.data_dir is not None and [f.name for f in p.data_dir.iterdir()] == [
            r.output["key"].replace("/", "%2F")
        ]
    finally:
        p.close()
    assert client.containers.list(all=True, filters={"label": f"sand.baseline.run={run}"}) == []
    assert not p.workdir.exists()
