"""Paper Fig 5b: one-message delivery latency, local message bus vs Kafka, Python and Java clients.

Two processes on one host, producer and consumer, no load: the producer sends one small message at a
time (a gap between sends so nothing queues), stamped with the system-wide monotonic clock; the
consumer records receive time - send time. Both ends pinned to one core with taskset, then unpinned.
The local bus is the real Java server (standalone, as the host agent embeds it); Kafka is the broker
started by `make up` with its default settings; clients use their defaults, and the producer flushes
after each send (a latency-sensitive sender would; the Java client's default linger.ms=5 would
otherwise dominate).

    python benchmarks/message_delivery.py [--count 2000] [--quick] [--unix]

With --unix the local-bus cases also run over the bus's Unix socket (what sandboxes use), as
python_local_unix_* and java_local_unix_* next to the TCP ones.

Before measuring, the bus is warmed up with --bus-warmup messages through each endpoint (Java
producer -> consumer at full speed, publishes and long polls both): the bus is a long-running daemon,
like the Kafka broker it is compared with, and its first thousands of calls would otherwise measure
the JIT compiler rather than the bus (--bus-warmup 0 measures the cold bus).

Writes benchmarks/results/message_delivery.json and message_delivery.png.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import (  # noqa: E402
    KAFKA,
    RESULTS,
    ROOT,
    bar_plot,
    machine,
    pin_prefix,
    summary_ms,
    write_result,
)

AGENT = "bench-agent-credential-0123456789"
APP_CRED = "bench-app-credential-0123456789"
QUEUE = "bench/consumer"
PAYLOAD_BYTES = 100
WARMUP = 100
JAVA_BENCH = ROOT / "benchmarks" / "java"


# ---- roles (each runs in its own process) --------------------------------------------------------


def _stamp() -> bytes:
    return struct.pack(">q", time.monotonic_ns()).ljust(PAYLOAD_BYTES, b".")


def _report(latencies: list[int]) -> None:
    print(json.dumps({"latencies_ns": latencies[WARMUP:]}), flush=True)


def role_local_consumer(address: str, count: int) -> None:
    from grainworker.localbus import LocalBusClient

    c = LocalBusClient(address, APP_CRED)
    c.poll(QUEUE, max_messages=1000, timeout_ms=0)  # drain leftovers, connect before "ready"
    print("ready", flush=True)
    lat: list[int] = []
    while len(lat) < count:
        for m in c.poll(QUEUE, max_messages=1, timeout_ms=10_000):
            lat.append(time.monotonic_ns() - struct.unpack(">q", m[:8])[0])
    _report(lat)


def role_local_producer(address: str, count: int, gap_s: float) -> None:
    from grainworker.localbus import LocalBusClient

    c = LocalBusClient(address, APP_CRED)
    for _ in range(count):
        c.publish(QUEUE, _stamp())
        time.sleep(gap_s)


def role_kafka_consumer(topic: str, count: int) -> None:
    from kafka import KafkaConsumer, TopicPartition

    c = KafkaConsumer(bootstrap_servers=KAFKA, group_id=None, enable_auto_commit=False)
    tp = TopicPartition(topic, 0)
    c.assign([tp])
    c.seek_to_end(tp)
    c.position(tp)
    print("ready", flush=True)
    lat: list[int] = []
    while len(lat) < count:
        for records in c.poll(timeout_ms=10_000).values():
            now = time.monotonic_ns()
            lat.extend(now - struct.unpack(">q", r.value[:8])[0] for r in records)
    _report(lat[:count])


def role_kafka_producer(topic: str, count: int, gap_s: float) -> None:
    from kafka import KafkaProducer

    p = KafkaProducer(bootstrap_servers=KAFKA)
    for _ in range(count):
        p.send(topic, _stamp(), partition=0)
        p.flush()
        time.sleep(gap_s)
    p.close()


# ---- coordinator ---------------------------------------------------------------------------------


def run_pair(consumer_cmd: list[str], producer_cmd: list[str], cpu: int | None) -> list[int]:
    """Start the consumer, wait for 'ready', run the producer, return the consumer's latencies."""
    cons = subprocess.Popen(pin_prefix(cpu) + consumer_cmd, stdout=subprocess.PIPE, text=True)
    assert cons.stdout is not None
    line = cons.stdout.readline().strip()
    if line != "ready":
        cons.kill()
        raise RuntimeError(f"consumer did not start: {line!r}")
    subprocess.run(pin_prefix(cpu) + producer_cmd, check=True)
    out, _ = cons.communicate(timeout=120)
    return json.loads(out.strip().splitlines()[-1])["latencies_ns"]


def start_local_bus(unix_socket: Path | None = None) -> tuple[subprocess.Popen[str], str]:
    """Start the standalone bus (also on ``unix_socket`` if given); returns it and its TCP address."""
    from grainworker.localbus import LocalBusClient

    jar = ROOT / "localbus" / "target" / "localbus-0.1.0-SNAPSHOT.jar"
    cp = f"{jar}:{ROOT / 'localbus' / 'target' / 'lib'}/*"
    env = {**os.environ, "SAND_LOCALBUS_CREDENTIAL": AGENT, "SAND_LOCALBUS_PORT": "0"}
    if unix_socket is not None:
        env["SAND_LOCALBUS_UNIX_SOCKET"] = str(unix_socket)
    proc = subprocess.Popen(
        ["java", "-Xms64m", "-Xmx256m", "-cp", cp, "sand.localbus.LocalBusServer"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    result: list[str] = []

    def read() -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            if " listening on " in line and not result:
                result.append(line.split(" listening on ", 1)[1].strip())

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + 30
    while not result:
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            raise RuntimeError("the local bus server did not start")
        time.sleep(0.05)
    with LocalBusClient(result[0], AGENT) as admin:
        admin.grant_application("bench", APP_CRED)
    return proc, result[0]


def create_topic() -> str:
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    topic = f"bench-delivery-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=KAFKA)
    admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
    admin.close()
    return topic


def delete_topic(topic: str) -> None:
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=KAFKA)
    admin.delete_topics([topic])
    admin.close()


@functools.cache
def java_classpath() -> str:
    target = JAVA_BENCH / "target"
    jar = target / "sand-benchmarks-0.1.0-SNAPSHOT.jar"
    subprocess.run(
        ["mvn", "-q", "-B", "-Dstyle.color=never", "-f", str(JAVA_BENCH / "pom.xml"), "-DskipTests", "package"],
        check=True,
    )
    return f"{jar}:{target / 'lib'}/*"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=2000, help="messages per measurement (after warm-up)")
    ap.add_argument("--gap-ms", type=float, default=2.0, help="pause between sends")
    ap.add_argument("--quick", action="store_true", help="300 messages per measurement")
    ap.add_argument("--unix", action="store_true", help="also run the local-bus cases over the Unix socket")
    ap.add_argument(
        "--bus-warmup",
        type=int,
        default=100_000,
        help="messages through each bus endpoint before measuring (0: measure the cold bus)",
    )
    ap.add_argument("--role", help=argparse.SUPPRESS)
    ap.add_argument("--target", help=argparse.SUPPRESS)
    args = ap.parse_args()
    count = (300 if args.quick else args.count) + WARMUP
    gap = args.gap_ms / 1000

    if args.role:
        roles = {
            "local-consumer": lambda: role_local_consumer(args.target, count),
            "local-producer": lambda: role_local_producer(args.target, count, gap),
            "kafka-consumer": lambda: role_kafka_consumer(args.target, count),
            "kafka-producer": lambda: role_kafka_producer(args.target, count, gap),
        }
        roles[args.role]()
        return

    me = [sys.executable, __file__, "--count", str(count - WARMUP), "--gap-ms", str(args.gap_ms)]
    jcp = java_classpath()
    java = ["java", "-Xms64m", "-Xmx256m", "-cp", jcp, "sand.benchmarks.MessageDelivery"]
    jargs = ["--count", str(count), "--warmup", str(WARMUP), "--gap-ms", str(args.gap_ms)]
    sock_dir = Path(tempfile.mkdtemp(prefix="sand-bench-"))
    bus, address = start_local_bus(sock_dir / "bus.sock" if args.unix else None)
    unix_address = f"unix:{sock_dir / 'bus.sock'}"
    topic = None
    results: dict[str, dict[str, float]] = {}
    try:  # from here on the bus is stopped whatever fails (Kafka down, a role failing)
        topic = create_topic()
        if args.bus_warmup > 0:
            warm_up_bus([address, unix_address] if args.unix else [address], args.bus_warmup)
        for pinned, cpu in (("pinned", 0), ("unpinned", None)):
            cases = {
                "python_local": (
                    me + ["--role", "local-consumer", "--target", address],
                    me + ["--role", "local-producer", "--target", address],
                ),
                "python_kafka": (
                    me + ["--role", "kafka-consumer", "--target", topic],
                    me + ["--role", "kafka-producer", "--target", topic],
                ),
                "java_local": (
                    java + ["local-consumer", address, AGENT, APP_CRED] + jargs,
                    java + ["local-producer", address, AGENT, APP_CRED] + jargs,
                ),
                "java_kafka": (
                    java + ["kafka-consumer", KAFKA, topic] + jargs,
                    java + ["kafka-producer", KAFKA, topic] + jargs,
                ),
            }
            if args.unix:
                cases["python_local_unix"] = (
                    me + ["--role", "local-consumer", "--target", unix_address],
                    me + ["--role", "local-producer", "--target", unix_address],
                )
                cases["java_local_unix"] = (
                    java + ["local-consumer", unix_address, AGENT, APP_CRED] + jargs,
                    java + ["local-producer", unix_address, AGENT, APP_CRED] + jargs,
                )
            for name, (cons, prod) in cases.items():
                lat = run_pair(cons, prod, cpu)
                results[f"{name}_{pinned}"] = summary_ms(lat)
                s = results[f"{name}_{pinned}"]
                print(f"{name:17s} {pinned:8s} p50 {s['p50_ms']:8.3f} ms  p99 {s['p99_ms']:8.3f} ms  (n={s['n']})")
        throughput = measure_throughput(address)
    finally:
        bus.terminate()
        if topic is not None:
            delete_topic(topic)
        shutil.rmtree(sock_dir, ignore_errors=True)

    out: dict[str, object] = {
        "machine": machine(),
        "payload_bytes": PAYLOAD_BYTES,
        "gap_ms": args.gap_ms,
        "cases": results,
        "local_bus_throughput": throughput,
        "bus_warmup_messages": args.bus_warmup,
    }
    for lang in ("python", "java"):
        for pinned in ("pinned", "unpinned"):
            loc, kaf = results[f"{lang}_local_{pinned}"], results[f"{lang}_kafka_{pinned}"]
            out[f"{lang}_ratio_{pinned}"] = round(kaf["p50_ms"] / loc["p50_ms"], 2)
        # Headline keys: the unpinned figures (what a default deployment sees).
        out[f"{lang}_local_p50_ms"] = results[f"{lang}_local_unpinned"]["p50_ms"]
        out[f"{lang}_kafka_p50_ms"] = results[f"{lang}_kafka_unpinned"]["p50_ms"]
        out[f"{lang}_local_p99_ms"] = results[f"{lang}_local_unpinned"]["p99_ms"]
        out[f"{lang}_kafka_p99_ms"] = results[f"{lang}_kafka_unpinned"]["p99_ms"]
        out[f"{lang}_ratio"] = out[f"{lang}_ratio_unpinned"]
        if args.unix:
            for pinned in ("pinned", "unpinned"):
                loc, kaf = results[f"{lang}_local_unix_{pinned}"], results[f"{lang}_kafka_{pinned}"]
                out[f"{lang}_unix_ratio_{pinned}"] = round(kaf["p50_ms"] / loc["p50_ms"], 2)
            out[f"{lang}_local_unix_p50_ms"] = results[f"{lang}_local_unix_unpinned"]["p50_ms"]
            out[f"{lang}_local_unix_p99_ms"] = results[f"{lang}_local_unix_unpinned"]["p99_ms"]
            out[f"{lang}_unix_ratio"] = out[f"{lang}_unix_ratio_unpinned"]
    out["paper_python_ratio"], out["paper_java_ratio"] = 2.90, 5.42
    path = write_result("message_delivery", out)
    labels = list(results)
    bar_plot(
        RESULTS / "message_delivery.png",
        "Message delivery latency (Fig 5b): local bus vs Kafka",
        labels,
        [results[k]["p50_ms"] for k in labels],
        [results[k]["p99_ms"] for k in labels],
    )
    for lang in ("python", "java"):
        print(
            f"{lang}: Kafka/local p50 ratio {out[f'{lang}_ratio']}x unpinned, "
            f"{out[f'{lang}_ratio_pinned']}x pinned (paper: {out[f'paper_{lang}_ratio']}x)"
        )
        if args.unix:
            print(
                f"{lang}: Kafka/local-over-Unix-socket p50 ratio {out[f'{lang}_unix_ratio']}x unpinned, "
                f"{out[f'{lang}_unix_ratio_pinned']}x pinned"
            )
    print(
        f"local bus throughput, 1 producer -> 1 consumer: {throughput['python_msgs_per_s']:.0f} msg/s (Python), "
        f"{throughput['java_msgs_per_s']:.0f} msg/s (Java)"
    )
    print(f"wrote {path}")


def warm_up_bus(addresses: list[str], messages: int) -> None:
    """Push messages through each endpoint until the bus's hot paths are compiled (see the module doc)."""
    for address in addresses:
        cmd = [
            "java",
            "-cp",
            java_classpath(),
            "sand.benchmarks.MessageDelivery",
            "local-throughput",
            address,
            AGENT,
            APP_CRED,
            "--count",
            str(messages),
        ]
        subprocess.run(cmd, capture_output=True, text=True, check=True)


def measure_throughput(address: str, n: int = 20000) -> dict[str, float]:
    """Messages/s through one queue, one producer process and one consumer (batched polls)."""
    from grainworker.localbus import LocalBusClient

    code = (
        "import sys\nfrom grainworker.localbus import LocalBusClient\n"
        f"c = LocalBusClient({address!r}, {APP_CRED!r})\n"
        f"for i in range({n}): c.publish({QUEUE!r}, b'x' * {PAYLOAD_BYTES})\n"
    )
    c = LocalBusClient(address, APP_CRED)
    c.poll(QUEUE, max_messages=1000, timeout_ms=0)
    t0 = time.monotonic()
    prod = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT)
    got = 0
    while got < n:
        got += len(c.poll(QUEUE, max_messages=1000, timeout_ms=10_000))
    py = n / (time.monotonic() - t0)
    prod.wait()
    out = subprocess.run(
        [
            "java",
            "-cp",
            java_classpath(),
            "sand.benchmarks.MessageDelivery",
            "local-throughput",
            address,
            AGENT,
            APP_CRED,
            "--count",
            str(n * 5),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    jv = float(out.stdout.strip().splitlines()[-1])
    return {"python_msgs_per_s": round(py), "java_msgs_per_s": round(jv), "messages": n}


if __name__ == "__main__":
    main()
