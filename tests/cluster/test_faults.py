"""Fault tests of a 3-host SAND cluster on this machine (deploy/cluster.sh: hosts in network namespaces, 3 Kafka
brokers, 3 Cassandra nodes at replication factor 3, a host agent per host, 2 frontends, nginx): real processes
killed with kill -9, a link cut.
Each test ends with the cluster whole again, so they run in order on one cluster (~10 min in all)."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Self

import pytest
import requests

from benchmarks._common import percentile
from sandclient.client import Client
from tests.cluster.workload import (
    Cluster,
    Outcome,
    Stream,
    cassandra_keys,
    cut_off,
    deploy_ledger,
    ledger_in_cassandra,
    listening_pid,
    settle,
    signup,
    wipe_keyspace,
    wrong_results,
)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    c = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        c.run("up", "3", timeout=900)
        yield c
    finally:
        c.run("down", check=False, timeout=300)


@pytest.fixture(scope="module")
def client(cluster: Cluster) -> Client:
    return signup(cluster.url)


@pytest.fixture(scope="module")
def ledger(client: Client, tmp_path_factory: pytest.TempPathFactory) -> str:
    deploy_ledger(client, "ledger", tmp_path_factory.mktemp("apps"))
    return "ledger"


def killing(cluster: Cluster, at: int, *args: str, when: dict[str, float]):  # noqa: ANN201 - a Stream callback
    """A Stream callback that runs `cluster.sh kill ARGS` once `at` requests have been answered."""

    def on_progress(done: int) -> None:
        if done == at and "t" not in when:
            when["t"] = time.monotonic()
            cluster.run("kill", *args)

    return on_progress


def check_stream(client: Client, app: str, outcomes: list, deadline_s: float = 180) -> dict[int, object]:
    results = settle(client, outcomes, deadline_s)
    bad = wrong_results(outcomes, results)
    assert not bad, f"{len(bad)} of {len(outcomes)} requests did not end with exactly their result:\n" + "\n".join(
        bad[:20]
    )
    return results


def wait_alive(client: Client, app: str, host: str, timeout_s: float = 120) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        hosts = {h["host"]: h for h in client.status(app)["hosts"]}
        if hosts.get(host, {}).get("alive") and hosts[host]["status"] == "deployed":
            return
        time.sleep(1)
    raise AssertionError(f"{host} not back for {app}: {client.status(app)['hosts']}")


class Poller:
    """Calls `look()` every `every_s` seconds on a thread of its own while its `with` block lasts."""

    every_s = 0.5

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            self.look()

    def look(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)


class ApiProbe(Poller):
    """The developer API asked every 0.3 s while a fault lasts (an application's status and the list of
    applications): the answers' statuses, an error's text kept. With Cassandra at replication factor 3 the API must
    keep answering while one node is lost."""

    every_s = 0.3

    def __init__(self, client: Client, app: str) -> None:
        super().__init__()
        self.client, self.app = client, app
        self.statuses: list[int] = []
        self.errors: list[str] = []

    def look(self) -> None:
        for path in (f"/api/v1/apps/{self.app}", "/api/v1/apps"):
            try:
                self.statuses.append(self.client.call("GET", path).status)
            except Exception as e:  # noqa: BLE001 - an API refusal or a dropped connection, both count
                self.statuses.append(getattr(e, "status", 0) or 0)
                self.errors.append(f"{path}: {e}"[:300])

    def failed(self) -> list[str]:
        return self.errors


def served_by(client: Client, execution_id: str) -> set[str]:
    hops = client.execution(execution_id)["timings"]["hops"]
    return {h["where"] for h in hops if h["step"].startswith("host agent:")}


def test_a_host_crash_during_1000_requests_loses_nothing_and_answers_each_once(
    cluster: Cluster, client: Client, ledger: str
) -> None:
    when: dict[str, float] = {}
    with ApiProbe(client, ledger) as api:  # h3 runs a Cassandra node too: the developer API must not notice
        outcomes = Stream(client, ledger, 1000, threads=8, on_progress=killing(cluster, 300, "h3", when=when)).run()
    assert "t" in when
    assert cluster.status()["h3"][2] == "cut"
    assert len(api.statuses) >= 4 and not api.failed(), api.failed()[:5]
    check_stream(client, ledger, outcomes)
    # Data written by every completed execution reaches Cassandra, not only a local data layer (behind the answers:
    # the local data layers write to Cassandra asynchronously).
    app_id = client.status(ledger)["id"]
    orders, audits, waited = ledger_in_cassandra(cluster.addr("h1"), app_id, 1000)
    assert orders == set(range(1000)), f"{1000 - len(orders)} orders missing from Cassandra after {waited:.0f} s"
    assert set(audits) == set(range(1000))
    after = [o for o in outcomes if o.answered > when["t"]]
    takeover = max(o.answered for o in outcomes) - when["t"]
    print(
        f"\nhost crash: 1000 requests, {len(after)} answered after the kill, last {takeover:.1f}s after it; "
        f"latency p50 {percentile([o.answered - o.sent for o in outcomes], 50) * 1000:.0f} ms, p99 "
        f"{percentile([o.answered - o.sent for o in outcomes], 99) * 1000:.0f} ms; audit re-runs "
        f"{sum(1 for v in audits.values() if v > 1)}; HTTP {sorted({o.status for o in outcomes})}; all orders in "
        f"Cassandra {waited:.0f} s after the last answer was read back"
    )
    hosts = {h["host"]: h for h in client.status(ledger)["hosts"]}
    assert hosts["h3"]["alive"] is False and hosts["h1"]["alive"] and hosts["h2"]["alive"], hosts


def test_a_lost_host_that_comes_back_rejoins_and_gets_work_again(cluster: Cluster, client: Client, ledger: str) -> None:
    cluster.run("start", "h3")
    assert cluster.status()["h3"][2] == "up"
    works_again(client, ledger, "h3")


def works_again(client: Client, ledger: str, host: str) -> None:
    """`host`, started again, runs the ledger and gets work. Alive and deployed first; its share of the entry grain's
    partitions comes with the group's next rebalance (the gate takes a request only on a host that owns one): it gets
    work within a minute."""
    wait_alive(client, ledger, host, timeout_s=180)
    served: set[str] = set()
    end = time.monotonic() + 60
    while host not in served and time.monotonic() < end:
        outcomes = Stream(client, ledger, 50, threads=6).run()
        check_stream(client, ledger, outcomes)
        served |= set().union(*(served_by(client, o.execution_id) for o in outcomes))
    assert host in served, f"no request reached {host} within 60 s after it rejoined (served by {served})"


def settled(client: Client, ledger: str, host: str) -> None:
    """The next tests start from a settled cluster: `host`, started again, runs the ledger, and requests are answered.
    Not `works_again`: a host that rejoined while other applications came and went may own none of the ledger's
    partitions until the group's next rebalance (docs/operations.md "Elastic placement", found, not mended)."""
    wait_alive(client, ledger, host, timeout_s=180)
    check_stream(client, ledger, Stream(client, ledger, 50, threads=6).run())


def test_a_host_agent_killed_and_restarted_loses_nothing(cluster: Cluster, client: Client, ledger: str) -> None:
    when: dict[str, float] = {}
    outcomes = Stream(
        client, ledger, 300, threads=8, on_progress=killing(cluster, 80, "h2", "hostagent", when=when)
    ).run()
    check_stream(client, ledger, outcomes)
    cluster.run("start", "h2")
    wait_alive(client, ledger, "h2")
    check_stream(client, ledger, Stream(client, ledger, 60, threads=6).run())


def test_a_kafka_broker_killed_loses_nothing(cluster: Cluster, client: Client, ledger: str) -> None:
    when: dict[str, float] = {}
    outcomes = Stream(client, ledger, 300, threads=8, on_progress=killing(cluster, 80, "h2", "kafka", when=when)).run()
    assert "kafka:stopped" in cluster.status()["h2"]
    check_stream(client, ledger, outcomes)
    cluster.run("start", "h2")
    assert "kafka:stopped" not in cluster.status()["h2"]


def test_results_of_a_killed_frontend_are_stored_and_fetchable(cluster: Cluster, client: Client, ledger: str) -> None:
    # Requests that take 4 s are waiting on both frontends (nginx alternates) when fe-h1 dies.
    slow = [client.invoke(ledger, {"n": n, "sleep_s": 4}, async_=True) for n in range(20)]
    cluster.run("kill", "h1", "frontend-8081")
    # nginx routes around the dead frontend: new requests are answered.
    check_stream(client, ledger, Stream(client, ledger, 40, threads=4).run())
    results = settle(client, [_outcome(n, inv.execution_id) for n, inv in enumerate(slow)], 120)
    wrong = {n: r for n, r in results.items() if not (isinstance(r, dict) and r.get("receipt") == 2 * n)}
    assert not wrong, f"results of executions waiting on the killed frontend: {json.dumps(wrong)[:2000]}"
    cluster.run("start", "h1")
    assert "frontend-8081:stopped" not in cluster.status()["h1"]


def test_a_partitioned_host_is_taken_over_and_delivers_no_stale_result_when_it_returns(
    cluster: Cluster, client: Client, ledger: str
) -> None:
    when: dict[str, float] = {}
    outcomes = Stream(client, ledger, 300, threads=8, on_progress=lambda done: _cut(cluster, done, when)).run()
    results = check_stream(client, ledger, outcomes)
    cluster.run("heal", "h3")
    wait_alive(client, ledger, "h3", 180)
    time.sleep(10)  # what h3 held when cut has had time to surface
    again = settle(client, outcomes, 60)
    changed = [n for n in results if again[n] != results[n]]
    assert not changed, f"results changed after the partition healed: {changed[:10]}"
    check_stream(client, ledger, Stream(client, ledger, 60, threads=6).run())


def sandbox_of(app_id: str, host: str) -> str:
    """The id of the running sandbox of `app_id` on `host` ('' if none): containers carry both as labels."""
    return subprocess.run(
        ["docker", "ps", "-q", "--filter", f"label=sand.host={host}", "--filter", f"label=sand.app={app_id}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def started_at(container: str) -> str:
    """When a running container was last started ('' if none)."""
    if not container:
        return ""
    return subprocess.run(
        ["docker", "inspect", "-f", "{{.State.StartedAt}}", container], capture_output=True, text=True
    ).stdout.strip()


def test_a_killed_sandbox_is_recreated_and_its_events_are_run_again(
    cluster: Cluster, client: Client, ledger: str
) -> None:
    # docs/host-agent.md "Lost instances": the events a dead sandbox held are delivered again on its host (up to
    # bridge.lost.retries times, then answered with an error); one kill costs a re-run, never a result.
    app_id = client.status(ledger)["id"]
    before = sandbox_of(app_id, "h2")
    assert before, "h2 runs no sandbox of the ledger"
    first_start = started_at(before)
    log = cluster.home / "cluster" / "h2" / "logs" / "hostagent.log"
    killed: dict[str, float] = {}

    def kill_sandbox(done: int) -> None:
        if done == 60 and "t" not in killed:
            killed["t"], killed["log_at"] = time.monotonic(), log.stat().st_size
            subprocess.run(["docker", "kill", before], capture_output=True, check=True)

    outcomes = Stream(client, ledger, 300, threads=8, sleep_s=0.2, on_progress=kill_sandbox).run()
    assert "t" in killed
    check_stream(client, ledger, outcomes)
    # Started again (the same container when it is still there, a new one when it was removed).
    end = time.monotonic() + 60
    while time.monotonic() < end and started_at(sandbox_of(app_id, "h2")) in ("", first_start):
        time.sleep(1)
    assert started_at(sandbox_of(app_id, "h2")) not in ("", first_start), "h2's sandbox was not started again in 60 s"
    wait_alive(client, ledger, "h2")
    with log.open("rb") as f:
        f.seek(int(killed["log_at"]))
        redelivered = f.read().decode(errors="replace").count("): delivered again, run")
    print(
        f"\nsandbox killed: 300 of 300 requests ended with exactly their result; h2 delivered {redelivered} lost "
        f"events again"
    )


def _cut(cluster: Cluster, done: int, when: dict[str, float]) -> None:
    if done == 80 and "t" not in when:
        when["t"] = time.monotonic()
        cluster.run("cut", "h3")


def _outcome(n: int, execution_id: str) -> Outcome:
    return Outcome(n, 202, execution_id)


def test_one_cassandra_node_of_three_stopped_for_30s_loses_nothing_and_the_api_answers(
    cluster: Cluster, client: Client, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # An application of its own: its keys in Cassandra are this test's only.
    deploy_ledger(client, "ledger-c", tmp_path_factory.mktemp("apps-c"))
    check_stream(client, "ledger-c", Stream(client, "ledger-c", 20, threads=4).run())  # API keys and apps cached
    cluster.run("kill", "h1", "cassandra")
    down = time.monotonic()
    with ApiProbe(client, "ledger-c") as api:
        outcomes = Stream(client, "ledger-c", 150, threads=4).run()
        served = sum(1 for o in outcomes if o.status == 200)
        time.sleep(max(0.0, 30 - (time.monotonic() - down)))
    # One node of three lost: every request and every developer API call still answered (quorum 2 of 3).
    assert served == 150, f"only {served} of 150 requests answered 200 with one Cassandra node of three down"
    assert len(api.statuses) >= 20 and not api.failed(), api.failed()[:5]
    cluster.run("start", "h1")
    back = time.monotonic() - down
    check_stream(client, "ledger-c", outcomes)
    orders, _, waited = ledger_in_cassandra(cluster.addr("h1"), client.status("ledger-c")["id"], 150)
    assert orders == set(range(150)), f"{150 - len(orders)} orders missing from Cassandra after {waited:.0f} s"
    print(
        f"\nCassandra stopped: {served} of 150 requests answered 200 while it was down; back after {back:.0f} s; "
        f"every order in Cassandra {waited:.0f} s later"
    )


TICKER = "def handle(event, context):\n    return {'got': event}\n"
SLOW_ORDERS = (
    "import time\n"
    "def handle(event, context):\n"
    "    time.sleep(0.3)\n"
    "    return {'order': event['value']['order'], 'key': event['idempotency_key'],\n"
    "            'execution_id': context.get_execution_id()}\n"
)
FAILING = "def handle(event, context):\n    raise RuntimeError('always')\n"


def deploy_one(client: Client, name: str, code: str, tmp: Path, settings: dict | None = None) -> None:
    folder = tmp / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "only.py").write_text(code)
    wf = {"name": name, "entry": "only", "functions": [{"name": "only", "next": ["end"]}]}
    if settings:
        wf["settings"] = settings
    (folder / "workflow.json").write_text(json.dumps(wf))
    client.deploy(folder, name=name, timeout_s=240)


def executions(client: Client, app: str) -> list[dict]:
    """The app's executions, each with its result (GET /api/v1/executions/{id}), newest first."""
    rows: list[dict] = []
    query = {"limit": "100"}
    while True:
        page = client.call("GET", f"/api/v1/apps/{app}/executions", query=query).body
        rows += page["executions"]
        if not page.get("next") or len(rows) >= 1000:
            break
        query = {"limit": "100", "cursor": page["next"]}
    return [client.execution(r["execution_id"]) for r in rows]


def fired_by(execution: dict) -> str:
    """The frontend that fired a triggered execution (its timeline's first hop: timer:<name>@<frontend id>)."""
    return execution["timings"]["hops"][0]["where"].split("@", 1)[1]


def test_a_timer_tick_fires_once_while_the_host_firing_it_dies(
    cluster: Cluster, client: Client, tmp_path_factory: pytest.TempPathFactory
) -> None:
    deploy_one(client, "ticker", TICKER, tmp_path_factory.mktemp("ticker"))
    # Only h2's frontend runs while the timer starts, so the host firing it is known: h2.
    cluster.run("kill", "h1", "frontend-8081")
    client.call("PUT", "/api/v1/apps/ticker/triggers/tick", {"every": "2s"})
    time.sleep(9)
    before = [e for e in executions(client, "ticker") if e["status"] == "succeeded"]
    h2 = {fired_by(e) for e in before}
    assert len(before) >= 3 and len(h2) == 1, [fired_by(e) for e in before]
    cluster.run("start", "h1")
    time.sleep(4)
    cluster.run("kill", "h2")  # the frontend that fired the ticks, its host agent and its broker
    killed = time.time()
    time.sleep(16)
    client.call("DELETE", "/api/v1/apps/ticker/triggers/tick")
    end = time.monotonic() + 120
    while True:  # executions whose events were on h2 are run again by the hosts left: wait for them
        runs = executions(client, "ticker")
        if all(e["status"] != "running" for e in runs) or time.monotonic() > end:
            break
        time.sleep(2)
    ticks = sorted(e["result"]["got"]["time"] for e in runs if e["status"] == "succeeded")
    assert len(ticks) == len(set(ticks)), f"a tick fired twice: {ticks}"
    after = [e for e in runs if e["status"] == "succeeded" and e["result"]["got"]["time"] > _iso(killed + 2)]
    assert len(after) >= 4 and all(fired_by(e) not in h2 for e in after), [fired_by(e) for e in after]
    # every 2 s from the first tick to the last, at most the one tick claimed by h2 as it died missing
    first, last = _epoch(ticks[0]), _epoch(ticks[-1])
    assert (last - first) / 2 + 1 - len(ticks) <= 1, ticks
    cluster.run("start", "h2")


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def _epoch(iso: str) -> float:
    return time.mktime(time.strptime(iso, "%Y-%m-%dT%H:%M:%SZ"))


def _kafka_admin_login(cluster: Cluster) -> dict:
    password = (cluster.home / "cluster" / "secrets" / "admin.password").read_text().strip()
    return {
        "bootstrap_servers": [f"{cluster.addr(h)}:9092" for h in ("h1", "h3")],
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "admin",
        "sasl_plain_password": password,
    }


def test_a_host_consuming_a_topic_killed_mid_batch_loses_no_record(
    cluster: Cluster, client: Client, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from kafka import KafkaProducer
    from kafka.admin import KafkaAdminClient, NewTopic

    deploy_one(client, "orders", SLOW_ORDERS, tmp_path_factory.mktemp("orders"))
    login = _kafka_admin_login(cluster)
    topic = "events.cluster-orders"
    KafkaAdminClient(**login).create_topics([NewTopic(topic, num_partitions=4, replication_factor=3)])
    client.call("PUT", "/api/v1/apps/orders/triggers/in", {"topic": topic, "start": "earliest", "batch_size": 5})
    time.sleep(12)  # both frontends joined the trigger's group
    producer = KafkaProducer(acks="all", **login)
    n = 80
    for i in range(n):
        producer.send(topic, json.dumps({"order": i}).encode(), key=str(i).encode())
    producer.flush()
    producer.close()
    time.sleep(4)  # batches are running on both frontends
    cluster.run("kill", "h2")
    try:
        end = time.monotonic() + 240
        done: dict[int, list[dict]] = {}
        while time.monotonic() < end:
            runs = executions(client, "orders")
            done = {}
            for e in runs:
                if e["status"] == "succeeded":
                    done.setdefault(e["result"]["order"], []).append(e["result"])
            if len(done) == n:
                break
            time.sleep(3)
        missing = sorted(set(range(n)) - set(done))
        assert not missing, f"records never run: {missing}"
        twice = {k: v for k, v in done.items() if len(v) > 1}
        assert all(len({r["key"] for r in v}) == 1 for v in twice.values()), twice
        print(f"\nqueue trigger, h2 killed mid-batch: {n} records run, {len(twice)} of them twice (same key)")
    finally:  # the cluster whole again for the tests after this one, whatever this one found
        client.call("DELETE", "/api/v1/apps/orders/triggers/in")
        cluster.run("start", "h2")


def test_an_event_that_always_fails_is_dead_lettered_after_its_attempts(
    cluster: Cluster, client: Client, tmp_path_factory: pytest.TempPathFactory
) -> None:
    deploy_one(
        client, "failing", FAILING, tmp_path_factory.mktemp("failing"), {"retry": {"attempts": 3, "backoff_s": 0.5}}
    )
    first = client.invoke("failing", {"n": 1}, async_=True).execution_id
    end = time.monotonic() + 90
    letters: list = []
    while not letters and time.monotonic() < end:
        letters = client.dead_letters("failing")["dead_letters"]
        time.sleep(1)
    assert len(letters) == 1, letters
    assert letters[0]["attempts"] == 3 and letters[0]["executions"][0] == first
    assert letters[0]["error"]["type"] == "RuntimeError" and letters[0]["event"] == {"n": 1}


def admin_of(cluster: Cluster) -> Client:
    return Client(cluster.url, (cluster.home / "admin-key").read_text().strip(), timeout_s=60)


def admin_host(admin: Client, host: str) -> dict:
    return next((h for h in admin.admin_hosts() if h["host"] == host), {})


def test_a_drained_host_hands_its_work_over_and_loses_nothing(cluster: Cluster, client: Client, ledger: str) -> None:
    admin = admin_of(cluster)
    when: dict[str, float] = {}

    def drain_at(done: int) -> None:
        if done == 100 and "t" not in when:
            when["t"] = time.monotonic()
            admin.admin_host("h2", "drain", "cluster test")

    outcomes = Stream(client, ledger, 400, threads=4, on_progress=drain_at).run()
    check_stream(client, ledger, outcomes)
    end = time.monotonic() + 120
    while not admin_host(admin, "h2").get("drained") and time.monotonic() < end:
        time.sleep(0.5)
    drained_s = time.monotonic() - when["t"]
    assert admin_host(admin, "h2").get("drained"), admin_host(admin, "h2")
    hosts = {h["host"]: h for h in client.status(ledger)["hosts"]}
    assert hosts["h2"]["status"] == "undeployed", hosts
    after = Stream(client, ledger, 40, threads=4).run()
    check_stream(client, ledger, after)
    served = set().union(*(served_by(client, o.execution_id) for o in after))
    assert "h2" not in served, f"a drained host ran requests: {served}"
    print(
        f"\ndrain under load: 400 requests, HTTP {sorted({o.status for o in outcomes})}, every one answered once "
        f"with its result; drained {drained_s:.1f} s after the call; then served by {sorted(served)}"
    )
    admin.admin_host("h2", "uncordon")
    wait_alive(client, ledger, "h2")


def test_a_dead_host_removed_is_listed_nowhere_until_it_comes_back(
    cluster: Cluster, client: Client, ledger: str
) -> None:
    admin = admin_of(cluster)
    cluster.run("kill", "h3")
    end = time.monotonic() + 60
    while admin_host(admin, "h3").get("alive") and time.monotonic() < end:
        time.sleep(0.5)
    assert admin_host(admin, "h3").get("alive") is False
    live = admin.call("DELETE", "/api/v1/admin/hosts/h1", ok=(409,))
    assert live.status == 409, live.body
    admin.admin_host("h3", "remove")
    assert admin_host(admin, "h3") == {}
    assert "h3" not in {h["host"] for h in client.status(ledger)["hosts"]}
    assert all("h3" not in {h["host"] for h in a["hosts"]} for a in admin.admin_apps())
    cluster.run("start", "h3")
    wait_alive(client, ledger, "h3")
    assert admin_host(admin, "h3").get("alive") is True


# Placed by the scheduler (docs/operations.md "Elastic placement"): one host at first, up to three while its events
# queue (2 instances of a grain at once per host, each request sleeps 0.3 s), back down 15 s after it goes idle.
ELASTIC = {"max_hosts": 3, "min_hosts": 1, "scale_in_after_s": 15, "concurrency": 2}


class PlacementWatch(Poller):
    """An application's placement (`GET /api/v1/apps/{app}`: hosts, reason, by) read every 0.5 s while a test runs;
    `on_change(hosts)` is told each new set of hosts."""

    def __init__(self, client: Client, app: str, on_change: Callable[[list[str]], None] | None = None) -> None:
        super().__init__()
        self.client, self.app, self.on_change = client, app, on_change
        self.seen: list[dict] = []

    def now(self) -> dict:
        return self.client.status(self.app).get("placement") or {}

    def look(self) -> None:
        try:
            p = self.now()
        except Exception:  # noqa: BLE001 - a frontend killed with its host: read again
            return
        if not self.seen or p.get("hosts") != self.seen[-1].get("hosts"):
            self.seen.append(p)
            if self.on_change:
                self.on_change(list(p.get("hosts") or []))

    def most_hosts(self) -> int:
        return max((len(p.get("hosts") or []) for p in self.seen), default=0)

    def until(self, what: str, ok: Callable[[dict], bool], timeout_s: float = 120) -> dict:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            try:
                p = self.now()
            except Exception:  # noqa: BLE001
                p = {}
            if ok(p):
                return p
            time.sleep(0.5)
        raise AssertionError(f"{what} not within {timeout_s:.0f} s; placements seen: {self.seen}")


def test_an_elastic_application_scales_out_under_a_burst_and_the_schedulers_host_killed_loses_nothing(
    cluster: Cluster, client: Client, ledger: str, tmp_path: Path
) -> None:
    deploy_ledger(client, "elastic", tmp_path, settings=ELASTIC)
    first = client.status("elastic")["placement"]
    assert len(first["hosts"]) == 1, first
    when: dict[str, float] = {}
    try:
        with PlacementWatch(client, "elastic") as watch:

            def kill_scheduler_once_spread(done: int) -> None:
                if "t" not in when and watch.most_hosts() >= 2:
                    when["t"], when["done"] = time.monotonic(), done
                    cluster.run("kill", "h1")  # the scheduler: the live host of the lowest id

            outcomes = Stream(
                client, "elastic", 400, threads=10, sleep_s=0.3, on_progress=kill_scheduler_once_spread
            ).run()
            spread = watch.most_hosts()
            assert "t" in when, f"never placed on 2 hosts during 400 requests: {watch.seen}"
            check_stream(client, "elastic", outcomes)
            taken = watch.until(
                "h2 taking over as the scheduler and dropping the dead h1",
                lambda p: p.get("by") == "h2" and "h1" not in (p.get("hosts") or []),
            )
            idle = watch.until(
                "a scale-in to min_hosts after 15 s idle",
                lambda p: len(p.get("hosts") or []) == 1 and "idle" in str(p.get("reason")),
                timeout_s=150,
            )
    finally:
        if "t" in when:  # the cluster whole again for the tests after this one
            cluster.run("start", "h1")
    out_s = next(p for p in watch.seen if len(p.get("hosts") or []) >= 2).get("at")
    print(
        f"\nelastic burst: 400 requests, every one answered once; placed {first['hosts']} -> up to {spread} hosts "
        f"(first scale-out at {out_s}: {watch.seen[1].get('reason') if len(watch.seen) > 1 else '?'}); h1 (the "
        f"scheduler) killed after {when['done']} answers; h2 took over: {taken.get('reason')}; then {idle['hosts']} "
        f"({idle.get('reason')})"
    )
    # h1 was killed while it ran the application and started again after it left the placement: its agent records
    # its stale "deployed" row as undeployed, else this undeploy never finishes
    client.undeploy("elastic", timeout_s=120)
    settled(client, ledger, "h1")


def test_a_host_killed_just_after_the_scheduler_chose_it_for_a_scale_out_loses_nothing(
    cluster: Cluster, client: Client, ledger: str, tmp_path: Path
) -> None:
    deploy_ledger(client, "burst", tmp_path, settings=ELASTIC)
    start = client.status("burst")["placement"]["hosts"]
    killed: dict[str, object] = {}

    def kill_the_new_host(hosts: list[str]) -> None:
        added = [h for h in hosts if h not in start]
        if added and "host" not in killed:
            killed["host"], killed["t"] = added[0], time.monotonic()
            cluster.run("kill", added[0])

    try:
        with PlacementWatch(client, "burst", on_change=kill_the_new_host) as watch:
            outcomes = Stream(client, "burst", 300, threads=10, sleep_s=0.3).run()
            assert "host" in killed, f"never scaled out during 300 requests: {watch.seen}"
            check_stream(client, "burst", outcomes)
            host = str(killed["host"])
            after = watch.until(f"the dead {host} leaving the placement", lambda p: host not in (p.get("hosts") or []))
    finally:
        if "host" in killed:  # the cluster whole again for the tests after this one
            cluster.run("start", str(killed["host"]))
    print(
        f"\nscale-out target killed: {start} + {host}, {host} killed as soon as it was chosen; 300 requests, every one "
        f"answered once; then {after.get('hosts')} ({after.get('reason')})"
    )
    client.undeploy("burst", timeout_s=120)  # the killed host's stale row too (above)
    settled(client, ledger, host)


def test_a_backup_restored_after_the_data_is_lost_brings_back_applications_accounts_and_data(
    cluster: Cluster, client: Client, ledger: str
) -> None:
    app_id = client.status(ledger)["id"]
    keys = cassandra_keys(cluster.addr("h1"), app_id)
    assert keys, "the ledger wrote data in the earlier tests"
    dest = cluster.home / "backups" / "drill"
    t0 = time.monotonic()
    cluster.run("backup", str(dest), timeout=600)
    saved_s = time.monotonic() - t0
    assert wipe_keyspace(cluster.addr("h1")) >= 30
    assert cassandra_keys(cluster.addr("h1"), app_id) == set()
    t0 = time.monotonic()
    cluster.run("restore", str(dest), timeout=600)
    restored_s = time.monotonic() - t0
    assert cassandra_keys(cluster.addr("h1"), app_id) == keys, "the application's data is back"
    assert client.status(ledger)["id"] == app_id, "the application and the account's key are back"
    for h in ("h1", "h2", "h3"):
        wait_alive(client, ledger, h, timeout_s=180)  # agents that undeployed it meanwhile deploy it again
    check_stream(client, ledger, Stream(client, ledger, 40, threads=4).run())
    print(f"\nbackup of 3 nodes {saved_s:.0f} s; wipe; restore {restored_s:.0f} s; {len(keys)} keys of the ledger back")


def test_a_rolling_upgrade_under_a_request_stream_fails_no_request(
    cluster: Cluster, client: Client, ledger: str
) -> None:
    done: dict[str, object] = {}

    def upgrade() -> None:
        t0 = time.monotonic()
        done["run"] = cluster.run("upgrade", check=False, timeout=1200)
        done["s"] = time.monotonic() - t0

    thread = threading.Thread(target=upgrade)
    thread.start()
    sent = 0
    statuses: set[int] = set()
    while thread.is_alive():
        outcomes = Stream(client, ledger, 40, threads=4).run()
        check_stream(client, ledger, outcomes)  # each one answered once, with its own result
        sent += len(outcomes)
        statuses |= {o.status for o in outcomes}
    thread.join()
    run = done["run"]
    assert isinstance(run, subprocess.CompletedProcess) and run.returncode == 0, run
    assert statuses == {200}, statuses
    print(f"\nrolling upgrade of 3 hosts under load: {done['s']:.0f} s, {sent} requests, HTTP {sorted(statuses)}")
    status = cluster.status()
    assert [status[h][2] for h in ("h1", "h2", "h3")] == ["up", "up", "up"], status


def test_the_admin_key_rotates_with_both_keys_working_during_the_switch_and_no_request_failing(
    cluster: Cluster, client: Client, ledger: str
) -> None:
    old = admin_of(cluster)
    assert old.admin_hosts(), "the admin key works before"
    statuses: set[int] = set()
    sent = 0
    for step in ("begin", "finish"):
        done: dict[str, object] = {}

        def rotate(step: str = step, done: dict[str, object] = done) -> None:
            t0 = time.monotonic()
            done["run"] = cluster.run(
                "rotate-admin-key", *(["finish"] if step == "finish" else []), check=False, timeout=900
            )
            done["s"] = time.monotonic() - t0

        thread = threading.Thread(target=rotate)
        thread.start()
        while thread.is_alive():
            outcomes = Stream(client, ledger, 20, threads=2).run()
            check_stream(client, ledger, outcomes)
            sent += len(outcomes)
            statuses |= {o.status for o in outcomes}
        thread.join()
        run = done["run"]
        assert isinstance(run, subprocess.CompletedProcess) and run.returncode == 0, run
        new = admin_of(cluster)
        assert new.api_key != old.api_key, "a new key was made"
        assert new.admin_hosts(), "the new key works"
        if step == "begin":
            assert old.admin_hosts(), "the old key still works during the switch"
        else:
            assert old.call("GET", "/api/v1/admin/hosts", ok=(401,)).status == 401, "the old key no longer works"
        print(f"\nrotate-admin-key {step}: {done['s']:.0f} s")
    assert statuses == {200}, statuses
    print(f"{sent} requests meanwhile, HTTP {sorted(statuses)}")


def readyz(url: str) -> tuple[int, dict]:
    r = requests.get(url + "/readyz", timeout=10)
    return r.status_code, r.json()


def until_readyz(url: str, status: int, timeout_s: float = 90) -> tuple[int, dict, float]:
    t0 = time.monotonic()
    got = readyz(url)
    while got[0] != status and time.monotonic() - t0 < timeout_s:
        time.sleep(0.5)
        got = readyz(url)
    return got[0], got[1], time.monotonic() - t0


def frontends_of(client: Client, outcomes: list) -> set[str]:
    hops = (client.execution(o.execution_id)["timings"]["hops"] for o in outcomes if o.execution_id)
    return {h["where"] for hs in hops for h in hs if h["step"] == "frontend: request received"}


def test_a_frontend_results_cannot_reach_is_out_of_nginx_rotation_and_back_without_a_restart(
    cluster: Cluster, client: Client, ledger: str
) -> None:
    # h2's frontend alone cut off from Kafka (9092) and from every host agent's gate (9192): it could take requests
    # but never see their results. Not ready, it declines invocations and nginx sends them to h1's.
    fe = f"http://{cluster.addr('h2')}:8081"
    status, body = readyz(fe)
    assert status == 200 and body["status"] == "ready", body
    pid, name = listening_pid(cluster, "h2", 8081), body["frontend"]
    with cut_off(cluster, "h2", pid, [9092, 9192]):
        status, body, after = until_readyz(fe, 503)
        assert status == 503, body
        checks = body["checks"]
        assert checks["response_topic_polled"] is False and checks["gates_connected"] == 0, body
        assert checks["cluster_state_answered"] is True, body  # Cassandra is not cut: only results are
        print(f"\nh2's frontend not ready {after:.1f} s after the cut")
        outcomes = Stream(client, ledger, 200, threads=6).run()
        check_stream(client, ledger, outcomes)
        assert name not in frontends_of(client, outcomes), "nginx sent no invocation to the frontend not ready"
    status, body, after = until_readyz(fe, 200)
    assert status == 200, body
    assert listening_pid(cluster, "h2", 8081) == pid, "ready again without a restart"
    print(f"ready again {after:.1f} s after the link came back")
    outcomes = Stream(client, ledger, 100, threads=4).run()
    check_stream(client, ledger, outcomes)
    assert name in frontends_of(client, outcomes), "nginx sends it invocations again"


def test_status_shows_every_host_whole_again(cluster: Cluster) -> None:
    status = cluster.status()
    assert [status[h][2] for h in ("h1", "h2", "h3")] == ["up", "up", "up"], status


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(pytest.main([str(Path(__file__)), "-s"]))
