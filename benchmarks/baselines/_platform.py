"""The two baselines behind one interface: a warm container per function (a model of OpenWhisk) and a new container
per call. Both run a sequence as OpenWhisk runs an action sequence: the controller (here, in the caller's process)
sends each hop through Kafka to the invoker (by default a process of its own), which runs it in a container of its
pool and sends the result back through Kafka; then the controller sends the next hop.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
import zipfile
from pathlib import Path
from typing import Any

from benchmarks.baselines._bus import TOPIC_PREFIX, Bus, KafkaBus
from benchmarks.baselines._controller import Controller
from benchmarks.baselines._invoker import Invoker
from benchmarks.baselines._messages import activations_topic, code_path, completions_topic, manifest_path, zip_path
from benchmarks.baselines._pool import ContainerPool
from benchmarks.baselines._result import Result
from benchmarks.baselines._runtime import LABEL_COMPONENT, LABEL_PID, ContainerRuntime, DockerRuntime

__all__ = ["ColdContainerPlatform", "WarmContainerPlatform", "cleanup_leftovers"]

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parent.parent.parent
NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$")
WORKDIR_PREFIX = "sand-baseline-"


class _ContainerPlatform:
    reuse = True

    def __init__(
        self,
        *,
        bootstrap: str = "127.0.0.1:9092",
        image: str = "sand-sandbox:latest",
        idle_timeout_s: float | None = 600.0,
        pause_after_s: float | None = 0.05,
        memory_mb: int | None = 256,
        transport: str = "tcp",
        invoker: str | None = None,
        max_containers: int | None = None,
        action_timeout_s: float = 60.0,
        start_timeout_s: float = 60.0,
        data_layer: bool = False,
        runtime: ContainerRuntime | None = None,
        bus: Bus | None = None,
    ) -> None:
        if invoker not in (None, "process", "thread"):
            raise ValueError(f"invoker must be 'process' or 'thread', not {invoker!r}")
        if invoker == "process" and (runtime is not None or bus is not None):
            raise ValueError(
                "invoker='process' runs Docker and Kafka in its own process: a runtime= or bus= given "
                "here cannot reach it; use invoker='thread' with fakes"
            )
        self.invoker_mode = invoker or ("thread" if runtime is not None or bus is not None else "process")
        self.run_id = f"{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self._ctx = f"baseline {self.run_id}"
        self._closed = False
        self._revisions: dict[str, int] = {}
        self._proc: subprocess.Popen[bytes] | None = None
        self._invoker: Invoker | None = None
        self._pool: ContainerPool | None = None
        self._controller: Controller | None = None
        self._topics = [activations_topic(self.run_id), completions_topic(self.run_id)]
        self._topics_created = False
        self.workdir = Path(tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{self.run_id}-"))
        self.workdir.chmod(0o755)
        (self.workdir / "actions").mkdir()
        # data_layer: a stand-in for SAND's data layer (these platforms have none): one host folder, mounted into every
        # container, where the action server's context keeps put/get/delete values as files
        self.data_dir: Path | None = None
        if data_layer:
            self.data_dir = self.workdir / "data"
            self.data_dir.mkdir()
            self.data_dir.chmod(0o777)  # the image's user (uid 1000) writes there
        self.settings = {
            "bootstrap": bootstrap,
            "image": image,
            "idle_timeout_s": idle_timeout_s,
            "pause_after_s": pause_after_s if self.reuse else None,
            "memory_mb": memory_mb,
            "transport": transport,
            "max_containers": max_containers,
            "reuse": self.reuse,
            "action_timeout_s": action_timeout_s,
            "data_dir": str(self.data_dir) if self.data_dir is not None else None,
        }
        atexit.register(self.close)
        try:
            self.bus = bus if bus is not None else KafkaBus(bootstrap)
            self.runtime = (
                runtime
                if runtime is not None
                else DockerRuntime(
                    image=image,
                    run_id=self.run_id,
                    workdir=self.workdir,
                    memory_mb=memory_mb,
                    transport=transport,
                    data_dir=self.data_dir,
                )
            )
            self.bus.create_topics(self._topics, 30)
            self._topics_created = True
            self._controller = Controller(
                self.bus, activations_topic=self._topics[0], completions_topic=self._topics[1], log_context=self._ctx
            )
            self._controller.start()
            if self.invoker_mode == "process":
                self._start_invoker_process(start_timeout_s)
            else:
                self._start_invoker_thread(start_timeout_s)
            log.info(
                "[%s] %s up: invoker %s, transport %s", self._ctx, type(self).__name__, self.invoker_mode, transport
            )
        except BaseException:
            self.close()
            raise

    # ---- start
    def _start_invoker_thread(self, timeout_s: float) -> None:
        s = self.settings
        self._pool = ContainerPool(
            self.runtime,
            name_prefix=f"baseline-{self.run_id}",
            reuse=self.reuse,
            pause_after_s=s["pause_after_s"],
            idle_timeout_s=s["idle_timeout_s"],
            max_containers=s["max_containers"],
            log_context=self._ctx,
        )
        self._pool.start_janitor()
        self._invoker = Invoker(
            self.bus,
            self._pool,
            self.runtime,
            workdir=self.workdir,
            activations_topic=self._topics[0],
            completions_topic=self._topics[1],
            action_timeout_s=s["action_timeout_s"],
            log_context=self._ctx,
        )
        self._invoker.start(timeout_s)
        self._await_invoker(timeout_s)

    def _start_invoker_process(self, timeout_s: float) -> None:
        cfg = self.settings | {
            "run_id": self.run_id,
            "workdir": str(self.workdir),
            "parent_pid": os.getpid(),
            "activations_topic": self._topics[0],
            "completions_topic": self._topics[1],
        }
        env = os.environ | {"PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
        with open(self.workdir / "invoker.log", "ab") as out:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "benchmarks.baselines._invoker", json.dumps(cfg)],
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                start_new_session=True,
            )  # Ctrl-C reaches us; close() stops it
        self._await_invoker(timeout_s)

    def _await_invoker(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        assert self._controller is not None
        while not self._controller.wait_invoker(0.2):
            if self._proc is not None and self._proc.poll() is not None:
                raise RuntimeError(
                    f"[{self._ctx}] the invoker process exited with {self._proc.returncode}:\n{self.invoker_log()}"
                )
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"[{self._ctx}] the invoker did not say ready in {timeout_s:.0f} s:\n{self.invoker_log()}"
                )

    def invoker_log(self, lines: int = 30) -> str:
        """The invoker process's last log lines (for error messages)."""
        try:
            return "\n".join((self.workdir / "invoker.log").read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no invoker log)"

    # ---- the interface
    def deploy(self, name: str, source: str) -> None:
        """Make function ``name`` (Python source defining handle(event, context)) callable. Deploying a name again
        makes a new revision: later calls get new containers, as after an action update in OpenWhisk."""
        self._check_open()
        if not NAME.match(name):
            raise ValueError(f"function name {name!r} must match {NAME.pattern}")
        try:
            compile(source, f"{name}.py", "exec")
        except SyntaxError as e:
            raise ValueError(f"the code of {name} does not compile ({e}): fix it and deploy again") from e
        rev = self._revisions.get(name, 0) + 1
        path = code_path(self.workdir, name, rev)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(source)
        tmp.chmod(0o644)
        tmp.rename(path)
        self._revisions[name] = rev

    def deploy_zip(self, name: str, archive: bytes, entry: str) -> None:
        """Make function ``name`` callable from a zip action, as OpenWhisk's zip actions: ``archive`` holds the
        function's files at its root (module ``entry``, i.e. ``<entry>.py`` or ``<entry>/__init__.py``, defines
        handle(event, context); other modules and data files beside it) and, optionally, a ``packages/`` folder of
        what ``pip install --target`` made for the container's Python (``zip_action()`` builds one). In the
        container the zip is unpacked into a new folder, which goes first on sys.path with its packages/ after it.
        A new revision, as deploy()."""
        self._check_open()
        if not NAME.match(name):
            raise ValueError(f"function name {name!r} must match {NAME.pattern}")
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$", entry):
            raise ValueError(f"entry {entry!r} must be a module name (e.g. 'main' for main.py)")
        try:
            with zipfile.ZipFile(io.BytesIO(archive)) as z:
                names = set(z.namelist())
        except zipfile.BadZipFile as e:
            raise ValueError(f"the archive of {name} is not a zip ({e})") from e
        module = entry.replace(".", "/")
        if f"{module}.py" not in names and f"{module}/__init__.py" not in names:
            raise ValueError(f"the zip of {name} has no {module}.py (nor {module}/__init__.py) for entry {entry!r}")
        rev = self._revisions.get(name, 0) + 1
        for path, data in (
            (zip_path(self.workdir, name, rev), archive),
            (manifest_path(self.workdir, name, rev), json.dumps({"entry": entry}).encode()),
        ):
            tmp = path.with_suffix(path.suffix + ".tmp")
            tmp.write_bytes(data)
            tmp.chmod(0o644)
            tmp.rename(path)  # the manifest last: the invoker takes the action as deployed once it is there
        self._revisions[name] = rev

    def invoke(self, sequence: list[str], value: Any, timeout_s: float = 60) -> Result:
        """Run the functions in order, each hop's output the next hop's input; never waits longer than timeout_s.
        A function that raises, or a hop that times out, gives a Result with ``error`` set and ``output`` None."""
        self._check_open()
        if not sequence:
            raise ValueError("the sequence is empty: name at least one deployed function")
        missing = [f for f in sequence if f not in self._revisions]
        if missing:
            raise ValueError(f"not deployed: {missing}; call deploy(name, source) first")
        assert self._controller is not None
        return self._controller.invoke([(f, self._revisions[f]) for f in sequence], value, timeout_s)

    def memory_mb(self) -> float:
        """Memory the platform's containers use now, MB: per container its cgroup's usage minus inactive file cache
        (what `docker stats` shows), summed."""
        return self.runtime.memory_bytes() / 2**20

    def containers(self) -> int:
        """How many containers the platform has now (running, paused or starting)."""
        return self.runtime.count()

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"[{self._ctx}] the platform is closed: make a new one")

    def close(self) -> None:
        """Stop the invoker and controller, remove every container and both topics, delete the workdir. Bounded
        (about a minute at most); safe to call twice; also runs at interpreter exit."""
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        if self._controller is not None:
            self._controller.stop()
        if self._proc is not None:
            self._proc.terminate()  # the invoker removes its containers, then exits
            try:
                self._proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                log.warning("[%s] the invoker did not stop in 40 s: killing it", self._ctx)
                self._proc.kill()
                self._proc.wait(timeout=10)
        if self._invoker is not None:
            self._invoker.stop()
        if self._pool is not None:
            self._pool.close(30)
        with contextlib.suppress(AttributeError):
            try:
                n = self.runtime.remove_all()
                if n:
                    log.warning("[%s] removed %d leftover container(s)", self._ctx, n)
            except Exception as e:  # noqa: BLE001
                log.warning("[%s] could not list/remove leftover containers: %s", self._ctx, e)
        with contextlib.suppress(AttributeError):
            if self._topics_created:
                try:
                    self.bus.delete_topics(self._topics, 30)
                except Exception as e:  # noqa: BLE001
                    log.warning("[%s] could not delete topics %s: %s", self._ctx, self._topics, e)
            if hasattr(self.bus, "close"):
                self.bus.close()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> _ContainerPlatform:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class WarmContainerPlatform(_ContainerPlatform):
    """Warm container per function (a model of OpenWhisk's invoker, not OpenWhisk): a container serves one
    function, one activation at a time, and stays for the next call; paused ``pause_after_s`` after its last
    activation (None: never), removed after ``idle_timeout_s`` idle; a new container when all of a function's are
    busy (up to ``max_containers`` in all; None: no limit). docs/benchmarks.md says what it reproduces and what not."""

    reuse = True


class ColdContainerPlatform(_ContainerPlatform):
    """A new container for every call of every function: created, started, its code loaded (init), run, removed.
    Same path otherwise (controller, Kafka, invoker) as WarmContainerPlatform; ``pause_after_s`` and
    ``idle_timeout_s`` are accepted for a common signature and have no effect."""

    reuse = False


def cleanup_leftovers(
    bootstrap: str = "127.0.0.1:9092", *, client: Any = None, everything: bool = False, tmp: Path | None = None
) -> dict[str, int]:
    """Remove what baseline runs of processes that are gone left behind (a killed benchmark cannot close()):
    containers labelled sand.component=baseline, topics baseline.<pid>-..., workdirs /tmp/sand-baseline-<pid>-...
    ``everything``: also those of live processes (only when no baseline is running). ``bootstrap=""``: no Kafka."""

    def dead(pid: str) -> bool:
        if everything:
            return True
        try:
            os.kill(int(pid), 0)
        except (ValueError, ProcessLookupError):
            return True
        except PermissionError:
            return False
        return False

    out = {"containers": 0, "topics": 0, "workdirs": 0}
    if client is None:
        import docker

        client = docker.from_env(timeout=60)
    for c in client.containers.list(all=True, filters={"label": f"{LABEL_COMPONENT}=baseline"}):
        if dead(c.labels.get(LABEL_PID, "")):
            with contextlib.suppress(Exception):
                if c.status == "paused":
                    c.unpause()
            with contextlib.suppress(Exception):
                c.remove(force=True)
                out["containers"] += 1
    if bootstrap:
        bus = KafkaBus(bootstrap)
        try:
            stale = [
                t
                for t in bus.list_topics()
                if t.startswith(TOPIC_PREFIX) and dead(t[len(TOPIC_PREFIX) :].split("-", 1)[0])
            ]
            if stale:
                bus.delete_topics(stale, 30)
            out["topics"] = len(stale)
        finally:
            bus.close()
    for d in Path(tmp or tempfile.gettempdir()).glob(f"{WORKDIR_PREFIX}*"):
        if dead(d.name[len(WORKDIR_PREFIX) :].split("-", 1)[0]):
            shutil.rmtree(d, ignore_errors=True)
            out["workdirs"] += 1
    return out
