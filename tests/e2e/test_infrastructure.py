"""Smoke test of the bring-up (issue: single-host SAND from bare Debian): each real part answers."""

from __future__ import annotations

import time
import uuid

import docker
import requests
from cassandra.cluster import Cluster
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.admin import NewTopic


def test_kafka_create_topic_produce_consume(kafka_bootstrap: str) -> None:
    topic = f"smoke-{uuid.uuid4().hex[:12]}"
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap, request_timeout_ms=20000)
    try:
        admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)])
        # the broker that answers may learn of the new topic a moment after the controller made it
        listed = False
        end = time.monotonic() + 20
        while not listed and time.monotonic() < end:
            listed = topic in admin.list_topics()
            if not listed:
                time.sleep(0.2)
        assert listed, f"topic {topic} was created but not listed within 20 s"
        producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
        payload = f"hello {uuid.uuid4()}".encode()
        producer.send(topic, payload, partition=1).get(timeout=20)
        producer.close()
        consumer = KafkaConsumer(
            topic,
            bootstrap_servers=kafka_bootstrap,
            auto_offset_reset="earliest",
            consumer_timeout_ms=20000,
            group_id=None,
        )
        received = next(iter(consumer)).value  # StopIteration after 20 s with nothing
        consumer.close()
        assert received == payload
    finally:
        admin.delete_topics([topic])
        admin.close()


def test_cassandra_keyspace_write_read(cassandra_address: tuple[str, int]) -> None:
    host, port = cassandra_address
    keyspace = f"smoke_{uuid.uuid4().hex[:12]}"
    cluster = Cluster([host], port=port, connect_timeout=20)
    session = cluster.connect()
    try:
        replication = "{'class': 'SimpleStrategy', 'replication_factor': 1}"
        session.execute(f"CREATE KEYSPACE {keyspace} WITH replication = {replication}")
        session.execute(f"CREATE TABLE {keyspace}.kv (k text PRIMARY KEY, v text)")
        session.execute(f"INSERT INTO {keyspace}.kv (k, v) VALUES (%s, %s)", ("grain", "instance"))
        row = session.execute(f"SELECT v FROM {keyspace}.kv WHERE k = %s", ("grain",)).one()
        assert row.v == "instance"
    finally:
        session.execute(f"DROP KEYSPACE IF EXISTS {keyspace}")
        cluster.shutdown()


def test_docker_runs_the_sandbox_image(sandbox_image: str) -> None:
    client = docker.from_env()
    out = client.containers.run(
        sandbox_image,
        ["python3", "-c", "import sys, thrift, grainworker; print('py', *sys.version_info[:2])"],
        remove=True,
        network_mode="none",
        cap_drop=["ALL"],
        read_only=True,
        security_opt=["no-new-privileges"],
    )
    assert out.decode().strip() == "py 3 11"


def test_nginx_answers(nginx_url: str) -> None:
    deadline = time.monotonic() + 10
    while True:
        try:
            r = requests.get(f"{nginx_url}/nginx-health", timeout=2)
            break
        except requests.ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    assert r.status_code == 200
    assert r.text.strip() == "ok"
    assert r.headers["Server"].startswith("nginx")
