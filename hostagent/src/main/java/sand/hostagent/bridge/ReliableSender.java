package sand.hostagent.bridge;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.SerializationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.common.Backoff;

/**
 * Sends records to the global bus until Kafka acknowledges them. The Kafka producer retries on its own
 * (idempotent, in order per partition) until {@code delivery.timeout.ms}; a send that still fails (Kafka
 * down for longer, a refused send) is tried again here after an exponential back-off, forever: a
 * backup, a flag or a result is never dropped. Only a record Kafka can never take (too large, bad
 * topic) fails its future.
 *
 * <p>Futures complete on {@code scheduler}, never on the producer's I/O thread, so what callers chain
 * on them (the next flag of an event) cannot stall the producer.
 */
final class ReliableSender {
  private static final Logger LOG = LoggerFactory.getLogger(ReliableSender.class);

  private final Producer<String, byte[]> producer;
  private final ScheduledExecutorService scheduler;
  private final Backoff backoff;
  private final String host;
  private final AtomicLong unacknowledged = new AtomicLong();
  private final AtomicLong retries = new AtomicLong();
  /** True from a failed send to the next acknowledged one: one WARN per outage, not one per record. */
  private final AtomicBoolean failing = new AtomicBoolean();

  ReliableSender(
      Producer<String, byte[]> producer,
      ScheduledExecutorService scheduler,
      Duration firstBackoff,
      Duration maxBackoff,
      String host) {
    this.producer = producer;
    this.scheduler = scheduler;
    this.backoff = Backoff.ofMillis(Math.max(1, firstBackoff.toMillis()), maxBackoff.toMillis());
    this.host = host;
  }

  /** Completes with the record's place in Kafka once acknowledged. */
  CompletableFuture<RecordMetadata> send(ProducerRecord<String, byte[]> record) {
    CompletableFuture<RecordMetadata> done = new CompletableFuture<>();
    unacknowledged.incrementAndGet();
    done.whenComplete((m, e) -> unacknowledged.decrementAndGet());
    attempt(record, done, 0);
    return done;
  }

  /** Records sent and not acknowledged yet (for a gauge, and for tests). */
  long unacknowledged() {
    return unacknowledged.get();
  }

  /** Sends tried again after a failure, since start. */
  long retries() {
    return retries.get();
  }

  private void attempt(
      ProducerRecord<String, byte[]> record, CompletableFuture<RecordMetadata> done, int failures) {
    try {
      producer.send(record, (metadata, error) -> {
        if (error == null) {
          if (failing.compareAndSet(true, false)) {
            LOG.info(
                "[host {}] Kafka takes sends again ({} retries since start)", host, retries.get());
          }
          onScheduler(() -> done.complete(metadata), done);
        } else {
          failed(record, done, failures, error);
        }
      });
    } catch (RuntimeException e) { // buffer full for max.block.ms, no metadata, producer closed
      failed(record, done, failures, e);
    }
  }

  private void failed(
      ProducerRecord<String, byte[]> record,
      CompletableFuture<RecordMetadata> done,
      int failures,
      Throwable error) {
    if (unsendable(error)) {
      LOG.error(
          "[host {}] record of event {} to {} can never be sent: {}; dropped",
          host,
          record.key(),
          record.topic(),
          error.toString());
      onScheduler(() -> done.completeExceptionally(error), done);
      return;
    }
    long pauseMs = backoff.afterMs(failures + 1);
    if (failing.compareAndSet(false, true)) {
      LOG.warn(
          "[host {}] send of event {} to {} failed ({}); retrying it and every later failed send with back-off "
              + "(<= {} ms) until Kafka takes them",
          host,
          record.key(),
          record.topic(),
          error.toString(),
          backoff.max().toMillis());
    } else {
      LOG.debug(
          "[host {}] send of event {} to {} failed again ({}), retry #{} in {} ms",
          host,
          record.key(),
          record.topic(),
          error.toString(),
          failures + 1,
          pauseMs);
    }
    retries.incrementAndGet();
    try {
      scheduler.schedule(() -> attempt(record, done, failures + 1), pauseMs, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      done.completeExceptionally(new IllegalStateException(
          "host agent closing: record of event " + record.key() + " to " + record.topic()
              + " was not sent",
          error));
    }
  }

  /**
   * True for a failure no retry can cure (the record is too large, its topic name is illegal): such a
   * record is lost, and what waited for it goes on. Anything else (the sender closing) means "not sent".
   */
  static boolean unsendable(Throwable error) {
    Throwable e =
        error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    return e instanceof RecordTooLargeException
        || e instanceof InvalidTopicException
        || e instanceof SerializationException
        || e instanceof IllegalArgumentException;
  }

  private void onScheduler(Runnable r, CompletableFuture<?> done) {
    try {
      scheduler.execute(r);
    } catch (RejectedExecutionException e) {
      r.run(); // closing: complete here rather than never
    }
  }
}
