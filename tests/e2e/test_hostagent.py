"""The host agent on the real parts (issue: host agent): an application deployed through the control
path (Cassandra rows + an event on sand.control), events through Kafka into its sandbox, results on a
frontend's response topic."""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from collections.abc import Iterator
from typing import Any

import docker
import pytest
from cassandra.cluster import Cluster
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import UnknownTopicOrPartitionError

from tests.e2e.api import execution_tag

GRAINS = {
    "first": (
        "import os\n"
        "def handle(event, context):\n"
        "    context.log('first saw ' + str(event['n']))\n"
        "    context.put('last-n', str(event['n']))\n"
        "    return {'n': event['n'], 'pid1': os.getpid(), 'ppid1': os.getppid()}\n"
    ),
    "second": (
        "import os\n"
        "def handle(event, context):\n"
        "    return dict(event, pid2=os.getpid(), ppid2=os.getppid(), stored=context.get('last-n'))\n"
    ),
}
WORKFLOW = {
    "name": "pids",
    "entry": "first",
    "functions": [{"name": "first", "next": ["second"]}, {"name": "second", "next": ["end"]}],
}


class App:
    def __init__(self, kafka: str, cassandra: tuple[str, int]) -> None:
        self.id = "e2e" + uuid.uuid4().hex[:10]
        self.frontend = "e2e-" + uuid.uuid4().hex[:8]
        self.cluster = Cluster([cassandra[0]], port=cassandra[1])
        self.db = self.cluster.connect("sand")
        self.producer = KafkaProducer(bootstrap_servers=kafka)
        self.responses = KafkaConsumer(
            bootstrap_servers=kafka, group_id=None, consumer_timeout_ms=1000, max_partition_fetch_bytes=1 << 24
        )
        # A frontend's response topic has one partition (docs/host-agent.md): create it as a frontend does.
        tp = TopicPartition(f"sand.response.{self.frontend}", 0)
        admin = KafkaAdminClient(bootstrap_servers=kafka)
        admin.create_topics([NewTopic(tp.topic, num_partitions=1, replication_factor=1)])
        admin.close()
        self.responses.assign([tp])
        self.responses.seek_to_end(tp)
        deadline = time.monotonic() + 30
        while True:  # the new topic reaches this consumer's metadata a moment after the broker created it
            try:
                self.responses.position(tp)
                break
            except UnknownTopicOrPartitionError:
                assert time.monotonic() < deadline, f"topic {tp.topic} never appeared"
                time.sleep(0.2)
        self.results: dict[str, Any] = {}
        # the cluster secret every frontend and host agent shares: this test plays a frontend
        self.secret = self.db.execute("SELECT value FROM cluster_secrets WHERE name = 'execution_tag'").one().value

    def control(self, kind: str) -> None:
        self.producer.send(
            "sand.control",
            key=self.id.encode(),
            value=json.dumps({"type": kind, "app": self.id, "hosts": None}).encode(),
        ).get(30)

    def deploy(self) -> None:
        self.db.execute(
            "INSERT INTO applications (app_id, name, owner, workflow, requirements, settings, version, "
            "desired, hosts) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (self.id, "pids", "e2e", json.dumps(WORKFLOW), "", '{"timeout_s": 20}', 1, "deployed", []),
        )
        for name, code in GRAINS.items():
            self.db.execute(
                "INSERT INTO application_code (app_id, resource, code, kind, sha256) VALUES (%s, %s, %s, %s, %s)",
                (self.id, name, code.encode(), "py", ""),
            )
        self.control("deploy")
        self.wait_state("deployed")

    def wait_state(self, state: str, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            rows = list(self.db.execute("SELECT status, error FROM app_hosts WHERE app_id = %s", (self.id,)))
            if rows and all(r.status == state for r in rows):
                return
            if any(r.status == "failed" for r in rows):
                pytest.fail(f"deploy failed: {[r.error for r in rows]}")
            time.sleep(0.3)
        pytest.fail(f"application {self.id} not {state} after {timeout}s: {rows}")

    def send(self, n: int) -> str:
        execution_id = uuid.uuid4().hex
        event = {
            "id": uuid.uuid4().hex,
            "execution_id": execution_id,
            "app": self.id,
            "grain": "first",
            "from": "",
            "frontend": self.frontend,
            "value": {"n": n},
            "sent_ns": time.time_ns(),
            "tag": execution_tag(self.secret, self.id, execution_id, self.frontend),
        }
        self.producer.send(
            f"sand.{self.id}.first",
            key=event["id"].encode(),
            value=json.dumps({"flag": "new", "event": event}).encode(),
        ).get(30)
        return execution_id

    def result(self, execution_id: str, timeout: float = 60) -> Any:
        deadline = time.monotonic() + timeout
        while execution_id not in self.results and time.monotonic() < deadline:
            for msg in self.responses:
                if msg.key:
                    self.results[msg.key.decode()] = json.loads(msg.value)["value"]
        assert execution_id in self.results, f"no result for {execution_id} in {timeout}s"
        return self.results[execution_id]

    def close(self) -> None:
        self.db.execute("UPDATE applications SET desired = 'undeployed' WHERE app_id = %s", (self.id,))
        self.control("undeploy")
        try:
            self.wait_state("undeployed", 60)
        finally:
            self.db.execute("DELETE FROM applications WHERE app_id = %s", (self.id,))
            self.db.execute("DELETE FROM application_code WHERE app_id = %s", (self.id,))
            self.producer.close()
            self.responses.close()
            self.cluster.shutdown()


@pytest.fixture(scope="module")
def app(kafka_bootstrap: str, cassandra_address: tuple[str, int]) -> Iterator[App]:
    a = App(kafka_bootstrap, cassandra_address)
    a.deploy()
    yield a
    a.close()
    assert docker.from_env().containers.list(all=True, filters={"label": f"sand.app={a.id}"}) == [], (
        "undeploy must remove the sandbox"
    )


def containers(app: App) -> list[Any]:
    return docker.from_env().containers.list(all=True, filters={"label": f"sand.app={app.id}"})


def test_an_event_from_kafka_runs_both_grains_and_the_result_reaches_the_response_topic(app: App) -> None:
    r = app.result(app.send(7))
    assert r["n"] == 7 and r["stored"] == "7"


def test_one_sandbox_per_application_with_the_isolation_options(app: App) -> None:
    (c,) = containers(app)
    hc = c.attrs["HostConfig"]
    assert hc["NetworkMode"] == "none"
    assert hc["CapDrop"] == ["ALL"] and not hc.get("Privileged")
    assert "no-new-privileges" in hc["SecurityOpt"] or "no-new-privileges:true" in hc["SecurityOpt"]
    assert hc["ReadonlyRootfs"] is True
    assert hc["Memory"] > 0 and hc["PidsLimit"] > 0
    assert c.attrs["Config"]["User"].startswith("1000")
    assert not any(m["Source"] == "/var/run/docker.sock" for m in c.attrs["Mounts"])


def test_every_event_runs_in_its_own_forked_process(app: App) -> None:
    results = [app.result(app.send(n)) for n in range(4)]
    assert len({r["pid1"] for r in results}) == 4 and len({r["pid2"] for r in results}) == 4
    assert len({r["ppid1"] for r in results}) == 1, "instances of one grain are children of one grain worker"
    assert {r["ppid1"] for r in results} != {r["pid1"] for r in results}


def test_logs_of_an_execution_are_stored(app: App) -> None:
    execution_id = app.send(42)
    app.result(execution_id)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        rows = list(app.db.execute("SELECT grain, text FROM execution_logs WHERE execution_id = %s", (execution_id,)))
        if rows:
            break
        time.sleep(0.2)
    assert ("first", "first saw 42") in {(r.grain, r.text) for r in rows}


def test_a_killed_grain_worker_is_restarted_and_no_event_is_lost(app: App) -> None:
    (c,) = containers(app)
    top = c.top(ps_args="-eo pid,args")
    workers = [int(p[0]) for p in top["Processes"] if "--grain second" in p[1] and "grainworker" in p[1]]
    assert workers, top
    os.kill(min(workers), signal.SIGKILL)  # the oldest: the worker itself, not an instance or the standby
    executions = [app.send(100 + n) for n in range(3)]
    assert [app.result(e, timeout=90)["n"] for e in executions] == [100, 101, 102]
