package sand.cluster;

import java.time.Instant;
import java.util.Map;

/**
 * The cluster secret's rows in the cluster state: {@link #CURRENT} always, and while an operator rotates it
 * ({@link ClusterSecretRotation}) {@link #NEXT} (before the switch) or {@link #PREVIOUS} (after it). Every process
 * reads them again every {@link ClusterKeysRefresher#EVERY} and accepts all of them.
 */
public interface ClusterSecrets {
  String CURRENT = "execution_tag";
  String NEXT = "execution_tag.next";
  String PREVIOUS = "execution_tag.previous";

  /** One row: the secret and when it was written. */
  record Row(byte[] value, Instant written) {}

  /** Every row, by name (read at quorum). */
  Map<String, Row> rows();

  /** Write {@code name} unless it exists; false when it did. */
  boolean putIfAbsent(String name, byte[] value);

  /** In one batch: {@link #PREVIOUS} becomes {@code current}, {@link #CURRENT} becomes {@code next}, no {@link #NEXT}. */
  void promote(byte[] current, byte[] next);

  void delete(String name);
}
