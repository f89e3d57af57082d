

def test_an_instance_publishes_a_joins_merged_trace_then_its_own_entry() -> None:
    import json

    from grainworker.envelope import decode
    from grainworker.instance import InstanceSpec, run_instance

    class Bus:
        def __init__(self) -> None:
            self.batches: list[list[tuple[str, bytes]]] = []

        def publish_batch(self, deliveries: list[tuple[str, bytes]]) -> None:
            self.batches.append(list(deliveries))

    wf = parse_workflow({"StartAt": "T", "States": {"T": task("echo")}})
    merged = [["frontend", "f", 0], ["grain", "X [M item 0]", 1, 2, 3, 4, 5]]

    def handler(event: Any, context: Any) -> Any:
        assert context.instance_times is not None  # what a join's branch records of its instance
        context.trace_override = merged
        return event

    bus = Bus()
    event = {"id": "e", "execution_id": "x", "app": "a", "grain": "T", "from": "", "trace": [["frontend", "f", 0]]}
    run_instance(
        json.dumps(event | {"value": 1}).encode(),
        InstanceSpec("a", "T", wf, frozenset(wf.grains), timeout_s=5.0),
        handler,
        bus,
        lambda: None,  # type: ignore[arg-type,return-value]
    )
    report = decode(bus.batches[-1][-1][1])
    trace = report["outputs"][0]["trace"]
    assert trace[:2] == merged and [e[1] for e in trace[2:]] == ["T"], trace
    assert report["outputs"][0]["grain"] == END
