package sand.hostagent.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import sand.cluster.KafkaClients;
import sand.cluster.globaldata.InMemoryGlobalDataLayer;
import sand.common.Credentials;
import sand.contracts.ConditionFlag;
import sand.contracts.ConditionFlag.Flag;
import sand.contracts.GrainRef;
import sand.contracts.TopicNames;
import sand.datalayer.LocalDataLayer;
import sand.localbus.Delivery;
import sand.localbus.LocalBusSettings;
import sand.localbus.LocalMessageBus;

/**
 * The bridge against the real Kafka (-Dsand.it=true; broker {@code sand.kafka}, default
 * 127.0.0.1:9092): throwaway topics of a random application and a consumer group of their own, deleted
 * at the end. The grain instances are played by the test, publishing what grainworker/instance.py
 * publishes.
 */
class GlobalBusBridgeKafkaTest {
  private static final String AGENT = "host-agent-credential-0123456789";
  private static final String APP_CRED = "credential-of-the-it-app-0123456789";
  private static final Duration WAIT = Duration.ofSeconds(30);

  private final String suffix =
      HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
  private final String app = "it" + suffix;
  private final String frontend = "itfe" + suffix;
  private final String group = TopicNames.GROUP + ".it-" + suffix;
  private final GrainRef resize = new GrainRef(app, "resize");
  private final GrainRef store = new GrainRef(app, "store");
  private final String bootstrap = System.getProperty("sand.kafka", "127.0.0.1:9092");
  private final List<AutoCloseable> toClose = new ArrayList<>();
  private Admin admin;

  /** One host agent's bridge: its own local bus, data layer, Kafka clients. */
  private final class Host implements AutoCloseable {
    final Credentials credentials = new Credentials(AGENT);
    final LocalMessageBus bus = new LocalMessageBus(credentials, LocalBusSettings.defaults());
    final LocalDataLayer data = new LocalDataLayer(
        credentials, new InMemoryGlobalDataLayer(), LocalDataLayer.Options.defaults());
    final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    final Producer<String, byte[]> producer;
    final GlobalBusBridge bridge;
    final HostAgentQueueProcessor processor;

    Host(String hostId) {
      data.grantApplication(AGENT, app, APP_CRED);
      BridgeSettings s = BridgeSettings.defaults(hostId)
          .withGroupId(group)
          .withCommitInterval(Duration.ofMillis(100));
      producer = KafkaClients.producer(bootstrap, hostId);
      bridge = new GlobalBusBridge(
          s,
          KafkaClients.consumer(bootstrap, s.groupId(), s.hostId()),
          producer,
          bus,
          AGENT,
          data,
          Clock.systemUTC(),
          scheduler,
          host -> false);
      processor = new HostAgentQueueProcessor(
          bridge, bus, AGENT, data, TestHost.TAGS, (a, g) -> true, null, null, null);
      bridge.updateGrains(Set.of(resize, store));
      bridge.start();
      processor.start();
      waitFor(
          "host " + hostId + " owns every partition",
          () -> bridge
              .ownedPartitions()
              .equals(Map.of(resize.topic(), List.of(0, 1), store.topic(), List.of(0, 1))));
    }

    /** The next event in a grain's local queue (what its grain worker would take). */
    ObjectNode take(GrainRef g) throws Exception {
      List<byte[]> got = bus.poll(AGENT, g.localQueue(), 1, (int) WAIT.toMillis());
      assertFalse(got.isEmpty(), "nothing reached " + g.localQueue());
      return (ObjectNode) ConditionFlag.JSON.readTree(got.get(0));
    }

    /** Play the grain instance that handled {@code handled}: its local outputs and its report, atomically. */
    void finish(GrainRef g, ObjectNode handled, List<ObjectNode> outputs) {
      List<Delivery> batch = new ArrayList<>();
      for (ObjectNode o : outputs) {
        if (o.path("local").asBoolean()) {
          batch.add(new Delivery(
              app + "/" + o.path("grain").asText(),
              ConditionFlag.toBytes(o.deepCopy().without("local"))));
        }
      }
      batch.add(new Delivery(
          LocalMessageBus.HOST_AGENT_QUEUE,
          TestHost.report(
              "finished", app, g.grain(), handled.path("id").asText(), outputs, List.of())));
      bus.publishBatch(APP_CRED, batch);
    }

    private boolean closed;

    @Override
    public void close() {
      if (closed) {
        return;
      }
      closed = true;
      processor.close();
      bridge.close();
      producer.close(Duration.ofSeconds(5));
      scheduler.shutdownNow();
      data.close();
    }
  }

  @BeforeEach
  void topics() throws Exception {
    Assumptions.assumeTrue(Boolean.getBoolean("sand.it"), "integration test: -Dsand.it=true");
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    admin = Admin.create(p);
    admin
        .createTopics(List.of(
            new NewTopic(resize.topic(), 2, (short) 1),
            new NewTopic(store.topic(), 2, (short) 1),
            new NewTopic(TopicNames.responseTopic(frontend), 1, (short) 1)))
        .all()
        .get();
  }

  @AfterEach
  void cleanUp() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
    if (admin != null) {
      admin
          .deleteTopics(List.of(resize.topic(), store.topic(), TopicNames.responseTopic(frontend)))
          .all()
          .get();
      admin.deleteConsumerGroups(List.of(group)).all().get();
      admin.close();
    }
  }

  private Host host(String id) {
    Host h = new Host(id);
    toClose.add(h);
    return h;
  }

  private ObjectNode event(String id, GrainRef to) {
    ObjectNode e = ConditionFlag.JSON.createObjectNode();
    e.put("id", id)
        .put("execution_id", "exec-" + id)
        .put("app", app)
        .put("grain", to.grain())
        .put("from", "")
        .put("frontend", frontend)
        .put("value", "v-" + id)
        .put("sent_ns", System.currentTimeMillis() * 1_000_000L);
    e.put("tag", TestHost.TAGS.of(app, "exec-" + id, frontend));
    return e;
  }

  private ObjectNode output(ObjectNode source, String id, String to, boolean local) {
    ObjectNode o = event(id, new GrainRef(app, to.equals("end") ? "x" : to));
    o.put("grain", to)
        .put("execution_id", source.path("execution_id").asText())
        .put("local", local)
        .put("tag", source.path("tag").asText());
    return o;
  }

  /** What a frontend does: a new event for the entry grain, into a chosen partition. */
  private void produceNew(ObjectNode event, int partition) throws Exception {
    try (Producer<String, byte[]> fe = KafkaClients.producer(bootstrap, "frontend-" + suffix)) {
      fe.send(KafkaClients.record(resize.topic(), partition, ConditionFlag.newEvent(event, "")))
          .get();
    }
  }

  /** Every record of {@code topic} from its beginning, read until {@code until} holds. */
  private List<ConsumerRecord<String, byte[]>> read(
      String topic, Predicate<List<ConsumerRecord<String, byte[]>>> until) throws Exception {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    try (KafkaConsumer<String, byte[]> c =
        new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> parts = c.partitionsFor(topic).stream()
          .map(i -> new TopicPartition(topic, i.partition()))
          .toList();
      c.assign(parts);
      c.seekToBeginning(parts);
      List<ConsumerRecord<String, byte[]>> out = new ArrayList<>();
      long deadline = System.nanoTime() + WAIT.toNanos();
      while (!until.test(out)) {
        if (System.nanoTime() > deadline) {
          fail("records of " + topic + " not as expected within " + WAIT + ": "
              + out.stream().map(this::show).toList());
        }
        c.poll(Duration.ofMillis(200)).forEach(out::add);
      }
      return out;
    }
  }

  private String show(ConsumerRecord<String, byte[]> r) {
    return r.partition() + "@" + r.offset() + ":" + new String(r.value());
  }

  private static Predicate<List<ConsumerRecord<String, byte[]>>> has(String key, Flag flag) {
    return rs -> rs.stream()
        .anyMatch(
            r -> r.key().equals(key) && ConditionFlag.parse(r.key(), r.value()).flag() == flag);
  }

  private static ConsumerRecord<String, byte[]> find(
      List<ConsumerRecord<String, byte[]>> rs, String key, Flag flag) {
    return rs.stream()
        .filter(
            r -> r.key().equals(key) && ConditionFlag.parse(r.key(), r.value()).flag() == flag)
        .findFirst()
        .orElseThrow();
  }

  private long committed(TopicPartition tp) throws Exception {
    OffsetAndMetadata o = admin
        .listConsumerGroupOffsets(group)
        .partitionsToOffsetAndMetadata()
        .get()
        .get(tp);
    return o == null ? -1 : o.offset();
  }

  private void waitFor(String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("not within " + WAIT + ": " + what);
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
    }
  }

  private void waitForCommitted(TopicPartition tp, long offset) {
    waitFor("committed offset of " + tp + " reaches " + offset, () -> {
      try {
        return committed(tp) == offset;
      } catch (Exception e) {
        throw new AssertionError(e);
      }
    });
  }

  @Test
  void figure4OnTheRealKafka() throws Exception {
    Host a = host("a" + suffix);
    TopicPartition resize0 = new TopicPartition(resize.topic(), 0);

    // steps 0-2: a new event in resize-0 reaches resize's local queue
    produceNew(event("e1", resize), 0);
    ObjectNode e1 = a.take(resize);
    assertEquals("e1", e1.path("id").asText());
    assertTrue(committed(resize0) <= 0, "nothing committed past an unfinished event");

    // steps 5-6b, 10b: the resize instance delivers o1 locally; the agent backs it up, processing,
    // to a
    // partition of store it owns; then e1's finished flag goes next to e1's record
    a.finish(resize, e1, List.of(output(e1, "o1", "store", true)));
    ObjectNode o1 = a.take(store);
    List<ConsumerRecord<String, byte[]>> storeRecs =
        read(store.topic(), has("o1", Flag.PROCESSING));
    int o1Partition = find(storeRecs, "o1", Flag.PROCESSING).partition();
    assertTrue(a.bridge.ownedPartitions().get(store.topic()).contains(o1Partition));
    List<ConsumerRecord<String, byte[]>> resizeRecs =
        read(resize.topic(), has("e1", Flag.FINISHED));
    assertEquals(0, find(resizeRecs, "e1", Flag.FINISHED).partition());
    waitForCommitted(resize0, 2); // past e1 and its finished record

    // steps 7-11: the store instance ends the workflow; the result reaches the frontend's response
    // topic
    a.finish(store, o1, List.of(output(o1, "r1", "end", false)));
    List<ConsumerRecord<String, byte[]>> results =
        read(TopicNames.responseTopic(frontend), rs -> !rs.isEmpty());
    assertEquals("exec-e1", results.get(0).key());
    assertEquals(
        "r1", ConditionFlag.JSON.readTree(results.get(0).value()).path("id").asText());
    storeRecs = read(store.topic(), has("o1", Flag.FINISHED));
    assertEquals(
        o1Partition,
        find(storeRecs, "o1", Flag.FINISHED).partition(),
        "same partition as the backup");

    // the committed offset moves only up to the oldest unfinished event
    produceNew(event("e2", resize), 0); // offset 2
    produceNew(event("e3", resize), 0); // offset 3
    ObjectNode e2 = a.take(resize);
    ObjectNode e3 = a.take(resize);
    a.finish(resize, e3, List.of()); // finished e3 at offset 4, e2 still running
    read(resize.topic(), has("e3", Flag.FINISHED));
    waitFor(
        "the bridge read e3's finished flag",
        () -> a.bridge.tracker().pendingRecords(resize0) == 1);
    Thread.sleep(500); // several commit intervals: nothing may move past e2
    assertEquals(2, committed(resize0));
    a.finish(resize, e2, List.of()); // finished e2 at offset 5
    waitForCommitted(resize0, 6);
  }

  @Test
  void aSecondHostTakesOverAndReprocessesExactlyTheUnfinishedEvent() throws Exception {
    Host a = host("a" + suffix);
    TopicPartition resize0 = new TopicPartition(resize.topic(), 0);
    produceNew(event("e1", resize), 0);
    produceNew(event("e2", resize), 0);
    produceNew(event("e3", resize), 0);
    ObjectNode e1 = a.take(resize);
    ObjectNode e2 = a.take(resize);
    ObjectNode e3 = a.take(resize);
    assertEquals(
        List.of("e1", "e2", "e3"),
        List.of(e1.path("id").asText(), e2.path("id").asText(), e3.path("id").asText()));
    a.finish(resize, e1, List.of(output(e1, "o1", "store", true)));
    a.finish(store, a.take(store), List.of(output(e1, "r1", "end", false)));
    a.finish(resize, e3, List.of());
    read(resize.topic(), has("e3", Flag.FINISHED).and(has("e1", Flag.FINISHED)));
    read(store.topic(), has("o1", Flag.FINISHED));
    waitForCommitted(resize0, 1); // e2 at offset 1 is the oldest unfinished
    a.close(); // host a goes away with e2 unfinished

    Host b = host(
        "b" + suffix); // same group, "another host": gets every partition, replays from offset 1
    ObjectNode replayed = b.take(resize);
    // the same event; its trace says which host took it each time (a's entry is gone with a's copy)
    assertEquals(e2.deepCopy().without("trace"), replayed.deepCopy().without("trace"));
    assertEquals("b" + suffix, replayed.path("trace").path(0).path(1).asText());
    assertTrue(
        b.bus.poll(AGENT, resize.localQueue(), 10, 2000).isEmpty(),
        "e1 and e3 are finished: not again");
    assertTrue(b.bus.poll(AGENT, store.localQueue(), 10, 0).isEmpty(), "o1 is finished: not again");
    b.finish(resize, replayed, List.of());
    List<ConsumerRecord<String, byte[]>> recs = read(
        resize.topic(),
        rs -> rs.stream()
                .filter(r -> r.key().equals("e2")
                    && ConditionFlag.parse(r.key(), r.value()).flag() == Flag.FINISHED)
                .count()
            == 1);
    assertEquals(
        "b" + suffix,
        ConditionFlag.parse("e2", find(recs, "e2", Flag.FINISHED).value()).host());
    waitForCommitted(
        resize0,
        recs.stream()
            .filter(r -> r.partition() == 0)
            .mapToLong(r -> r.offset() + 1)
            .max()
            .orElseThrow());
  }
}
