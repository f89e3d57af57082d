"""The grain API under KNIX MicroFunctions' names and signatures (docs/grain-api.md, "KNIX MicroFunctions
compatibility"), with an in-memory stand-in for the data layer client."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from grainworker.context import GrainApiError, GrainContext
from grainworker.datalayer import DataLayerError
from grainworker.workflow import parse_workflow

WF = parse_workflow(
    {
        "name": "app",
        "entry": "a",
        "functions": [
            {"name": "a", "next": ["end"], "potentialNext": ["b", "c"]},
            {"name": "b", "next": ["end"]},
            {"name": "c", "next": ["end"]},
        ],
    }
)
EVENT = {"id": "e1", "execution_id": "x1", "app": "app", "grain": "a", "frontend": "f", "value": 1}


class FakeData:
    """Every call of grainworker.datalayer.DataLayerClient a grain reaches, in memory (the emulator's rules)."""

    def __init__(self) -> None:
        self.kv: dict[str, bytes] = {}
        self.maps: dict[str, dict[str, bytes]] = {}
        self.sets: dict[str, set[str]] = {}
        self.counters: dict[str, int] = {}
        self.list_calls: list[tuple[str, int]] = []

    def put(self, k: str, v: bytes) -> None:
        self.kv[k] = v

    def get(self, k: str) -> bytes | None:
        return self.kv.get(k)

    def delete(self, k: str) -> bool:
        return self.kv.pop(k, None) is not None

    def list_keys(self, start: str, count: int) -> list[str]:
        self.list_calls.append((start, count))
        return [k for k in sorted(self.kv) if k > start][:count]

    def put_map_entry(self, m: str, k: str, v: bytes) -> None:
        self.maps.setdefault(m, {})[k] = v

    def get_map_entry(self, m: str, k: str) -> bytes | None:
        return self.maps.get(m, {}).get(k)

    def delete_map_entry(self, m: str, k: str) -> bool:
        return self.maps.get(m, {}).pop(k, None) is not None

    def contains_map_key(self, m: str, k: str) -> bool:
        return k in self.maps.get(m, {})

    def get_map_keys(self, m: str) -> list[str]:
        return sorted(self.maps.get(m, {}))

    def retrieve_map(self, m: str) -> dict[str, bytes]:
        return dict(self.maps.get(m, {}))

    def delete_map(self, m: str) -> bool:
        return self.maps.pop(m, None) is not None

    def add_set_entry(self, s: str, item: str) -> bool:
        new = item not in self.sets.get(s, set())
        self.sets.setdefault(s, set()).add(item)
        return new

    def remove_set_entry(self, s: str, item: str) -> bool:
        had = item in self.sets.get(s, set())
        self.sets.get(s, set()).discard(item)
        return had

    def contains_set_item(self, s: str, item: str) -> bool:
        return item in self.sets.get(s, set())

    def retrieve_set(self, s: str) -> set[str]:
        return set(self.sets.get(s, set()))

    def delete_set(self, s: str) -> bool:
        return self.sets.pop(s, None) is not None

    def create_counter(self, n: str, v: int) -> None:
        self.counters[n] = v

    def _counter(self, n: str, d: int) -> int:
        if n not in self.counters:
            raise DataLayerError("NOT_FOUND", f"no counter {n!r}: createCounter first")
        self.counters[n] += d
        return self.counters[n]

    def get_counter_value(self, n: str) -> int:
        if n == "down":
            raise DataLayerError("UNAVAILABLE", "the global data layer is not available")
        return self._counter(n, 0)

    def increment_counter(self, n: str, d: int) -> int:
        return self._counter(n, d)

    def decrement_counter(self, n: str, d: int) -> int:
        return self._counter(n, -d)

    def delete_counter(self, n: str) -> bool:
        return self.counters.pop(n, None) is not None

    def close(self) -> None:
        pass


def ctx(sent: list[dict[str, Any]] | None = None, deadline: float | None = None) -> tuple[GrainContext, FakeData]:
    data = FakeData()
    sink = sent if sent is not None else []
    return GrainContext(EVENT, "a", WF, lambda: data, sink.append, deadline=deadline), data


def warnings(c: GrainContext) -> list[str]:
    return [text for _, level, text in c.logs if level == "WARNING"]


# ---- key-value
def test_kv_calls_take_knix_arguments_private_and_queued_writes_apply_at_once() -> None:
    c, data = ctx()
    c.put("k", "v", True, True)  # KNIX's positional order: is_private, is_queued
    assert data.kv["k"] == b"v"  # queued: applied at once, not when the grain returns
    c.put(key="k2", value="w", is_private=True, is_queued=True, bucketName=None)
    assert c.get("k", is_private=True) == "v" and c.get("k2", True, None) == "w"
    c.delete("k", is_private=False, is_queued=True)
    c.remove("k2", True, False, None)
    assert data.kv == {} and c.get("k") is None
    assert c.data_written == [("kv", "k"), ("kv", "k2")]
    assert warnings(c) == []


def test_bucket_name_writes_into_the_buckets_map_apart_from_the_applications_keys() -> None:
    c, data = ctx()
    c.put("k", "v", bucketName="photos")
    assert data.maps == {"sand.bucket.photos": {"k": b"v"}} and data.kv == {}
    assert c.get("k", bucketName="photos") == "v" and c.get("k") is None
    assert c.data_written == [("map", "sand.bucket.photos")]
    c.delete("k", bucketName="photos")
    assert data.maps == {"sand.bucket.photos": {}}
    assert warnings(c) == []


def test_a_bad_bucket_name_is_refused_naming_the_rule() -> None:
    c, data = ctx()
    with pytest.raises(GrainApiError, match="must match"):
        c.put("k", "v", bucketName="no/slashes")
    assert data.maps == {} and data.kv == {}


def test_get_keys_pages_through_the_data_layer_by_index() -> None:
    c, data = ctx()
    for i in range(2500):
        c.put(f"k{i:05d}", "v")
    everything = c.getKeys()
    assert everything == sorted(data.kv) and len(everything) == 2500
    assert [count for _, count in data.list_calls] == [1000, 1000, 1000]  # the last page is short: done
    assert c.listKeys(1, 3) == ["k00001", "k00002"]
    assert c.getKeys(start_index=998, end_index=1002, is_private=True) == ["k00998", "k00999", "k01000", "k01001"]
    assert c.getKeys(5, 5) == [] and c.getKeys(3000) == []
    assert c.get_keys("k02497", 10) == ["k02498", "k02499"]  # SAND's own listing is unchanged


# ---- maps
def test_map_calls_with_knix_arguments() -> None:
    c, data = ctx()
    c.createMap("m", is_private=True, is_queued=True)
    c.putMapEntry("m", "x", "1", True, True)
    c.putMapEntry("m", "y", "2", is_private=False, is_queued=False)
    assert c.getMapEntry("m", "x", is_private=True) == "1" and c.getMapEntry("m", "zz") is None
    assert c.containsMapKey("m", "y", True) and not c.containsMapKey("m", "zz")
    keys = c.getMapKeys("m", is_private=True)
    assert isinstance(keys, set) and keys == {"x", "y"}
    assert c.retrieveMap("m", True) == {"x": "1", "y": "2"}
    c.deleteMapEntry("m", "x", is_private=True, is_queued=True)
    assert c.retrieveMap("m") == {"y": "2"}
    c.clearMap("m", True, True)
    assert c.retrieveMap("m") == {}
    c.putMapEntry("n", "k", "v")
    c.deleteMap("n", is_private=True, is_queued=True)
    assert data.maps == {}
    assert c.data_written == [("map", "m"), ("map", "n")]


# ---- sets
def test_set_calls_with_knix_arguments() -> None:
    c, data = ctx()
    c.createSet("s", True, True)
    c.addSetEntry("s", "a", is_private=True, is_queued=True)
    c.addSetEntry("s", "b")
    assert c.containsSetItem("s", "a", True) and not c.containsSetItem("s", "z")
    items = c.retrieveSet("s", is_private=True)
    assert isinstance(items, set) and items == {"a", "b"}
    c.removeSetEntry("s", "a", True, True)
    assert c.retrieveSet("s") == {"b"}
    c.clearSet("s", is_private=True, is_queued=True)
    assert c.retrieveSet("s") == set()
    c.addSetEntry("t", "x")
    c.deleteSet("t", True, True)
    assert data.sets == {}
    assert c.data_written == [("set", "s"), ("set", "t")]


# ---- counters
def test_counter_calls_with_knix_arguments() -> None:
    c, data = ctx()
    assert c.getCounterValue("n") is None  # KNIX: None when the counter does not exist
    assert c.getCounterValue("n", is_private=True) is None
    c.createCounter("n", 5, True, True)
    assert c.getCounterValue("n", True) == 5
    assert c.incrementCounter("n", 3, is_private=True, is_queued=True) == 8
    assert c.decrementCounter("n", 2, True, True) == 6
    assert c.incrementCounter("n") == 7 and c.decrementCounter("n") == 6  # SAND's default step of 1 stays
    c.deleteCounter("n", is_private=True, is_queued=True)
    assert data.counters == {} and c.getCounterValue("n") is None
    assert c.data_written == [("counter", "n")]


def test_get_counter_value_passes_other_data_layer_errors_on() -> None:
    c, _ = ctx()
    with pytest.raises(DataLayerError) as err:
        c.getCounterValue("down")
    assert err.value.code == "UNAVAILABLE"


# ---- name listings
@pytest.mark.parametrize(
    ("calls", "kind"),
    [
        (("getMapNames", "listMaps"), "map"),
        (("getSetNames", "listSets"), "set"),
        (("getCounterNames", "listCounters"), "counter"),
    ],
)
def test_name_listings_raise_a_clear_error(calls: tuple[str, str], kind: str) -> None:
    c, _ = ctx()
    for name in calls:
        with pytest.raises(GrainApiError, match=f"cannot list {kind} names"):
            getattr(c, name)()
        with pytest.raises(GrainApiError, match="retrieveSet"):
            getattr(c, name)(start_index=0, end_index=10, is_private=True)


# ---- identity, misc
def test_identity_ping_and_remaining_time() -> None:
    c, _ = ctx()
    assert c.get_event_key() == c.get_instance_id() == c.get_execution_id() == "x1"
    assert c.ping(7) == "pong 7"
    assert c.get_remaining_time_in_millis() == 300000  # no deadline known: KNIX's constant
    d, _ = ctx(deadline=time.monotonic() + 2.0)
    assert 1000 < d.get_remaining_time_in_millis() <= 2000
    e, _ = ctx(deadline=time.monotonic() - 1.0)
    assert e.get_remaining_time_in_millis() == 0


def test_log_levels_as_before() -> None:
    c, _ = ctx()
    c.log("hello")
    c.log("careful", level="warning")
    c.log("odd", "chatty")  # KNIX raises for an unknown level; SAND logs it as INFO
    assert [(level, text) for _, level, text in c.logs] == [("INFO", "hello"), ("WARNING", "careful"), ("INFO", "odd")]


def test_update_metadata_is_accepted_without_effect() -> None:
    c, _ = ctx()
    assert c.update_metadata("k", "v") is None
    assert c.update_metadata("k", "v", is_privileged_metadata=True) is None
    [warning] = warnings(c)
    assert "no user metadata" in warning


def test_aws_compatibility_attributes() -> None:
    c, _ = ctx()
    assert c.function_name == "a" and c.function_version == 1 and c.invoked_function_arn == "a:1"
    assert c.memory_limit_in_mb == 3008 and c.aws_request_id == "x1"
    assert c.log_group_name == "/sand/app/a" and c.log_stream_name == "x1"
    assert c.identity.cognito_identity_id is None and c.identity.cognito_identity_pool_id is None
    assert c.client_context.client.app_title is None and c.client_context.custom is None
    props = json.loads(c.get_context_object_properties())
    assert props["function_name"] == "a" and props["invoked_function_arn"] == "a:1"
    assert props["aws_request_id"] == "x1" and props["memory_limit_in_mb"] == 3008
    assert props["identity"] == {"cognito_identity_id": None, "cognito_identity_pool_id": None}
    assert props["client_context"]["client"]["installation_id"] is None and props["client_context"]["env"] is None


# ---- control flow
def test_dynamic_next_under_knix_names() -> None:
    c, _ = ctx()
    c.add_workflow_next(next="b", value={"v": 1})
    c.add_dynamic_next("c", 2)
    c.add_dynamic_workflow({"next": "b", "value": [3]})
    c.add_dynamic_workflow([{"next": "c", "value": "four"}, {"next": "b", "value": None}])
    assert c.dynamic_next == [("b", {"v": 1}), ("c", 2), ("b", [3]), ("c", "four"), ("b", None)]
    assert c.get_dynamic_workflow()[:2] == [{"next": "b", "value": {"v": 1}}, {"next": "c", "value": 2}]


def test_add_dynamic_workflow_adds_all_or_nothing() -> None:
    c, _ = ctx()
    with pytest.raises(GrainApiError, match="add it to its potentialNext"):
        c.add_dynamic_workflow([{"next": "b", "value": 1}, {"next": "a", "value": 2}])
    for bad in ("b", [{"value": 1}], [("b", 1)]):
        with pytest.raises(GrainApiError, match="list of them"):
            c.add_dynamic_workflow(bad)  # type: ignore[arg-type]
    assert c.dynamic_next == [] and c.get_dynamic_workflow() == []


def test_send_to_function_now_under_knix_names() -> None:
    sent: list[dict[str, Any]] = []
    c, _ = ctx(sent)
    c.send_to_function_now(destination="b", value="now")
    c.send_to_function_now("end", "early")
    assert [(ev["grain"], ev["value"]) for ev in sent] == [("b", "now"), ("end", "early")]
    with pytest.raises(GrainApiError, match="not a grain"):
        c.send_to_function_now("zzz", 1)


# ---- sessions outside a workflow with session functions (the rest: tests/test_session.py); triggers, buckets
SESSION_CALLS = (
    "send_to_running_function_in_session",
    "send_to_all_running_functions_in_session_with_function_name",
    "send_to_all_running_functions_in_session",
    "send_to_running_function_in_session_with_alias",
    "set_session_alias",
    "unset_session_alias",
    "get_session_alias",
    "set_session_function_alias",
    "unset_session_function_alias",
    "get_session_function_alias",
    "get_session_id",
    "get_session_function_id",
    "get_session_function_id_with_alias",
    "is_still_running",
)


def test_session_calls_outside_a_session_workflow_warn_and_answer_as_knix() -> None:
    c, _ = ctx()
    args = {"send_to_running_function_in_session": ("f", "m"), "set_session_alias": ("al",)}
    args |= {"set_session_function_alias": ("al",), "send_to_running_function_in_session_with_alias": ("al", "m")}
    args |= {"send_to_all_running_functions_in_session": ("m",)}
    args |= {"send_to_all_running_functions_in_session_with_function_name": ("g", "m")}
    for name in SESSION_CALLS:
        assert getattr(c, name)(*args.get(name, ())) is None, name
    assert c.get_session_update_messages(count=5, block=True) == []
    assert c.get_all_session_function_ids() == [] and c.get_alias_summary() == {}
    logged = warnings(c)
    assert "get_session_id: this workflow has no session functions; it answers what KNIX answers outside one" in logged
    assert "is_still_running: grain 'a' is not a session function (sessionFunction in the workflow)" in logged
    assert len(logged) == len(set(logged))  # once per call name and instance


class Platform(FakeData):
    """FakeData whose ``manage`` answers as the platform's KNIX door would, and keeps what it was asked."""

    def __init__(self, replies: dict[str, dict[str, Any]] | None = None, error: Exception | None = None) -> None:
        super().__init__()
        self.asked: list[dict[str, Any]] = []
        self.replies = replies or {}
        self.error = error

    def manage(self, request: bytes) -> bytes:
        asked = json.loads(request)
        self.asked.append(asked)
        if self.error is not None:
            raise self.error
        reply = self.replies.get(asked["action"], {"status": "success", "data": {"message": f"{asked['action']} ok"}})
        return json.dumps(reply).encode()


def knix_ctx(platform: Platform) -> GrainContext:
    return GrainContext(EVENT, "a", WF, lambda: platform, [].append)


def test_trigger_calls_send_knix_requests_and_answer_knix_tuples() -> None:
    p = Platform()
    c = knix_ctx(p)
    assert c.addTrigger("t", {"trigger_type": "timer", "timer_interval_ms": 1000}) == (True, "addTrigger ok")
    assert c.addTriggerForWorkflow("t", "wf", "state2") == (True, "addTriggerForWorkflow ok")
    assert c.deleteTriggerForWorkflow("t", "wf") == (True, "deleteTriggerForWorkflow ok")
    assert c.deleteTrigger("t") == (True, "deleteTrigger ok")
    assert [a["action"] for a in p.asked] == [
        "addTrigger",
        "addTriggerForWorkflow",
        "deleteTriggerForWorkflow",
        "deleteTrigger",
    ]
    assert p.asked[1]["data"] == {"trigger_name": "t", "workflow_name": "wf", "workflow_state": "state2"}
    assert all("user" not in a["data"] for a in p.asked)  # no token: the platform knows the grain's owner


def test_a_refused_trigger_call_answers_false_with_the_platforms_message() -> None:
    p = Platform({"addTrigger": {"status": "failure", "data": {"message": "AMQP triggers are not supported"}}})
    ok, message = knix_ctx(p).addTrigger("t", {"trigger_type": "amqp", "amqp_addr": "x", "routing_key": "k"})
    assert ok is False and "AMQP triggers are not supported" in message


def test_missing_timer_and_amqp_fields_answer_false_before_asking() -> None:
    p = Platform()
    c = knix_ctx(p)
    assert c.addTriggerTimer("t", {}) == (False, "Missing parameter for timer trigger: timer_interval_ms")
    assert c.addTriggerAMQP("t", {"amqp_addr": "a"}) == (False, "Missing parameter for AMQP trigger: routing_key")
    assert p.asked == []


def test_bucket_calls_answer_booleans_and_send_knix_field_names() -> None:
    p = Platform()
    c = knix_ctx(p)
    assert c.addTriggerableBucket("b") is True
    assert c.addStorageTriggerForWorkflow("wf", bucketName="b") is True
    assert c.deleteStorageTriggerForWorkflow("wf", "b") is True
    assert c.deleteTriggerableBucket(bucketName="b") is True
    assert p.asked[2]["data"] == {"workflowname": "wf", "tablename": "b"}  # KNIX's own field for this action
    p.replies["addTriggerableBucket"] = {"status": "failure", "data": {"message": "taken"}}
    assert c.addTriggerableBucket("b") is False


def test_workflow_and_bucket_details_are_the_platforms_reply_or_none() -> None:
    details = {"status": "success", "data": {"id": "w1", "associatedTriggerableTables": {"b": ""}}}
    p = Platform({"getWorkflowDetails": details})
    c = knix_ctx(p)
    assert c._getWorkflowDetails("wf") == details
    assert p.asked[-1] == {"action": "getWorkflowDetails", "data": {"workflowname": "wf"}}
    p.replies["getTriggerableBuckets"] = {"status": "failure", "data": {"message": "no"}}
    assert c._getTriggerableBuckets() is None


def test_invoke_management_api_checks_the_request_and_reports_an_unreachable_platform() -> None:
    c = knix_ctx(Platform())
    assert c._invoke_management_api(["x"]) == (False, "Request must be specified as a dictionary", None)
    assert c._invoke_management_api({"action": "x"}) == (False, "Request must contain a dictionary named 'data'", None)
    down = knix_ctx(Platform(error=DataLayerError("UNAVAILABLE", "no frontend polls this host's gate now")))
    ok, message, response = down._invoke_management_api({"action": "getWorkflows", "data": {}})
    assert ok is False and response is None and "no frontend polls" in message
    assert down.addTrigger("t", {"timer_interval_ms": 1000})[0] is False


def test_a_grain_instance_counts_its_remaining_time_down_from_the_grains_timeout() -> None:
    """The instance tells the context when the worker will kill it (InstanceSpec.timeout_s)."""
    import json as _json

    from grainworker.envelope import decode
    from grainworker.instance import InstanceSpec, run_instance
    from grainworker.workflow import parse_workflow

    class Bus:
        batches: list[list[tuple[str, bytes]]] = []

        def publish_batch(self, deliveries: list[tuple[str, bytes]]) -> None:
            self.batches.append(list(deliveries))

    wf = parse_workflow({"name": "w", "entry": "g", "functions": [{"name": "g", "next": ["end"]}]})
    bus = Bus()
    event = {"id": "e", "execution_id": "x", "app": "a", "grain": "g", "from": "", "value": {}, "trace": []}
    run_instance(
        _json.dumps(event).encode(),
        InstanceSpec("a", "g", wf, frozenset(), timeout_s=5.0),
        lambda e, c: c.get_remaining_time_in_millis(),
        bus,
        lambda: None,
    )
    report = decode(bus.batches[-1][-1][1])
    left = report["outputs"][0]["value"]
    assert 4000 < left <= 5000, left
