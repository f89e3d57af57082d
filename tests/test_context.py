"""The grain API (context) with a fake data layer client: names, encodings, what gets tracked."""

from __future__ import annotations

from typing import Any

import pytest

from grainworker.context import GrainApiError, GrainContext
from grainworker.datalayer import DataLayerError
from grainworker.workflow import parse_workflow

WF = parse_workflow(
    {
        "name": "app",
        "entry": "a",
        "functions": [{"name": "a", "next": ["end"], "potentialNext": ["b"]}, {"name": "b", "next": ["end"]}],
    }
)
EVENT = {"id": "e1", "execution_id": "x1", "app": "app", "grain": "a", "frontend": "f", "value": 1}


class FakeData:
    """Stands in for grainworker.datalayer.DataLayerClient (same method names)."""

    def __init__(self) -> None:
        self.kv: dict[str, bytes] = {}
        self.counters: dict[str, int] = {}
        self.maps: dict[str, dict[str, bytes]] = {}

    def put(self, k: str, v: bytes) -> None:
        if k == "over-quota":
            raise DataLayerError("QUOTA_EXCEEDED", "[app app] cannot store key 'over-quota': retry later")
        self.kv[k] = v

    def get(self, k: str) -> bytes | None:
        return self.kv.get(k)

    def delete(self, k: str) -> bool:
        return self.kv.pop(k, None) is not None

    def create_counter(self, n: str, v: int) -> None:
        self.counters[n] = v

    def increment_counter(self, n: str, d: int) -> int:
        self.counters[n] += d
        return self.counters[n]

    def decrement_counter(self, n: str, d: int) -> int:
        return self.increment_counter(n, -d)

    def put_map_entry(self, m: str, k: str, v: bytes) -> None:
        self.maps.setdefault(m, {})[k] = v

    def retrieve_map(self, m: str) -> dict[str, bytes]:
        return self.maps.get(m, {})

    def close(self) -> None:
        pass


def ctx(sent: list[dict[str, Any]] | None = None) -> tuple[GrainContext, FakeData]:
    data = FakeData()
    return GrainContext(EVENT, "a", WF, lambda: data, (sent if sent is not None else []).append), data


def test_identity_and_logs() -> None:
    c, _ = ctx()
    assert c.get_execution_id() == c.get_event_key() == "x1"
    c.log("hello")
    c.log("careful", "warning")
    c.log("odd", "chatty")
    assert [(level, text) for _, level, text in c.logs] == [("INFO", "hello"), ("WARNING", "careful"), ("INFO", "odd")]


def test_data_calls_encode_and_track_writes() -> None:
    c, data = ctx()
    c.put("k", "välue")
    assert data.kv["k"] == "välue".encode()
    assert c.get("k") == "välue"
    c.put("raw", b"\xff\x00")
    assert c.get("raw") == b"\xff\x00"
    assert c.get("missing") is None
    c.createCounter("n", 5)
    assert c.incrementCounter("n", 2) == 7 and c.decrementCounter("n") == 6
    c.putMapEntry("m", "x", "1")
    assert c.retrieveMap("m") == {"x": "1"}
    assert c.data_written == [("kv", "k"), ("kv", "raw"), ("counter", "n"), ("map", "m")]
    with pytest.raises(GrainApiError, match="str or bytes"):
        c.put("k", {"a": 1})


def test_dynamic_next_must_be_allowed_by_the_workflow() -> None:
    c, _ = ctx()
    c.add_workflow_next("b", {"v": 1})
    c.add_dynamic_next("b", 2)
    assert c.dynamic_next == [("b", {"v": 1}), ("b", 2)]
    with pytest.raises(GrainApiError, match="add it to its potentialNext"):
        c.add_workflow_next("a", 3)


def test_send_to_function_now_publishes_an_event_of_the_same_execution() -> None:
    sent: list[dict[str, Any]] = []
    c, _ = ctx(sent)
    c.send_to_function_now("b", "now")
    assert len(sent) == 1 and sent[0]["grain"] == "b" and sent[0]["value"] == "now"
    assert sent[0]["execution_id"] == "x1" and sent[0]["from"] == "a" and sent[0]["id"] != "e1"
    with pytest.raises(GrainApiError, match="not a grain"):
        c.send_to_function_now("zzz", 1)


def test_a_refused_write_reaches_the_grain_and_is_not_tracked() -> None:
    c, data = ctx()
    with pytest.raises(DataLayerError) as err:
        c.put("over-quota", "v")
    assert err.value.code == "QUOTA_EXCEEDED" and "retry later" in err.value.message
    assert "over-quota" not in data.kv
    assert c.data_written == []  # no data backup flag for a write that did not happen
