package sand.localbus.internal;

import static sand.localbus.BusException.Code.QUEUE_FULL;
import static sand.localbus.BusException.Code.QUOTA_EXCEEDED;

import java.util.Map;
import java.util.TreeMap;
import sand.localbus.ApplicationUsage;
import sand.localbus.BusException;

/**
 * Each application's share of the bus (docs/local-bus.md "Quotas"): bytes waiting in its queues and in
 * LQ_HA, its messages in LQ_HA, its number of queues; and the bytes of the whole bus. A message's bytes
 * are its payload plus {@link #MESSAGE_OVERHEAD_BYTES}, what it really takes of the heap,
 * so the byte limits bound the heap whatever the messages' sizes. Whoever
 * enqueues reserves first and is refused with QUOTA_EXCEEDED (or QUEUE_FULL for LQ_HA's per-application
 * share) before anything is enqueued; the queues' {@link Ledger}s release what leaves. A message put back
 * after a failed reply is taken again even past a quota: a bound is never a reason to lose a message.
 *
 * <p>One lock for every account: a reservation is a few additions, far cheaper than the call around it,
 * and the host-wide total stays exact.
 */
public final class BusQuotas {
  /**
   * What a waiting message costs the heap besides its payload (array header, queue slot, LQ_HA's
   * record), counted with its payload against the byte quotas: a flood of empty messages is bounded too.
   * Declared here, where it is counted ({@code LocalMessageBus} shows it), so this package imports none of the bus.
   */
  public static final int MESSAGE_OVERHEAD_BYTES = 64;

  /** The limits, and the setting names an error cites. */
  public record Limits(
      long appMaxBytes, long maxBytes, int appMaxQueues, int haAppCapacity, String settingPrefix) {}

  private static final class Account {
    long bytes;
    int messages;
    int haMessages;
    int queues;

    boolean empty() {
      return bytes == 0 && messages == 0 && haMessages == 0 && queues == 0;
    }
  }

  private final Limits limits;
  private final Map<String, Account> accounts = new TreeMap<>();
  private long total;

  public BusQuotas(Limits limits) {
    this.limits = limits;
  }

  /**
   * Reserve room for {@code messages} of {@code app} with {@code payloadBytes} in all, {@code haMessages}
   * of them for LQ_HA. Throws (reserving nothing) when that would take the application or the host past
   * a limit.
   */
  public synchronized void reserve(String app, long payloadBytes, int messages, int haMessages) {
    long bytes = cost(payloadBytes, messages);
    Account a = accounts.computeIfAbsent(app, k -> new Account());
    if (a.bytes + bytes > limits.appMaxBytes()) {
      dropIfEmpty(app, a);
      throw new BusException(
          QUOTA_EXCEEDED,
          "application " + app + " has " + a.bytes + " bytes waiting in the "
              + "local bus (payloads plus " + MESSAGE_OVERHEAD_BYTES + " per message); " + bytes
              + " more would pass its quota of " + limits.appMaxBytes() + " bytes ("
              + limits.settingPrefix()
              + "app.queued.max.bytes); nothing was enqueued: its grains are not keeping "
              + "up with what it sends, so back off and retry (or the operator raises the quota)");
    }
    if (total + bytes > limits.maxBytes()) {
      dropIfEmpty(app, a);
      throw new BusException(
          QUOTA_EXCEEDED,
          "the local bus of this host holds " + total + " bytes; " + bytes
              + " more would pass its limit of " + limits.maxBytes() + " bytes ("
              + limits.settingPrefix()
              + "queued.max.bytes); nothing was enqueued: back off and retry");
    }
    if (a.haMessages + haMessages > limits.haAppCapacity()) {
      dropIfEmpty(app, a);
      throw new BusException(
          QUEUE_FULL,
          "application " + app + " has " + a.haMessages + " messages waiting in the "
              + "host agent's queue, its share is " + limits.haAppCapacity() + " ("
              + limits.settingPrefix()
              + "ha.queue.app.capacity); nothing was enqueued: back off and retry");
    }
    a.bytes += bytes;
    a.messages += messages;
    a.haMessages += haMessages;
    total += bytes;
  }

  /** Give back what {@link #reserve} took (the messages left, or were never enqueued). */
  public synchronized void release(String app, long payloadBytes, int messages, int haMessages) {
    long bytes = cost(payloadBytes, messages);
    Account a = accounts.get(app);
    if (a == null) {
      return;
    }
    a.bytes -= bytes;
    a.messages -= messages;
    a.haMessages -= haMessages;
    total -= bytes;
    dropIfEmpty(app, a);
  }

  /** Count back messages put back after a failed reply, with no limit check. */
  public synchronized void retake(String app, long payloadBytes, int messages, int haMessages) {
    long bytes = cost(payloadBytes, messages);
    Account a = accounts.computeIfAbsent(app, k -> new Account());
    a.bytes += bytes;
    a.messages += messages;
    a.haMessages += haMessages;
    total += bytes;
  }

  /** Count a new queue of {@code app}; throws QUOTA_EXCEEDED at its limit. */
  public synchronized void addQueue(String app, String queue) {
    Account a = accounts.computeIfAbsent(app, k -> new Account());
    if (a.queues >= limits.appMaxQueues()) {
      dropIfEmpty(app, a);
      throw new BusException(
          QUOTA_EXCEEDED,
          "application " + app + " already has " + a.queues + " local queues, "
              + "its quota (" + limits.settingPrefix() + "app.queues.max); queue '" + queue
              + "' was not created: "
              + "use fewer grains, or ask the operator to raise the quota");
    }
    a.queues++;
  }

  public synchronized void removeQueue(String app) {
    Account a = accounts.get(app);
    if (a != null) {
      a.queues--;
      dropIfEmpty(app, a);
    }
  }

  /** Bytes waiting in the whole bus. */
  public synchronized long totalBytes() {
    return total;
  }

  /** Every application holding something now, by name. */
  public synchronized Map<String, ApplicationUsage> usage() {
    Map<String, ApplicationUsage> out = new TreeMap<>();
    accounts.forEach((app, a) ->
        out.put(app, new ApplicationUsage(a.bytes, a.messages, a.haMessages, a.queues)));
    return out;
  }

  private static long cost(long payloadBytes, int messages) {
    return payloadBytes + (long) messages * MESSAGE_OVERHEAD_BYTES;
  }

  private void dropIfEmpty(String app, Account a) {
    if (a.empty()) {
      accounts.remove(app);
    }
  }
}
