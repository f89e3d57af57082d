package sand.cluster;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Triggerable buckets (docs/data-triggers.md): named buckets of an account's data whose writes start other
 * applications. Frontends write them (REST and the KNIX door); host agents read them to fire the triggers of a
 * write made on their host.
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
}
