package sand.cluster;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Triggerable buckets (docs/data-triggers.md): named buckets of an account's data whose writes start other
 * applications. Frontends write them (REST and the KNIX door); host agents read them to fire the triggers of a
 * write made on their host, and write each fired event, which the frontend that records a failed end reads to run it
 * again.
 */
public interface BucketTables {
  /**
   * A bucket of an account.
   *
   * @param targets the ids of the applications (deployment ids) a write to the bucket starts, in the order added
   */
  record Bucket(String owner, String name, List<String> targets, Instant created) {}

  /** Create the bucket unless it exists; false when it existed (nothing changed). */
  boolean createBucket(Bucket b);

  Optional<Bucket> bucket(String owner, String name);

  /** The account's buckets, by name. */
  List<Bucket> buckets(String owner);

  /** Replace the bucket's targets; false when the bucket does not exist. */
  boolean setTargets(String owner, String name, List<String> targets);

  boolean deleteBucket(String owner, String name);

  /**
   * The event a write fired, kept while its execution may fail, so that the frontend that records a failed end can
   * run it again and dead-letter it (docs/data-triggers.md "Retries and dead letters").
   *
   * @param executionId the first execution's id
   * @param appId the target application (deployment id)
   * @param app its name
   * @param bucket the bucket written
   * @param event the execution's input (JSON)
   */
  record FiredEvent(String executionId, String appId, String app, String bucket, String event) {}

  /** Keep {@code e} for {@code keep} (then it is gone). */
  void putFiredEvent(FiredEvent e, Duration keep);

  Optional<FiredEvent> firedEvent(String executionId);
}
