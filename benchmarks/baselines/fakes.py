"""In-memory stand-ins for the baselines' message bus and container runtime (Kafka's MockProducer, for this
package): a platform built with them runs its controller, invoker and pool for real, with no Kafka and no Docker.

    platform = WarmContainerPlatform(runtime=FakeRuntime(), bus=FakeBus())   # invoker in a thread
"""

from __future__ import annotations

import base64
import io
import threading
import time
import zipfile
from typing import Any

from benchmarks.baselines._runtime import ActionError, Box

__all__ = ["FakeBus", "FakeConnection", "FakeRuntime", "ManualClock"]


class ManualClock:
    """A pool clock the test moves by hand."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


# ---- bus -------------------------------------------------------------------------------------------------------------


class _FakeProducer:
    def __init__(self, bus: FakeBus) -> None:
        self._bus = bus

    def send(self, topic: str, value: bytes, timeout_s: float) -> None:
        with self._bus.cond:
            if topic not in self._bus.topics:
                raise KeyError(f"no topic {topic}")
            self._bus.topics[topic].append(value)
            self._bus.sent.append((topic, value))
            self._bus.cond.notify_all()

    def close(self) -> None:
        pass


class _FakeConsumer:
    def __init__(self, bus: FakeBus, topic: str) -> None:
        self._bus, self._topic, self._offset = bus, topic, 0

    def poll(self, timeout_s: float) -> list[bytes]:
        with self._bus.cond:
            log = self._bus.topics.get(self._topic, [])
            if self._offset >= len(log):
                self._bus.cond.wait(timeout_s)
                log = self._bus.topics.get(self._topic, [])
            out = log[self._offset :]
            self._offset = len(log)
            return list(out)

    def close(self) -> None:
        pass


class FakeBus:
    """Topics as lists in memory; each consumer reads its topic from the start."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.topics: dict[str, list[bytes]] = {}
        self.sent: list[tuple[str, bytes]] = []
        self.deleted: list[str] = []

    def create_topics(self, names: list[str], timeout_s: float) -> None:
        with self.cond:
            for n in names:
                self.topics.setdefault(n, [])

    def delete_topics(self, names: list[str], timeout_s: float) -> None:
        with self.cond:
            for n in names:
                if self.topics.pop(n, None) is not None:
                    self.deleted.append(n)

    def list_topics(self) -> set[str]:
        with self.cond:
            return set(self.topics)

    def producer(self) -> _FakeProducer:
        return _FakeProducer(self)

    def consumer(self, topic: str) -> _FakeConsumer:
        return _FakeConsumer(self, topic)

    def close(self) -> None:
        pass


# ---- containers ------------------------------------------------------------------------------------------------------


class FakeConnection:
    """Runs the function's code in this process, as the action server would in its container."""

    def __init__(self, runtime: FakeRuntime, box: Box) -> None:
        self._runtime, self._box = runtime, box
        self._main: Any = None

    def init(self, name: str, code: str, timeout_s: float, *, binary: bool = False, entry: str | None = None) -> None:
        if self._main is not None:
            raise ActionError("Cannot initialize the action more than once.", status=403)
        ns: dict[str, Any] = {"__name__": f"action_{name}"}
        self._runtime.inits.append({"name": name, "binary": binary, "entry": entry})
        try:
            if binary:  # a zip action: only its entry module runs here (no sys.path, no packages: a fake)
                with zipfile.ZipFile(io.BytesIO(base64.b64decode(code))) as z:
                    code = z.read(f"{(entry or '__main__').replace('.', '/')}.py").decode()
            exec(compile(code, f"{name}.py", "exec"), ns)  # noqa: S102 - the test's own code
        except Exception as e:  # noqa: BLE001
            raise ActionError(f"init failed: {e}", status=502) from e
        self._main = ns["handle"]
        self._runtime.calls.append(("init", self._box.name))

    def run(self, value: Any, activation_id: str, timeout_s: float) -> tuple[Any, int, int]:
        if self._runtime.state.get(self._box.name) != "running":
            raise ConnectionError(f"{self._box.name} is {self._runtime.state.get(self._box.name)}, not running")
        self._runtime.calls.append(("run", self._box.name))
        start = time.time_ns()
        try:
            result = self._main(value, None)
        except Exception as e:  # noqa: BLE001
            raise ActionError(f"the function raised: {e!r}", start, time.time_ns(), 502) from e
        return result, start, time.time_ns()

    def close(self) -> None:
        pass


class FakeRuntime:
    """Containers as names and states; every call recorded in ``calls``; ``fail`` names operations that raise."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.state: dict[str, str] = {}  # name -> created | running | paused
        self.calls: list[tuple[str, str]] = []
        self.inits: list[dict[str, Any]] = []  # per /init: name, binary, entry
        self.fail: set[str] = set()
        self.memory_per_container = 10 * 2**20

    def _op(self, op: str, box: Box, new_state: str | None) -> None:
        with self.lock:
            self.calls.append((op, box.name))
            if op in self.fail:
                raise RuntimeError(f"fake {op} of {box.name} failed")
            if new_state is None:
                self.state.pop(box.name, None)
            else:
                self.state[box.name] = new_state

    def create(self, name: str, function: str) -> Box:
        box = Box(name=name, function=function, id=f"id-{name}", address=f"fake:{name}")
        self._op("create", box, "created")
        return box

    def start(self, box: Box) -> None:
        self._op("start", box, "running")

    def connect(self, box: Box, timeout_s: float) -> FakeConnection:
        with self.lock:
            self.calls.append(("connect", box.name))
        return FakeConnection(self, box)

    def pause(self, box: Box) -> None:
        self._op("pause", box, "paused")

    def unpause(self, box: Box) -> None:
        self._op("unpause", box, "running")

    def remove(self, box: Box) -> None:
        self._op("remove", box, None)

    def count(self) -> int:
        with self.lock:
            return len(self.state)

    def memory_bytes(self) -> int:
        return self.count() * self.memory_per_container

    def remove_all(self) -> int:
        with self.lock:
            n = len(self.state)
            self.state.clear()
            return n

    def ops(self, op: str) -> list[str]:
        """The containers `op` was called on, in order."""
        with self.lock:
            return [name for o, name in self.calls if o == op]
