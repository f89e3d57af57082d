"""The Python data layer client against the real Java local data layer (standalone, in-memory global
layer: Cassandra is covered by the Java integration tests and the e2e tests)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from grainworker.datalayer import DataLayerClient, DataLayerError
from tests.javaserver import java_server

AGENT = "agent-credential-0123456789"
CRED_A = "app-a-credential-0123456789"
CRED_B = "app-b-credential-0123456789"


@pytest.fixture(scope="module")
def address() -> Iterator[str]:
    env = {
        "SAND_DATALAYER_CREDENTIAL": AGENT,
        "SAND_DATALAYER_PORT": "0",
        "SAND_DATALAYER_GLOBAL": "memory",
        "SAND_DATALAYER_VALUE_MAX_BYTES": str(1 << 20),
    }
    with java_server("datalayer", "sand.datalayer.DataLayerServer", env) as addr:
        with DataLayerClient(addr, AGENT) as admin:
            admin.grant_application("appa", CRED_A)
            admin.grant_application("appb", CRED_B)
        yield addr


@pytest.fixture
def a(address: str) -> Iterator[DataLayerClient]:
    with DataLayerClient(address, CRED_A) as c:
        yield c


def test_key_value(a: DataLayerClient) -> None:
    assert a.get("missing") is None
    a.put("k1", b"v1")
    a.put("k2", b"v2")
    assert a.get("k1") == b"v1"
    assert {"k1", "k2"} <= set(a.list_keys())
    assert a.delete("k1") is True
    assert a.get("k1") is None


def test_maps_sets_counters(a: DataLayerClient) -> None:
    a.put_map_entry("m", "x", b"1")
    a.put_map_entry("m", "y", b"2")
    assert a.get_map_entry("m", "x") == b"1"
    assert a.contains_map_key("m", "y")
    assert sorted(a.get_map_keys("m")) == ["x", "y"]
    assert a.retrieve_map("m") == {"x": b"1", "y": b"2"}
    assert a.delete_map_entry("m", "x") and a.retrieve_map("m") == {"y": b"2"}
    assert a.delete_map("m") and a.retrieve_map("m") == {}

    assert a.add_set_entry("s", "a") is True
    a.add_set_entry("s", "b")
    assert a.contains_set_item("s", "a") and not a.contains_set_item("s", "z")
    assert a.retrieve_set("s") == {"a", "b"}
    assert a.remove_set_entry("s", "a") and a.retrieve_set("s") == {"b"}
    assert a.delete_set("s")

    a.create_counter("c", 10)
    assert a.increment_counter("c", 5) == 15
    assert a.decrement_counter("c", 3) == 12
    assert a.get_counter_value("c") == 12
    assert a.delete_counter("c")
    with pytest.raises(DataLayerError) as err:
        a.get_counter_value("c")
    assert err.value.code == "NOT_FOUND"


def test_applications_cannot_see_each_others_data(address: str, a: DataLayerClient) -> None:
    a.put("shared-name", b"a's value")
    with DataLayerClient(address, CRED_B) as b:
        assert b.get("shared-name") is None
        b.put("shared-name", b"b's value")
        assert b.get("shared-name") == b"b's value"
        with pytest.raises(DataLayerError) as err:
            b.grant_application("appa", "stolen-credential-0123456789")
        assert err.value.code == "UNAUTHORIZED"
    assert a.get("shared-name") == b"a's value"
    with DataLayerClient(address, "not-a-credential-at-all-000") as nobody:
        with pytest.raises(DataLayerError) as err:
            nobody.get("shared-name")
        assert err.value.code == "UNAUTHORIZED"


def test_oversized_value_is_refused_and_old_value_kept(a: DataLayerClient) -> None:
    a.put("big", b"small")
    with pytest.raises(DataLayerError) as err:
        a.put("big", b"x" * ((1 << 20) + 1))
    assert err.value.code == "TOO_LARGE"
    assert a.get("big") == b"small"


def test_metadata_and_verify_global(a: DataLayerClient) -> None:
    import hashlib

    a.put("doc", b"hello grain")
    assert a.flush(10_000) is True
    (meta,) = a.metadata([("kv", "doc")])
    assert (meta.kind, meta.name, meta.size) == ("kv", "doc", len(b"hello grain"))
    assert meta.sha256 == hashlib.sha256(b"hello grain").hexdigest()
    assert a.verify_global(meta) is True
    meta.sha256 = hashlib.sha256(b"something else").hexdigest()
    assert a.verify_global(meta) is False
    (absent,) = a.metadata([("kv", "no-such-key")])
    assert absent.size == -1 and absent.sha256 == ""


def test_a_full_quota_is_quota_exceeded_with_code_and_message() -> None:
    env = {
        "SAND_DATALAYER_CREDENTIAL": AGENT,
        "SAND_DATALAYER_PORT": "0",
        "SAND_DATALAYER_GLOBAL": "memory",
        "SAND_DATALAYER_VALUE_MAX_BYTES": "1000",
        "SAND_DATALAYER_APP_MAX_BYTES": "40000",
    }
    with java_server("datalayer", "sand.datalayer.DataLayerServer", env) as addr:
        with DataLayerClient(addr, AGENT) as admin:
            admin.grant_application("appq", CRED_A)
        with DataLayerClient(addr, CRED_A) as q:
            for i in range(200):  # 3x the quota to distinct keys: clean ones are evicted, all read back
                q.put(f"k{i}", b"%04d" % i * 250)
            assert all(q.get(f"k{i}") == b"%04d" % i * 250 for i in range(200))
            with pytest.raises(DataLayerError) as err:
                for i in range(100):  # one map is evicted whole, never piecemeal: it cannot outgrow the quota
                    q.put_map_entry("m", f"e{i}", b"x" * 1000)
    assert err.value.code == "QUOTA_EXCEEDED"
    assert "[app appq]" in err.value.message and "quota 40000 bytes" in err.value.message
    assert "app.max.bytes" in err.value.message
    assert str(err.value).startswith("QUOTA_EXCEEDED: ")
