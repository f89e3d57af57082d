"""The grain API: the ``context`` handed to ``handle(event, context)``.

Names, parameters and defaults follow KNIX MicroFunctions' MicroFunctionsAPI (SAND's open-source successor), so
its Python grains run unchanged; see docs/grain-api.md ("KNIX MicroFunctions compatibility") for every call and
what SAND does with it. Data calls go to the host's local data layer, which reads the global data layer
(Cassandra) on a miss. Values are strings (bytes are kept as bytes).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

from grainworker import appenv
from grainworker.envelope import make_event
from grainworker.management_api import ManagementCalls
from grainworker.rules import RULES
from grainworker.session_api import SessionCalls
from grainworker.workflow import END, Workflow

if TYPE_CHECKING:
    from grainworker.datalayer import DataLayerClient

__all__ = ["GrainContext", "GrainApiError"]

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
KNIX_REMAINING_MS = 300_000  # what KNIX's get_remaining_time_in_millis always answers
KNIX_MAX_INDEX = 2147483647  # KNIX's default end_index of the name listings
_KEYS_PAGE = 1000  # keys asked of the data layer per call when getKeys pages through them
_BUCKETS: dict[str, Any] = RULES["triggerable_buckets"]
_BUCKET_NAME = re.compile(_BUCKETS["name_pattern"])


class GrainApiError(Exception):
    """A grain used the API wrongly (e.g. a dynamic next that the workflow does not allow)."""


def _to_bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    raise GrainApiError(
        f"data layer values are str or bytes, not {type(value).__name__}; encode it first (e.g. json.dumps)"
    )


def _from_bytes(data: bytes | None) -> str | bytes | None:
    if data is None:
        return None
    try:
        return data.decode()
    except UnicodeDecodeError:
        return data


def _no_listing(kind: str) -> GrainApiError:
    return GrainApiError(
        f"SAND's data layer cannot list {kind} names; keep the names you need in a set "
        f"(e.g. context.addSetEntry('my-{kind}s', name)) and read it with retrieveSet"
    )


class GrainContext(SessionCalls, ManagementCalls):
    """What a grain instance can do besides returning its output.

    ``deadline`` (``time.monotonic()`` seconds), when the caller knows it, is when the instance gets killed;
    ``get_remaining_time_in_millis`` counts down to it, and answers KNIX's constant 300000 without it.
    """

    # AWS-compatibility attributes KNIX sets to constants
    function_version = 1
    memory_limit_in_mb = 3008

    def __init__(
        self,
        event: dict[str, Any],
        grain: str,
        workflow: Workflow,
        data_client: Callable[[], DataLayerClient],
        send_now: Callable[[dict[str, Any]], None],
        *,
        deadline: float | None = None,
    ) -> None:
        self._event = event
        self._grain = grain
        self._workflow = workflow
        self._data_client = data_client
        self._data: DataLayerClient | None = None
        self._send_now = send_now
        self._deadline = deadline
        self._warned: set[str] = set()
        self.logs: list[list[Any]] = []
        self.dynamic_next: list[tuple[str, Any]] = []
        self.ran_inline: list[str] = []  # grains of ASL states this instance ran besides its own (aslrun.py)
        self.instance_times: tuple[int, int, int] | None = None  # polled, started, handler started (instance.py)
        self.trace_override: list[Any] | None = None  # a join's merged fan-out trace (aslrun._merge_traces)
        self.flush_logs: Callable[[], None] | None = None  # instance.py: report the log lines so far, now
        self.data_written: list[tuple[str, str]] = []
        self._session_init()

    # ---- identity and logging
    def get_execution_id(self) -> str:
        """The id of the workflow execution (one user request) this event belongs to."""
        return cast(str, self._event["execution_id"])

    get_event_key = get_execution_id
    get_instance_id = get_execution_id

    def get_sender(self) -> str:
        """The grain that sent this event; "" for a request (it came from a caller through the frontend)."""
        return str(self._event.get("from", ""))

    def get_grain_name(self) -> str:
        return self._grain

    def log(self, text: Any, level: str = "INFO") -> None:
        """Record a log line for this execution (``sand logs <execution id>``); an unknown level is INFO."""
        level = str(level).upper()
        self.logs.append([time.time_ns(), level if level in LEVELS else "INFO", str(text)])

    def _warn(self, topic: str, text: str) -> None:
        """Log a WARNING once per instance and topic (a grain calling an unsupported call in a loop)."""
        if topic not in self._warned:
            self._warned.add(topic)
            self.log(text, "WARNING")

    def ping(self, num: Any) -> str:
        return f"pong {num}"

    def get_remaining_time_in_millis(self) -> int:
        """Milliseconds until the instance is killed, or KNIX's constant 300000 when the deadline is not known."""
        if self._deadline is None:
            return KNIX_REMAINING_MS
        return max(0, int((self._deadline - time.monotonic()) * 1000))

    def update_metadata(self, name: str, value: Any, is_privileged_metadata: bool = False) -> None:
        """Accepted, no effect: SAND's events carry no user metadata."""
        self._warn("update_metadata", "update_metadata has no effect: SAND's events carry no user metadata")

    # ---- configuration and secrets (resolved at deploy: no lookup here)
    def get_config(self, name: str | None = None, default: str | None = None) -> Any:
        """The application's ``settings.env`` variable ``name`` (``default`` if it has none); with no name, a copy of
        all of them as a dict. The same values are in ``os.environ``."""
        config = appenv.current().config
        return dict(config) if name is None else config.get(name, default)

    def get_secret(self, name: str, default: str | None = None) -> str | None:
        """The application's secret ``name`` (``sand secret set``), or ``default`` if it has none. Also in
        ``os.environ``; a grain that logs or returns it makes it visible, the platform never does."""
        return appenv.current().secrets.get(name, default)

    # ---- AWS-compatibility attributes (as KNIX sets them)
    @property
    def function_name(self) -> str:
        return self._grain

    @property
    def invoked_function_arn(self) -> str:
        return f"{self._grain}:{self.function_version}"

    @property
    def aws_request_id(self) -> str:
        return self.get_event_key()

    @property
    def log_group_name(self) -> str:
        return f"/sand/{self._workflow.name}/{self._grain}"

    @property
    def log_stream_name(self) -> str:
        return self.get_execution_id()

    @property
    def identity(self) -> SimpleNamespace:
        return SimpleNamespace(cognito_identity_id=None, cognito_identity_pool_id=None)

    @property
    def client_context(self) -> SimpleNamespace:
        client = SimpleNamespace(
            installation_id=None, app_title=None, app_version_name=None, app_version_code=None, app_package_name=None
        )
        return SimpleNamespace(client=client, custom=None, env=None)

    def get_context_object_properties(self) -> str:
        """The AWS-compatibility attributes as a JSON string."""
        return json.dumps(
            {
                "function_name": self.function_name,
                "function_version": self.function_version,
                "invoked_function_arn": self.invoked_function_arn,
                "memory_limit_in_mb": self.memory_limit_in_mb,
                "aws_request_id": self.aws_request_id,
                "log_group_name": self.log_group_name,
                "log_stream_name": self.log_stream_name,
                "identity": vars(self.identity),
                "client_context": {**vars(self.client_context), "client": vars(self.client_context.client)},
            }
        )

    # ---- control flow
    def _check_next(self, grain: Any) -> None:
        allowed = self._workflow.grain(self._grain).potential_next
        if grain not in allowed:
            raise GrainApiError(
                f"grain {self._grain!r} may not choose {grain!r} as next: "
                f"add it to its potentialNext (allowed: {list(allowed)})"
            )

    def add_workflow_next(self, next: str, value: Any) -> None:  # noqa: A002 (KNIX's name)
        """After this instance returns, also send ``value`` to ``next`` (must be in potentialNext)."""
        self._check_next(next)
        self.dynamic_next.append((next, value))

    add_dynamic_next = add_workflow_next

    def add_dynamic_workflow(self, dynamic_trigger: dict[str, Any] | list[dict[str, Any]]) -> None:
        """``add_workflow_next`` for a ``{"next": grain, "value": v}`` or a list of them (all or none are added)."""
        triggers = [dynamic_trigger] if isinstance(dynamic_trigger, dict) else dynamic_trigger
        if not isinstance(triggers, list) or not all(isinstance(t, dict) and "next" in t for t in triggers):
            raise GrainApiError('add_dynamic_workflow takes {"next": grain, "value": v} or a list of them')
        for t in triggers:
            self._check_next(t["next"])
        self.dynamic_next += [(t["next"], t.get("value")) for t in triggers]

    def get_dynamic_workflow(self) -> list[dict[str, Any]]:
        """The dynamic nexts added so far, as ``{"next", "value"}`` dicts."""
        return [{"next": g, "value": v} for g, v in self.dynamic_next]

    def send_to_function_now(self, destination: str, value: Any) -> None:
        """Send ``value`` to ``destination`` (a grain of the workflow, or 'end') right now, mid-run."""
        if destination != END and destination not in self._workflow.grains:
            raise GrainApiError(f"{destination!r} is not a grain of workflow {self._workflow.name!r}")
        self._send_now(make_event(self._event, destination, value, self._grain))

    # ---- data layer: key-value. is_private and is_queued are accepted: all data is the application's
    # (KNIX's private storage) and queued writes are applied at once.
    def _dl(self) -> DataLayerClient:
        if self._data is None:
            self._data = self._data_client()
        return self._data

    def _wrote(self, kind: str, name: str) -> None:
        if (kind, name) not in self.data_written:
            self.data_written.append((kind, name))

    def _bucket(self, bucket: str | None) -> str | None:
        """The map that holds triggerable bucket ``bucket``'s keys (docs/data-triggers.md), or None for the
        application's own keys. A write into it makes the host agent start the bucket's target applications."""
        if bucket is None:
            return None
        if not isinstance(bucket, str) or not _BUCKET_NAME.fullmatch(bucket):
            raise GrainApiError(
                f"bucketName {bucket!r} is not a bucket name: it must match {_BUCKET_NAME.pattern} "
                "(create the bucket with `sand bucket create <name>`)"
            )
        return str(_BUCKETS["map_prefix"]) + bucket

    def put(
        self, key: str, value: Any, is_private: bool = False, is_queued: bool = False, bucketName: str | None = None
    ) -> None:  # noqa: N803 (KNIX's name)
        bucket_map = self._bucket(bucketName)
        if bucket_map is not None:
            self._dl().put_map_entry(bucket_map, key, _to_bytes(value))
            self._wrote("map", bucket_map)
            return
        self._dl().put(key, _to_bytes(value))
        self._wrote("kv", key)

    def get(self, key: str, is_private: bool = False, bucketName: str | None = None) -> str | bytes | None:  # noqa: N803
        bucket_map = self._bucket(bucketName)
        if bucket_map is not None:
            return _from_bytes(self._dl().get_map_entry(bucket_map, key))
        return _from_bytes(self._dl().get(key))

    def delete(
        self, key: str, is_private: bool = False, is_queued: bool = False, bucketName: str | None = None
    ) -> None:  # noqa: N803
        bucket_map = self._bucket(bucketName)
        if bucket_map is not None:  # a delete triggers nothing (as in KNIX)
            self._dl().delete_map_entry(bucket_map, key)
            self._wrote("map", bucket_map)
            return
        self._dl().delete(key)
        self._wrote("kv", key)

    remove = delete

    def get_keys(self, start: str = "", count: int = 1000) -> list[str]:
        """Up to ``count`` keys in order, after ``start``."""
        return self._dl().list_keys(start, count)

    def getKeys(
        self,
        start_index: int = 0,
        end_index: int = KNIX_MAX_INDEX,  # noqa: N802
        is_private: bool = False,
    ) -> list[str]:
        """The keys in order, ``[start_index:end_index]`` of the whole sorted list."""
        start, end = max(0, int(start_index)), int(end_index)
        keys: list[str] = []
        while len(keys) < end:
            want = min(_KEYS_PAGE, end - len(keys))
            page = self._dl().list_keys(keys[-1] if keys else "", want)
            keys += page
            if len(page) < want:
                break
        return keys[start:end]

    listKeys = getKeys  # noqa: N815

    # ---- maps (is_queued is accepted and the write done at once, as KNIX ignores it for maps, sets, counters)
    def createMap(self, mapname: str, is_private: bool = False, is_queued: bool = False) -> None:  # noqa: N802
        """Maps are created on first use; this only makes sure the map exists (empty if new)."""
        self._dl().retrieve_map(mapname)

    def putMapEntry(
        self,
        mapname: str,
        key: str,
        value: Any,
        is_private: bool = False,  # noqa: N802
        is_queued: bool = False,
    ) -> None:
        self._dl().put_map_entry(mapname, key, _to_bytes(value))
        self._wrote("map", mapname)

    def getMapEntry(self, mapname: str, key: str, is_private: bool = False) -> str | bytes | None:  # noqa: N802
        return _from_bytes(self._dl().get_map_entry(mapname, key))

    def deleteMapEntry(
        self,
        mapname: str,
        key: str,
        is_private: bool = False,  # noqa: N802
        is_queued: bool = False,
    ) -> None:
        self._dl().delete_map_entry(mapname, key)
        self._wrote("map", mapname)

    def containsMapKey(self, mapname: str, key: str, is_private: bool = False) -> bool:  # noqa: N802
        return self._dl().contains_map_key(mapname, key)

    def getMapKeys(self, mapname: str, is_private: bool = False) -> set[str]:  # noqa: N802
        return set(self._dl().get_map_keys(mapname))

    def retrieveMap(self, mapname: str, is_private: bool = False) -> dict[str, str | bytes | None]:  # noqa: N802
        return {k: _from_bytes(v) for k, v in self._dl().retrieve_map(mapname).items()}

    def clearMap(self, mapname: str, is_private: bool = False, is_queued: bool = False) -> None:  # noqa: N802
        self.deleteMap(mapname)

    def deleteMap(self, mapname: str, is_private: bool = False, is_queued: bool = False) -> None:  # noqa: N802
        self._dl().delete_map(mapname)
        self._wrote("map", mapname)

    def getMapNames(
        self,
        start_index: int = 0,
        end_index: int = KNIX_MAX_INDEX,  # noqa: N802
        is_private: bool = False,
    ) -> list[str]:
        raise _no_listing("map")

    listMaps = getMapNames  # noqa: N815

    # ---- sets
    def createSet(self, setname: str, is_private: bool = False, is_queued: bool = False) -> None:  # noqa: N802
        self._dl().retrieve_set(setname)

    def addSetEntry(
        self,
        setname: str,
        item: str,
        is_private: bool = False,  # noqa: N802
        is_queued: bool = False,
    ) -> None:
        self._dl().add_set_entry(setname, str(item))
        self._wrote("set", setname)

    def removeSetEntry(
        self,
        setname: str,
        item: str,
        is_private: bool = False,  # noqa: N802
        is_queued: bool = False,
    ) -> None:
        self._dl().remove_set_entry(setname, str(item))
        self._wrote("set", setname)

    def containsSetItem(self, setname: str, item: str, is_private: bool = False) -> bool:  # noqa: N802
        return self._dl().contains_set_item(setname, str(item))

    def retrieveSet(self, setname: str, is_private: bool = False) -> set[str]:  # noqa: N802
        return set(self._dl().retrieve_set(setname))

    def clearSet(self, setname: str, is_private: bool = False, is_queued: bool = False) -> None:  # noqa: N802
        self.deleteSet(setname)

    def deleteSet(self, setname: str, is_private: bool = False, is_queued: bool = False) -> None:  # noqa: N802
        self._dl().delete_set(setname)
        self._wrote("set", setname)

    def getSetNames(
        self,
        start_index: int = 0,
        end_index: int = KNIX_MAX_INDEX,  # noqa: N802
        is_private: bool = False,
    ) -> list[str]:
        raise _no_listing("set")

    listSets = getSetNames  # noqa: N815

    # ---- counters
    def createCounter(
        self,
        countername: str,
        count: int = 0,
        is_private: bool = False,  # noqa: N802
        is_queued: bool = False,
    ) -> None:
        self._dl().create_counter(countername, int(count))
        self._wrote("counter", countername)

    def getCounterValue(self, countername: str, is_private: bool = False) -> int | None:  # noqa: N802
        """The counter's value, or None (as KNIX) when it does not exist."""
        try:
            return self._dl().get_counter_value(countername)
        except Exception as e:  # a DataLayerError (not imported: it pulls in Thrift)
            if getattr(e, "code", None) == "NOT_FOUND":
                return None
            raise

    def incrementCounter(
        self,
        countername: str,
        increment: int = 1,
        is_private: bool = False,  # noqa: N802
        is_queued: bool = False,
    ) -> int:
        value = self._dl().increment_counter(countername, int(increment))
        self._wrote("counter", countername)
        return value

    def decrementCounter(
        self,
        countername: str,
        decrement: int = 1,
        is_private: bool = False,  # noqa: N802
        is_queued: bool = False,
    ) -> int:
        value = self._dl().decrement_counter(countername, int(decrement))
        self._wrote("counter", countername)
        return value

    def deleteCounter(self, countername: str, is_private: bool = False, is_queued: bool = False) -> None:  # noqa: N802
        self._dl().delete_counter(countername)
        self._wrote("counter", countername)

    def getCounterNames(
        self,
        start_index: int = 0,
        end_index: int = KNIX_MAX_INDEX,  # noqa: N802
        is_private: bool = False,
    ) -> list[str]:
        raise _no_listing("counter")

    listCounters = getCounterNames  # noqa: N815

    def close(self) -> None:
        if self._data is not None:
            self._data.close()
