"""Attack (issue 26, finding 12): a grain writes 1 MB values in a loop. It used to be never told "quota": everything
went on into Cassandra until the grain's timeout, and the next call continued. Now its application's bytes in the
global data layer are counted and bounded (datalayer app.global.max.bytes; the application may lower its own quota
with the counter sand.quota.global.max.bytes, which this test does, so the shared system's operator cap stays as it
is): the loop gets QUOTA_EXCEEDED naming the quota, deleting its keys frees the space, and another tenant's
application answers throughout."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.api import Http, put_app, raw_remove, sign_up

QUOTA = 5_000_000  # the application's own limit, far below the operator's default (1 GiB)
MB = 1 << 20

FLOOD = f"""
import time

QUOTA = {QUOTA}
MB = {MB}


def handle(event, context):
    op = event["op"]
    if op == "limit":  # the developer lowers the application's quota (a host re-reads it within a second)
        context.createCounter("sand.quota.global.max.bytes", QUOTA)
        return {{"ok": True}}
    if op == "fill":  # 1 MB values until refused
        value = "x" * MB
        for i in range(200):  # (before the quota, this wrote 200 MB and was never refused)
            try:
                context.put("flood-%d" % i, value)
            except Exception as e:
                return {{"written": i, "code": getattr(e, "code", None), "error": str(e)}}
        return {{"written": 200, "code": None, "error": None}}
    if op == "delete":
        for i in range(event["n"]):
            context.delete("flood-%d" % i)
        return {{"deleted": event["n"]}}
    if op == "put":
        try:
            context.put("after", "x" * MB)
            return {{"code": None}}
        except Exception as e:
            return {{"code": getattr(e, "code", None), "error": str(e)}}
    raise ValueError(op)
"""

ECHO = "def handle(event, context):\n    return {'echo': event}\n"


@pytest.fixture(scope="module")
def tenants(http: Http) -> Iterator[tuple[str, str, str, str]]:
    attacker, victim = sign_up(http, f"flood-{uuid.uuid4().hex[:8]}"), sign_up(http, f"calm-{uuid.uuid4().hex[:8]}")
    app, other = f"flood-{uuid.uuid4().hex[:6]}", f"calm-{uuid.uuid4().hex[:6]}"
    grain, echo = f"flood{uuid.uuid4().hex[:6]}", f"echo{uuid.uuid4().hex[:6]}"
    for key, name, g, code in ((attacker, app, grain, FLOOD), (victim, other, echo, ECHO)):
        deployed = put_app(http, key, name, [{"name": g, "next": ["end"]}], {g: code})
        assert deployed["status"] == "deployed", deployed
    yield attacker, app, victim, other
    raw_remove(http, attacker, app)
    raw_remove(http, victim, other)


def invoke(http: Http, app: str, body: dict[str, Any]) -> Any:
    r = http("POST", f"/app/{app}", json_body=body, timeout=120)
    assert r.status_code == 200, r.text
    return r.json()


def test_a_storage_flood_gets_quota_exceeded_and_deletes_free_it(
    http: Http, tenants: tuple[str, str, str, str]
) -> None:
    attacker, app, victim, other = tenants
    assert invoke(http, app, {"op": "limit"}) == {"ok": True}
    time.sleep(2.5)  # the counter reaches Cassandra, and the host's view of the quota is re-read (once a second)
    filled = invoke(http, app, {"op": "fill"})
    assert filled["code"] == "QUOTA_EXCEEDED", filled
    assert "sand.quota.global.max.bytes" in filled["error"] and "app.global.max.bytes" in filled["error"], filled
    # refused at the quota: the writes still on their way to Cassandra count too
    assert QUOTA // MB - 1 <= filled["written"] <= QUOTA // MB, filled
    print(f"refused after {filled['written']} x 1 MB: {filled['error']}")
    # the next call is refused too: the quota holds across calls
    time.sleep(1.5)
    assert invoke(http, app, {"op": "put"})["code"] == "QUOTA_EXCEEDED"
    # another tenant's application answers
    assert invoke(http, other, {"hi": 1}) == {"echo": {"hi": 1}}
    # deleting the keys frees their bytes: a write is accepted again
    assert invoke(http, app, {"op": "delete", "n": filled["written"]}) == {"deleted": filled["written"]}
    deadline = time.monotonic() + 30
    while (again := invoke(http, app, {"op": "put"}))["code"] is not None and time.monotonic() < deadline:
        time.sleep(1)
    assert again["code"] is None, again
    storage = http("GET", f"/api/v1/apps/{app}", attacker).json().get("storage")
    if storage is not None:  # shown once the frontend is given the global layer (AppsHandler.useStorage)
        assert storage["max_bytes"] == QUOTA and 0 <= storage["used_bytes"] < QUOTA, storage
