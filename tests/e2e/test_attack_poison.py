"""Issue 26, finding 1 (second half): a poison event no longer crash-loops a host, and the platform's processes are
supervised. On the real system (make up): the host agent and the frontends run under deploy/supervise.sh.

- an event whose processing takes the host agent down (here: the test kills the agent with SIGKILL whenever the
  event is in flight, as an out-of-memory exit would) is replayed by each new start of the agent; the third start
  that finds it in flight puts it in the dead letters instead, its caller gets a "poison event" error, and another
  tenant's application answers;
- a killed frontend or host agent is started again by its supervisor, and `make status` shows the restart.

These tests kill platform processes on purpose: other tests running at the same time may see a restart.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import requests

from tests.conftest import ROOT, SAND_HOME
from tests.e2e.api import Http, put_app, raw_remove, sign_up

T = TypeVar("T")
RUN = uuid.uuid4().hex[:8]
BIND = os.environ.get("SAND_BIND", "127.0.0.1")
METRICS = f"http://{BIND}:{os.environ.get('SAND_HOSTAGENT_METRICS_PORT', '9100')}/metrics"
RUN_DIR = SAND_HOME / "run"
STATE_DIR = Path(os.environ.get("SAND_HOSTAGENT_SANDBOX_STATE_DIR", SAND_HOME / "data" / "hostagent"))
DEATHS = int(os.environ.get("SAND_HOSTAGENT_POISON_DEATHS", "3"))
ECHO = "def handle(event, context):\n    return event\n"
# Runs long enough for the test to see it in flight and kill the agent under it.
POISON = "import time\n\ndef handle(event, context):\n    time.sleep(250)\n    return 'survived'\n"
RESTART_S = 180  # a host agent's start: its JVM, its sandboxes again, Kafka's rebalance (session timeout 6 s)


def supervisor(comp: str) -> dict[str, str]:
    """The supervisor's state of a component (deploy/supervise.sh): restarts, last_exit, last_exit_at, child."""
    f = RUN_DIR / f"{comp}.supervisor"
    assert f.exists(), f"{comp} is not supervised ({f} missing): nothing would start it again after it exits"
    return dict(line.split("=", 1) for line in f.read_text().splitlines() if "=" in line)


def restarts(comp: str) -> int:
    return int(supervisor(comp).get("restarts") or 0)


def kill_child(comp: str) -> int:
    """SIGKILL the supervised process itself (not its supervisor), as the kernel's OOM killer or a crash would."""
    pid = int(supervisor(comp)["child"])
    os.kill(pid, signal.SIGKILL)
    return pid


def wait_restarted(comp: str, killed: int, ready_url: str) -> None:
    """Until a new process of the component answers (by pid: another test may restart it with its script too)."""
    deadline = time.monotonic() + RESTART_S
    while time.monotonic() < deadline:
        if supervisor(comp).get("child") not in ("", str(killed)):
            try:
                if requests.get(ready_url, timeout=3).status_code == 200:
                    return
            except requests.RequestException:
                pass
        time.sleep(0.5)
    raise AssertionError(f"{comp} was not restarted and ready within {RESTART_S} s: {supervisor(comp)}")


def ledger_count(topic_prefix: str) -> int:
    """The highest count in the host agent's poison ledger among events of topics starting with the prefix."""
    f = STATE_DIR / "poison-ledger"
    counts = (
        [
            int(n)
            for n, _, key in (line.partition(" ") for line in f.read_text().splitlines())
            if key.startswith(topic_prefix)
        ]
        if f.exists()
        else []
    )
    return max(counts, default=0)


def wait_until(what: str, timeout: float, check: Any) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value is not None and value is not False:  # not `if value`: a requests.Response of a 500 is falsy
            return value
        time.sleep(0.5)
    raise AssertionError(f"{what}: not within {timeout} s")


def answers(http: Http, app: str, value: Any, timeout: float = RESTART_S) -> None:
    """The application answers a request with its echo (retried while a restarted agent brings sandboxes back)."""

    def ok() -> bool:
        try:
            r = http("POST", f"/app/{app}", json_body=value, timeout=30)
        except requests.RequestException:
            return False
        return r.status_code == 200 and r.json() == value

    wait_until(f"{app} answers", timeout, ok)


def retried(call: Callable[[], T]) -> T:
    """A set-up call through the API (sign-up, upload, deploy), tried again while nginx, a frontend or the cluster
    state (a loaded Cassandra) cannot answer (502, 503): the set-up is not what these tests are about."""
    for _ in range(40):
        try:
            return call()
        except requests.RequestException:  # nginx or the frontends being restarted (other tests do)
            pass
        except AssertionError as e:
            if not any(s in str(e) for s in ('"unavailable"', "502 Bad Gateway", "503 Service", '"busy"')):
                raise
        time.sleep(3)
    return call()


@pytest.fixture(scope="module")
def tenants(http: Http) -> dict[str, str]:
    # A fresh name per try: a sign-up that timed out in Cassandra may still have been written.
    return {
        who: retried(lambda w=who: sign_up(http, f"poison-{w}-{uuid.uuid4().hex[:8]}")) for who in ("mallory", "alice")
    }


@pytest.fixture(scope="module")
def alice_app(http: Http, tenants: dict[str, str]) -> Iterator[str]:
    name = f"echo-{RUN}"
    app = retried(lambda: put_app(http, tenants["alice"], name, [{"name": "echo", "next": ["end"]}], {"echo": ECHO}))
    assert app["status"] == "deployed", app
    yield name
    raw_remove(http, tenants["alice"], name)


def test_a_poison_event_goes_to_the_dead_letters_after_three_deaths_and_the_host_stops_crash_looping(
    http: Http, tenants: dict[str, str], alice_app: str
) -> None:
    key = tenants["mallory"]
    name = f"poison-{RUN}"
    app = retried(
        lambda: put_app(
            http,
            key,
            name,
            [{"name": "slow", "next": ["end"]}],
            {"slow": POISON},
            settings={"concurrency": 1, "timeout_s": 290},
        )
    )
    assert app["status"] == "deployed", app
    try:
        r = http("POST", f"/app/{name}?async=1", json_body={"boom": True})
        assert r.status_code == 202, r.text
        execution = r.json()["execution_id"]
        topics = f"sand.{app['id']}."
        for death in range(1, DEATHS + 1):
            # In flight: the first run took the event at once; a replay counts it in the ledger first.
            if death > 1:
                counted = death - 1
                wait_until(
                    f"the replay after death {counted} is counted",
                    RESTART_S,
                    lambda n=counted: ledger_count(topics) >= n,
                )
            time.sleep(4)  # the instance is running the event
            wait_restarted("hostagent", kill_child("hostagent"), METRICS)
        wait_until("the third start counts the event", RESTART_S, lambda: ledger_count(topics) >= DEATHS)

        def answered() -> requests.Response | None:
            try:
                r = http("GET", f"/app/{name}/executions/{execution}", timeout=30)
            except requests.RequestException:  # nginx or a frontend being restarted by another test
                return None
            return r if r.status_code not in (202, 502, 503) else None

        # The result is in the frontend's response topic with the finished flag; the frontend records it in Cassandra
        # (a loaded machine, a frontend restarted meanwhile: minutes).
        result = wait_until("the caller's answer", 600, answered)
        assert "poison event" in result.text and "not run again" in result.text, (result.status_code, result.text)
        letters = [json.loads(line) for line in (STATE_DIR / "dead-letters.jsonl").read_text().splitlines()]
        (letter,) = [x for x in letters if x["execution_id"] == execution]
        assert letter["app"] == app["id"] and letter["grain"] == "slow" and letter["reason"].startswith("poison event")

        # The host is not crash-looping: the agent stays up (no restart of its own), and another tenant's app answers.
        settled = supervisor("hostagent")["child"]
        answers(http, alice_app, {"after": "poison"})
        assert supervisor("hostagent")["child"] == settled, "the agent was not restarted meanwhile"
        assert requests.get(METRICS, timeout=10).status_code == 200
    finally:
        raw_remove(http, key, name)


def test_a_killed_frontend_is_restarted_and_make_status_shows_it(http: Http, alice_app: str) -> None:
    port = os.environ.get("SAND_FRONTEND_PORTS", "8081 8082").split()[-1]
    comp = f"frontend-{port}"
    before = restarts(comp)
    wait_restarted(comp, kill_child(comp), f"http://{BIND}:{port}/healthz")
    assert supervisor(comp)["last_exit"] == "137", "SIGKILL"
    status = subprocess.run(
        ["bash", str(ROOT / "deploy" / "status.sh")],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ | {"SAND_HOME": str(SAND_HOME)},
    )
    (line,) = [x for x in status.stdout.splitlines() if x.startswith(f"fe-{port} ")]
    assert " running " in line and f"restarts {before + 1} (last exit 137 at " in line, status.stdout
    answers(http, alice_app, {"after": "frontend restart"}, timeout=60)


def test_a_killed_host_agent_is_restarted_and_make_status_shows_it(http: Http, alice_app: str) -> None:
    before = restarts("hostagent")
    wait_restarted("hostagent", kill_child("hostagent"), METRICS)
    status = subprocess.run(
        ["bash", str(ROOT / "deploy" / "status.sh")],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ | {"SAND_HOME": str(SAND_HOME)},
    )
    (line,) = [x for x in status.stdout.splitlines() if x.startswith("hostagent ")]
    assert " running " in line and f"restarts {before + 1} (last exit 137 at " in line, status.stdout
    out = SAND_HOME / "logs" / "hostagent.out"  # the supervisor's lines; the agent's own log goes on in hostagent.log
    assert "supervisor: hostagent exited with status 137 (signal 9)" in out.read_text(), "the restart is logged"
    assert (SAND_HOME / "logs" / "hostagent.out.1").exists(), "the console output of the run that died is kept"
    answers(http, alice_app, {"after": "agent restart"})
