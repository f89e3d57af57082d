"""Off loopback everything authenticates (issue 26, finding 2): on a cluster brought up by deploy/cluster.sh (the
Ansible playbook a real cluster uses), from this test process (outside every host's namespace, as anyone on the
network), Kafka and Cassandra refuse a client without a login: no topic is listed, nothing produced or consumed, the
built-in cassandra/cassandra superuser is disabled and `cluster_secrets` cannot be read. With a role's login (the
passwords the bring-up generated, mode 600) the same calls work, and the frontends, which log in as `frontend`,
serve sign-ups (Cassandra) and create their response topics (Kafka) through nginx.

The cluster has Kafka, Cassandra, a frontend and nginx on one host, and no host agent (no sandbox image is built);
the host agents' clients are the frontends' (sand.cluster.KafkaClients, ClusterSettings.connectStore).
"""

from __future__ import annotations

import stat
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.cluster.workload import Cluster

KAFKA_PORT = 9092
CASSANDRA_PORT = 9042


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    c = Cluster(tmp_path_factory.mktemp("auth"), prefix="sanda-", subnet="10.82.0", nginx_port=8093)
    inventory = c.home / "inventory.ini"
    text = c.run("inventory", "1").stdout
    # the hosts of the inventory `up 1` writes, without its host agent (nor any Docker step)
    groups = text.split("\n[")
    inventory.write_text(
        "\n[".join(g.replace("\nhostagents\n", "\n") for g in groups if not g.startswith("hostagents]"))
    )
    c.env["SAND_CLUSTER_INVENTORY"] = str(inventory)
    try:
        c.run("up", "1", timeout=900)
        yield c
    finally:
        c.run("down", check=False, timeout=300)


def secrets(c: Cluster) -> Path:
    return c.home / "cluster" / "secrets"


def password(c: Cluster, role: str) -> str:
    return (secrets(c) / f"{role}.password").read_text().strip()


def kafka_login(login: tuple[str, str] | None) -> dict[str, str]:
    return (
        {}
        if login is None
        else {
            "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": "SCRAM-SHA-512",
            "sasl_plain_username": login[0],
            "sasl_plain_password": login[1],
        }
    )


def kafka_admin(c: Cluster, login: tuple[str, str] | None):  # type: ignore[no-untyped-def]
    from kafka import KafkaAdminClient

    return KafkaAdminClient(
        bootstrap_servers=f"{c.addr('h1')}:{KAFKA_PORT}", request_timeout_ms=5000, **kafka_login(login)
    )


def refused(e: BaseException) -> bool:
    """What kafka-python raises when the broker drops it before any request (not a mistake of the test's own)."""
    from kafka.errors import KafkaTimeoutError

    return isinstance(e, KafkaTimeoutError) or type(e).__name__ == "NoBrokersAvailable"


def cassandra_select(c: Cluster, login: tuple[str, str] | None, cql: str) -> list:  # type: ignore[type-arg]
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster as CassandraCluster

    auth = {} if login is None else {"auth_provider": PlainTextAuthProvider(*login)}
    cc = CassandraCluster(
        [c.addr("h1")], port=CASSANDRA_PORT, connect_timeout=10, control_connection_timeout=10, **auth
    )
    try:
        return list(cc.connect().execute(cql, timeout=20))
    finally:
        cc.shutdown()


def test_the_generated_passwords_are_private(cluster: Cluster) -> None:
    assert stat.S_IMODE(secrets(cluster).stat().st_mode) == 0o700
    for role in ("admin", "hostagent", "frontend"):
        f = secrets(cluster) / f"{role}.password"
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
        assert len(f.read_text().strip()) >= 32
    props = cluster.home / "cluster" / "h1" / "conf" / "kafka" / "server.properties"
    assert stat.S_IMODE(props.stat().st_mode) == 0o600, "it holds the admin password"
    repo = Path(__file__).resolve().parents[2]
    tracked = subprocess.run(
        ["git", "-C", str(repo), "grep", "-l", password(cluster, "admin")], capture_output=True, text=True
    ).stdout
    assert tracked == "", "a generated password is in the repository"


def test_kafka_refuses_a_client_without_a_login(cluster: Cluster) -> None:
    from kafka import KafkaConsumer, KafkaProducer
    from kafka.errors import KafkaError

    b = f"{cluster.addr('h1')}:{KAFKA_PORT}"
    for login in (None, ("hostagent", "wrong-password")):  # anonymous, or a wrong password: dropped before a request
        with pytest.raises(KafkaError) as e:
            kafka_admin(cluster, login).list_topics()
        assert refused(e.value), repr(e.value)
    with pytest.raises(KafkaError) as e:
        producer = KafkaProducer(bootstrap_servers=b, max_block_ms=5000, request_timeout_ms=5000)
        producer.send("sand.control", b"forged").get(timeout=10)
    assert refused(e.value), repr(e.value)
    with pytest.raises(KafkaError) as e:
        consumer = KafkaConsumer("sand.control", bootstrap_servers=b, consumer_timeout_ms=5000, request_timeout_ms=6000)
        consumer.topics()
    assert refused(e.value), repr(e.value)


def test_kafka_serves_a_role_with_its_login_within_its_acls(cluster: Cluster) -> None:
    from kafka import KafkaProducer
    from kafka.errors import KafkaError

    admin = kafka_admin(cluster, ("frontend", password(cluster, "frontend")))
    try:
        topics = admin.list_topics()
    finally:
        admin.close()
    response = [t for t in topics if t.startswith("sand.response.")]
    assert response, topics  # the frontend made its response topic, logged in as frontend
    producer = KafkaProducer(
        bootstrap_servers=f"{cluster.addr('h1')}:{KAFKA_PORT}",
        max_block_ms=10000,
        **kafka_login(("hostagent", password(cluster, "hostagent"))),
    )
    try:
        producer.send(response[0], b"{}").get(timeout=20)  # a "sand." topic: allowed to a host agent
        with pytest.raises(KafkaError):  # a name outside "sand.": not even its metadata
            producer.send("not-sand", b"x").get(timeout=10)
    finally:
        producer.close(timeout=5)


def test_cassandra_refuses_a_client_without_a_login(cluster: Cluster) -> None:
    from cassandra.cluster import NoHostAvailable

    for login in (None, ("cassandra", "cassandra"), ("frontend", "wrong-password")):
        with pytest.raises(NoHostAvailable) as e:
            cassandra_select(cluster, login, "SELECT name FROM sand.cluster_secrets")
        assert "Authentication" in str(e.value) or "authenticat" in str(e.value).lower(), (login, str(e.value))


def test_cassandra_serves_a_role_with_its_login(cluster: Cluster) -> None:
    rows = cassandra_select(
        cluster, ("hostagent", password(cluster, "hostagent")), "SELECT name FROM sand.cluster_secrets"
    )
    assert [r.name for r in rows] == ["execution_tag"], rows  # the frontend made it, logged in as frontend


def test_the_frontends_work_logged_in(cluster: Cluster) -> None:
    r = requests.post(f"{cluster.url}/api/v1/accounts", json={"name": "auth" + uuid.uuid4().hex[:8]}, timeout=60)
    assert r.status_code in (200, 201), r.text
    key = r.json()["api_key"]
    r = requests.get(f"{cluster.url}/api/v1/apps", headers={"Authorization": f"Bearer {key}"}, timeout=60)
    assert r.status_code == 200, r.text
