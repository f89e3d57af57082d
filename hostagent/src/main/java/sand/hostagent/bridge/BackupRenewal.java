package sand.hostagent.bridge;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.KafkaClients;
import sand.contracts.ConditionFlag;

/**
 * The renewals of one event's {@code processing} backup that went into another host's partition (issue 26,
 * finding 14). That host takes the event over when the backup stays unfinished for
 * {@link BridgeSettings#takeoverTimeout()} counted from the latest {@code processing} record it saw; an event
 * waiting long in a busy local queue here would run twice. So while the event is in flight here, its backup is
 * sent again now and then ({@link GlobalBusBridge#renewBackups}): the other host's timer counts from this host's
 * last sign of life. If this host dies, the renewals stop and the timeout takes the event over as before.
 *
 * <p>A renewal must never land after the event's {@code finished} flag (the other host would then take a finished
 * event over): {@link #end()} and {@link #renewIfDue} share this object's lock, so once finishing has begun no
 * renewal is sent, and the finished flag waits for the acknowledgement of the one sent before (Kafka keeps a
 * partition's order only for records acknowledged in order; a send retried after a failure may overtake).
 */
final class BackupRenewal {
  private static final Logger LOG = LoggerFactory.getLogger(BackupRenewal.class);
  private static final CompletableFuture<Void> NONE = CompletableFuture.completedFuture(null);

  private long lastMs;
  private CompletableFuture<?> pending = NONE;
  private boolean ended;

  /** @param sentMs when the backup itself was sent (the bridge's clock) */
  BackupRenewal(long sentMs) {
    this.lastMs = sentMs;
  }

  /**
   * Send a renewal with {@code send} when the last one (or the backup) was sent {@code everyMs} ago or more, the
   * event is not finishing and the previous renewal is acknowledged (at most one in flight per event).
   *
   * @return whether one was sent
   */
  synchronized boolean renewIfDue(long nowMs, long everyMs, Supplier<CompletableFuture<?>> send) {
    if (ended || nowMs - lastMs < everyMs || !pending.isDone()) {
      return false;
    }
    lastMs = nowMs;
    pending =
        send.get(); // under the lock: end() cannot slip in between the send and what it returns
    return true;
  }

  /** The event finishes or is forgotten: no renewal from now on. Completes when the last one sent is in Kafka. */
  synchronized CompletableFuture<?> end() {
    ended = true;
    return pending;
  }

  /**
   * {@code app} left this host with these events unrun (in its deleted local queues, or their instances gone with
   * the sandbox): each is handed back to the owner of the partition its backup is in, as a {@code new} record
   * after that backup's last renewal, so the owner runs it at once instead of after the takeover timeout (the
   * {@code new} record ends its watch of the {@code processing} one). An instance that had started it counts as
   * lost, as at a takeover.
   */
  static void handBack(
      String app, List<InFlightEvents.Home> events, ReliableSender sender, String host) {
    for (InFlightEvents.Home h : events) {
      h.endRenewals()
          .whenComplete((r, e) -> sender.send(KafkaClients.record(
              h.topic(), h.partition(), ConditionFlag.newEvent(h.event(), host))));
    }
    if (!events.isEmpty()) {
      LOG.info(
          "[host {} app {}] {} events left here unrun handed back to their backups' partitions",
          host,
          app,
          events.size());
    }
  }
}
