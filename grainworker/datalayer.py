"""Client of the host's local data layer (paper §4.3), used by grain instances through the grain API.

All names are scoped to the application the credential belongs to. Values are bytes; the grain API
(``context.put/get``...) encodes and decodes them.
"""

from __future__ import annotations

from typing import cast

from grainworker._gen.datalayer import LocalDataLayer
from grainworker._gen.datalayer.ttypes import DataError, DataErrorCode, DataMetadata
from grainworker._thrift_client import ThriftClient

__all__ = ["DataLayerClient", "DataLayerError", "DataMetadata"]


class DataLayerError(Exception):
    """A call the data layer refused; ``code`` is UNAUTHORIZED, TOO_LARGE, NOT_FOUND, BAD_REQUEST, UNAVAILABLE
    or QUOTA_EXCEEDED, and ``message`` says what failed and what to do.

    QUOTA_EXCEEDED: the application's memory on this host (``app.max.bytes``) is full of writes not yet in
    the global data layer (Cassandra behind or down), or one map or set outgrew it; nothing was changed,
    and retrying later usually succeeds.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class DataLayerClient(ThriftClient):
    """One connection to the local data layer, acting for one application."""

    client_class = LocalDataLayer.Client
    error_class = DataError
    codes = DataErrorCode._VALUES_TO_NAMES

    def _raise(self, code: str, message: str) -> None:
        raise DataLayerError(code, message) from None

    # ---- key-value
    def put(self, key: str, value: bytes) -> None:
        self._call("put", key, value)

    def get(self, key: str) -> bytes | None:
        return cast(bytes | None, self._call("get", key).data)

    def delete(self, key: str) -> bool:
        return cast(bool, self._call("remove", key))

    def list_keys(self, start: str = "", count: int = 1000) -> list[str]:
        return cast(list[str], self._call("listKeys", start, count))

    # ---- maps
    def put_map_entry(self, map_name: str, key: str, value: bytes) -> None:
        self._call("putMapEntry", map_name, key, value)

    def get_map_entry(self, map_name: str, key: str) -> bytes | None:
        return cast(bytes | None, self._call("getMapEntry", map_name, key).data)

    def delete_map_entry(self, map_name: str, key: str) -> bool:
        return cast(bool, self._call("deleteMapEntry", map_name, key))

    def contains_map_key(self, map_name: str, key: str) -> bool:
        return cast(bool, self._call("containsMapKey", map_name, key))

    def get_map_keys(self, map_name: str) -> list[str]:
        return cast(list[str], self._call("getMapKeys", map_name))

    def retrieve_map(self, map_name: str) -> dict[str, bytes]:
        return cast(dict[str, bytes], self._call("retrieveMap", map_name))

    def delete_map(self, map_name: str) -> bool:
        return cast(bool, self._call("deleteMap", map_name))

    # ---- sets
    def add_set_entry(self, set_name: str, item: str) -> bool:
        return cast(bool, self._call("addSetEntry", set_name, item))

    def remove_set_entry(self, set_name: str, item: str) -> bool:
        return cast(bool, self._call("removeSetEntry", set_name, item))

    def contains_set_item(self, set_name: str, item: str) -> bool:
        return cast(bool, self._call("containsSetItem", set_name, item))

    def retrieve_set(self, set_name: str) -> set[str]:
        return set(self._call("retrieveSet", set_name))

    def delete_set(self, set_name: str) -> bool:
        return cast(bool, self._call("deleteSet", set_name))

    # ---- counters
    def create_counter(self, name: str, initial: int = 0) -> None:
        self._call("createCounter", name, initial)

    def get_counter_value(self, name: str) -> int:
        return cast(int, self._call("getCounterValue", name))

    def increment_counter(self, name: str, delta: int = 1) -> int:
        return cast(int, self._call("incrementCounter", name, delta))

    def decrement_counter(self, name: str, delta: int = 1) -> int:
        return cast(int, self._call("decrementCounter", name, delta))

    def delete_counter(self, name: str) -> bool:
        return cast(bool, self._call("deleteCounter", name))

    # ---- data backup flag (§4.3)
    def metadata(self, items: list[tuple[str, str]]) -> list[DataMetadata]:
        """Metadata of the current local value of each (kind, name)."""
        query = [DataMetadata(kind=k, name=n, size=0, sha256="") for k, n in items]
        return cast(list[DataMetadata], self._call("metadata", query))

    def verify_global(self, expected: DataMetadata) -> bool:
        return cast(bool, self._call("verifyGlobal", expected))

    def flush(self, timeout_ms: int = 10_000) -> bool:
        return cast(bool, self._call("flush", timeout_ms))

    # ---- the platform's management API, as the application's owner (management_api.py)
    def manage(self, request: bytes) -> bytes:
        """One KNIX management request (JSON); the platform's KNIX reply (JSON). Waits up to a minute."""
        return cast(bytes, self._call("manage", request))

    # ---- administration (host agent credential)
    def grant_application(self, application: str, credential: str) -> None:
        self._call("grantApplication", application, credential)

    def revoke_application(self, application: str) -> None:
        self._call("revokeApplication", application)
