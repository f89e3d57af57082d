"""deploy/cluster.sh: a Kafka cluster of one KRaft node per host namespace, which loses nothing when a host dies
(issue 12, first steps: the global message bus of a many-host SAND). Runs in its own SAND_HOME, namespaces, bridge and
subnet, so it never touches a running system or cluster."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.admin import NewTopic
from kafka.errors import KafkaError

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / ".sand" / "dist"
SUBNET = "10.79.0"
BOOTSTRAP = ",".join(f"{SUBNET}.{10 + i}:9092" for i in (1, 2, 3))

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("ip") or not list(DIST.glob("kafka-*/.sand-fetched")),
    reason="needs root, iproute2 and the Kafka jars (deploy/install.sh)")


def cluster(home: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SAND_HOME": str(home), "SAND_DIST": str(DIST), "SAND_NETNS_PREFIX": "sandk-",
           "SAND_NETNS_BRIDGE": "sandkbr0", "SAND_NETNS_SUBNET": SUBNET}
    return subprocess.run(["bash", str(ROOT / "deploy" / "cluster.sh"), *args], env=env, capture_output=True,
                          text=True, timeout=240, check=check)


def produce(prefix: str, n: int, deadline_s: float) -> None:
    """Send n records, each acknowledged by 2 in-sync replicas; retry the lot while leaders move."""
    end = time.monotonic() + deadline_s
    while True:
        try:
            p = KafkaProducer(bootstrap_servers=BOOTSTRAP, acks="all", request_timeout_ms=10000)
            for i in range(n):
                p.send("sand.test.grain", f"{prefix}-{i}".encode()).get(timeout=20)
            p.close()
            return
        except KafkaError:
            if time.monotonic() > end:
                raise
            time.sleep(2)


def test_three_hosts_form_one_kafka_cluster_that_survives_the_loss_of_a_host(tmp_path: Path) -> None:
    try:
        up = cluster(tmp_path, "up", "3")
        assert f"bootstrap: {BOOTSTRAP}" in up.stdout, up.stdout + up.stderr
        status = cluster(tmp_path, "status").stdout.splitlines()
        assert [line.split()[:4] for line in status] == [
            ["h1", f"{SUBNET}.11", "linkUP", "kafka"], ["h2", f"{SUBNET}.12", "linkUP", "kafka"],
            ["h3", f"{SUBNET}.13", "linkUP", "kafka"]], status
        admin = KafkaAdminClient(bootstrap_servers=BOOTSTRAP, request_timeout_ms=20000)
        assert len(admin.describe_cluster()["brokers"]) == 3
        admin.create_topics([NewTopic("sand.test.grain", 3, 3, topic_configs={"min.insync.replicas": "2"})])
        admin.close()
        produce("before", 50, 30)
        cluster(tmp_path, "kill", "h2")
        assert "linkDOWN   kafka stopped" in cluster(tmp_path, "status").stdout
        produce("after", 50, 120)  # the leaders on h2 move to h1 and h3 (broker session timeout ~9 s)
        c = KafkaConsumer("sand.test.grain", bootstrap_servers=BOOTSTRAP, auto_offset_reset="earliest",
                          consumer_timeout_ms=10000, group_id=None)
        values = [m.value.decode() for m in c]
        c.close()
        assert sorted(set(values)) == sorted([f"before-{i}" for i in range(50)] + [f"after-{i}" for i in range(50)])
    finally:
        cluster(tmp_path, "down", check=False)
    assert cluster(tmp_path, "status").stdout == ""
