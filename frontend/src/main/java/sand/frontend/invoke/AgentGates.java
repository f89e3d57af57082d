package sand.frontend.invoke;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.thrift.TConfiguration;
import org.apache.thrift.TException;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.transport.TSocket;
import org.eclipse.jetty.util.component.AbstractLifeCycle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.ClusterStore;
import sand.cluster.HostAgentTables.HostInfo;
import sand.contracts.Event;
import sand.contracts.LoadReport;
import sand.contracts.gate.Admission;
import sand.contracts.gate.HostAgentGate;
import sand.frontend.internal.Json;

/**
 * This frontend's side of the host agents' gates (contracts/gate.thrift, docs/host-agent.md "The gate"): a
 * request goes straight to a host agent that runs its application, and its result comes straight back, instead
 * of two trips through Kafka. Per agent one thread long-polls the agent's mailbox for this frontend (results,
 * backup acknowledgements); requests are submitted on a small pool of connections.
 *
 * <p>A request the agent accepted stays here until the agent acknowledges its backup in Kafka. When the poll
 * connection to that agent breaks (or the agent shows up at another address), the request is put into Kafka by
 * this frontend ({@code fallback}): the paper's guarantee (the event reaches Kafka before it can be lost) holds,
 * and a duplicate run is answered only once (first result wins). An agent that is alive and polled keeps its
 * requests however long Kafka takes its backups (its own sends retry until Kafka has them): putting them into
 * Kafka here as well would run them twice, as it did for a third of the requests while Kafka failed over after a
 * host died. Only after {@code liveAckTimeout} (an acknowledgement lost, say) is such a request put into Kafka. A request Kafka did not take
 * (its brokers failing over, say) stays here and is put again every {@link #RETRY} until Kafka has it: the caller
 * may already hold a 202. An agent that is not reachable, does not run the grain or is busy answers no: the
 * request then goes through Kafka as before.
 */
public final class AgentGates extends AbstractLifeCycle {
  private static final Logger LOG = LoggerFactory.getLogger(AgentGates.class);
  /** How long an agent that is alive and polled may take to acknowledge a backup (a lost acknowledgement). */
  private static final Duration LIVE_ACK_TIMEOUT = Duration.ofMinutes(5);

  private static final Duration RETRY = Duration.ofSeconds(1);
  private static final int POOL = 8;
  private static final int CONNECT_TIMEOUT_MS = 1000;
  private static final int POLL_WAIT_MS = 1000;
  /**
   * No call waits longer for an answer: a host whose link is cut sends no reset, and a call without a timeout
   * would wait forever (its requests with it). A poll is answered within {@link #POLL_WAIT_MS}, a submit at once.
   */
  private static final int READ_TIMEOUT_MS = 5000;

  /**
   * A request an agent's {@code gate} accepted, not yet backed up in Kafka; or ({@code gate} null) one this frontend
   * is putting into Kafka itself. Put into Kafka (again) here at {@code dueNanos} unless its gate is still live.
   */
  private record Unacked(Event event, Gate gate, long dueNanos) {}

  private final class Gate {
    final String host;
    final String address;
    final BlockingQueue<HostAgentGate.Client> idle = new ArrayBlockingQueue<>(POOL);
    volatile boolean up = true;
    volatile long downUntilNanos;
    Thread poller;

    Gate(String host, String address) {
      this.host = host;
      this.address = address;
    }
  }

  private final ClusterStore store;
  private final Clock clock;
  private final Duration hostMaxAge;
  private final String frontendId;
  private final Supplier<String> credential;
  private final Consumer<byte[]> results;
  private final Function<Event, CompletableFuture<Void>> fallback;
  private final Duration liveAckTimeout;
  private final Map<String, Gate> gates = new ConcurrentHashMap<>();
  private final Map<String, Unacked> unacked = new ConcurrentHashMap<>();
  private final AtomicLong submitted = new AtomicLong();
  private volatile long hostsReadNanos;
  /** The host agents' load reports as last read, by host. */
  private volatile Map<String, LoadReport> loads = Map.of();

  private final java.util.concurrent.atomic.AtomicBoolean refreshing =
      new java.util.concurrent.atomic.AtomicBoolean();
  private volatile boolean running;

  /**
   * @param credential the gate's credential (ExecutionTag.credential("gate"): asked on each call, since a rotation of
   *                   the cluster secret changes it)
   * @param results    gets every result an agent hands over (as the response topic's records)
   * @param fallback   puts a request into Kafka (when its agent went away before backing it up); done when
   *                   Kafka has it
   */
  public AgentGates(
      ClusterStore store,
      Clock clock,
      Duration hostMaxAge,
      String frontendId,
      Supplier<String> credential,
      Consumer<byte[]> results,
      Function<Event, CompletableFuture<Void>> fallback) {
    this(store, clock, hostMaxAge, frontendId, credential, results, fallback, LIVE_ACK_TIMEOUT);
  }

  public AgentGates(
      ClusterStore store,
      Clock clock,
      Duration hostMaxAge,
      String frontendId,
      Supplier<String> credential,
      Consumer<byte[]> results,
      Function<Event, CompletableFuture<Void>> fallback,
      Duration liveAckTimeout) {
    this.liveAckTimeout = liveAckTimeout;
    this.store = store;
    this.clock = clock;
    this.hostMaxAge = hostMaxAge;
    this.frontendId = frontendId;
    this.credential = credential;
    this.results = results;
    this.fallback = fallback;
  }

  /** Requests handed to agents so far (metrics). */
  public long submitted() {
    return submitted.get();
  }

  public int unacked() {
    return unacked.size();
  }

  /** Hosts whose gate is connected: results reach this frontend through them. */
  public long gatesUp() {
    return running ? gates.values().stream().filter(g -> g.up).count() : 0;
  }

  /**
   * Hand {@code event} to one of {@code hosts} (where its application is deployed); false when none took it
   * (the caller sends it through Kafka).
   */
  boolean submit(Event event, List<String> hosts) {
    if (!running || hosts.isEmpty()) {
      return false;
    }
    refreshHosts();
    for (String host :
        byLoad(event.app(), hosts, Math.floorMod(event.id().hashCode(), hosts.size()))) {
      Gate g = gates.get(host);
      if (g == null || !g.up || System.nanoTime() < g.downUntilNanos) {
        continue;
      }
      unacked.put(event.id(), new Unacked(event, g, System.nanoTime() + liveAckTimeout.toNanos()));
      Admission a = call(g, event);
      if (a == Admission.ACCEPTED) {
        submitted.incrementAndGet();
        return true;
      }
      unacked.remove(event.id());
      if (a == Admission.REFUSED) {
        return false;
      }
    }
    return false;
  }

  private Admission call(Gate g, Event event) {
    HostAgentGate.Client c = g.idle.poll();
    try {
      if (c == null) {
        c = connect(g.address);
      }
      Admission a =
          c.submit(credential.get(), List.of(ByteBuffer.wrap(event.toBytes()))).get(0);
      if (!g.idle.offer(c)) {
        c.getInputProtocol().getTransport().close();
      }
      return a;
    } catch (TException | RuntimeException e) {
      if (c != null) {
        c.getInputProtocol().getTransport().close();
      }
      LOG.warn(
          "[frontend {}] gate of host {} ({}) refused a request: {}; using Kafka for 2 s",
          frontendId,
          g.host,
          g.address,
          e.toString());
      g.downUntilNanos = System.nanoTime() + 2_000_000_000L;
      return Admission.NOT_HERE;
    }
  }

  private HostAgentGate.Client connect(String address) throws TException {
    int colon = address.lastIndexOf(':');
    TSocket socket = new TSocket(
        new TConfiguration(),
        address.substring(0, colon),
        Integer.parseInt(address.substring(colon + 1)),
        CONNECT_TIMEOUT_MS);
    socket.open();
    socket.setTimeout(READ_TIMEOUT_MS);
    return new HostAgentGate.Client(new TBinaryProtocol(socket));
  }

  /**
   * {@code hosts} in the order to try for a request of {@code appId}: the fewest of its events queued first (the
   * host agents' load reports, read with the live hosts at most once a second), the rest in turn from {@code start}
   * (requests spread evenly over the hosts where none queues). So requests go where the capacity is: a host the
   * scheduler just added gets them while the others still hold a queue.
   */
  List<String> byLoad(String appId, List<String> hosts, int start) {
    Map<String, LoadReport> l = loads;
    List<String> order = new ArrayList<>(hosts.size());
    boolean queues = false;
    for (int i = 0; i < hosts.size(); i++) {
      String h = hosts.get((start + i) % hosts.size());
      order.add(h);
      LoadReport r = l.get(h);
      queues |= r != null && r.app(appId).queued() > 0;
    }
    if (queues) { // the usual case, no queue anywhere, keeps the turn without a sort
      order.sort(Comparator.comparingInt(h ->
          l.containsKey(h) ? l.get(h).app(appId).queued() : 0)); // stable: ties keep their turn
    }
    return order;
  }

  /** Know every live agent with a gate (read at most every second): a poller for each. */
  private void refreshHosts() {
    long now = System.nanoTime();
    if (now - hostsReadNanos < 1_000_000_000L || !refreshing.compareAndSet(false, true)) {
      return; // read recently, or being read by another thread (a request's or a poller's)
    }
    hostsReadNanos = now;
    try {
      readHosts();
    } finally {
      refreshing.set(false);
    }
  }

  /** Read the live hosts (a gate for each new one) and their load reports. */
  void readHosts() {
    try {
      for (HostInfo h : store.liveHosts(clock.instant(), hostMaxAge)) {
        if (h.gateAddress() != null && !h.gateAddress().isEmpty()) {
          Gate g = gates.get(h.hostId());
          if (g == null || !g.address.equals(h.gateAddress())) {
            Gate fresh = new Gate(h.hostId(), h.gateAddress());
            gates.put(h.hostId(), fresh);
            startPoller(fresh);
          }
        }
      }
      Map<String, LoadReport> read = new HashMap<>();
      store.hostLoads().all().forEach((h, r) -> read.put(h, LoadReport.parse(r.load())));
      loads = Map.copyOf(read);
    } catch (RuntimeException e) {
      LOG.warn("[frontend {}] could not read the live hosts: {}", frontendId, e.toString());
    }
  }

  private void startPoller(Gate g) {
    g.poller = new Thread(() -> pollLoop(g), "gate-poll-" + g.host);
    g.poller.setDaemon(true);
    g.poller.start();
  }

  private void pollLoop(Gate g) {
    HostAgentGate.Client c = null;
    while (running && gates.get(g.host) == g) {
      try {
        if (c == null) {
          c = connect(g.address);
          g.up = true;
        }
        for (ByteBuffer b : c.poll(credential.get(), frontendId, 256, POLL_WAIT_MS)) {
          byte[] m = new byte[b.remaining()];
          b.get(m);
          handle(g, m);
        }
        refreshHosts(); // an agent that started after the last request here is polled too
        resendLate();
      } catch (TException | RuntimeException e) {
        if (c != null) {
          c.getInputProtocol().getTransport().close();
          c = null;
        }
        if (running) {
          g.up = false;
          LOG.warn(
              "[frontend {}] lost the gate of host {} ({}): {}; its unacknowledged requests go to Kafka",
              frontendId,
              g.host,
              g.address,
              e.toString());
          closeIdle(
              g); // they lead to the same dead agent: a request must not find one once it is back
          resendAll(g);
          sleep(1000);
          resendLate(); // every poller does: the others may all be down too
        }
      }
    }
    if (c != null) {
      c.getInputProtocol().getTransport().close();
    }
    if (running) { // replaced: the agent is at another address now (restarted), and the old one
      // lost what it held
      resendAll(g);
    }
  }

  private void handle(Gate g, byte[] message) {
    String acked = ackedId(message);
    if (acked != null) {
      unacked.remove(acked);
    } else if (startsWith(message, MANAGEMENT_PREFIX)) {
      manage(g, message);
    } else {
      results.accept(message); // Results parses it (once) and checks its tag
    }
  }

  /** What runs a grain's management request (GrainManagement): the reply's bytes, or a refusal's. */
  public interface Management {
    byte[] run(String appId, JsonNode request);

    byte[] refusal(String why);
  }

  private static final byte[] MANAGEMENT_PREFIX =
      "{\"management\":".getBytes(StandardCharsets.US_ASCII);
  /** Grains' management requests run at once here; as many more wait; beyond, they are refused at once. */
  private static final int MANAGING_THREADS = 4;

  private static final int MANAGING_QUEUE = 64;
  private volatile Management management;
  private final ThreadPoolExecutor managing = new ThreadPoolExecutor(
      MANAGING_THREADS,
      MANAGING_THREADS,
      30,
      TimeUnit.SECONDS,
      new ArrayBlockingQueue<>(MANAGING_QUEUE),
      r -> {
        Thread t = new Thread(r, "grain-management");
        t.setDaemon(true);
        return t;
      });

  /** Run grains' management requests (contracts/gate.thrift answer) with {@code m}. */
  public AgentGates useManagement(Management m) {
    managing.allowCoreThreadTimeOut(true);
    this.management = m;
    return this;
  }

  /** A grain's management request from agent {@code g}: run it on the pool, then answer it through the gate. */
  private void manage(Gate g, byte[] message) {
    JsonNode m;
    try {
      m = Json.MAPPER.readTree(message).path("management");
    } catch (java.io.IOException e) {
      LOG.warn(
          "[frontend {}] host {} sent a management message that does not parse",
          frontendId,
          g.host);
      return;
    }
    String id = m.path("id").asText("");
    String app = m.path("app").asText("");
    Management run = management;
    if (run == null) {
      return; // this frontend takes none: the agent's wait ends in its timeout
    }
    try {
      managing.execute(() -> answer(g, id, run.run(app, m.path("request"))));
    } catch (RejectedExecutionException e) {
      answer(
          g,
          id,
          run.refusal("this frontend runs as many management requests as it may; call again"));
    }
  }

  private void answer(Gate g, String id, byte[] reply) {
    HostAgentGate.Client c = g.idle.poll();
    try {
      if (c == null) {
        c = connect(g.address);
      }
      c.answer(credential.get(), id, ByteBuffer.wrap(reply));
      if (!g.idle.offer(c)) {
        c.getInputProtocol().getTransport().close();
      }
    } catch (TException | RuntimeException e) {
      if (c != null) {
        c.getInputProtocol().getTransport().close();
      }
      LOG.warn(
          "[frontend {}] could not answer management request {} of host {}: {}",
          frontendId,
          id,
          g.host,
          e.toString());
    }
  }

  private static boolean startsWith(byte[] m, byte[] prefix) {
    return m.length >= prefix.length
        && Arrays.equals(m, 0, prefix.length, prefix, 0, prefix.length);
  }

  private static final byte[] ACK_PREFIX = "{\"backed_up\":\"".getBytes(StandardCharsets.US_ASCII);

  /**
   * The request id of a backup acknowledgement, exactly as the host agent writes it ({@code {"backed_up":"<id>"}},
   * FrontendGate), without a JSON parse; null for anything else (a result: an event with many fields, which
   * {@link Results} parses). Anything but that one-field shape is never taken for an acknowledgement.
   */
  static String ackedId(byte[] m) {
    int n = m.length;
    int p = ACK_PREFIX.length;
    if (n < p + 2 || m[n - 2] != '"' || m[n - 1] != '}' || !startsWith(m, ACK_PREFIX)) {
      return null;
    }
    for (int i = p; i < n - 2; i++) {
      if (m[i] == '"' || m[i] == '\\' || m[i] < 0x20 || m[i] > 0x7e) {
        return null;
      }
    }
    return new String(m, p, n - 2 - p, StandardCharsets.US_ASCII);
  }

  /**
   * Requests whose gate is gone or down, or whose live gate did not acknowledge their backup within
   * {@code liveAckTimeout}, go to Kafka (and those Kafka refused, again).
   */
  private void resendLate() {
    long now = System.nanoTime();
    for (Map.Entry<String, Unacked> e : new ArrayList<>(unacked.entrySet())) {
      Unacked u = e.getValue();
      boolean gateLive = u.gate() != null && u.gate().up && gates.get(u.gate().host) == u.gate();
      if ((!gateLive || u.dueNanos() - now < 0) && unacked.remove(e.getKey(), u)) {
        if (u.gate() != null) {
          LOG.warn(
              "[frontend {}] request {} not backed up by host {} ({}): putting it into Kafka",
              frontendId,
              e.getKey(),
              u.gate().host,
              gateLive
                  ? "no acknowledgement within " + liveAckTimeout.toSeconds() + " s"
                  : "its gate is gone");
        }
        putIntoKafka(u.event());
      }
    }
  }

  private void resendAll(Gate g) {
    for (Map.Entry<String, Unacked> e : new ArrayList<>(unacked.entrySet())) {
      if (e.getValue().gate() == g && unacked.remove(e.getKey(), e.getValue())) {
        putIntoKafka(e.getValue().event());
      }
    }
  }

  /** Kafka takes the request, or it is kept and put again after {@link #RETRY}: it is never only dropped. */
  private void putIntoKafka(Event event) {
    CompletableFuture<Void> sent;
    try {
      sent = fallback.apply(event);
    } catch (RuntimeException e) {
      sent = CompletableFuture.failedFuture(e);
    }
    sent.whenComplete((ok, e) -> {
      if (e != null) {
        LOG.warn(
            "[frontend {}] request {} (execution {}) could not be put into Kafka: {}; again in {} s",
            frontendId,
            event.id(),
            event.executionId(),
            e.toString(),
            RETRY.toSeconds());
        unacked.putIfAbsent(
            event.id(), new Unacked(event, null, System.nanoTime() + RETRY.toNanos()));
      }
    });
  }

  private static void closeIdle(Gate g) {
    HostAgentGate.Client c;
    while ((c = g.idle.poll()) != null) {
      c.getInputProtocol().getTransport().close();
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  protected void doStart() {
    running = true;
    refreshHosts();
  }

  @Override
  protected void doStop() {
    running = false;
    managing.shutdownNow();
    for (Gate g : gates.values()) {
      closeIdle(g);
      if (g.poller != null) {
        g.poller.interrupt();
      }
    }
  }
}
