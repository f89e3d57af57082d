"""The controller (a model of OpenWhisk's controller running an action sequence): for each function of the sequence
it produces an activation to the invoker's topic and waits for its completion on its own topic; the completion's
result is the next activation's input. One thread reads the completions and hands each to the call waiting for it,
so calls from many threads can be in flight at once.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from typing import Any

from benchmarks.baselines._bus import Bus
from benchmarks.baselines._messages import decode, encode
from benchmarks.baselines._result import Hop, Result

__all__ = ["Controller"]

log = logging.getLogger(__name__)


class _Waiter:
    __slots__ = ("event", "message", "received_ns")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.message: dict[str, Any] | None = None
        self.received_ns = 0


class Controller:
    def __init__(self, bus: Bus, *, activations_topic: str, completions_topic: str, log_context: str = "") -> None:
        self.bus = bus
        self.activations_topic, self.completions_topic = activations_topic, completions_topic
        self._ctx = log_context
        self._producer = bus.producer()
        self._waiters: dict[str, _Waiter] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._consumer_up = threading.Event()
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None

    def start(self, timeout_s: float = 30.0) -> None:
        """Start reading completions (before the invoker starts, so its "ready" is not missed)."""
        self._thread = threading.Thread(target=self._consume, name="controller-completions", daemon=True)
        self._thread.start()
        if not self._consumer_up.wait(timeout_s) or self.error is not None:
            raise RuntimeError(f"[{self._ctx}] the controller could not read {self.completions_topic}: {self.error}")

    def wait_invoker(self, timeout_s: float) -> bool:
        """True once the invoker said it is consuming."""
        return self._ready.wait(timeout_s)

    def _consume(self) -> None:
        try:
            consumer = self.bus.consumer(self.completions_topic)
        except BaseException as e:  # noqa: BLE001 - reported by start()
            self.error = e
            self._consumer_up.set()
            return
        self._consumer_up.set()
        try:
            while not self._stop.is_set():
                for data in consumer.poll(0.2):
                    received = time.time_ns()
                    msg = decode(data)
                    if msg.get("type") == "ready":
                        self._ready.set()
                        continue
                    with self._lock:
                        w = self._waiters.pop(msg.get("id", ""), None)
                    if w is None:  # its call timed out already
                        log.debug("[%s] late completion %s dropped", self._ctx, msg.get("id"))
                        continue
                    w.message, w.received_ns = msg, received
                    w.event.set()
        except Exception:  # noqa: BLE001
            log.exception("[%s] the controller's completion reader stopped", self._ctx)
        finally:
            consumer.close()

    def invoke(self, sequence: list[tuple[str, int]], value: Any, timeout_s: float) -> Result:
        """Run (function, revision) after (function, revision), each output the next input; the whole call within
        timeout_s. A hop that fails or times out ends the call with an error result."""
        start = time.time_ns()
        deadline = time.monotonic() + timeout_s
        hops: list[Hop] = []
        for fn, rev in sequence:
            aid = uuid.uuid4().hex
            w = _Waiter()
            with self._lock:
                self._waiters[aid] = w
            hop = Hop(function=fn, activation_id=aid)
            hops.append(hop)
            remaining = deadline - time.monotonic()
            hop.sent_ns = time.time_ns()
            try:
                if remaining <= 0:
                    raise TimeoutError("no time left for this hop")
                self._producer.send(
                    self.activations_topic,
                    encode(
                        {
                            "type": "activation",
                            "id": aid,
                            "function": fn,
                            "revision": rev,
                            "value": value,
                            "sent_ns": hop.sent_ns,
                            "timeout_s": remaining,
                        }
                    ),
                    min(remaining, 30.0),
                )
            except Exception as e:  # noqa: BLE001
                with self._lock:
                    self._waiters.pop(aid, None)
                hop.error = f"could not send the activation of {fn} to {self.activations_topic}: {e}"
                return Result(None, hop.error, hops, start, time.time_ns())
            if not w.event.wait(max(0.0, deadline - time.monotonic())):
                with self._lock:
                    self._waiters.pop(aid, None)
                hop.error = (
                    f"{fn} (activation {aid}) did not complete within the call's {timeout_s:.1f} s "
                    "(is the invoker running? its log is invoker.log in the platform's workdir)"
                )
                return Result(None, hop.error, hops, start, time.time_ns())
            if w.message is None:
                hop.error = f"the platform was closed while {fn} (activation {aid}) ran"
                return Result(None, hop.error, hops, start, time.time_ns())
            msg = w.message
            done = Hop.from_dict(msg.get("hop") or {"function": fn, "activation_id": aid})
            done.sent_ns, done.received_ns = hop.sent_ns, w.received_ns
            hops[-1] = done
            if not msg.get("ok"):
                done.error = done.error or str(msg.get("error"))
                return Result(None, done.error, hops, start, time.time_ns())
            value = msg.get("result")
        return Result(value, None, hops, start, time.time_ns())

    def stop(self, timeout_s: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
        with self._lock:
            for w in self._waiters.values():
                w.event.set()  # message None: the waiting call returns an error
            self._waiters.clear()
        try:
            self._producer.close()
        except Exception:  # noqa: BLE001
            log.debug("[%s] producer close", self._ctx, exc_info=True)
