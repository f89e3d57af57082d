package sand.frontend;

import com.datastax.oss.driver.api.core.DriverTimeoutException;
import com.fasterxml.jackson.databind.JsonNode;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import sand.cluster.FrontendTables;
import sand.cluster.HostAgentTables;
import sand.cluster.InMemoryClusterStore;
import sand.cluster.TriggerTables;
import sand.cluster.globaldata.InMemoryGlobalDataLayer;
import sand.contracts.ApplicationLimits;
import sand.frontend.internal.Json;
import sand.frontend.trigger.TopicSource;

/**
 * A frontend on 127.0.0.1:0 with an in-memory cluster store, a MockProducer (requests and control events
 * land in its history) and a MockConsumer standing in for the response topic, plus an HTTP client.
 */
final class TestFrontend implements AutoCloseable {
  /** A MockConsumer whose empty polls wait a little, as a real consumer's poll blocks. */
  static final class SlowMockConsumer extends MockConsumer<String, byte[]> {
    /** While true, Kafka does not answer: asking for the topic's end times out, as a real consumer's would. */
    final AtomicBoolean away = new AtomicBoolean();

    SlowMockConsumer() {
      super("earliest");
    }

    @Override
    public synchronized Map<TopicPartition, Long> endOffsets(
        Collection<TopicPartition> partitions, Duration timeout) {
      if (away.get()) {
        throw new org.apache.kafka.common.errors.TimeoutException(
            "Failed to get offsets by times in " + timeout.toMillis() + "ms");
      }
      return super.endOffsets(partitions, timeout);
    }

    @Override
    public synchronized ConsumerRecords<String, byte[]> poll(Duration timeout) {
      ConsumerRecords<String, byte[]> r = super.poll(timeout);
      if (r.isEmpty()) {
        try {
          wait(10);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return r;
    }
  }

  /** While true, looking an API key up fails as a Cassandra that does not answer would. */
  final AtomicBoolean accountsAway = new AtomicBoolean();
  /** Reads of applications time out, as with every Cassandra node down. */
  final AtomicBoolean appsAway = new AtomicBoolean();
  /** How long writing an execution's start takes (a slow Cassandra), in ms. */
  final AtomicLong startWriteMs = new AtomicLong();

  /**
   * While above 0, a timer tick's claim is made but its caller learns nothing (an exception, as a Paxos round that
   * timed out would give); each such claim counts it down.
   */
  final AtomicInteger tickClaimsUnknown = new AtomicInteger();
  /** The next timer tick's claim first waits this long, in ms (a Cassandra read or write that stalls), once. */
  final AtomicLong tickClaimStallMs = new AtomicLong();

  /** The cluster state: this frontend's own, or another's it shares ({@link #TestFrontend(TestFrontend)}). */
  final InMemoryClusterStore store;

  private final InMemoryClusterStore own = new InMemoryClusterStore() {
    private final TriggerTables flakyTriggers = (TriggerTables) Proxy.newProxyInstance(
        TriggerTables.class.getClassLoader(),
        new Class<?>[] {TriggerTables.class},
        (p, m, args) -> {
          long stall = m.getName().equals("claimTick") ? tickClaimStallMs.getAndSet(0) : 0;
          if (stall > 0) {
            Thread.sleep(stall);
          }
          Object out;
          try {
            out = m.invoke(realTriggers(), args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
          if (m.getName().equals("claimTick")
              && tickClaimsUnknown.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            throw new DriverTimeoutException("CAS operation result is unknown (test)");
          }
          return out;
        });

    private TriggerTables realTriggers() {
      return super.triggers();
    }

    @Override
    public TriggerTables triggers() {
      return flakyTriggers;
    }

    @Override
    public void startExecution(FrontendTables.ExecutionRecord e, Duration ttl) {
      try {
        Thread.sleep(startWriteMs.get());
      } catch (InterruptedException x) {
        Thread.currentThread().interrupt();
      }
      super.startExecution(e, ttl);
    }

    @Override
    public Optional<HostAgentTables.ApplicationRecord> application(String appId) {
      appsAway();
      return super.application(appId);
    }

    @Override
    public List<HostAgentTables.ApplicationRecord> applications() {
      appsAway();
      return super.applications();
    }

    @Override
    public Optional<FrontendTables.AppName> appName(String name) {
      appsAway();
      return super.appName(name);
    }

    private void appsAway() {
      if (appsAway.get()) {
        throw new DriverTimeoutException("Query timed out after PT10S");
      }
    }

    @Override
    public Optional<String> accountByKey(String apiKeySha256) {
      if (accountsAway.get()) {
        throw new DriverTimeoutException("Query timed out after PT10S");
      }
      return super.accountByKey(apiKeySha256);
    }
  };
  /** The global data layer (the KNIX door's storage actions). */
  final InMemoryGlobalDataLayer data = new InMemoryGlobalDataLayer();

  /** Queue triggers' topics (one partition each) and the consumer each trigger's group was given. */
  static final class MockTopics implements TopicSource {
    final Map<String, MockConsumer<String, byte[]>> byGroup = new ConcurrentHashMap<>();

    @Override
    public OptionalInt partitions(String topic) {
      return OptionalInt.of(1);
    }

    @Override
    public Consumer<String, byte[]> consumer(
        String group, String start, int maxRecords, String clientId) {
      MockConsumer<String, byte[]> c = new MockConsumer<>(start) {
        // a mock forgets what it returned; a topic keeps it, to be read again after a seek back
        private final List<ConsumerRecord<String, byte[]>> log = new ArrayList<>();

        @Override
        public synchronized void addRecord(ConsumerRecord<String, byte[]> r) {
          log.add(r);
          super.addRecord(r);
        }

        @Override
        public synchronized void seek(TopicPartition p, long offset) {
          super.seek(p, offset);
          for (ConsumerRecord<String, byte[]> r : log) {
            if (r.topic().equals(p.topic())
                && r.partition() == p.partition()
                && r.offset() >= offset) {
              super.addRecord(r);
            }
          }
        }

        @Override
        public synchronized ConsumerRecords<String, byte[]> poll(Duration timeout) {
          ConsumerRecords<String, byte[]> r = super.poll(timeout);
          if (r.isEmpty()) {
            try {
              wait(10); // a mock's poll returns at once; a real one waits for records
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
          return r;
        }
      };
      byGroup.put(group, c);
      return c;
    }

    /** The one trigger's consumer once the trigger has started it (up to 10 s). */
    MockConsumer<String, byte[]> await() throws InterruptedException {
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (byGroup.isEmpty() && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      if (byGroup.size() != 1) {
        throw new AssertionError("not one trigger consumer: " + byGroup.keySet());
      }
      return byGroup.values().iterator().next();
    }
  }

  final MockTopics triggerTopics = new MockTopics();
  final MockProducer<String, byte[]> producer;
  final SlowMockConsumer consumer = new SlowMockConsumer();
  final Server server;
  final String url;
  final String id;
  final HttpClient http = HttpClient.newHttpClient();
  private long offset;

  TestFrontend() throws Exception {
    this(Map.of(), true);
  }

  TestFrontend(Map<String, String> settings, boolean autoComplete) throws Exception {
    this(settings, autoComplete, Map.of());
  }

  /** @param limits the operator's caps (SAND_LIMITS_* keys) that differ from their defaults */
  TestFrontend(Map<String, String> settings, boolean autoComplete, Map<String, String> limits)
      throws Exception {
    this(settings, autoComplete, limits, false);
  }

  /**
   * @param withTopics queue triggers read {@link #triggerTopics}' mock consumers (else the frontend has no Kafka
   *     for them and refuses them)
   */
  TestFrontend(
      Map<String, String> settings,
      boolean autoComplete,
      Map<String, String> limits,
      boolean withTopics)
      throws Exception {
    this(settings, autoComplete, limits, withTopics, null);
  }

  /**
   * Another frontend over {@code first}'s cluster state, as several run behind nginx: its own id and caches (the
   * store's switches, such as {@link #accountsAway}, are {@code first}'s).
   */
  TestFrontend(TestFrontend first) throws Exception {
    this(Map.of("id", first.id + "-2"), true, Map.of(), false, first.store);
  }

  private TestFrontend(
      Map<String, String> settings,
      boolean autoComplete,
      Map<String, String> limits,
      boolean withTopics,
      InMemoryClusterStore shared)
      throws Exception {
    store = shared == null ? own : shared;
    Map<String, String> s = new HashMap<>(Map.of("port", "0", "id", "fe-test"));
    s.putAll(settings);
    var config = Frontend.DEF.parse(Map.of(), s);
    id = Frontend.id(config);
    producer =
        new MockProducer<>(autoComplete, null, new StringSerializer(), new ByteArraySerializer());
    TopicPartition p = new TopicPartition("sand.response." + id, 0);
    consumer.updateEndOffsets(Map.of(p, 0L));
    server = Frontend.newServer(
        config,
        ApplicationLimits.from(ApplicationLimits.DEF.parse(Map.of(), limits)),
        new Frontend.Deps(
            store,
            producer,
            consumer,
            t -> {},
            Clock.systemUTC(),
            peer -> {
              throw new IllegalStateException(
                  "no consumer for frontend " + peer + "'s response topic");
            },
            data,
            null,
            withTopics ? triggerTopics : null));
    server.start();
    url = "http://127.0.0.1:" + ((ServerConnector) server.getConnectors()[0]).getLocalPort();
  }

  /** A host agent's answer on the response topic. */
  synchronized void respond(String executionId, JsonNode event) {
    consumer.addRecord(
        new ConsumerRecord<>("sand.response." + id, 0, offset++, executionId, Json.bytes(event)));
  }

  /** The records sent to one topic so far. */
  List<ProducerRecord<String, byte[]>> sent(String topic) {
    return producer.history().stream().filter(r -> r.topic().equals(topic)).toList();
  }

  record Answer(int status, JsonNode json, String body, HttpResponse<String> raw) {}

  Answer call(String method, String path, String key, String contentType, byte[] body)
      throws Exception {
    return toAnswer(http.send(
        request(method, path, key, contentType, body), HttpResponse.BodyHandlers.ofString()));
  }

  CompletableFuture<Answer> callAsync(String method, String path, String key, String body) {
    return http.sendAsync(
            request(method, path, key, "application/json", body == null ? null : body.getBytes()),
            HttpResponse.BodyHandlers.ofString())
        .thenApply(TestFrontend::toAnswer);
  }

  Answer call(String method, String path, String key, String json) throws Exception {
    return call(method, path, key, "application/json", json == null ? null : json.getBytes());
  }

  URI uri(String path) {
    return URI.create(url + path);
  }

  private HttpRequest request(
      String method, String path, String key, String contentType, byte[] body) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url + path))
        .timeout(Duration.ofSeconds(20))
        .method(
            method,
            body == null
                ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofByteArray(body));
    if (key != null) {
      b.header("Authorization", "Bearer " + key);
    }
    if (contentType != null) {
      b.header("Content-Type", contentType);
    }
    return b.build();
  }

  private static Answer toAnswer(HttpResponse<String> r) {
    JsonNode json = null;
    try {
      json = Json.MAPPER.readTree(r.body());
    } catch (Exception e) {
      // not JSON (metrics, code)
    }
    return new Answer(r.statusCode(), json, r.body(), r);
  }

  /** Sign up and return the API key. */
  String signUp(String name) throws Exception {
    return call("POST", "/api/v1/accounts", null, "{\"name\":\"" + name + "\"}")
        .json()
        .path("api_key")
        .asText();
  }

  static final String HELLO =
      "{\"name\":\"hello\",\"entry\":\"greet\",\"functions\":[{\"name\":\"greet\","
          + "\"next\":[\"shout\"]},{\"name\":\"shout\",\"next\":[\"end\"]}]}";

  /** Upload the hello grains and workflow as {@code app}, deploy it, and mark host h1 deployed. */
  String deployHello(String key, String app, String settings) throws Exception {
    for (String g : List.of("greet", "shout")) {
      call(
          "PUT",
          "/api/v1/grains/" + g,
          key,
          "text/x-python",
          "def handle(event, context):\n    return event\n".getBytes());
    }
    String wf =
        settings == null ? HELLO : HELLO.replaceFirst("\\{", "{\"settings\":" + settings + ",");
    Answer put = call("PUT", "/api/v1/apps/" + app, key, wf);
    if (put.status() != 200) {
      throw new AssertionError(put.body());
    }
    store.upsertHost(
        new HostAgentTables.HostInfo("h1", "b", "d", "", 1, 0, Instant.now(), Instant.now()));
    Answer d = call("POST", "/api/v1/apps/" + app + "/deploy", key, null);
    if (d.status() != 202) {
      throw new AssertionError(d.body());
    }
    String appId = d.json().path("id").asText();
    store.setAppHostState(appId, "h1", "deployed", null, Instant.now());
    return appId;
  }

  /** {@link #deployHello} on a frontend whose producer does not complete sends by itself (the deploy's own). */
  String deployHelloCompletingSends(String key, String app) throws Exception {
    CompletableFuture<String> deployed = CompletableFuture.supplyAsync(() -> {
      try {
        return deployHello(key, app, null);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    while (!deployed.isDone()) {
      producer.completeNext(); // the deploy's control event
      Thread.sleep(5);
    }
    return deployed.get();
  }

  @Override
  public void close() {
    try {
      server.stop();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      throw new IllegalStateException("stopping the test frontend", e);
    }
  }
}
