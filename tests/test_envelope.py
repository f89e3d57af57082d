"""The event envelope against the examples the Java side is tested with (contracts/src/test/resources/envelope)."""

from __future__ import annotations

import json
from pathlib import Path

from grainworker.envelope import TRACE_STEPS, decode, encode, grain_trace, make_event

EXAMPLES = Path(__file__).resolve().parent.parent / "contracts" / "src" / "test" / "resources" / "envelope"
FIELDS = ["id", "execution_id", "app", "grain", "from", "frontend", "value", "sent_ns", "tag", "trace"]


def test_trace_steps_are_the_shared_declaration() -> None:
    shared = json.loads((EXAMPLES / "trace-steps.json").read_text())
    assert {k: tuple(v) for k, v in shared.items()} == TRACE_STEPS
    assert list(shared) == list(TRACE_STEPS)


def test_every_example_decodes_and_round_trips() -> None:
    for name in ("request.json", "output.json", "result.json"):
        raw = (EXAMPLES / name).read_bytes()
        event = decode(raw)
        assert list(event) == FIELDS, name
        assert decode(encode(event)) == json.loads(raw)


def test_an_output_inherits_the_trace_and_adds_its_grains_entry() -> None:
    request = decode((EXAMPLES / "request.json").read_bytes())
    out = make_event(
        request,
        "shout",
        {"greeting": "hello, sand"},
        "greet",
        trace=grain_trace("greet", 2100000, 2150000, 2200000, 2250000, 2300000),
    )
    expected = decode((EXAMPLES / "output.json").read_bytes())
    assert list(out) == FIELDS
    for field in ("execution_id", "app", "grain", "from", "frontend", "value", "tag"):
        assert out[field] == expected[field], field
    assert out["trace"] == [request["trace"][0], expected["trace"][2]]
    assert request["trace"] == [["frontend", "fe-8081", 1000000]], "the source's trace is not changed"
    for entry in expected["trace"]:
        assert len(entry) == 2 + len(TRACE_STEPS[entry[0]])
