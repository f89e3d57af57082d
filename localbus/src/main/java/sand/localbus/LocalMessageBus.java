package sand.localbus;

// Longer than 600 lines because it is the bus's whole public surface (put, batch, poll, long
// poll, grant, revoke, quotas) over internal/'s queues, where the queue machinery lives.

import static sand.localbus.BusException.Code.BAD_REQUEST;
import static sand.localbus.BusException.Code.QUEUE_FULL;
import static sand.localbus.BusException.Code.TOO_LARGE;
import static sand.localbus.BusException.Code.UNAUTHORIZED;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.common.Credentials;
import sand.common.Credentials.Principal;
import sand.localbus.internal.Backlog;
import sand.localbus.internal.BusQuotas;
import sand.localbus.internal.Ledger;
import sand.localbus.internal.LocalQueue;
import sand.localbus.internal.QueueName;

/**
 * The local message bus of one host (paper §4.1): a bounded FIFO queue per grain, created on demand,
 * plus LQ_HA, the host agent's queue. The host agent embeds it; {@link LocalBusService} serves it to
 * sandboxes over Thrift.
 *
 * <p>Every call carries a credential, checked against the {@link Credentials} shared with the data
 * layer: an application reaches only its own {@code "<app>/<grain>"} queues and may publish to LQ_HA,
 * which stamps the authenticated application on the message; the host agent reaches every queue.
 * A refused call throws {@link BusException}.
 *
 * <p>Each application has a share of the bus ({@link BusQuotas}): bytes waiting in its queues and
 * in LQ_HA, its number of queues, its messages in LQ_HA; the whole bus has a byte limit. A publish past a
 * share is refused whole (QUOTA_EXCEEDED), also for the host agent publishing the application's events.
 * LQ_HA is read round-robin across publishing applications, so one application's burst never delays
 * another's reports. Payload arrays are kept as they are (no copy): a
 * publisher must not change one after publishing, a poller owns what it gets.
 */
public final class LocalMessageBus {
  private static final Logger LOG = LoggerFactory.getLogger(LocalMessageBus.class);

  /** LQ_HA, the host agent's queue (HOST_AGENT_QUEUE in localbus.thrift). */
  public static final String HOST_AGENT_QUEUE = QueueName.HOST_AGENT_QUEUE;
  /** Poll's maxMessages is clamped to [1, this]. */
  public static final int MAX_POLL_MESSAGES = 1000;
  /** Poll's timeoutMs is clamped to [0, this]. */
  public static final int MAX_POLL_TIMEOUT_MS =
      sand.localbus.thrift.localbusConstants.MAX_POLL_TIMEOUT_MS;
  /**
   * A poll stops taking messages once their payloads reach this many bytes (it always takes one), so
   * one reply stays under Thrift's default 100 MiB message limit.
   */
  public static final long POLL_MAX_BYTES = 64L << 20;
  /**
   * What a waiting message costs the heap besides its payload (array header, queue slot, LQ_HA's
   * record), counted with its payload against the byte quotas: a flood of empty messages is bounded too.
   */
  public static final int MESSAGE_OVERHEAD_BYTES = BusQuotas.MESSAGE_OVERHEAD_BYTES;

  private enum Op {
    PUBLISH("publish to"),
    POLL("poll"),
    LENGTH("read the length of"),
    DELETE("delete");

    final String verb;

    Op(String verb) {
      this.verb = verb;
    }
  }

  private final Credentials credentials;
  private final LocalBusSettings settings;
  private final BusQuotas quotas;
  private final Map<String, LocalQueue<byte[]>> queues = new ConcurrentHashMap<>();
  private final LocalQueue<HostAgentMessage> hostAgentQueue;

  private volatile Consumer<String> arrivals = app -> {};

  public LocalMessageBus(Credentials credentials, LocalBusSettings settings) {
    this(credentials, settings, "");
  }

  /** @param settingPrefix how errors name the quota settings (the host agent's is "bus.") */
  public LocalMessageBus(Credentials credentials, LocalBusSettings settings, String settingPrefix) {
    this.credentials = credentials;
    this.settings = settings;
    this.quotas = new BusQuotas(new BusQuotas.Limits(
        settings.appQueuedMaxBytes(),
        settings.queuedMaxBytes(),
        settings.appQueuesMax(),
        settings.haQueueAppCapacity(),
        settingPrefix));
    this.hostAgentQueue = new LocalQueue<>(
        HOST_AGENT_QUEUE,
        settings.hostAgentQueueCapacity(),
        m -> m.payload().length,
        Backlog.fair(HostAgentMessage::application),
        new Ledger<>() {
          @Override
          public void released(HostAgentMessage m) {
            if (accounted(m)) {
              quotas.release(m.application(), m.payload().length, 1, 1);
            }
          }

          @Override
          public void retaken(HostAgentMessage m) {
            if (accounted(m)) {
              quotas.retake(m.application(), m.payload().length, 1, 1);
            }
          }
        });
  }

  /** The host agent's own messages in LQ_HA belong to no application's share. */
  private static boolean accounted(HostAgentMessage m) {
    return !m.application().equals(HostAgentMessage.FROM_HOST_AGENT);
  }

  /** The credential registry this bus checks (shared with the local data layer). */
  public Credentials credentials() {
    return credentials;
  }

  public LocalBusSettings settings() {
    return settings;
  }

  /**
   * Told the application of each event put in one of its grains' queues, after it is there (the host agent starts
   * a sandbox scaled to zero). Called on the publisher's thread: keep it short.
   */
  public void onArrival(Consumer<String> arrivals) {
    this.arrivals = arrivals;
  }

  /**
   * Append {@code payload} to the tail of {@code queue} (created on demand). A Thrift poller waiting on
   * the queue gets it at once: this call writes the poller's reply itself (a client that stopped
   * reading costs it at most {@link LongPollProcessor#STALLED_WRITE_MS} ms, and loses nothing).
   */
  public void publish(String credential, String queue, byte[] payload) {
    Principal caller = authenticate(credential, Op.PUBLISH, queue);
    QueueName name = authorize(caller, Op.PUBLISH, queue);
    checkPayload(name, payload);
    if (name.hostAgentQueue()) {
      HostAgentMessage m = stamp(caller, payload);
      reserve(m);
      if (hostAgentQueue.offer(m) == LocalQueue.Offer.FULL) {
        unreserve(m);
        throw full(hostAgentQueue);
      }
    } else {
      quotas.reserve(name.application(), payload.length, 1, 0);
      for (; ; ) { // a queue deleted under us is replaced by a fresh one
        LocalQueue<byte[]> q;
        try {
          q = grainQueue(name.name());
        } catch (BusException e) {
          quotas.release(name.application(), payload.length, 1, 0);
          throw e;
        }
        LocalQueue.Offer offer = q.offer(payload);
        if (offer == LocalQueue.Offer.FULL) {
          quotas.release(name.application(), payload.length, 1, 0);
          throw full(q);
        }
        if (offer == LocalQueue.Offer.ENQUEUED) {
          break;
        }
      }
      arrivals.accept(name.application());
    }
    LOG.debug("[queue {}] {} published {} bytes", queue, caller, payload.length);
  }

  /**
   * Append every delivery, all or nothing: each is authorized and size-checked first, then the queues
   * involved are locked in name order (so two batches cannot deadlock) and filled only if every one
   * has room for all of its deliveries. Deliveries to one queue keep their order. Waiting Thrift
   * pollers are answered once every queue is unlocked, as by {@link #publish}.
   */
  public void publishBatch(String credential, List<Delivery> deliveries) {
    if (deliveries == null) {
      throw new BusException(
          BAD_REQUEST, "publishBatch: no deliveries given; pass a list (empty is fine)");
    }
    Principal caller = null;
    List<QueueName> names = new ArrayList<>(deliveries.size());
    TreeMap<String, Integer> counts = new TreeMap<>();
    for (int i = 0; i < deliveries.size(); i++) {
      Delivery d = deliveries.get(i);
      if (d == null) {
        throw new BusException(BAD_REQUEST, "publishBatch: delivery #" + i + " is missing");
      }
      if (caller == null) {
        caller = authenticate(credential, Op.PUBLISH, d.queue());
      }
      QueueName name = authorize(caller, Op.PUBLISH, d.queue());
      checkPayload(name, d.payload());
      names.add(name);
      counts.merge(name.name(), 1, Integer::sum);
    }
    if (deliveries.isEmpty()) {
      authenticate(credential, Op.PUBLISH, "(no queue: empty batch)");
      return;
    }
    for (Map.Entry<String, Integer> e : counts.entrySet()) {
      int capacity = capacityOf(e.getKey());
      if (e.getValue() > capacity) {
        throw new BusException(
            BAD_REQUEST,
            "publishBatch: " + e.getValue() + " deliveries to queue '" + e.getKey()
                + "' exceed its capacity of " + capacity + "; split the batch");
      }
    }
    List<Reservation> reserved = reserveBatch(caller, deliveries, names);
    List<LocalQueue.Handoff<?>> handoffs = new ArrayList<>(counts.size());
    try {
      while (!tryEnqueueBatch(caller, deliveries, names, counts, handoffs)) {
        // a queue of the batch was deleted meanwhile: retry on its replacement
      }
    } catch (RuntimeException e) {
      reserved.forEach(r -> quotas.release(r.app(), r.bytes(), r.messages(), r.haMessages()));
      throw e;
    }
    handoffs.forEach(
        LocalQueue.Handoff::deliver); // waiting remote pollers get theirs, after unlocking
    Consumer<String> told = arrivals;
    String last = null;
    for (QueueName n : names) {
      if (!n.hostAgentQueue() && !n.application().equals(last)) {
        last = n.application();
        told.accept(last);
      }
    }
    LOG.debug("[queues {}] {} published a batch of {}", counts.keySet(), caller, deliveries.size());
  }

  /**
   * Take up to {@code maxMessages} (clamped to [1, 1000]) from the head of {@code queue}, waiting up to
   * {@code timeoutMs} (clamped to [0, 60000]) for the first; empty on timeout or when the queue is
   * deleted meanwhile. A queue that does not exist yet is created and waited on.
   */
  public List<byte[]> poll(String credential, String queue, int maxMessages, int timeoutMs)
      throws InterruptedException {
    Principal caller = authenticate(credential, Op.POLL, queue);
    QueueName name = authorize(caller, Op.POLL, queue);
    if (name.hostAgentQueue()) {
      List<byte[]> out = new ArrayList<>();
      for (HostAgentMessage m : pollQueue(hostAgentQueue, maxMessages, timeoutMs)) {
        out.add(m.payload());
      }
      return out;
    }
    List<byte[]> out = pollQueue(grainQueue(name.name()), maxMessages, timeoutMs);
    LOG.debug("[queue {}] {} polled {}", queue, caller, out.size());
    return out;
  }

  /** {@link #poll} for LQ_HA with each message's publishing application; host agent only. */
  public List<HostAgentMessage> pollHostAgent(String credential, int maxMessages, int timeoutMs)
      throws InterruptedException {
    requireHostAgent(credential, "pollHostAgent");
    return pollQueue(hostAgentQueue, maxMessages, timeoutMs);
  }

  /** For the Thrift layer: {@link #poll}'s checks, then the queue it reads (LQ_HA when named so). */
  LocalQueue<?> queueToPoll(String credential, String queue) {
    QueueName name = authorize(authenticate(credential, Op.POLL, queue), Op.POLL, queue);
    return name.hostAgentQueue() ? hostAgentQueue : grainQueue(name.name());
  }

  /** For the Thrift layer: {@link #pollHostAgent}'s check, then LQ_HA. */
  LocalQueue<HostAgentMessage> hostAgentQueueToPoll(String credential) {
    requireHostAgent(credential, "pollHostAgent");
    return hostAgentQueue;
  }

  boolean isHostAgentQueue(LocalQueue<?> q) {
    return q == hostAgentQueue;
  }

  static int clampMaxMessages(int maxMessages) {
    return Math.max(1, Math.min(MAX_POLL_MESSAGES, maxMessages));
  }

  static int clampTimeoutMs(int timeoutMs) {
    return Math.max(0, Math.min(MAX_POLL_TIMEOUT_MS, timeoutMs));
  }

  /** Messages in {@code queue} now; 0 for a queue that does not exist. */
  public int length(String credential, String queue) {
    QueueName name = authorize(authenticate(credential, Op.LENGTH, queue), Op.LENGTH, queue);
    if (name.hostAgentQueue()) {
      return hostAgentQueue.size();
    }
    LocalQueue<byte[]> q = queues.get(name.name());
    return q == null ? 0 : q.size();
  }

  /**
   * Drop {@code queue} and its messages; its waiting pollers return empty. LQ_HA is only emptied.
   *
   * @return how many messages were dropped
   */
  public int deleteQueue(String credential, String queue) {
    Principal caller = authenticate(credential, Op.DELETE, queue);
    QueueName name = authorize(caller, Op.DELETE, queue);
    int dropped;
    if (name.hostAgentQueue()) {
      dropped = hostAgentQueue.clear();
    } else {
      LocalQueue<byte[]> q = queues.remove(name.name());
      dropped = q == null ? 0 : q.delete();
      if (q != null) {
        quotas.removeQueue(name.application());
      }
    }
    LOG.info("[queue {}] deleted by {}, {} messages dropped", queue, caller, dropped);
    return dropped;
  }

  /**
   * Delete every queue of {@code application} (undeploy); host agent only.
   *
   * @return how many messages were dropped
   */
  public int deleteApplicationQueues(String credential, String application) {
    requireHostAgent(credential, "deleteApplicationQueues");
    int dropped = 0;
    for (String queue : List.copyOf(queues.keySet())) {
      if (queue.startsWith(application + "/")) {
        dropped += deleteQueue(credential, queue);
      }
    }
    return dropped;
  }

  /**
   * A copy of what {@code queue} (a grain's) holds now, head first; host agent only. For its recovery of
   * lost instances: what is still queued was not lost.
   */
  public List<byte[]> queued(String credential, String queue) {
    requireHostAgent(credential, "queued");
    QueueName name = QueueName.parse(queue);
    if (name.hostAgentQueue()) {
      throw new BusException(BAD_REQUEST, "queued: only a grain's queue, not " + HOST_AGENT_QUEUE);
    }
    LocalQueue<byte[]> q = queues.get(name.name());
    return q == null ? List.of() : q.snapshot();
  }

  /**
   * Put {@code payloads} at the head of {@code queue} (a grain's), in order, ahead of what waits there; host
   * agent only. They were taken from it before (by a grain worker that died) and are let in past the queue's
   * capacity and the application's quotas, like messages a dead poller could not be sent: a bound is never a
   * reason to lose an event.
   */
  public void redeliver(String credential, String queue, List<byte[]> payloads) {
    requireHostAgent(credential, "redeliver");
    QueueName name = QueueName.parse(queue);
    if (name.hostAgentQueue()) {
      throw new BusException(
          BAD_REQUEST, "redeliver: only to a grain's queue, not " + HOST_AGENT_QUEUE);
    }
    for (byte[] p : payloads) {
      checkPayload(name, p);
    }
    grainQueue(name.name()).giveBack(List.copyOf(payloads));
    LOG.debug("[queue {}] {} messages re-delivered at the head", queue, payloads.size());
  }

  /** Let {@code applicationCredential} act for {@code application}; host agent only. */
  public void grantApplication(
      String credential, String application, String applicationCredential) {
    requireHostAgent(credential, "grantApplication");
    if (!QueueName.validApplication(application)) {
      throw new BusException(
          BAD_REQUEST,
          "grantApplication: bad application name " + QueueName.echo(application)
              + ": it must match " + QueueName.PART_FORM);
    }
    try {
      credentials.grant(application, applicationCredential);
    } catch (IllegalArgumentException e) {
      throw new BusException(BAD_REQUEST, "grantApplication: " + e.getMessage());
    }
    LOG.info("[app {}] credential granted", application);
  }

  /** Take every credential of {@code application} away; host agent only. Its queues stay. */
  public void revokeApplication(String credential, String application) {
    requireHostAgent(credential, "revokeApplication");
    credentials.revoke(application);
    LOG.info("[app {}] credentials revoked", application);
  }

  /** Length of every queue now, LQ_HA included (for a gauge). */
  public Map<String, Integer> queueLengths() {
    Map<String, Integer> out = new TreeMap<>();
    for (QueueStats s : queueStats()) {
      out.put(s.queue(), s.length());
    }
    return out;
  }

  /** A snapshot of every queue, LQ_HA first, then by name. */
  public List<QueueStats> queueStats() {
    List<QueueStats> out = new ArrayList<>();
    out.add(hostAgentQueue.stats());
    new TreeMap<>(queues).values().forEach(q -> out.add(q.stats()));
    return out;
  }

  private boolean tryEnqueueBatch(
      Principal caller,
      List<Delivery> deliveries,
      List<QueueName> names,
      TreeMap<String, Integer> counts,
      List<LocalQueue.Handoff<?>> handoffs) {
    Map<String, LocalQueue<?>> locked = new TreeMap<>();
    try {
      for (String name : counts.keySet()) { // sorted: every batch locks in the same order
        LocalQueue<?> q = name.equals(HOST_AGENT_QUEUE) ? hostAgentQueue : grainQueue(name);
        q.lock();
        locked.put(name, q);
      }
      for (Map.Entry<String, LocalQueue<?>> e : locked.entrySet()) {
        int room = e.getValue().roomLocked();
        if (room < 0) {
          return false;
        }
        if (room < counts.get(e.getKey())) {
          LocalQueue<?> q = e.getValue();
          throw new BusException(
              QUEUE_FULL,
              "queue '" + q.name() + "' has room for " + room + " of the "
                  + counts.get(e.getKey()) + " messages of this batch (capacity " + q.capacity()
                  + "); nothing of the batch was enqueued: back off and retry");
        }
      }
      for (int i = 0; i < deliveries.size(); i++) {
        byte[] payload = deliveries.get(i).payload();
        if (names.get(i).hostAgentQueue()) {
          hostAgentQueue.appendLocked(stamp(caller, payload));
        } else {
          @SuppressWarnings("unchecked")
          LocalQueue<byte[]> q = (LocalQueue<byte[]>) locked.get(names.get(i).name());
          q.appendLocked(payload);
        }
      }
      for (LocalQueue<?> q : locked.values()) {
        LocalQueue.Handoff<?> h = q.dispatchLocked();
        if (h != null) {
          handoffs.add(h);
        }
      }
      return true;
    } finally {
      locked.values().forEach(LocalQueue::unlock);
    }
  }

  private <E> List<E> pollQueue(LocalQueue<E> q, int maxMessages, int timeoutMs)
      throws InterruptedException {
    return q.poll(
        clampMaxMessages(maxMessages),
        POLL_MAX_BYTES,
        TimeUnit.MILLISECONDS.toNanos(clampTimeoutMs(timeoutMs)));
  }

  /** The queue named {@code name}, created (and counted against its application's quota) if needed. */
  private LocalQueue<byte[]> grainQueue(String name) {
    LocalQueue<byte[]> q = queues.get(name);
    if (q != null) {
      return q;
    }
    return queues.computeIfAbsent(name, n -> {
      String app = n.substring(0, n.indexOf('/'));
      quotas.addQueue(app, n);
      return new LocalQueue<>(
          n, settings.queueCapacity(), p -> p.length, Backlog.fifo(), new Ledger<byte[]>() {
            @Override
            public void released(byte[] p) {
              quotas.release(app, p.length, 1, 0);
            }

            @Override
            public void retaken(byte[] p) {
              quotas.retake(app, p.length, 1, 0);
            }
          });
    });
  }

  /** What a batch reserved for one application. */
  private record Reservation(String app, long bytes, int messages, int haMessages) {}

  /** Reserve every application's share of a batch, all or nothing. */
  private List<Reservation> reserveBatch(
      Principal caller, List<Delivery> deliveries, List<QueueName> names) {
    Map<String, long[]> need = new TreeMap<>(); // app -> {bytes, messages, haMessages}
    for (int i = 0; i < deliveries.size(); i++) {
      QueueName n = names.get(i);
      String app =
          n.hostAgentQueue() ? (caller.hostAgent() ? null : caller.application()) : n.application();
      if (app == null) {
        continue; // the host agent's own messages to LQ_HA
      }
      long[] v = need.computeIfAbsent(app, k -> new long[3]);
      v[0] += deliveries.get(i).payload().length;
      v[1]++;
      v[2] += n.hostAgentQueue() ? 1 : 0;
    }
    List<Reservation> done = new ArrayList<>(need.size());
    try {
      for (Map.Entry<String, long[]> e : need.entrySet()) {
        long[] v = e.getValue();
        quotas.reserve(e.getKey(), v[0], (int) v[1], (int) v[2]);
        done.add(new Reservation(e.getKey(), v[0], (int) v[1], (int) v[2]));
      }
    } catch (RuntimeException ex) {
      done.forEach(r -> quotas.release(r.app(), r.bytes(), r.messages(), r.haMessages()));
      throw ex;
    }
    return done;
  }

  private void reserve(HostAgentMessage m) {
    if (accounted(m)) {
      quotas.reserve(m.application(), m.payload().length, 1, 1);
    }
  }

  private void unreserve(HostAgentMessage m) {
    if (accounted(m)) {
      quotas.release(m.application(), m.payload().length, 1, 1);
    }
  }

  /** What each application holds in the bus now (metrics). */
  public Map<String, ApplicationUsage> applicationUsage() {
    return quotas.usage();
  }

  /** Bytes waiting in the whole bus now: payloads plus {@link #MESSAGE_OVERHEAD_BYTES} per message. */
  public long queuedBytes() {
    return quotas.totalBytes();
  }

  private int capacityOf(String name) {
    return name.equals(HOST_AGENT_QUEUE)
        ? settings.hostAgentQueueCapacity()
        : settings.queueCapacity();
  }

  private static HostAgentMessage stamp(Principal caller, byte[] payload) {
    // The bus, not the payload, says who published: a grain cannot speak for another application.
    return new HostAgentMessage(
        caller.hostAgent() ? HostAgentMessage.FROM_HOST_AGENT : caller.application(), payload);
  }

  private void checkPayload(QueueName name, byte[] payload) {
    if (payload == null) {
      throw new BusException(
          BAD_REQUEST, "publish to queue '" + name + "': the payload is missing");
    }
    if (payload.length > settings.messageMaxBytes()) {
      throw new BusException(
          TOO_LARGE,
          "publish to queue '" + name + "': payload of " + payload.length
              + " bytes is above message.max.bytes=" + settings.messageMaxBytes()
              + "; put large data in the data layer and send its key");
    }
  }

  private static BusException full(LocalQueue<?> q) {
    return new BusException(
        QUEUE_FULL,
        "queue '" + q.name() + "' is full (" + q.capacity()
            + " messages); nothing was enqueued: back off and retry");
  }

  private Principal authenticate(String credential, Op op, String queue) {
    try {
      return credentials.authenticate(credential);
    } catch (Credentials.UnauthorizedException e) {
      throw new BusException(
          UNAUTHORIZED,
          "may not " + op.verb + " queue " + QueueName.echo(queue) + ": " + e.getMessage()
              + "; use the credential the host agent granted to this sandbox");
    }
  }

  private void requireHostAgent(String credential, String what) {
    try {
      credentials.requireHostAgent(credential, what);
    } catch (Credentials.UnauthorizedException e) {
      throw new BusException(UNAUTHORIZED, what + " refused: " + e.getMessage());
    }
  }

  /** Check the name, then that {@code caller} may do {@code op} on it. */
  private static QueueName authorize(Principal caller, Op op, String queue) {
    QueueName name = QueueName.parse(queue);
    if (caller.hostAgent()) {
      return name;
    }
    if (name.hostAgentQueue()) {
      if (op != Op.PUBLISH) {
        throw new BusException(
            UNAUTHORIZED,
            caller + " may not " + op.verb + " queue '" + name
                + "': applications may only publish to the host agent's queue");
      }
      return name;
    }
    if (!caller.mayAccess(name.application())) {
      throw new BusException(
          UNAUTHORIZED,
          caller + " may not " + op.verb + " queue '" + name
              + "': an application reaches only its own queues '" + caller.application()
              + "/<grain>'");
    }
    return name;
  }
}
