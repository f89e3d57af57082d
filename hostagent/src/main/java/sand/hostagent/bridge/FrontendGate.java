package sand.hostagent.bridge;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.contracts.Event;
import sand.contracts.ExecutionTag;
import sand.contracts.TopicNames;
import sand.contracts.Trace;
import sand.contracts.gate.Admission;
import sand.contracts.gate.GateError;
import sand.contracts.gate.GateErrorCode;
import sand.contracts.gate.HostAgentGate;
import sand.localbus.LocalMessageBus;

/**
 * The host agent's side of the gate (contracts/gate.thrift, docs/host-agent.md "The gate"): a frontend hands
 * it a request, it goes straight into the entry grain's local queue and is backed up to Kafka by this host
 * ({@code processing}, in a partition it owns, exactly like an output a grain instance delivered locally);
 * results and backup acknowledgements wait in a mailbox per frontend until that frontend polls them. Every
 * result also goes to the frontend's response topic (the LQ_HA processor sends it), so a frontend that is not
 * polling loses nothing.
 */
public final class FrontendGate implements HostAgentGate.Iface {
  private static final Logger LOG = LoggerFactory.getLogger(FrontendGate.class);
  /** A frontend that has not polled for this long gets no mailbox entries (its results are in Kafka). */
  static final long MAILBOX_IDLE_NANOS = TimeUnit.SECONDS.toNanos(30);

  static final int MAILBOX_CAPACITY = 10_000;
  /**
   * A frontend that polled within this is polling now (frontends poll at least every second, AgentGates): it may
   * get management requests. Longer, and one that died would be handed requests it never answers.
   */
  static final long LIVE_POLL_NANOS = TimeUnit.SECONDS.toNanos(5);

  private static final class Mailbox {
    final LinkedBlockingQueue<byte[]> messages = new LinkedBlockingQueue<>(MAILBOX_CAPACITY);
    volatile long lastPollNanos = System.nanoTime();
  }

  private final GlobalBusBridge bridge;
  private final LocalMessageBus bus;
  private final String agentCredential;
  private final ExecutionTag tags;
  private final String host;
  private final LocalDelivery local;
  private final Map<String, Mailbox> mailboxes = new ConcurrentHashMap<>();
  private final AtomicLong accepted = new AtomicLong();
  private final AtomicLong turn = new AtomicLong();
  private volatile ManagementRelay relay;

  public FrontendGate(
      GlobalBusBridge bridge, LocalMessageBus bus, String agentCredential, ExecutionTag tags) {
    this.bridge = bridge;
    this.bus = bus;
    this.agentCredential = agentCredential;
    this.tags = tags;
    this.host = bridge.host();
    this.local = new LocalDelivery(bridge, bus, agentCredential);
  }

  /** Requests taken through the gate so far (metrics). */
  public long accepted() {
    return accepted.get();
  }

  @Override
  public List<Admission> submit(String credential, List<ByteBuffer> events) throws GateError {
    check(credential);
    long taken = System.nanoTime();
    List<Admission> out = new ArrayList<>(events.size());
    for (ByteBuffer b : events) {
      out.add(admit(b, taken));
    }
    return out;
  }

  private Admission admit(ByteBuffer b, long taken) {
    byte[] bytes = new byte[b.remaining()];
    b.get(bytes);
    Event event;
    try {
      event = Event.parse(bytes);
    } catch (IllegalArgumentException e) {
      return Admission.REFUSED;
    }
    if (!tags.verify(event.tag(), event.app(), event.executionId(), event.frontend())) {
      LOG.warn(
          "[host {}] [app {}] [exec {}] gate: request refused: its tag is not its frontend's",
          host,
          event.app(),
          event.executionId());
      return Admission.REFUSED;
    }
    event.trace(Trace.AGENT_IN, host, taken, System.nanoTime());
    CompletableFuture<Object> backedUp = new CompletableFuture<>();
    Admission a = local.deliver(event, backedUp);
    if (a != Admission.ACCEPTED) {
      return a;
    }
    accepted.incrementAndGet();
    String frontend = event.frontend();
    String id = event.id();
    backedUp.thenRun(() ->
        deliver(frontend, ("{\"backed_up\":\"" + id + "\"}").getBytes(StandardCharsets.US_ASCII)));
    LOG.debug(
        "[host {}] [app {}] [exec {}] gate: request {} in the local queue",
        host,
        event.app(),
        event.executionId(),
        id);
    return Admission.ACCEPTED;
  }

  /** Put a message into {@code frontend}'s mailbox if it polls this gate (else it reads Kafka). */
  void deliver(String frontend, byte[] message) {
    Mailbox m = mailboxes.get(frontend);
    if (m != null
        && System.nanoTime() - m.lastPollNanos < MAILBOX_IDLE_NANOS
        && !m.messages.offer(message)) {
      LOG.debug(
          "[host {}] gate: mailbox of frontend {} full; it reads the result from Kafka",
          host,
          frontend);
    }
  }

  /**
   * Put a message into the mailbox of one frontend that polls this gate now (a grain's management request,
   * {@link ManagementRelay}), taking them in turn; false when none does.
   */
  public boolean offerToAnyFrontend(byte[] message) {
    List<Mailbox> live = new ArrayList<>();
    long now = System.nanoTime();
    for (Mailbox m : mailboxes.values()) {
      if (now - m.lastPollNanos < LIVE_POLL_NANOS) {
        live.add(m);
      }
    }
    int n = live.size();
    int start = n == 0 ? 0 : Math.floorMod(turn.getAndIncrement(), n);
    for (int i = 0; i < n; i++) {
      if (live.get((start + i) % n).messages.offer(message)) {
        return true;
      }
    }
    return false;
  }

  /** Where frontends' answers to management requests go (null: none are relayed). */
  public void relayManagement(ManagementRelay relay) {
    this.relay = relay;
  }

  @Override
  public void answer(String credential, String requestId, ByteBuffer reply) throws GateError {
    check(credential);
    byte[] bytes = new byte[reply.remaining()];
    reply.get(bytes);
    if (relay == null || !relay.answer(requestId, bytes)) {
      LOG.debug(
          "[host {}] gate: an answer to management request {} nobody waits for", host, requestId);
    }
  }

  @Override
  public List<ByteBuffer> poll(String credential, String frontend, int maxMessages, int timeoutMs)
      throws GateError {
    check(credential);
    if (!TopicNames.validFrontend(frontend)) {
      throw new GateError(GateErrorCode.BAD_REQUEST, "bad frontend id '" + frontend + "'");
    }
    Mailbox m = mailboxes.computeIfAbsent(frontend, f -> new Mailbox());
    m.lastPollNanos = System.nanoTime();
    List<ByteBuffer> out = new ArrayList<>();
    try {
      byte[] first =
          m.messages.poll(Math.max(0, Math.min(timeoutMs, 30_000)), TimeUnit.MILLISECONDS);
      if (first != null) {
        out.add(ByteBuffer.wrap(first));
        List<byte[]> more = new ArrayList<>();
        m.messages.drainTo(more, Math.max(0, Math.min(maxMessages, 10_000) - 1));
        more.forEach(x -> out.add(ByteBuffer.wrap(x)));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    m.lastPollNanos = System.nanoTime();
    return out;
  }

  private void check(String credential) throws GateError {
    if (!tags.acceptsCredential(
        credential, "gate")) { // any accepted key's: a rotation (ClusterKeys)
      throw new GateError(
          GateErrorCode.UNAUTHORIZED,
          "not the gate's credential: only frontends of this cluster " + "may use it");
    }
  }
}
