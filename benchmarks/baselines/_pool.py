"""The invoker's container pool (a model of OpenWhisk's ContainerPool and ContainerProxy states).

A container serves one function and one activation at a time. ``acquire`` gives an idle running container of the
function ("hot"), else a paused one, unpaused ("warm"), else a new one ("cold") if the pool has room, else waits for
a release. ``release`` makes the container idle again, or removes it (unhealthy, or ``reuse=False``: the cold
baseline). ``tick`` applies the timers: an idle container is paused after ``pause_after_s`` (OpenWhisk's pause grace,
50 ms) and removed after ``idle_timeout_s`` idle (OpenWhisk's idle-container timeout, 10 min). A janitor thread calls
``tick`` at the next deadline; tests call it with their own clock.

The runtime's calls (create, start, pause, unpause, remove) happen outside the pool's lock.
"""

from __future__ import annotations

import itertools
import logging
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from benchmarks.baselines._runtime import ActionConnection, Box, ContainerRuntime

__all__ = ["ContainerPool", "Lease", "PoolClosed", "PoolTimeout", "Slot"]

log = logging.getLogger(__name__)

CREATING, BUSY, FREE, PAUSING, PAUSED, REMOVING = "creating", "busy", "free", "pausing", "paused", "removing"


class PoolTimeout(TimeoutError):
    """No container became available in time (the pool was full and nothing was released)."""


class PoolClosed(RuntimeError):
    """The pool is closing: no more containers."""


@dataclass(eq=False)
class Slot:
    """One container of the pool and its state."""

    key: str  # the function (and revision) it serves
    name: str
    state: str = CREATING
    box: Box | None = None
    frozen: bool = False  # paused (cgroup freezer) right now
    initialized: bool = False  # POST /init done
    conn: ActionConnection | None = None
    last_used: float = 0.0  # pool clock when it was last released
    uses: int = 0


@dataclass
class Lease:
    """A container handed to one activation: how it was obtained and the phases that took time."""

    slot: Slot
    start: str  # "hot", "warm" or "cold"
    phases: dict[str, tuple[int, int]] = field(default_factory=dict)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:32]


class ContainerPool:
    def __init__(
        self,
        runtime: ContainerRuntime,
        *,
        name_prefix: str,
        reuse: bool = True,
        pause_after_s: float | None = 0.05,
        idle_timeout_s: float | None = 600.0,
        max_containers: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        log_context: str = "",
    ) -> None:
        if pause_after_s is not None and pause_after_s < 0:
            raise ValueError(f"pause_after_s must be >= 0 or None (never pause), not {pause_after_s}")
        if idle_timeout_s is not None and idle_timeout_s <= 0:
            raise ValueError(f"idle_timeout_s must be > 0 or None (never remove idle containers), not {idle_timeout_s}")
        if max_containers is not None and max_containers < 1:
            raise ValueError(f"max_containers must be >= 1 or None (no limit), not {max_containers}")
        self.runtime = runtime
        self.reuse = reuse
        self.pause_after_s = pause_after_s if reuse else None
        self.idle_timeout_s = idle_timeout_s
        self.max_containers = max_containers
        self.clock = clock
        self._prefix = name_prefix
        self._ctx = log_context
        self._cond = threading.Condition()
        self._slots: list[Slot] = []
        self._seq = itertools.count(1)
        self._closed = False
        self._janitor: threading.Thread | None = None

    # ---- state, for the platform and the tests
    def states(self) -> Counter[str]:
        with self._cond:
            return Counter(s.state for s in self._slots)

    def count(self) -> int:
        with self._cond:
            return len(self._slots)

    # ---- acquire / release
    def acquire(self, key: str, timeout_s: float) -> Lease:
        deadline = self.clock() + timeout_s
        t0 = time.time_ns()
        while True:
            slot, action = self._choose(key, deadline)
            if action == "hot":
                lease = Lease(slot, "hot")
            elif action == "unpause":
                u0 = time.time_ns()
                try:
                    self.runtime.unpause(slot.box)  # type: ignore[arg-type]
                except Exception as e:  # noqa: BLE001 - OpenWhisk removes a container that fails to resume
                    log.warning("[%s %s] unpause of %s failed (%s): removing it", self._ctx, key, slot.name, e)
                    self._remove(slot)
                    continue
                with self._cond:
                    slot.frozen = False
                lease = Lease(slot, "warm", {"unpause": (u0, time.time_ns())})
            else:
                lease = Lease(slot, "cold", self._create(slot, key))
            slot.uses += 1
            lease.phases["acquire"] = (t0, time.time_ns())
            return lease

    def _choose(self, key: str, deadline: float) -> tuple[Slot, str]:
        with self._cond:
            while True:
                if self._closed:
                    raise PoolClosed(f"[{self._ctx}] the container pool is closed")
                if self.reuse:
                    mine = [s for s in self._slots if s.key == key]
                    free = [s for s in mine if s.state == FREE]
                    if free:
                        slot = max(free, key=lambda s: s.last_used)  # the most recently used: least likely paused
                        slot.state = BUSY
                        return slot, "hot"
                    paused = [s for s in mine if s.state == PAUSED]
                    if paused:
                        slot = max(paused, key=lambda s: s.last_used)
                        slot.state = BUSY
                        return slot, "unpause"
                    if any(s.state == PAUSING for s in mine):  # OpenWhisk stashes the job until paused, then resumes
                        self._wait(deadline, key)
                        continue
                if self.max_containers is None or len(self._slots) < self.max_containers:
                    slot = Slot(key=key, name=f"{self._prefix}-{_safe(key)}-{next(self._seq)}")
                    self._slots.append(slot)
                    return slot, "create"
                self._wait(deadline, key)

    def _wait(self, deadline: float, key: str) -> None:
        remaining = deadline - self.clock()
        if remaining <= 0:
            raise PoolTimeout(
                f"[{self._ctx} {key}] no container available: all {len(self._slots)} of at most "
                f"{self.max_containers} are busy; raise max_containers or the timeout"
            )
        self._cond.wait(min(remaining, 0.5))

    def _create(self, slot: Slot, key: str) -> dict[str, tuple[int, int]]:
        phases: dict[str, tuple[int, int]] = {}
        try:
            c0 = time.time_ns()
            slot.box = self.runtime.create(slot.name, key)
            c1 = time.time_ns()
            self.runtime.start(slot.box)
            phases["create"], phases["start"] = (c0, c1), (c1, time.time_ns())
        except BaseException:
            self._remove(slot)
            raise
        with self._cond:
            closed = self._closed
            slot.state = BUSY
        if closed:
            self._remove(slot)
            raise PoolClosed(f"[{self._ctx}] the container pool closed while {slot.name} was starting")
        return phases

    def release(self, slot: Slot, healthy: bool = True) -> None:
        """The activation is done with the container: idle again, or removed (unhealthy, closed, or no reuse)."""
        with self._cond:
            keep = healthy and self.reuse and not self._closed
            if keep:
                slot.state = FREE
                slot.last_used = self.clock()
            else:
                slot.state = REMOVING
            self._cond.notify_all()
        if not keep:
            self._remove(slot)

    def _remove(self, slot: Slot) -> None:
        with self._cond:
            slot.state = REMOVING
        try:
            if slot.conn is not None:
                slot.conn.close()
            if slot.box is not None:
                if slot.frozen:  # OpenWhisk resumes a paused container before destroying it
                    try:
                        self.runtime.unpause(slot.box)
                    except Exception as e:  # noqa: BLE001
                        log.debug("[%s] unpause before removing %s: %s", self._ctx, slot.name, e)
                self.runtime.remove(slot.box)
        except Exception as e:  # noqa: BLE001 - close() removes leftovers by label
            log.warning("[%s] could not remove container %s: %s", self._ctx, slot.name, e)
        finally:
            with self._cond:
                if slot in self._slots:
                    self._slots.remove(slot)
                self._cond.notify_all()

    # ---- timers
    def tick(self, now: float | None = None) -> float | None:
        """Pause and remove what has been idle long enough; returns the pool-clock time of the next deadline."""
        now = self.clock() if now is None else now
        to_pause: list[Slot] = []
        to_remove: list[Slot] = []
        with self._cond:
            for s in self._slots:
                idle = now - s.last_used
                if s.state in (FREE, PAUSED) and self.idle_timeout_s is not None and idle >= self.idle_timeout_s:
                    s.state = REMOVING
                    to_remove.append(s)
                elif s.state == FREE and self.pause_after_s is not None and idle >= self.pause_after_s:
                    s.state = PAUSING
                    to_pause.append(s)
        for s in to_pause:
            try:
                self.runtime.pause(s.box)  # type: ignore[arg-type]
            except Exception as e:  # noqa: BLE001 - OpenWhisk destroys a container that fails to pause
                log.warning("[%s %s] pause of %s failed (%s): removing it", self._ctx, s.key, s.name, e)
                to_remove.append(s)
                continue
            with self._cond:
                s.frozen = True
                s.state = PAUSED
                self._cond.notify_all()
        for s in to_remove:
            log.debug("[%s %s] removing %s: idle for %.1f s", self._ctx, s.key, s.name, now - s.last_used)
            self._remove(s)
        return self.next_deadline()

    def next_deadline(self) -> float | None:
        with self._cond:
            times = []
            for s in self._slots:
                if s.state == FREE and self.pause_after_s is not None:
                    times.append(s.last_used + self.pause_after_s)
                elif s.state in (FREE, PAUSED) and self.idle_timeout_s is not None:
                    times.append(s.last_used + self.idle_timeout_s)
            return min(times) if times else None

    def start_janitor(self, on_tick: Callable[[], None] | None = None) -> None:
        """A thread that calls tick() at each deadline (and on_tick at least once a second)."""

        def run() -> None:
            while True:
                try:
                    nxt = self.tick()
                    if on_tick is not None:
                        on_tick()
                except Exception:  # noqa: BLE001 - keep the timers going
                    log.exception("[%s] container pool janitor", self._ctx)
                    nxt = None
                with self._cond:
                    if self._closed:
                        return
                    wait = 1.0 if nxt is None else min(1.0, max(0.0, nxt - self.clock()))
                    if wait > 0:
                        self._cond.wait(wait)
                    if self._closed:
                        return

        self._janitor = threading.Thread(target=run, name=f"pool-janitor-{self._prefix}", daemon=True)
        self._janitor.start()

    # ---- close
    def close(self, timeout_s: float = 30.0) -> None:
        """Remove every container, in parallel; returns within about timeout_s."""
        with self._cond:
            self._closed = True
            slots = [s for s in self._slots if s.state != CREATING]  # a starting one removes itself when started
            for s in slots:
                s.state = REMOVING
            self._cond.notify_all()
        deadline = time.monotonic() + timeout_s
        threads = [threading.Thread(target=self._remove, args=(s,), daemon=True) for s in slots]
        for t in threads:
            t.start()
        for t in threads + ([self._janitor] if self._janitor else []):
            t.join(max(0.0, deadline - time.monotonic()))
        with self._cond:
            while self._slots and time.monotonic() < deadline:
                self._cond.wait(max(0.01, min(0.5, deadline - time.monotonic())))
            left = [s.name for s in self._slots]
        if left:
            log.warning("[%s] %d container(s) not removed in %.0f s: %s", self._ctx, len(left), timeout_s, left)
