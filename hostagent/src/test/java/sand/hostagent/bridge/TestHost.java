package sand.hostagent.bridge;

import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import sand.cluster.globaldata.InMemoryGlobalDataLayer;
import sand.common.Credentials;
import sand.common.testing.ManualClock;
import sand.contracts.ConditionFlag;
import sand.contracts.ExecutionTag;
import sand.contracts.GrainRef;
import sand.contracts.TopicNames;
import sand.datalayer.LocalDataLayer;
import sand.localbus.LocalBusSettings;
import sand.localbus.LocalMessageBus;

/**
 * One host agent's bridge over fakes (the unit tests' fixture): the in-process local bus and data
 * layer over an in-memory global layer, MockConsumer and MockProducer. Application "shop" runs grains
 * "resize" and "store" here; "publish" runs elsewhere. Each topic has {@link #PARTITIONS} partitions.
 */
final class TestHost implements AutoCloseable {
  static final String AGENT = "host-agent-credential-0123456789";
  static final String APP = "shop";
  static final String CRED = "credential-of-shop-0123456789";
  static final String OTHER_APP = "mall";
  static final String OTHER_CRED = "credential-of-mall-0123456789";
  static final String FRONTEND = "fe1";
  static final int PARTITIONS = 2;
  static final GrainRef RESIZE = new GrainRef(APP, "resize");
  static final GrainRef STORE = new GrainRef(APP, "store");
  static final GrainRef PUBLISH = new GrainRef(APP, "publish");
  /** The execution tags of a test cluster (a fixed secret). */
  static final ExecutionTag TAGS =
      new ExecutionTag("test-cluster-secret-0123456789".getBytes(StandardCharsets.UTF_8));
  /** The grains of shop's workflow, as the deployer knows them. */
  static final Set<String> SHOP_GRAINS = Set.of(RESIZE.grain(), STORE.grain(), PUBLISH.grain());

  final String hostId;
  final ManualClock clock = new ManualClock(Instant.ofEpochMilli(1_000_000));
  final Credentials credentials = new Credentials(AGENT);
  final LocalMessageBus bus;
  final InMemoryGlobalDataLayer global;
  final LocalDataLayer data;
  final MockConsumer<String, byte[]> consumer = new MockConsumer<>("earliest");
  final MockProducer<String, byte[]> producer;
  final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
  final BridgeSettings settings;
  final GlobalBusBridge bridge;
  final HostAgentQueueProcessor processor;
  final List<InstanceReport> reports = new CopyOnWriteArrayList<>();
  /** Also called with each accepted report, after it is added to {@link #reports} (a test may block in it). */
  volatile Consumer<InstanceReport> onReport = r -> {};
  /** Gets the supervisors' worker reports (the deployer's part in the host agent); none by default. */
  volatile HostAgentQueueProcessor.WorkerHealth health;
  /** Whether a host is known to have failed (the cluster membership's part); none by default. */
  volatile Predicate<String> hostDead = host -> false;

  TestHost() {
    this("h1", new InMemoryGlobalDataLayer(), 10_000, true);
  }

  TestHost(String hostId, InMemoryGlobalDataLayer global, int queueCapacity, boolean autoComplete) {
    this(hostId, global, queueCapacity, autoComplete, s -> s);
  }

  TestHost(
      String hostId,
      InMemoryGlobalDataLayer global,
      int queueCapacity,
      boolean autoComplete,
      UnaryOperator<BridgeSettings> tweak) {
    this.hostId = hostId;
    this.global = global;
    this.bus = new LocalMessageBus(
        credentials, LocalBusSettings.defaults().withQueueCapacity(queueCapacity));
    this.data = new LocalDataLayer(
        credentials,
        global,
        LocalDataLayer.Options.defaults()
            .withValueMaxBytes(1000)
            .withRetryMaxBackoff(Duration.ofMillis(20)));
    data.grantApplication(AGENT, APP, CRED);
    data.grantApplication(AGENT, OTHER_APP, OTHER_CRED);
    this.producer = new MockProducer<>(
        cluster(), autoComplete, null, new StringSerializer(), new ByteArraySerializer());
    this.settings = tweak.apply(BridgeSettings.defaults(hostId)
        .withCommitInterval(Duration.ZERO)
        .withSendBackoff(Duration.ofMillis(5), Duration.ofMillis(20))
        .withRevokeDrain(Duration.ZERO));
    this.bridge = new GlobalBusBridge(
        settings,
        consumer,
        producer,
        bus,
        AGENT,
        data,
        clock,
        scheduler,
        host -> hostDead.test(host));
    this.processor = new HostAgentQueueProcessor(
        bridge,
        bus,
        AGENT,
        data,
        TAGS,
        (app, grain) -> app.equals(APP) ? SHOP_GRAINS.contains(grain) : app.equals(OTHER_APP),
        (app, grain, state, message) -> {
          HostAgentQueueProcessor.WorkerHealth to = health;
          if (to != null) {
            to.report(app, grain, state, message);
          }
        },
        null,
        r -> {
          reports.add(r);
          onReport.accept(r);
        });
  }

  static TopicPartition tp(GrainRef g, int partition) {
    return new TopicPartition(g.topic(), partition);
  }

  /** Run RESIZE and STORE here and get the given partitions; records before {@code committed} are done. */
  void assign(
      Map<TopicPartition, Long> committed,
      Map<TopicPartition, Long> ends,
      TopicPartition... parts) {
    Map<TopicPartition, Long> begin = new HashMap<>();
    Map<TopicPartition, Long> end = new HashMap<>();
    for (GrainRef g : List.of(RESIZE, STORE)) {
      for (int p = 0; p < PARTITIONS; p++) {
        begin.put(tp(g, p), 0L);
        end.put(tp(g, p), 0L);
      }
    }
    end.putAll(ends);
    consumer.updateBeginningOffsets(begin);
    consumer.updateEndOffsets(end);
    Map<TopicPartition, OffsetAndMetadata> c = new HashMap<>();
    committed.forEach((tp, o) -> c.put(tp, new OffsetAndMetadata(o)));
    bridge.updateGrains(Set.of(RESIZE, STORE));
    bridge.pollOnce(); // subscribes (MockConsumer forgets commits on subscribe: commit after)
    if (!c.isEmpty()) {
      consumer.commitSync(c);
    }
    consumer.rebalance(List.of(parts));
  }

  void assign(TopicPartition... parts) {
    assign(Map.of(), Map.of(), parts);
  }

  void add(TopicPartition tp, long offset, ConditionFlag flag) {
    consumer.addRecord(
        new ConsumerRecord<>(tp.topic(), tp.partition(), offset, flag.eventId(), flag.value()));
  }

  /** Everything waiting in a local queue now, as events. */
  List<ObjectNode> drain(GrainRef g) throws Exception {
    List<ObjectNode> out = new ArrayList<>();
    for (byte[] b : bus.poll(AGENT, g.localQueue(), 1000, 0)) {
      out.add((ObjectNode) ConditionFlag.JSON.readTree(b));
    }
    return out;
  }

  static List<String> ids(List<ObjectNode> events) {
    return events.stream().map(e -> e.path("id").asText()).toList();
  }

  /** The records sent so far, parsed, for one topic. */
  List<ConditionFlag> flags(String topic) {
    List<ConditionFlag> out = new ArrayList<>();
    for (ProducerRecord<String, byte[]> r : producer.history()) {
      if (r.topic().equals(topic)) {
        out.add(ConditionFlag.parse(r.key(), r.value()));
      }
    }
    return out;
  }

  List<ProducerRecord<String, byte[]>> sent(String topic) {
    return producer.history().stream().filter(r -> r.topic().equals(topic)).toList();
  }

  static ObjectNode event(String id, GrainRef to) {
    ObjectNode e = ConditionFlag.JSON.createObjectNode();
    e.put("id", id)
        .put("execution_id", "exec-" + id)
        .put("app", to.app())
        .put("grain", to.grain())
        .put("from", "")
        .put("frontend", FRONTEND)
        .put("value", "v-" + id)
        .put("sent_ns", 1_700_000_000_000_000_000L)
        .put("tag", TAGS.of(to.app(), "exec-" + id, FRONTEND));
    return e;
  }

  /** A grain instance's report, as grainworker/instance.py writes it. */
  static byte[] report(
      String type,
      String app,
      String grain,
      String handledId,
      List<ObjectNode> outputs,
      List<List<String>> data) {
    return ConditionFlag.toBytes(reportJson(type, app, grain, handledId, outputs, data));
  }

  /** {@link #report} as JSON, for a test to change before publishing it. */
  static ObjectNode reportJson(
      String type,
      String app,
      String grain,
      String handledId,
      List<ObjectNode> outputs,
      List<List<String>> data) {
    ObjectNode r = ConditionFlag.JSON.createObjectNode();
    r.put("type", type)
        .put("app", app)
        .put("grain", grain)
        .put("execution_id", "exec-" + handledId)
        .put("event_id", handledId)
        .put("frontend", FRONTEND)
        .put("status", "ok");
    outputs.forEach(r.putArray("outputs")::add);
    var d = r.putArray("data");
    data.forEach(item -> d.addArray().add(item.get(0)).add(item.get(1)));
    r.putArray("logs");
    r.put("start_ns", 1L).put("end_ns", 2L).put("pid", 42);
    return r;
  }

  /** An output event of a report: {@code to} is the next grain (or "end"), {@code local} as the instance saw it. */
  static ObjectNode output(String id, String app, String to, boolean local, String execution) {
    ObjectNode e = ConditionFlag.JSON.createObjectNode();
    e.put("id", id)
        .put("execution_id", execution)
        .put("app", app)
        .put("grain", to)
        .put("from", "resize")
        .put("frontend", FRONTEND)
        .put("value", "out-" + id)
        .put("sent_ns", 1_700_000_000_000_000_001L)
        .put("local", local)
        .put("tag", TAGS.of(app, execution, FRONTEND));
    return e;
  }

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** Wait up to 5 s for {@code condition} (async completions on the scheduler), else fail. */
  static void eventually(String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + 5_000_000_000L;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("not within 5 s: " + what);
      }
      try {
        Thread.sleep(5);
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
    }
  }

  private static Cluster cluster() {
    Node node = new Node(0, "localhost", 9092);
    List<PartitionInfo> parts = new ArrayList<>();
    for (GrainRef g : List.of(RESIZE, STORE, PUBLISH)) {
      for (int p = 0; p < PARTITIONS; p++) {
        parts.add(new PartitionInfo(g.topic(), p, node, new Node[] {node}, new Node[] {node}));
      }
    }
    parts.add(new PartitionInfo(
        TopicNames.responseTopic(FRONTEND), 0, node, new Node[] {node}, new Node[] {node}));
    return new Cluster("test", List.of(node), parts, Set.of(), Set.of());
  }

  @Override
  public void close() {
    global.setAvailable(true);
    processor.close();
    bridge.close();
    scheduler.shutdownNow();
    data.close();
  }
}
