"""An in-memory local data layer with the Java server's Thrift interface, for the emulator. There is no
global layer behind it: the emulator's data lives as long as the emulator. The real one is datalayer/."""

from __future__ import annotations

import hashlib
import random
import threading
import time
from collections import defaultdict
from typing import Any

from grainworker._gen.datalayer.ttypes import DataError, DataErrorCode, DataMetadata, Value

__all__ = ["InMemoryDataLayer", "Jittered"]

MAX_VALUE = 10 * 1024 * 1024


class _AppData:
    def __init__(self) -> None:
        self.kv: dict[str, bytes] = {}
        self.maps: dict[str, dict[str, bytes]] = defaultdict(dict)
        self.sets: dict[str, set[str]] = defaultdict(set)
        self.counters: dict[str, int] = {}


class InMemoryDataLayer:
    """Implements grainworker._gen.datalayer.LocalDataLayer.Iface."""

    def __init__(self, agent_credential: str) -> None:
        self._agent = agent_credential
        self._apps: dict[str, str] = {}
        self._data: dict[str, _AppData] = defaultdict(_AppData)
        self._lock = threading.RLock()

    def _app(self, credential: str) -> _AppData:
        app = self._apps.get(credential)
        if app is None:
            raise DataError(DataErrorCode.UNAUTHORIZED, "unknown credential")
        return self._data[app]

    @staticmethod
    def _size(value: bytes) -> None:
        if len(value) > MAX_VALUE:
            raise DataError(DataErrorCode.TOO_LARGE, f"value of {len(value)} bytes is above the limit of {MAX_VALUE}")

    # kv
    def put(self, credential: str, key: str, value: bytes) -> None:
        self._size(value)
        with self._lock:
            self._app(credential).kv[key] = value

    def get(self, credential: str, key: str) -> Value:
        return Value(self._app(credential).kv.get(key))

    def remove(self, credential: str, key: str) -> bool:
        with self._lock:
            return self._app(credential).kv.pop(key, None) is not None

    def listKeys(self, credential: str, start: str, count: int) -> list[str]:  # noqa: N802
        return [k for k in sorted(self._app(credential).kv) if k > start][:count]

    # maps
    def putMapEntry(self, credential: str, mapName: str, key: str, value: bytes) -> None:  # noqa: N802, N803
        self._size(value)
        with self._lock:
            self._app(credential).maps[mapName][key] = value

    def getMapEntry(self, credential: str, mapName: str, key: str) -> Value:  # noqa: N802, N803
        return Value(self._app(credential).maps.get(mapName, {}).get(key))

    def deleteMapEntry(self, credential: str, mapName: str, key: str) -> bool:  # noqa: N802, N803
        with self._lock:
            return self._app(credential).maps.get(mapName, {}).pop(key, None) is not None

    def containsMapKey(self, credential: str, mapName: str, key: str) -> bool:  # noqa: N802, N803
        return key in self._app(credential).maps.get(mapName, {})

    def getMapKeys(self, credential: str, mapName: str) -> list[str]:  # noqa: N802, N803
        return sorted(self._app(credential).maps.get(mapName, {}))

    def retrieveMap(self, credential: str, mapName: str) -> dict[str, bytes]:  # noqa: N802, N803
        return dict(self._app(credential).maps.get(mapName, {}))

    def deleteMap(self, credential: str, mapName: str) -> bool:  # noqa: N802, N803
        with self._lock:
            return self._app(credential).maps.pop(mapName, None) is not None

    # sets
    def addSetEntry(self, credential: str, setName: str, item: str) -> bool:  # noqa: N802, N803
        with self._lock:
            s = self._app(credential).sets[setName]
            new = item not in s
            s.add(item)
            return new

    def removeSetEntry(self, credential: str, setName: str, item: str) -> bool:  # noqa: N802, N803
        with self._lock:
            s = self._app(credential).sets.get(setName, set())
            had = item in s
            s.discard(item)
            return had

    def containsSetItem(self, credential: str, setName: str, item: str) -> bool:  # noqa: N802, N803
        return item in self._app(credential).sets.get(setName, set())

    def retrieveSet(self, credential: str, setName: str) -> set[str]:  # noqa: N802, N803
        return set(self._app(credential).sets.get(setName, set()))

    def deleteSet(self, credential: str, setName: str) -> bool:  # noqa: N802, N803
        with self._lock:
            return self._app(credential).sets.pop(setName, None) is not None

    # counters
    def createCounter(self, credential: str, counter: str, initial: int) -> None:  # noqa: N802
        with self._lock:
            self._app(credential).counters[counter] = initial

    def _counter(self, credential: str, counter: str, delta: int) -> int:
        with self._lock:
            c = self._app(credential).counters
            if counter not in c:
                raise DataError(DataErrorCode.NOT_FOUND, f"no counter {counter!r}: createCounter first")
            c[counter] += delta
            return c[counter]

    def getCounterValue(self, credential: str, counter: str) -> int:  # noqa: N802
        return self._counter(credential, counter, 0)

    def incrementCounter(self, credential: str, counter: str, delta: int) -> int:  # noqa: N802
        return self._counter(credential, counter, delta)

    def decrementCounter(self, credential: str, counter: str, delta: int) -> int:  # noqa: N802
        return self._counter(credential, counter, -delta)

    def deleteCounter(self, credential: str, counter: str) -> bool:  # noqa: N802
        with self._lock:
            return self._app(credential).counters.pop(counter, None) is not None

    # data backup flag: everything is "global" here, so metadata always verifies
    def metadata(self, credential: str, items: list[Any]) -> list[DataMetadata]:
        out = []
        for it in items:
            value = self._app(credential).kv.get(it.name) if it.kind == "kv" else None
            out.append(
                DataMetadata(
                    it.kind,
                    it.name,
                    len(value) if value is not None else -1,
                    hashlib.sha256(value).hexdigest() if value is not None else "",
                )
            )
        return out

    def verifyGlobal(self, credential: str, expected: Any) -> bool:  # noqa: N802
        (meta,) = self.metadata(credential, [expected])
        return (meta.size, meta.sha256) == (expected.size, expected.sha256)

    def flush(self, credential: str, timeoutMs: int) -> bool:  # noqa: N803
        self._app(credential)
        return True

    def grantApplication(self, credential: str, application: str, applicationCredential: str) -> None:  # noqa: N802, N803
        if credential != self._agent:
            raise DataError(DataErrorCode.UNAUTHORIZED, "grantApplication is for the host agent only")
        self._apps[applicationCredential] = application

    def revokeApplication(self, credential: str, application: str) -> None:  # noqa: N802
        if credential != self._agent:
            raise DataError(DataErrorCode.UNAUTHORIZED, "revokeApplication is for the host agent only")
        self._apps = {c: a for c, a in self._apps.items() if a != application}


class Jittered:
    """A data layer that stalls one call in ten for ``max_s`` before doing it, as a busy host deschedules a process
    now and then: it opens the windows between one grain instance's calls, so that races between instances (a join's,
    say) show on an idle laptop (the emulator's ``data_jitter_s``, for tests)."""

    def __init__(self, inner: InMemoryDataLayer, max_s: float) -> None:
        self._inner, self._max_s = inner, max_s
        self._rng = random.Random()

    def __getattr__(self, name: str) -> Any:
        call = getattr(self._inner, name)

        def delayed(*args: Any) -> Any:
            if self._rng.random() < 0.1:
                time.sleep(self._max_s)
            return call(*args)

        return delayed
