"""The invoker (a model of OpenWhisk's invoker): takes activations off its Kafka topic, runs each in a container of
the pool (POST /init once per container, then POST /run), and produces the completion to the controller's topic.

Activations run concurrently (a thread each, up to ``workers``), every container one at a time. Run as a process
of its own (``python -m benchmarks.baselines._invoker '<json config>'``, what the platforms do by default: OpenWhisk's
invoker is a JVM of its own) or in the controller's process (``Invoker(...).start()``, what the tests do).
"""

from __future__ import annotations

import base64
import json
import logging
import os
import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks.baselines._bus import Bus
from benchmarks.baselines._messages import code_path, decode, encode, manifest_path, zip_path
from benchmarks.baselines._pool import ContainerPool
from benchmarks.baselines._runtime import ActionError, ContainerRuntime

__all__ = ["Invoker", "main"]

log = logging.getLogger(__name__)


class Invoker:
    def __init__(
        self,
        bus: Bus,
        pool: ContainerPool,
        runtime: ContainerRuntime,
        *,
        workdir: Path,
        activations_topic: str,
        completions_topic: str,
        action_timeout_s: float = 60.0,
        init_timeout_s: float = 60.0,
        workers: int = 64,
        log_context: str = "",
    ) -> None:
        self.bus, self.pool, self.runtime = bus, pool, runtime
        self.workdir = Path(workdir)
        self.activations_topic, self.completions_topic = activations_topic, completions_topic
        self.action_timeout_s, self.init_timeout_s = action_timeout_s, init_timeout_s
        self._ctx = log_context
        self._code: dict[tuple[str, int], str] = {}
        self._known: set[tuple[str, int]] = set()
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="invoker-activation")
        self._stop = threading.Event()
        self._producer = bus.producer()
        self._thread: threading.Thread | None = None
        self._consumer_ready = threading.Event()
        self.error: BaseException | None = None

    def start(self, timeout_s: float = 60.0) -> None:
        self._thread = threading.Thread(target=self._consume, name="invoker-consumer", daemon=True)
        self._thread.start()
        if not self._consumer_ready.wait(timeout_s):
            raise TimeoutError(f"[{self._ctx}] the invoker's consumer did not start in {timeout_s} s")
        if self.error is not None:
            raise RuntimeError(f"[{self._ctx}] the invoker's consumer failed: {self.error}") from self.error

    def _consume(self) -> None:
        try:
            consumer = self.bus.consumer(self.activations_topic)
            self._producer.send(self.completions_topic, encode({"type": "ready", "pid": os.getpid()}), 30)
        except BaseException as e:  # noqa: BLE001 - reported by start()
            self.error = e
            self._consumer_ready.set()
            return
        self._consumer_ready.set()
        try:
            while not self._stop.is_set():
                for data in consumer.poll(0.2):
                    received = time.time_ns()
                    msg = decode(data)
                    if msg.get("type") == "activation":
                        self._executor.submit(self._run_activation, msg, received)
        except Exception:  # noqa: BLE001
            log.exception("[%s] the invoker's consumer stopped", self._ctx)
        finally:
            consumer.close()

    def _source(self, function: str, revision: int) -> str:
        key = (function, revision)
        if key not in self._code:
            self._code[key] = code_path(self.workdir, function, revision).read_text()
        return self._code[key]

    def _deployed(self, function: str, revision: int) -> bool:
        key = (function, revision)
        if key not in self._known and (
            manifest_path(self.workdir, function, revision).is_file()
            or code_path(self.workdir, function, revision).is_file()
        ):
            self._known.add(key)  # a revision is never removed: once found, no more file checks
        return key in self._known

    def _action(self, function: str, revision: int) -> dict[str, Any]:
        """What /init gets: {"code"} for Python source (cached), {"code": <zip, base64>, "binary", "entry"} for a
        zip action (read at each init, not kept: zips are large and inits rare). OSError if not deployed."""
        manifest = manifest_path(self.workdir, function, revision)
        if manifest.is_file():
            entry = json.loads(manifest.read_text())["entry"]
            code = base64.b64encode(zip_path(self.workdir, function, revision).read_bytes()).decode()
            return {"code": code, "binary": True, "entry": entry}
        return {"code": self._source(function, revision)}

    def handle(self, msg: dict[str, Any], received_ns: int) -> dict[str, Any]:
        """Run one activation; returns the completion message (also what the tests check)."""
        fn, aid, rev = msg["function"], msg["id"], int(msg.get("revision", 1))
        timeout_s = min(self.action_timeout_s, float(msg.get("timeout_s") or self.action_timeout_s))
        hop: dict[str, Any] = {
            "function": fn,
            "activation_id": aid,
            "sent_ns": msg.get("sent_ns", 0),
            "invoker_received_ns": received_ns,
            "phases": {},
        }
        if not self._deployed(fn, rev):
            return self._completion(aid, hop, error=f"function {fn!r} (revision {rev}) is not deployed: deploy() it")
        try:
            lease = self.pool.acquire(f"{fn}@{rev}", timeout_s)
        except Exception as e:  # noqa: BLE001 - no container: the activation fails, as in OpenWhisk
            return self._completion(aid, hop, error=f"no container for {fn}: {type(e).__name__}: {e}")
        slot = lease.slot
        hop.update(start=lease.start, container=slot.name)
        hop["phases"].update(lease.phases)
        healthy = True
        try:
            if slot.conn is None:
                r0 = time.time_ns()
                slot.conn = self.runtime.connect(slot.box, self.init_timeout_s)  # type: ignore[arg-type]
                hop["phases"]["ready"] = (r0, time.time_ns())
            if not slot.initialized:
                i0 = time.time_ns()
                action = self._action(fn, rev)
                slot.conn.init(fn, action.pop("code"), self.init_timeout_s, **action)
                hop["phases"]["init"] = (i0, time.time_ns())
                slot.initialized = True
            q0 = time.time_ns()
            try:
                result, start_ns, end_ns = slot.conn.run(msg.get("value"), aid, timeout_s)
            finally:
                hop["phases"]["run"] = (q0, time.time_ns())
            hop.update(handler_start_ns=start_ns, handler_end_ns=end_ns)
            return self._completion(aid, hop, result=result)
        except ActionError as e:
            # A function that raises gets a 502 from the action server: OpenWhisk counts that as a developer error
            # and destroys the container (an init failure too).
            healthy = False
            hop.update(handler_start_ns=e.start_ns, handler_end_ns=e.end_ns)
            return self._completion(aid, hop, error=f"{fn}: {e}")
        except Exception as e:  # noqa: BLE001 - timeout, connection lost: the container is removed
            healthy = False
            return self._completion(aid, hop, error=f"{fn} in {slot.name}: {type(e).__name__}: {e}")
        finally:
            self.pool.release(slot, healthy)

    def _completion(
        self, aid: str, hop: dict[str, Any], *, result: Any = None, error: str | None = None
    ) -> dict[str, Any]:
        """The completion message, produced to the controller's topic at once: handle() returns it from inside its
        try block, so it is on its way before the container is released (or removed, in the cold baseline)."""
        hop["completed_ns"] = time.time_ns()
        hop["error"] = error
        msg = {"type": "completion", "id": aid, "ok": error is None, "hop": hop}
        msg["result" if error is None else "error"] = result if error is None else error
        try:
            self._producer.send(self.completions_topic, encode(msg), 30)
        except Exception:  # noqa: BLE001 - the controller's wait for it times out
            log.exception("[%s %s] could not send the completion of %s", self._ctx, hop.get("function"), aid)
        return msg

    def _run_activation(self, msg: dict[str, Any], received_ns: int) -> None:
        try:
            completion = self.handle(msg, received_ns)
        except Exception:  # noqa: BLE001 - a thread of the executor: log, never lose it silently
            log.exception("[%s %s %s] activation failed", self._ctx, msg.get("function"), msg.get("id"))
            return
        if not completion["ok"]:
            log.info("[%s %s %s] %s", self._ctx, msg.get("function"), msg.get("id"), completion["error"][:300])

    def stop(self, timeout_s: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
        self._executor.shutdown(wait=False, cancel_futures=True)
        try:
            self._producer.close()
        except Exception:  # noqa: BLE001
            log.debug("[%s] producer close", self._ctx, exc_info=True)


# ---- the invoker as a process of its own ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.baselines._invoker '<json>'``: the config is what _platform.py passes. Exits on SIGTERM
    or when its parent process is gone, after removing its containers."""
    from benchmarks.baselines._bus import KafkaBus
    from benchmarks.baselines._runtime import DockerRuntime

    cfg = json.loads((argv or sys.argv[1:])[0])
    ctx = f"baseline {cfg['run_id']} invoker"
    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s %(levelname)s [{ctx}] %(name)s: %(message)s")
    logging.getLogger("kafka").setLevel(logging.WARNING)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    parent = int(cfg["parent_pid"])
    runtime = DockerRuntime(
        image=cfg["image"],
        run_id=cfg["run_id"],
        workdir=Path(cfg["workdir"]),
        memory_mb=cfg["memory_mb"],
        transport=cfg["transport"],
        data_dir=cfg.get("data_dir"),
    )
    pool = ContainerPool(
        runtime,
        name_prefix=f"baseline-{cfg['run_id']}",
        reuse=cfg["reuse"],
        pause_after_s=cfg["pause_after_s"],
        idle_timeout_s=cfg["idle_timeout_s"],
        max_containers=cfg["max_containers"],
        log_context=ctx,
    )
    invoker = Invoker(
        KafkaBus(cfg["bootstrap"]),
        pool,
        runtime,
        workdir=Path(cfg["workdir"]),
        activations_topic=cfg["activations_topic"],
        completions_topic=cfg["completions_topic"],
        action_timeout_s=cfg["action_timeout_s"],
        log_context=ctx,
    )

    def parent_alive() -> None:
        if os.getppid() != parent:
            log.warning("[%s] the controller's process %d is gone: stopping", ctx, parent)
            stop.set()

    try:
        pool.start_janitor(on_tick=parent_alive)
        invoker.start()
        log.info("[%s] consuming %s (pid %d)", ctx, cfg["activations_topic"], os.getpid())
        while not stop.wait(1.0):
            parent_alive()
    finally:
        invoker.stop(5)
        pool.close(30)
        n = runtime.remove_all()
        log.info("[%s] stopped%s", ctx, f" ({n} leftover container(s) removed)" if n else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
