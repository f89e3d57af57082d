package sand.hostagent.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.hostagent.bridge.TestHost.AGENT;
import static sand.hostagent.bridge.TestHost.APP;
import static sand.hostagent.bridge.TestHost.OTHER_APP;
import static sand.hostagent.bridge.TestHost.OTHER_CRED;
import static sand.hostagent.bridge.TestHost.RESIZE;
import static sand.hostagent.bridge.TestHost.TAGS;
import static sand.hostagent.bridge.TestHost.tp;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import sand.cluster.BucketTables.Bucket;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.cluster.InMemoryClusterStore;
import sand.contracts.ConditionFlag;
import sand.contracts.ConditionFlag.Flag;
import sand.contracts.Rules;
import sand.datalayer.DataLayerService;

/**
 * Data triggers on the test host's real bus, data layer and bridge (MockProducer), with the cluster state in
 * memory: a write into a bucket starts its targets here, backed up; elsewhere (or when full) through Kafka.
 */
class BucketTriggersTest {
  private static final String OWNER = "alice";
  private static final String HERE = workflow("resize");
  private static final String ELSEWHERE = workflow("publish");

  private TestHost h;
  private final InMemoryClusterStore store = new InMemoryClusterStore();
  private BucketTriggers triggers;

  private static String workflow(String entry) {
    return "{\"name\": \"shop\", \"entry\": \"" + entry
        + "\", \"functions\": [{\"name\": \"resize\", "
        + "\"next\": [\"end\"]}, {\"name\": \"store\", \"next\": [\"end\"]}, {\"name\": \"publish\", "
        + "\"next\": [\"end\"]}]}";
  }

  private void app(String id, String owner, String workflow, String desired) {
    store.putApplication(
        new ApplicationRecord(id, id + "-name", owner, workflow, "", "{}", 1, desired, List.of()),
        Map.of());
  }

  private void setUp(int queueCapacity) {
    setUp(queueCapacity, true, BucketTriggers.MAX_UNACKNOWLEDGED_BYTES);
  }

  private void setUp(int queueCapacity, boolean kafkaAnswers, long maxUnacknowledged) {
    h = new TestHost(
        "h1", new sand.cluster.globaldata.InMemoryGlobalDataLayer(), queueCapacity, kafkaAnswers);
    h.assign(tp(RESIZE, 0), tp(RESIZE, 1));
    triggers = new BucketTriggers(
        "h1",
        store,
        TAGS,
        new LocalDelivery(h.bridge, h.bus, AGENT),
        Clock.systemUTC(),
        Duration.ofDays(1),
        maxUnacknowledged,
        Duration.ofMillis(100));
    h.data.onMapEntryPut(triggers::mapEntryPut);
    store.frontendHeartbeat("fe1", Instant.now());
    app(OTHER_APP, OWNER, HERE, "deployed"); // the writer
    app(APP, OWNER, HERE, "deployed"); // the target; its entry grain runs here
    store.buckets().createBucket(new Bucket(OWNER, "photos", List.of(APP), Instant.now()));
  }

  @BeforeEach
  void setUp() {
    setUp(10_000);
  }

  @AfterEach
  void close() {
    triggers.close();
    h.close();
  }

  /** A grain of {@code mall} writes through the data layer's Thrift service, as a grain instance does. */
  private void write(String map, String key, String value) throws Exception {
    new DataLayerService(h.data)
        .putMapEntry(OTHER_CRED, map, key, ByteBuffer.wrap(value.getBytes(StandardCharsets.UTF_8)));
  }

  private static String bucket(String name) {
    return Rules.BUCKET_MAP_PREFIX + name;
  }

  @Test
  void aWriteStartsTheTargetHereBackedUpAndRecordedWithItsTriggerNamed() throws Exception {
    write(bucket("photos"), "cat.jpg", "{\"size\": 3}");
    List<ObjectNode> queued = h.drain(RESIZE);
    assertEquals(1, queued.size(), "in the target's entry grain's local queue at once");
    ObjectNode e = queued.get(0);
    assertEquals(APP, e.path("app").asText());
    assertEquals("fe1", e.path("frontend").asText(), "a live frontend records its result");
    assertTrue(TAGS.verify(e.path("tag").asText(), APP, e.path("execution_id").asText(), "fe1"));
    assertEquals(
        "{\"trigger_type\":\"storage\",\"key\":\"cat.jpg\",\"value\":\"{\\\"size\\\": 3}\","
            + "\"source\":\"photos\"}",
        e.path("value").toString(),
        "KNIX's storage trigger event");
    assertEquals("trigger", e.path("trace").path(0).path(0).asText());
    assertEquals("bucket:photos@h1", e.path("trace").path(0).path(1).asText());
    List<ConditionFlag> flags = h.flags(RESIZE.topic());
    assertEquals(1, flags.size());
    assertEquals(Flag.PROCESSING, flags.get(0).flag(), "backed up like any local event");
    assertEquals(e.path("id").asText(), flags.get(0).eventId());
    String exec = e.path("execution_id").asText();
    TestHost.eventually("the start record", () -> store.execution(exec).isPresent());
    assertEquals("running", store.execution(exec).get().status());
    assertEquals(APP, store.execution(exec).get().appId());
    var fired = store.buckets().firedEvent(exec).orElseThrow(); // kept for the frontend's retries
    assertEquals(APP, fired.appId());
    assertEquals(APP + "-name", fired.app());
    assertEquals("photos", fired.bucket());
    assertEquals(e.path("value").toString(), fired.event());
    TestHost.eventually("the log line", () -> !store.logs(exec).isEmpty());
    assertTrue(
        store.logs(exec).get(0).text().contains("bucket:photos"),
        store.logs(exec).toString());
    assertEquals(Map.of("local", 1L), triggers.counts());
  }

  @Test
  void aTargetNotRunningHereGetsTheEventThroughItsTopic() throws Exception {
    app(APP, OWNER, ELSEWHERE, "deployed");
    write(bucket("photos"), "k", "v");
    assertTrue(h.drain(RESIZE).isEmpty());
    List<ConditionFlag> flags = h.flags("sand." + APP + ".publish");
    assertEquals(1, flags.size());
    assertEquals(Flag.NEW, flags.get(0).flag(), "for the hosts that run it");
    assertEquals(Map.of("kafka", 1L), triggers.counts());
  }

  @Test
  void writesFasterThanTheTargetRunsWaitInKafkaNotInMemory() throws Exception {
    close();
    setUp(2); // a local queue of two
    for (int i = 0; i < 5; i++) {
      write(bucket("photos"), "k" + i, "v");
    }
    assertEquals(2, h.drain(RESIZE).size(), "the bounded local queue takes what it can");
    long forwarded =
        h.flags(RESIZE.topic()).stream().filter(f -> f.flag() == Flag.NEW).count();
    assertEquals(3, forwarded, "the rest go to the target's topic, where the partition waits");
  }

  @Test
  void nothingStartsForAnotherAccountsBucketAnOrdinaryMapOrAnUndeployedTarget() throws Exception {
    store.buckets().createBucket(new Bucket("bob", "bobs", List.of(APP), Instant.now()));
    write(bucket("bobs"), "k", "v"); // mall is alice's: bob's bucket is not one of hers
    write("photos", "k", "v"); // a map of mall, not a bucket
    store.buckets().createBucket(new Bucket(OWNER, "quiet", List.of(), Instant.now()));
    write(bucket("quiet"), "k", "v"); // a bucket nobody listens to
    app(APP, OWNER, HERE, "undeployed");
    triggers.forget(OWNER);
    write(bucket("photos"), "k", "v");
    assertTrue(h.drain(RESIZE).isEmpty());
    assertTrue(h.producer.history().isEmpty());
    assertEquals(Map.of("skipped", 1L), triggers.counts());
  }

  @Test
  void aTargetAddedLaterFiresOnceTheAccountsBucketsAreReadAgain() throws Exception {
    store.buckets().createBucket(new Bucket(OWNER, "later", List.of(), Instant.now()));
    write(bucket("later"), "k", "v");
    store.buckets().setTargets(OWNER, "later", List.of(APP));
    triggers.forget(OWNER); // the control event {"type": "buckets", "owner": "alice"}
    write(bucket("later"), "k", "v");
    assertEquals(1, h.drain(RESIZE).size());
  }

  @Test
  void whileKafkaDoesNotAnswerTheWritersWaitAndThenTheirTriggersAreGivenUpNotHeld()
      throws Exception {
    close();
    setUp(10_000, false, 3000); // room for two events' sends
    write(bucket("photos"), "k1", "v");
    write(bucket("photos"), "k2", "v");
    long t0 = System.nanoTime();
    write(
        bucket("photos"),
        "k3",
        "v"); // waits for room (100 ms here, 30 s by default), then gives up
    assertTrue(System.nanoTime() - t0 >= 90_000_000L, "the writer waited");
    assertEquals(2, h.drain(RESIZE).size());
    assertEquals(Map.of("local", 2L, "failed", 1L), triggers.counts());
    while (h.producer.completeNext()) {} // Kafka is back: the backups are acknowledged, room again
    write(bucket("photos"), "k4", "v");
    assertEquals(1, h.drain(RESIZE).size());
  }
}
