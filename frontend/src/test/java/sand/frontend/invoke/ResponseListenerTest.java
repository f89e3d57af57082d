package sand.frontend.invoke;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import sand.cluster.FrontendTables.ExecutionRecord;
import sand.cluster.InMemoryClusterStore;
import sand.contracts.Event;
import sand.contracts.ExecutionTag;
import sand.frontend.internal.Json;

/** A frontend's response topic across restarts: results written while it was away are still recorded. */
class ResponseListenerTest {
  static final String FE = "fe-1";
  static final String TOPIC = "sand.response." + FE;
  static final TopicPartition P = new TopicPartition(TOPIC, 0);

  final InMemoryClusterStore store = new InMemoryClusterStore();
  final ExecutionTag tags = new ExecutionTag(store.clusterSecret());
  final ExecutionLog log = new ExecutionLog(store, Duration.ofHours(1), 2, 100);
  /** Kafka's committed offsets of the group sand.frontend.fe-1, as they outlive one consumer. */
  final Map<TopicPartition, OffsetAndMetadata> kafkaCommitted = new HashMap<>();

  ResponseListener listener;

  @AfterEach
  void stop() throws Exception {
    if (listener != null && listener.isRunning()) {
      listener.stop();
    }
    log.close();
  }

  /** A consumer of the response topic (already holding {@code records} records) that sees the group's commits. */
  MockConsumer<String, byte[]> consumer(long records) {
    MockConsumer<String, byte[]> c = new MockConsumer<>("earliest") {
      @Override
      public synchronized Map<TopicPartition, OffsetAndMetadata> committed(
          Set<TopicPartition> partitions) {
        Map<TopicPartition, OffsetAndMetadata> m = new HashMap<>();
        partitions.forEach(
            p -> Optional.ofNullable(kafkaCommitted.get(p)).ifPresent(o -> m.put(p, o)));
        return m;
      }

      @Override
      public synchronized void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets) {
        kafkaCommitted.putAll(offsets);
      }
    };
    c.updateBeginningOffsets(Map.of(P, 0L));
    c.updateEndOffsets(Map.of(P, records));
    return c;
  }

  ResponseListener start(MockConsumer<String, byte[]> c) throws Exception {
    return start(c, Duration.ZERO);
  }

  ResponseListener start(MockConsumer<String, byte[]> c, Duration commitInterval) throws Exception {
    results = new Results(log, Clock.systemUTC(), tags, FE);
    listener = new ResponseListener(TOPIC, c, t -> {}, results, false, commitInterval);
    listener.start();
    return listener;
  }

  Results results;

  /** An asynchronous request taken by fe-1 ('running' in the executions table) and its result's record. */
  ConsumerRecord<String, byte[]> asyncRequestAndResult(String executionId, long offset) {
    store.startExecution(
        new ExecutionRecord(
            executionId,
            "a000000000001",
            "alice",
            "running",
            null,
            null,
            Instant.now(),
            null,
            FE,
            null),
        Duration.ofHours(1));
    Event result = Event.request(
        "ev-" + executionId,
        executionId,
        "a000000000001",
        "greet",
        FE,
        Json.object().put("greeting", "hi " + executionId),
        1,
        tags.of("a000000000001", executionId, FE));
    result.json().put("grain", "end");
    return new ConsumerRecord<>(TOPIC, 0, offset, executionId, result.toBytes());
  }

  static void await(Supplier<Boolean> condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!condition.get()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting: " + what);
      }
      Thread.sleep(5);
    }
  }

  String status(String executionId) {
    return store.execution(executionId).map(ExecutionRecord::status).orElse("none");
  }

  @Test
  void aRestartedFrontendRecordsTheResultsWrittenWhileItWasAway() throws Exception {
    MockConsumer<String, byte[]> first = consumer(0);
    start(first);
    first.addRecord(asyncRequestAndResult("e1", 0));
    await(() -> status("e1").equals("succeeded"), "e1 recorded");
    await(
        () -> kafkaCommitted.containsKey(P) && kafkaCommitted.get(P).offset() == 1,
        "offset 1 committed");
    listener.stop();

    // While no fe-1 runs, a host agent writes the result of another of its asynchronous requests.
    ConsumerRecord<String, byte[]> whileAway = asyncRequestAndResult("e2", 1);
    MockConsumer<String, byte[]> second = consumer(2);
    start(second);
    second.addRecord(whileAway);
    await(
        () -> status("e2").equals("succeeded"),
        "e2, written while fe-1 was away, recorded after its restart");
    assertEquals("{\"greeting\":\"hi e2\"}", store.execution("e2").orElseThrow().result());
    await(() -> kafkaCommitted.get(P).offset() == 2, "offset 2 committed");
  }

  @Test
  void theRecordedOffsetIsCommittedAtMostOncePerIntervalAndAtStop() throws Exception {
    MockConsumer<String, byte[]> c = consumer(0);
    start(c, Duration.ofHours(1));
    assertEquals(
        0, kafkaCommitted.get(P).offset(), "a brand-new topic's start is committed at once");
    c.addRecord(asyncRequestAndResult("e1", 0));
    c.addRecord(asyncRequestAndResult("e2", 1));
    await(
        () -> status("e1").equals("succeeded") && status("e2").equals("succeeded"),
        "both recorded");
    Thread.sleep(500); // polls that follow commit nothing: the interval has not passed
    assertEquals(0, kafkaCommitted.get(P).offset(), "no commit per poll");
    listener.stop();
    assertEquals(2, kafkaCommitted.get(P).offset(), "what is recorded is committed at stop");
  }

  @Test
  void theResponseTopicsCopyOfAResultTheGateBroughtIsDroppedUnparsed() throws Exception {
    MockConsumer<String, byte[]> c = consumer(0);
    start(c);
    ConsumerRecord<String, byte[]> r = asyncRequestAndResult("e1", 0);
    results.arrived(null, r.value()).get(10, TimeUnit.SECONDS); // through the gate
    // the Kafka copy under the same key: not even read (these bytes are not JSON), not refused
    assertTrue(
        results.arrived("e1", "not json".getBytes(StandardCharsets.UTF_8)).isDone());
    assertEquals(0, results.refused());
    // a key never seen is read as before
    assertTrue(
        results.arrived("e9", "not json".getBytes(StandardCharsets.UTF_8)).isDone());
    assertEquals("succeeded", status("e1"));
  }

  @Test
  void aBrandNewFrontendStartsAtTheEndAndCommitsIt() throws Exception {
    MockConsumer<String, byte[]> c = consumer(7);
    start(c);
    assertEquals(7, c.position(P));
    assertEquals(
        7, kafkaCommitted.get(P).offset(), "committed at once, so whoever reads next has a start");
  }
}
