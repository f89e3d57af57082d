"""The message bus between the controller and the invoker: the interface, and Kafka behind it.

OpenWhisk's controller publishes each activation to its invoker's topic (``invoker<N>``) and reads results from its
own (``completed<N>``). The baselines do the same with topics of their own, named ``baseline.<run>.invoker0`` and
``baseline.<run>.completed0``, created at start and deleted at close. ``fakes.FakeBus`` is the in-memory stand-in.
"""

from __future__ import annotations

import logging
import time
from typing import Protocol

__all__ = ["Bus", "Consumer", "KafkaBus", "Producer", "TOPIC_PREFIX"]

log = logging.getLogger(__name__)

TOPIC_PREFIX = "baseline."


class Producer(Protocol):
    def send(self, topic: str, value: bytes, timeout_s: float) -> None: ...
    def close(self) -> None: ...


class Consumer(Protocol):
    def poll(self, timeout_s: float) -> list[bytes]: ...
    def close(self) -> None: ...


class Bus(Protocol):
    def create_topics(self, names: list[str], timeout_s: float) -> None: ...
    def delete_topics(self, names: list[str], timeout_s: float) -> None: ...
    def list_topics(self) -> set[str]: ...
    def producer(self) -> Producer: ...
    def consumer(self, topic: str) -> Consumer: ...
    def close(self) -> None: ...


class _KafkaProducer:
    def __init__(self, bootstrap: str) -> None:
        from kafka import KafkaProducer

        # Default settings (acks=1, no linger), as OpenWhisk's producer; each send waits for the broker's ack.
        self._p = KafkaProducer(bootstrap_servers=bootstrap, max_block_ms=30_000)

    def send(self, topic: str, value: bytes, timeout_s: float) -> None:
        self._p.send(topic, value, partition=0).get(timeout=timeout_s)

    def close(self) -> None:
        self._p.close(timeout=5)


class _KafkaConsumer:
    def __init__(self, bootstrap: str, topic: str) -> None:
        from kafka import KafkaConsumer, TopicPartition

        # The topic is this run's own and new: read it from the start, no consumer group (nothing to rebalance).
        self._c = KafkaConsumer(
            bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False, auto_offset_reset="earliest"
        )
        tp = TopicPartition(topic, 0)
        self._c.assign([tp])
        self._c.seek_to_beginning(tp)

    def poll(self, timeout_s: float) -> list[bytes]:
        out: list[bytes] = []
        for records in self._c.poll(timeout_ms=int(timeout_s * 1000)).values():
            out.extend(r.value for r in records)
        return out

    def close(self) -> None:
        self._c.close(autocommit=False)


class KafkaBus:
    """Kafka at ``bootstrap`` (the system's broker of `make up`: 127.0.0.1:9092)."""

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self._admin = None

    def _admin_client(self):  # noqa: ANN202
        if self._admin is None:
            from kafka import KafkaAdminClient

            try:
                self._admin = KafkaAdminClient(bootstrap_servers=self.bootstrap, request_timeout_ms=30_000)
            except Exception as e:  # noqa: BLE001
                raise RuntimeError(
                    f"no Kafka broker at {self.bootstrap} ({e}): run `make up`, or pass bootstrap="
                ) from e
        return self._admin

    def create_topics(self, names: list[str], timeout_s: float) -> None:
        from kafka.admin import NewTopic

        self._admin_client().create_topics(
            [NewTopic(n, num_partitions=1, replication_factor=1) for n in names], timeout_ms=int(timeout_s * 1000)
        )
        deadline = time.monotonic() + timeout_s
        while not set(names) <= self.list_topics():
            if time.monotonic() > deadline:
                raise TimeoutError(f"Kafka at {self.bootstrap} did not list the new topics {names} in {timeout_s} s")
            time.sleep(0.05)

    def delete_topics(self, names: list[str], timeout_s: float) -> None:
        present = [n for n in names if n in self.list_topics()]
        if present:
            self._admin_client().delete_topics(present, timeout_ms=int(timeout_s * 1000))

    def list_topics(self) -> set[str]:
        return set(self._admin_client().list_topics())

    def producer(self) -> _KafkaProducer:
        return _KafkaProducer(self.bootstrap)

    def consumer(self, topic: str) -> _KafkaConsumer:
        return _KafkaConsumer(self.bootstrap, topic)

    def close(self) -> None:
        if self._admin is not None:
            self._admin.close()
            self._admin = None
