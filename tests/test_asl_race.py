"""The Parallel and Map joins of grainworker/aslrun.py under every interleaving a test can reach (issue 26,
finding 15): each event's handler runs in a thread of its own, and a scheduler lets exactly one of them run at a
time, switching at random at every data layer call, so that one instance may stop between any two of its calls
while others run to the end. Thousands of executions: every MaxConcurrency, branches finishing in every order,
failing items with and without Catch and Retry, nested fan-outs. Each execution must give what the reference
interpreter gives (exactly one result), no handler may raise, and the joins must leave nothing in the data layer."""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from grainworker.aslrun import MARK, make_handler
from grainworker.workflow import END, parse_workflow
from tests.test_aslrun import reference


class NotFound(Exception):
    """What the grain API raises for a counter that does not exist (a DataLayerError with code NOT_FOUND)."""

    code = "NOT_FOUND"


class Scheduler:
    """Runs one actor (an event's handler, in its own thread) at a time; an actor gives the turn back at each
    data layer call, and the next turn goes to a random live actor."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.back = threading.Event()
        self.live: list[Actor] = []

    def spawn(self, fn: Callable[[], None]) -> None:
        actor = Actor(self, fn)
        self.live.append(actor)
        actor.start()

    def pause(self) -> None:
        """Called by the running actor: let the scheduler pick who runs next."""
        me = threading.current_thread()
        assert isinstance(me, Actor)
        self.back.set()
        me.go.wait()
        me.go.clear()

    def run(self, max_steps: int = 100_000) -> None:
        for _ in range(max_steps):
            if not self.live:
                return
            actor = self.rng.choice(self.live)
            self.back.clear()
            actor.go.set()
            assert self.back.wait(10), "an actor neither paused nor ended"
            if actor.done:
                actor.join()
                self.live.remove(actor)
        raise AssertionError("the execution did not end")


class Actor(threading.Thread):
    def __init__(self, sched: Scheduler, fn: Callable[[], None]) -> None:
        super().__init__(daemon=True)
        self.sched, self.fn = sched, fn
        self.go = threading.Event()
        self.done = False

    def run(self) -> None:
        self.go.wait()
        self.go.clear()
        try:
            self.fn()
        finally:
            self.done = True
            self.sched.back.set()


class Data:
    """The application's data layer as SAND's: a counter exists once created; maps are created on first put."""

    def __init__(self) -> None:
        self.maps: dict[str, dict[str, str]] = {}
        self.counters: dict[str, int] = {}


class Ctx:
    """A grain instance's context (what aslrun uses), pausing before each data layer call."""

    def __init__(self, sched: Scheduler, data: Data, sender: str) -> None:
        self.sched, self.data, self.sender = sched, data, sender
        self.sent: list[tuple[str, Any]] = []

    def get_execution_id(self) -> str:
        return "e1"

    def get_sender(self) -> str:
        return self.sender

    def log(self, text: str, level: str = "INFO") -> None:
        pass

    def add_workflow_next(self, grain: str, value: Any) -> None:
        self.sent.append((grain, json.loads(json.dumps(value))))

    def putMapEntry(self, m: str, k: str, v: str) -> None:  # noqa: N802
        self.sched.pause()
        self.data.maps.setdefault(m, {})[k] = v

    def getMapEntry(self, m: str, k: str) -> str | None:  # noqa: N802
        self.sched.pause()
        return self.data.maps.get(m, {}).get(k)

    def retrieveMap(self, m: str) -> dict[str, str]:  # noqa: N802
        self.sched.pause()
        return dict(self.data.maps.get(m, {}))

    def deleteMap(self, m: str) -> None:  # noqa: N802
        self.sched.pause()
        self.data.maps.pop(m, None)

    def createCounter(self, c: str, count: int = 0) -> None:  # noqa: N802
        self.sched.pause()
        self.data.counters[c] = count

    def _add(self, c: str, delta: int) -> int:
        self.sched.pause()
        if c not in self.data.counters:
            raise NotFound(f"no counter named {c!r}: create it first")
        self.data.counters[c] += delta
        return self.data.counters[c]

    def incrementCounter(self, c: str, increment: int = 1) -> int:  # noqa: N802
        return self._add(c, increment)

    def getCounterValue(self, c: str) -> int | None:  # noqa: N802
        self.sched.pause()
        return self.data.counters.get(c)  # None when it does not exist, as the grain API's

    def deleteCounter(self, c: str) -> None:  # noqa: N802
        self.sched.pause()
        self.data.counters.pop(c, None)


def run_interleaved(
    machine: dict[str, Any], value: Any, tasks: dict[str, Callable[[Any], Any]], seed: int
) -> tuple[list[Any], list[BaseException], Data]:
    """One execution of ``machine``: its results (the workflow's outputs and error values), what the handlers
    raised, and what the data layer holds at the end."""
    wf = parse_workflow(machine)
    handlers = {
        g: make_handler(wf, g, (lambda fn: lambda event, context: fn(event))(tasks[w.code]) if w.code else None)
        for g, w in wf.grains.items()
    }
    sched = Scheduler(seed)
    data = Data()
    results: list[Any] = []
    raised: list[BaseException] = []

    def deliver(grain: str, event: Any, sender: str) -> None:
        def handle() -> None:
            ctx = Ctx(sched, data, sender)
            try:
                out = handlers[grain](event, ctx)
            except Exception as e:  # noqa: BLE001 - recorded: a handler must not raise
                raised.append(e)
                return
            if isinstance(out, dict) and set(out) == {"error"}:
                results.append(out)
            for target, v in ctx.sent:  # the bus delivers an instance's outputs when it ends
                if target == END:
                    assert not (isinstance(v, dict) and MARK in v), "the workflow's output is never wrapped"
                    results.append(v)
                else:
                    deliver(target, v, grain)

        sched.spawn(handle)

    deliver(wf.entry, value, "")
    sched.run()
    return results, raised, data


def double(x: Any) -> Any:
    return x * 2


def odd_fails(x: Any) -> Any:
    if x % 2:
        raise ValueError("odd item")  # the same error for every item: any failing item's is the Map's
    return x


TASKS: dict[str, Callable[[Any], Any]] = {
    "double": double,
    "odd_fails": odd_fails,
    "echo": lambda e: e,
    "fail": lambda e: (_ for _ in ()).throw(ValueError("odd item")),
}


def task(resource: str, name: str = "T") -> dict[str, Any]:
    """A machine of one Task (state names are unique in a whole machine: name it)."""
    return {"StartAt": name, "States": {name: {"Type": "Task", "Resource": resource, "End": True}}}


def map_state(iterator: dict[str, Any], limit: int | None, **more: Any) -> dict[str, Any]:
    st: dict[str, Any] = {"Type": "Map", "ItemsPath": "$.xs", "Iterator": iterator, **more}
    if limit is not None:
        st["MaxConcurrency"] = limit
    return st


def machine_map(iterator: dict[str, Any], limit: int | None, **more: Any) -> dict[str, Any]:
    return {"StartAt": "M", "States": {"M": map_state(iterator, limit, End=True, **more)}}


CATCH = [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.err", "Next": "Caught"}]
CAUGHT = {"Type": "Pass", "End": True}


def machine_map_caught(iterator: dict[str, Any], limit: int | None, retry: bool = False) -> dict[str, Any]:
    more: dict[str, Any] = {"Catch": CATCH, "Next": "Caught"}
    if retry:
        more["Retry"] = [{"ErrorEquals": ["ValueError"], "IntervalSeconds": 1, "MaxAttempts": 2}]
    return {"StartAt": "M", "States": {"M": map_state(iterator, limit, **more), "Caught": CAUGHT}}


def machine_parallel(branches: list[dict[str, Any]], catch: bool) -> dict[str, Any]:
    st: dict[str, Any] = {"Type": "Parallel", "Branches": branches}
    states: dict[str, Any] = {"P": st}
    if catch:
        st |= {"Catch": CATCH, "Next": "Caught"}
        states["Caught"] = CAUGHT
    else:
        st["End"] = True
    return {"StartAt": "P", "States": states}


def inner_map(name: str, resource: str, limit: int) -> dict[str, Any]:
    """A branch that is a Map of ``resource`` over ``$.xs``."""
    return {"StartAt": name, "States": {name: map_state(task(resource, name + "T"), limit, End=True)}}


SELF_CATCHING = {
    "StartAt": "T",
    "States": {
        "T": {
            "Type": "Task",
            "Resource": "odd_fails",
            "Next": "Ok",
            "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Ok"}],
        },
        "Ok": {"Type": "Pass", "End": True},
    },
}
LIMITS = [None, 0, 1, 2, 3, 4, 5, 6, 8]
SIX = {"xs": [1, 2, 3, 4, 5, 6]}

CASES: list[tuple[str, dict[str, Any], Any]] = [
    *[(f"map of 6, MaxConcurrency {m}", machine_map(task("double"), m), SIX) for m in LIMITS],
    *[
        (f"map of 6 with failing items, uncaught, MaxConcurrency {m}", machine_map(task("odd_fails"), m), SIX)
        for m in LIMITS
    ],
    *[
        (f"map of 6 with failing items, caught, MaxConcurrency {m}", machine_map_caught(task("odd_fails"), m), SIX)
        for m in LIMITS
    ],
    *[
        (
            f"map of 6, every item fails, retried then caught, MaxConcurrency {m}",
            machine_map_caught(task("fail"), m, retry=True),
            SIX,
        )
        for m in (0, 1, 2, 4)
    ],
    *[
        (f"map of 6, items catch their own errors, MaxConcurrency {m}", machine_map(SELF_CATCHING, m), SIX)
        for m in (0, 2, 4)
    ],
    ("map of 1, MaxConcurrency 4", machine_map(task("double"), 4), {"xs": [7]}),
    ("empty map, MaxConcurrency 4", machine_map(task("double"), 4), {"xs": []}),
    ("parallel of 3", machine_parallel([task("double", "A"), task("echo", "B"), task("double", "C")], False), 5),
    (
        "parallel of 3, one branch fails, uncaught",
        machine_parallel([task("double", "A"), task("fail", "B"), task("echo", "C")], False),
        5,
    ),
    (
        "parallel of 3, two branches fail, caught",
        machine_parallel([task("fail", "A"), task("echo", "B"), task("fail", "C")], True),
        {"v": 5},
    ),
    (
        "maps in a parallel",
        machine_parallel(
            [inner_map("A", "double", 2), inner_map("B", "odd_fails", 1), inner_map("C", "echo", 0)], True
        ),
        SIX,
    ),
    ("parallels in a map", machine_map(machine_parallel([task("double", "A"), task("echo", "B")], False), 3), SIX),
    (
        "failing parallels in a map, caught",
        machine_map_caught(machine_parallel([task("echo", "A"), task("odd_fails", "B")], False), 2),
        SIX,
    ),
]

SEEDS = 60  # executions per case, each a different interleaving


@pytest.mark.parametrize(("name", "machine", "value"), CASES, ids=[c[0] for c in CASES])
def test_joins_give_one_right_answer_in_every_interleaving(
    name: str, machine: dict[str, Any], value: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("grainworker.aslrun.time.sleep", lambda s: None)
    want = reference(machine, value, TASKS)
    bad: list[str] = []
    for seed in range(SEEDS):
        results, raised, data = run_interleaved(machine, value, TASKS, seed)
        if raised:
            bad.append(f"seed {seed}: a handler raised {raised[0]!r}")
        elif len(results) != 1:
            bad.append(f"seed {seed}: {len(results)} results: {results}")
        elif isinstance(want, dict) and set(want) == {"error"}:
            got = results[0]
            if (got.get("error", {}).get("type"), got.get("error", {}).get("message")) != (
                want["error"]["type"],
                want["error"]["message"],
            ):
                bad.append(f"seed {seed}: {got} instead of {want}")
        elif results[0] != want:
            bad.append(f"seed {seed}: {results[0]} instead of {want}")
        if data.maps or data.counters:
            bad.append(f"seed {seed}: the joins left {data.maps} {data.counters}")
    assert not bad, f"{len(bad)} of {SEEDS} executions went wrong, e.g. " + "; ".join(bad[:3])


# ---- the same through the emulator: grain workers in processes of their own, instances forked per event, the
# emulator's data layer over Thrift; tasks sleep at random so that branches finish in every order.

WORK = '''import time


def handle(event, context):
    """One item or branch: sleeps as told, fails when told, else doubles its value."""
    time.sleep(event["sleep_ms"] / 1000)
    if event["fail"]:
        raise ValueError("item failed")
    return event["v"] * 2
'''

CATCH_ALL = [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.err", "Next": "Caught"}]
STRESS_MACHINE: dict[str, Any] = {
    "name": "aslrace",
    "StartAt": "Route",
    "States": {
        "Route": {
            "Type": "Choice",
            "Default": "Each",
            "Choices": [{"Variable": "$.kind", "StringEquals": "parallel", "Next": "Branches"}],
        },
        "Each": {
            "Type": "Map",
            "ItemsPath": "$.items",
            "MaxConcurrencyPath": "$.limit",
            "ResultPath": "$.out",
            "Iterator": {"StartAt": "Work", "States": {"Work": {"Type": "Task", "Resource": "work", "End": True}}},
            "Catch": CATCH_ALL,
            "Next": "Done",
        },
        "Branches": {
            "Type": "Parallel",
            "ResultPath": "$.out",
            "Catch": CATCH_ALL,
            "Next": "Done",
            "Branches": [
                {
                    "StartAt": f"B{i}",
                    "States": {
                        f"B{i}": {"Type": "Task", "Resource": "work", "InputPath": f"$.items[{i}]", "End": True}
                    },
                }
                for i in range(3)
            ],
        },
        "Done": {"Type": "Pass", "End": True},
        "Caught": {"Type": "Pass", "End": True},
    },
}


def write_stress_app(folder: Any) -> None:
    """The stress test's application (STRESS_MACHINE and its one task) into ``folder`` (a pathlib.Path)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "workflow.json").write_text(json.dumps(STRESS_MACHINE, indent=1))
    (folder / "work.py").write_text(WORK)


def stress_inputs(n: int, seed: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``n`` requests to STRESS_MACHINE and what each must answer: Maps of 1 to 8 items under every MaxConcurrency
    (0 = no limit) and Parallels of 3 branches, random sleeps (none, up to 3 ms or up to 30 ms), about one in five
    with failing items."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        kind = "parallel" if i % 4 == 3 else "map"
        size = 3 if kind == "parallel" else rng.choice([1, 2, 4, 6, 6, 6, 8])
        fails = rng.random() < 0.2
        spread = rng.choice([0, 0, 3, 30])  # items finishing together race hardest; apart, in every order
        items = [
            {"v": j, "sleep_ms": rng.randrange(0, spread + 1), "fail": fails and rng.random() < 0.5}
            for j in range(size)
        ]
        if fails and not any(it["fail"] for it in items):
            items[rng.randrange(size)]["fail"] = True
        request = {"kind": kind, "limit": rng.choice([0, 1, 2, 3, 4, 6, 8]), "items": items}
        if fails:
            want = request | {"err": {"Error": "ValueError", "Cause": "item failed"}}
        else:
            want = request | {"out": [it["v"] * 2 for it in items]}
        out.append((request, want))
    return out


def test_maps_and_parallels_in_the_emulator_give_one_right_answer(tmp_path: Any) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from sandemu import Emulator

    write_stress_app(tmp_path / "app")
    runs = stress_inputs(160, seed=26)
    # one data layer call in ten stalls 30 ms: an instance stops between its join's calls, as on a busy host
    with Emulator(tmp_path / "app", echo=lambda line: None, timeout_s=30, data_jitter_s=0.03) as emu:
        with ThreadPoolExecutor(6) as pool:  # executions side by side, as requests come
            answers = list(pool.map(lambda run: emu.invoke(run[0]), runs))
        time.sleep(1)  # late instances of an execution report after its answer
        reports = list(emu.reports)
    ends: dict[str, int] = {}
    for rep in reports:
        for out in rep.get("outputs", []):
            if out["grain"] == END:
                ends[out["execution_id"]] = ends.get(out["execution_id"], 0) + 1
    wrong = [(run[0], got) for run, (got, _) in zip(runs, answers, strict=True) if got != run[1]]
    twice = [(eid, n) for eid, n in ends.items() if n != 1]
    assert not wrong and not twice, (
        f"{len(wrong)} wrong answers of {len(runs)}, e.g. {wrong[:2]}; "
        f"{len(twice)} executions with more than one end: {twice[:3]}"
    )
