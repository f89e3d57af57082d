"""Containers for the baselines: the interface the pool and the invoker use, and its Docker implementation.

``ContainerRuntime`` is what an invoker needs of a container engine (create, start, pause, unpause, remove, and a
connection to the action server inside); ``DockerRuntime`` does it with the Docker SDK, ``fakes.FakeRuntime``
in memory for the tests. ``ActionConnection`` speaks the action server's HTTP (``_action_server.py``).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import os
import shutil
import socket
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

__all__ = [
    "DATA_DIR_IN_BOX",
    "ActionConnection",
    "ActionError",
    "Box",
    "ContainerRuntime",
    "DockerRuntime",
    "HttpActionConnection",
    "LABEL_COMPONENT",
    "LABEL_PID",
    "LABEL_RUN",
    "cgroup_memory_bytes",
]

log = logging.getLogger(__name__)

LABEL_COMPONENT = "sand.component"  # = "baseline" on every container the baselines create
LABEL_RUN = "sand.baseline.run"  # the platform instance (run id) that created it
LABEL_PID = "sand.baseline.pid"  # the process that created it: leftovers of dead processes can be removed
SERVER = Path(__file__).resolve().parent / "_action_server.py"
SERVER_IN_BOX = "/opt/baseline/action_server.py"
SOCKET_DIR_IN_BOX = "/run/action"
DATA_DIR_IN_BOX = "/run/baseline-data"  # the data-layer stand-in's folder (data_layer=True), BASELINE_DATA_DIR
TCP_PORT = 8080


class ActionError(Exception):
    """The action server answered with an error (the function raised, or its code did not load)."""

    def __init__(self, message: str, start_ns: int = 0, end_ns: int = 0, status: int = 0) -> None:
        super().__init__(message)
        self.start_ns, self.end_ns, self.status = start_ns, end_ns, status


@dataclass
class Box:
    """One container as the runtime knows it."""

    name: str
    function: str
    id: str = ""
    address: str = ""  # the action server: unix:<host path> or tcp:<ip>:<port>
    folder: Path | None = None  # the bind-mounted folder holding the Unix socket
    extra: dict[str, Any] = field(default_factory=dict)


class ActionConnection(Protocol):
    def init(
        self, name: str, code: str, timeout_s: float, *, binary: bool = False, entry: str | None = None
    ) -> None: ...
    def run(self, value: Any, activation_id: str, timeout_s: float) -> tuple[Any, int, int]: ...
    def close(self) -> None: ...


class ContainerRuntime(Protocol):
    def create(self, name: str, function: str) -> Box: ...
    def start(self, box: Box) -> None: ...
    def connect(self, box: Box, timeout_s: float) -> ActionConnection: ...
    def pause(self, box: Box) -> None: ...
    def unpause(self, box: Box) -> None: ...
    def remove(self, box: Box) -> None: ...
    def count(self) -> int: ...
    def memory_bytes(self) -> int: ...
    def remove_all(self) -> int: ...


# ---- the action server's protocol, client side ---------------------------------------------------------------------


class _UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        try:
            s.connect(self._path)
        except OSError:
            s.close()
            raise
        self.sock = s


class HttpActionConnection:
    """One keep-alive connection to a container's action server (the invoker's client)."""

    def __init__(self, address: str, timeout_s: float = 60.0) -> None:
        kind, _, where = address.partition(":")
        if kind == "unix":
            self._conn: http.client.HTTPConnection = _UnixHTTPConnection(where, timeout_s)
        elif kind == "tcp":
            host, _, port = where.rpartition(":")
            self._conn = http.client.HTTPConnection(host, int(port), timeout=timeout_s)
        else:
            raise ValueError(f"action server address must be unix:<path> or tcp:<host>:<port>, not {address!r}")
        self.address = address

    def wait_ready(self, timeout_s: float) -> None:
        """Connect, retrying until the server listens (OpenWhisk's invoker retries its /init the same way)."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self._conn.connect()
                if self._conn.sock is not None and self._conn.sock.family == socket.AF_INET:
                    self._conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return
            except (FileNotFoundError, ConnectionRefusedError, ConnectionResetError, TimeoutError, OSError) as e:
                if time.monotonic() >= deadline:
                    raise TimeoutError(
                        f"the action server at {self.address} did not accept a connection within "
                        f"{timeout_s:.0f} s ({e}); is the container running? (docker logs <name>)"
                    ) from e
                time.sleep(0.001)

    def _post(self, path: str, payload: dict[str, Any], timeout_s: float) -> tuple[int, dict[str, Any]]:
        body = json.dumps(payload).encode()
        self._conn.timeout = timeout_s
        if self._conn.sock is not None:
            self._conn.sock.settimeout(timeout_s)
        self._conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        r = self._conn.getresponse()
        data = r.read()
        try:
            return r.status, json.loads(data or b"{}")
        except ValueError:
            return r.status, {"error": f"the action server's answer is not JSON: {data[:200]!r}"}

    def init(self, name: str, code: str, timeout_s: float, *, binary: bool = False, entry: str | None = None) -> None:
        """Load the function: Python source, or (binary) a zip, base64, whose module ``entry`` defines handle."""
        value: dict[str, Any] = {"name": name, "main": "handle", "code": code}
        if binary:
            value |= {"binary": True, "entry": entry}
        status, body = self._post("/init", {"value": value}, timeout_s)
        if status != 200:
            raise ActionError(str(body.get("error", body)), status=status)

    def run(self, value: Any, activation_id: str, timeout_s: float) -> tuple[Any, int, int]:
        payload = {
            "value": value,
            "activation_id": activation_id,
            "deadline_ms": int(time.time() * 1000 + timeout_s * 1000),
        }
        status, body = self._post("/run", payload, timeout_s)
        if status != 200:
            raise ActionError(
                str(body.get("error", body)), int(body.get("start_ns", 0)), int(body.get("end_ns", 0)), status
            )
        return body.get("result"), int(body["start_ns"]), int(body["end_ns"])

    def close(self) -> None:
        self._conn.close()


# ---- memory ----------------------------------------------------------------------------------------------------------


def cgroup_memory_bytes(container_id: str) -> int | None:
    """A container's memory as `docker stats` shows it: the cgroup's usage minus its inactive file cache
    (cgroup v1 memory.usage_in_bytes - total_inactive_file, or v2 memory.current - inactive_file); None if no
    cgroup folder is found (then ask Docker: DockerRuntime does)."""
    for folder, usage, inactive in (
        (f"/sys/fs/cgroup/memory/docker/{container_id}", "memory.usage_in_bytes", "total_inactive_file"),
        (
            f"/sys/fs/cgroup/memory/system.slice/docker-{container_id}.scope",
            "memory.usage_in_bytes",
            "total_inactive_file",
        ),
        (f"/sys/fs/cgroup/system.slice/docker-{container_id}.scope", "memory.current", "inactive_file"),
        (f"/sys/fs/cgroup/docker/{container_id}", "memory.current", "inactive_file"),
    ):
        try:
            used = int(Path(folder, usage).read_text())
            stat = Path(folder, "memory.stat").read_text().split("\n")
        except OSError:
            continue
        for line in stat:
            key, _, value = line.partition(" ")
            if key == inactive:
                return max(0, used - int(value))
        return used
    return None


# ---- Docker --------------------------------------------------------------------------------------------------------


class DockerRuntime:
    """Containers of one platform instance (``run_id``), created from ``image`` with the action server inside.

    transport "unix": no network (SAND's sandbox setting, ``network_mode=none``); the server listens on a Unix
    socket in a per-container host folder bind-mounted at /run/action. transport "tcp": the container on Docker's
    ``bridge`` network, the server on port 8080 of the container's IP (what OpenWhisk does). ``data_dir``: a host
    folder bind-mounted (read-write) into every container, the action server's data-layer stand-in."""

    def __init__(
        self,
        *,
        image: str,
        run_id: str,
        workdir: Path,
        memory_mb: int | None = 256,
        transport: str = "tcp",
        client: Any = None,
        docker_timeout_s: float = 60.0,
        data_dir: Path | str | None = None,
    ) -> None:
        if transport not in ("unix", "tcp"):
            raise ValueError(f"transport must be 'unix' or 'tcp', not {transport!r}")
        if memory_mb is not None and memory_mb < 6:
            raise ValueError(f"memory_mb must be >= 6 (Docker's minimum) or None (no limit), not {memory_mb}")
        if client is None:
            import docker

            client = docker.from_env(timeout=int(docker_timeout_s))
        self.client = client
        self.image, self.run_id, self.workdir = image, run_id, Path(workdir)
        self.memory_mb, self.transport = memory_mb, transport
        self.data_dir = Path(data_dir) if data_dir is not None else None
        self.labels = {LABEL_COMPONENT: "baseline", LABEL_RUN: run_id, LABEL_PID: str(os.getpid())}

    def create(self, name: str, function: str) -> Box:
        box = Box(name=name, function=function)
        volumes = {str(SERVER): {"bind": SERVER_IN_BOX, "mode": "ro"}}
        if self.transport == "unix":
            box.folder = self.workdir / "b" / uuid.uuid4().hex[:10]  # short: a socket's path has at most 107 bytes
            box.folder.mkdir(parents=True, exist_ok=True)
            box.folder.chmod(0o777)  # the image's user (uid 1000) creates the socket there
            volumes[str(box.folder)] = {"bind": SOCKET_DIR_IN_BOX, "mode": "rw"}
            listen = f"unix:{SOCKET_DIR_IN_BOX}/action.sock"
            box.address = f"unix:{box.folder}/action.sock"
        else:
            listen = f"tcp:0.0.0.0:{TCP_PORT}"
        options: dict[str, Any] = {}
        if self.memory_mb is not None:
            options = {"mem_limit": f"{self.memory_mb}m", "memswap_limit": f"{self.memory_mb}m"}
        if self.data_dir is not None:
            volumes[str(self.data_dir)] = {"bind": DATA_DIR_IN_BOX, "mode": "rw"}
            options["environment"] = {"BASELINE_DATA_DIR": DATA_DIR_IN_BOX}
        c = self.client.containers.create(
            self.image,
            ["python3", SERVER_IN_BOX, listen],
            name=name,
            labels=self.labels | {"sand.baseline.fn": function},
            network_mode="none" if self.transport == "unix" else "bridge",
            volumes=volumes,
            detach=True,
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            **options,
        )
        box.id = c.id
        box.extra["container"] = c
        return box

    def start(self, box: Box) -> None:
        c = box.extra["container"]
        c.start()
        if self.transport == "tcp":  # OpenWhisk inspects the new container for its IP the same way
            c.reload()
            ip = c.attrs["NetworkSettings"]["Networks"]["bridge"]["IPAddress"]
            if not ip:
                raise RuntimeError(f"container {box.name} has no IP on Docker's bridge network: use transport='unix'")
            box.address = f"tcp:{ip}:{TCP_PORT}"

    def connect(self, box: Box, timeout_s: float) -> HttpActionConnection:
        conn = HttpActionConnection(box.address)
        conn.wait_ready(timeout_s)
        return conn

    def pause(self, box: Box) -> None:
        box.extra["container"].pause()

    def unpause(self, box: Box) -> None:
        box.extra["container"].unpause()

    def remove(self, box: Box) -> None:
        try:
            box.extra["container"].remove(force=True)
        except Exception as e:  # noqa: BLE001 - already gone is fine; anything else is logged
            if getattr(getattr(e, "response", None), "status_code", None) != 404:
                raise
        finally:
            if box.folder is not None:
                shutil.rmtree(box.folder, ignore_errors=True)

    def _mine(self) -> list[Any]:
        return self.client.containers.list(all=True, filters={"label": f"{LABEL_RUN}={self.run_id}"})

    def count(self) -> int:
        return len(self._mine())

    def memory_bytes(self) -> int:
        total = 0
        for c in self._mine():
            used = cgroup_memory_bytes(c.id)
            if used is None:  # no cgroup folder where we look: Docker's own numbers (slower: ~1 s per container)
                with contextlib.suppress(Exception):
                    s = c.stats(stream=False)["memory_stats"]
                    st = s.get("stats", {})
                    used = s.get("usage", 0) - st.get("total_inactive_file", st.get("inactive_file", 0))
            total += used or 0
        return total

    def remove_all(self) -> int:
        """Remove (force) every container of this run; returns how many."""
        n = 0
        for c in self._mine():
            with contextlib.suppress(Exception):
                c.remove(force=True)
                n += 1
        return n
