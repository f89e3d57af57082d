package sand.contracts;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The cluster secret as a process holds it: the <em>current</em> one (every tag and seal is made with it) and, while
 * an operator rotates it (docs/operations.md "Rotating the cluster secret"), the others still <em>accepted</em> (the
 * next one, before the switch; the previous one, after it), so two processes a step apart understand each other.
 * Shared by everything in one process that uses the secret ({@link ExecutionTag}, the cluster's SecretBox) and
 * replaced whole when the cluster state says the keys changed.
 */
public final class ClusterKeys {
  /** One set of keys: {@code current} first in {@code all}. */
  public record Keys(byte[] current, List<byte[]> all) {}

  private volatile Keys keys;

  private ClusterKeys(Keys keys) {
    this.keys = keys;
  }

  /** Keys that never change: {@code secret} alone (a test, or a process with no rotation). */
  public static ClusterKeys of(byte[] secret) {
    ClusterKeys k = new ClusterKeys(null);
    k.use(secret, List.of());
    return k;
  }

  /** From now on, make with {@code current}; accept it and {@code others}. */
  public void use(byte[] current, List<byte[]> others) {
    List<byte[]> all = ordered(current, others);
    keys = new Keys(all.get(0), all);
  }

  /** The keys now (one read: current and accepted always belong together). */
  public Keys now() {
    return keys;
  }

  /** Whether {@code current} and {@code others} are what this holds already (no change to make). */
  public boolean holds(byte[] current, List<byte[]> others) {
    List<byte[]> want = ordered(current, others);
    List<byte[]> have = keys.all();
    if (want.size() != have.size()) {
      return false;
    }
    for (int i = 0; i < want.size(); i++) {
      if (!Arrays.equals(want.get(i), have.get(i))) {
        return false;
      }
    }
    return true;
  }

  /** {@code current} first, then each other one once (copies: the caller's arrays may change). */
  private static List<byte[]> ordered(byte[] current, List<byte[]> others) {
    if (current == null || current.length < 16) {
      throw new IllegalArgumentException("the cluster secret must have at least 16 bytes");
    }
    List<byte[]> all = new ArrayList<>();
    all.add(current.clone());
    for (byte[] o : others) {
      if (o != null && o.length >= 16 && all.stream().noneMatch(a -> Arrays.equals(a, o))) {
        all.add(o.clone());
      }
    }
    return List.copyOf(all);
  }
}
