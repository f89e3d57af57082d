"""Client of the host's local data layer (paper §4.3), used by grain instances through the grain API.

All names are scoped to the application the credential belongs to. Values are bytes; the grain API
(``context.put/get``...) encodes and decodes them.
"""

from __future__ import annotations

from grainworker._gen.datalayer import LocalDataLayer
from grainworker._gen.datalayer.ttypes import DataError, DataErrorCode, DataMetadata
from grainworker._thrift_client import connect

__all__ = ["DataLayerClient", "DataLayerError", "DataMetadata"]


class DataLayerError(Exception):
    """A call the data layer refused: UNAUTHORIZED, TOO_LARGE, NOT_FOUND, BAD_REQUEST or UNAVAILABLE."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class DataLayerClient:
    """One connection to the local data layer, acting for one application."""

    def __init__(self, address: str, credential: str, timeout_s: float | None = None) -> None:
        self.address = address
        self._credential = credential
        self._client, self._transport = connect(address, LocalDataLayer.Client, timeout_s)

    def _call(self, method: str, *args: object) -> object:
        try:
            return getattr(self._client, method)(self._credential, *args)
        except DataError as e:
            code = DataErrorCode._VALUES_TO_NAMES.get(e.code, str(e.code))
            raise DataLayerError(code, e.message or "") from None

    # ---- key-value
    def put(self, key: str, value: bytes) -> None:
        self._call("put", key, value)

    def get(self, key: str) -> bytes | None:
        return self._call("get", key).data  # type: ignore[attr-defined]

    def delete(self, key: str) -> bool:
        return self._call("remove", key)  # type: ignore[return-value]

    def list_keys(self, start: str = "", count: int = 1000) -> list[str]:
        return self._call("listKeys", start, count)  # type: ignore[return-value]

    # ---- maps
    def put_map_entry(self, map_name: str, key: str, value: bytes) -> None:
        self._call("putMapEntry", map_name, key, value)

    def get_map_entry(self, map_name: str, key: str) -> bytes | None:
        return self._call("getMapEntry", map_name, key).data  # type: ignore[attr-defined]

    def delete_map_entry(self, map_name: str, key: str) -> bool:
        return self._call("deleteMapEntry", map_name, key)  # type: ignore[return-value]

    def contains_map_key(self, map_name: str, key: str) -> bool:
        return self._call("containsMapKey", map_name, key)  # type: ignore[return-value]

    def get_map_keys(self, map_name: str) -> list[str]:
        return self._call("getMapKeys", map_name)  # type: ignore[return-value]

    def retrieve_map(self, map_name: str) -> dict[str, bytes]:
        return self._call("retrieveMap", map_name)  # type: ignore[return-value]

    def delete_map(self, map_name: str) -> bool:
        return self._call("deleteMap", map_name)  # type: ignore[return-value]

    # ---- sets
    def add_set_entry(self, set_name: str, item: str) -> bool:
        return self._call("addSetEntry", set_name, item)  # type: ignore[return-value]

    def remove_set_entry(self, set_name: str, item: str) -> bool:
        return self._call("removeSetEntry", set_name, item)  # type: ignore[return-value]

    def contains_set_item(self, set_name: str, item: str) -> bool:
        return self._call("containsSetItem", set_name, item)  # type: ignore[return-value]

    def retrieve_set(self, set_name: str) -> set[str]:
        return set(self._call("retrieveSet", set_name))  # type: ignore[call-overload]

    def delete_set(self, set_name: str) -> bool:
        return self._call("deleteSet", set_name)  # type: ignore[return-value]

    # ---- counters
    def create_counter(self, name: str, initial: int = 0) -> None:
        self._call("createCounter", name, initial)

    def get_counter_value(self, name: str) -> int:
        return self._call("getCounterValue", name)  # type: ignore[return-value]

    def increment_counter(self, name: str, delta: int = 1) -> int:
        return self._call("incrementCounter", name, delta)  # type: ignore[return-value]

    def decrement_counter(self, name: str, delta: int = 1) -> int:
        return self._call("decrementCounter", name, delta)  # type: ignore[return-value]

    def delete_counter(self, name: str) -> bool:
        return self._call("deleteCounter", name)  # type: ignore[return-value]

    # ---- data backup flag (§4.3)
    def metadata(self, items: list[tuple[str, str]]) -> list[DataMetadata]:
        """Metadata of the current local value of each (kind, name)."""
        query = [DataMetadata(kind=k, name=n, size=0, sha256="") for k, n in items]
        return self._call("metadata", query)  # type: ignore[return-value]

    def verify_global(self, expected: DataMetadata) -> bool:
        return self._call("verifyGlobal", expected)  # type: ignore[return-value]

    def flush(self, timeout_ms: int = 10_000) -> bool:
        return self._call("flush", timeout_ms)  # type: ignore[return-value]

    # ---- administration (host agent credential)
    def grant_application(self, application: str, credential: str) -> None:
        self._call("grantApplication", application, credential)

    def revoke_application(self, application: str) -> None:
        self._call("revokeApplication", application)

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> DataLayerClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
