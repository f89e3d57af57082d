"""The grain API: the ``context`` handed to ``handle(event, context)``.

Names follow KNIX MicroFunctions (SAND's open-source successor) so its Python grains run unchanged;
see docs/grain-api.md for every call with an example. Data calls go to the host's local data layer,
which reads the global data layer (Cassandra) on a miss. Values are strings (bytes are kept as bytes).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from grainworker.envelope import make_event
from grainworker.workflow import END, Workflow

__all__ = ["GrainContext", "GrainApiError"]

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


class GrainApiError(Exception):
    """A grain used the API wrongly (e.g. a dynamic next that the workflow does not allow)."""


def _to_bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    raise GrainApiError(f"data layer values are str or bytes, not {type(value).__name__}; "
                        "encode it first (e.g. json.dumps)")


def _from_bytes(data: bytes | None) -> str | bytes | None:
    if data is None:
        return None
    try:
        return data.decode()
    except UnicodeDecodeError:
        return data


class GrainContext:
    """What a grain instance can do besides returning its output."""

    def __init__(self, event: dict[str, Any], grain: str, workflow: Workflow,
                 data_client: Callable[[], Any], send_now: Callable[[dict[str, Any]], None]) -> None:
        self._event = event
        self._grain = grain
        self._workflow = workflow
        self._data_client = data_client
        self._data: Any = None
        self._send_now = send_now
        self.logs: list[list[Any]] = []
        self.dynamic_next: list[tuple[str, Any]] = []
        self.data_written: list[tuple[str, str]] = []

    # ---- identity and logging
    def get_execution_id(self) -> str:
        """The id of the workflow execution (one user request) this event belongs to."""
        return self._event["execution_id"]

    get_event_key = get_execution_id

    def get_grain_name(self) -> str:
        return self._grain

    def log(self, text: Any, level: str = "INFO") -> None:
        """Record a log line for this execution (``sand logs <execution id>``)."""
        level = str(level).upper()
        self.logs.append([time.time_ns(), level if level in LEVELS else "INFO", str(text)])

    # ---- control flow
    def add_workflow_next(self, grain: str, value: Any) -> None:
        """After this instance returns, also send ``value`` to ``grain`` (must be in potentialNext)."""
        allowed = self._workflow.grain(self._grain).potential_next
        if grain not in allowed:
            raise GrainApiError(f"grain {self._grain!r} may not choose {grain!r} as next: "
                                f"add it to its potentialNext (allowed: {list(allowed)})")
        self.dynamic_next.append((grain, value))

    add_dynamic_next = add_workflow_next

    def send_to_function_now(self, grain: str, value: Any) -> None:
        """Send ``value`` to ``grain`` (a grain of the workflow, or 'end') right now, mid-run."""
        if grain != END and grain not in self._workflow.grains:
            raise GrainApiError(f"{grain!r} is not a grain of workflow {self._workflow.name!r}")
        self._send_now(make_event(self._event, grain, value, self._grain))

    # ---- data layer: key-value
    def _dl(self) -> Any:
        if self._data is None:
            self._data = self._data_client()
        return self._data

    def _wrote(self, kind: str, name: str) -> None:
        if (kind, name) not in self.data_written:
            self.data_written.append((kind, name))

    def put(self, key: str, value: Any, is_private: bool = False, is_queued: bool = False) -> None:
        self._dl().put(key, _to_bytes(value))
        self._wrote("kv", key)

    def get(self, key: str, is_private: bool = False) -> str | bytes | None:
        return _from_bytes(self._dl().get(key))

    def delete(self, key: str, is_private: bool = False, is_queued: bool = False) -> None:
        self._dl().delete(key)
        self._wrote("kv", key)

    def get_keys(self, start: str = "", count: int = 1000) -> list[str]:
        return self._dl().list_keys(start, count)

    # ---- maps
    def createMap(self, mapname: str) -> None:  # noqa: N802 (KNIX name)
        """Maps are created on first use; this only makes sure the map exists (empty if new)."""
        self._dl().retrieve_map(mapname)

    def putMapEntry(self, mapname: str, key: str, value: Any) -> None:  # noqa: N802
        self._dl().put_map_entry(mapname, key, _to_bytes(value))
        self._wrote("map", mapname)

    def getMapEntry(self, mapname: str, key: str) -> str | bytes | None:  # noqa: N802
        return _from_bytes(self._dl().get_map_entry(mapname, key))

    def deleteMapEntry(self, mapname: str, key: str) -> None:  # noqa: N802
        self._dl().delete_map_entry(mapname, key)
        self._wrote("map", mapname)

    def containsMapKey(self, mapname: str, key: str) -> bool:  # noqa: N802
        return self._dl().contains_map_key(mapname, key)

    def getMapKeys(self, mapname: str) -> list[str]:  # noqa: N802
        return sorted(self._dl().get_map_keys(mapname))

    def retrieveMap(self, mapname: str) -> dict[str, str | bytes | None]:  # noqa: N802
        return {k: _from_bytes(v) for k, v in self._dl().retrieve_map(mapname).items()}

    def clearMap(self, mapname: str) -> None:  # noqa: N802
        self.deleteMap(mapname)

    def deleteMap(self, mapname: str) -> None:  # noqa: N802
        self._dl().delete_map(mapname)
        self._wrote("map", mapname)

    # ---- sets
    def createSet(self, setname: str) -> None:  # noqa: N802
        self._dl().retrieve_set(setname)

    def addSetEntry(self, setname: str, item: str) -> None:  # noqa: N802
        self._dl().add_set_entry(setname, str(item))
        self._wrote("set", setname)

    def removeSetEntry(self, setname: str, item: str) -> None:  # noqa: N802
        self._dl().remove_set_entry(setname, str(item))
        self._wrote("set", setname)

    def containsSetItem(self, setname: str, item: str) -> bool:  # noqa: N802
        return self._dl().contains_set_item(setname, str(item))

    def retrieveSet(self, setname: str) -> set[str]:  # noqa: N802
        return self._dl().retrieve_set(setname)

    def clearSet(self, setname: str) -> None:  # noqa: N802
        self.deleteSet(setname)

    def deleteSet(self, setname: str) -> None:  # noqa: N802
        self._dl().delete_set(setname)
        self._wrote("set", setname)

    # ---- counters
    def createCounter(self, countername: str, count: int = 0, is_private: bool = False) -> None:  # noqa: N802
        self._dl().create_counter(countername, int(count))
        self._wrote("counter", countername)

    def getCounterValue(self, countername: str, is_private: bool = False) -> int:  # noqa: N802
        return self._dl().get_counter_value(countername)

    def incrementCounter(self, countername: str, increment: int = 1, is_private: bool = False) -> int:  # noqa: N802
        value = self._dl().increment_counter(countername, int(increment))
        self._wrote("counter", countername)
        return value

    def decrementCounter(self, countername: str, decrement: int = 1, is_private: bool = False) -> int:  # noqa: N802
        value = self._dl().decrement_counter(countername, int(decrement))
        self._wrote("counter", countername)
        return value

    def deleteCounter(self, countername: str, is_private: bool = False) -> None:  # noqa: N802
        self._dl().delete_counter(countername)
        self._wrote("counter", countername)

    def close(self) -> None:
        if self._data is not None:
            self._data.close()
