package sand.frontend;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import sand.cluster.FrontendTables;

/**
 * Which accounts the operator disabled, read from the cluster state at most every {@link AuthHandler#KEY_MAX_AGE}
 * per account: a disable takes effect at once on the frontend that did it and within that time on the others.
 * While the cluster state does not answer, the last answer stands.
 */
final class DisabledAccounts {
  private static final int MAX_ENTRIES = 100_000;

  private record Known(Optional<String> why, long readAtNanos) {}

  private final FrontendTables store;
  private final Duration maxAge;
  private final Map<String, Known> known = new ConcurrentHashMap<>();
  private final Set<String> deletedKeys = ConcurrentHashMap.newKeySet();

  DisabledAccounts(FrontendTables store, Duration maxAge) {
    this.store = store;
    this.maxAge = maxAge;
  }

  /** Why {@code account} is disabled; empty when it is not. */
  Optional<String> why(String account) {
    Known k = known.get(account);
    if (k != null && System.nanoTime() - k.readAtNanos() < maxAge.toNanos()) {
      return k.why();
    }
    Optional<String> why;
    try {
      why = store.accountDisabled(account);
    } catch (RuntimeException e) {
      if (k != null) {
        return k.why();
      }
      throw e;
    }
    if (known.size() >= MAX_ENTRIES) {
      known.clear();
    }
    known.put(account, new Known(why, System.nanoTime()));
    return why;
  }

  /**
   * An account was deleted here: this frontend refuses its key at once, even from its cache of known keys (a
   * frontend that read the key before serves it, to an account with nothing left, for up to
   * {@link AuthHandler#KEY_MAX_AGE}; its name stays taken longer, {@link AuthHandler#DELETED_NAME_HELD}, so that
   * no new account of that name exists meanwhile).
   */
  void keyDeleted(String apiKeySha256) {
    if (deletedKeys.size() >= MAX_ENTRIES) {
      deletedKeys.clear();
    }
    deletedKeys.add(apiKeySha256);
  }

  boolean isDeleted(String apiKeySha256) {
    return deletedKeys.contains(apiKeySha256);
  }

  /** Record a change made here, so this frontend acts on it at once. */
  void set(String account, String why) {
    store.setAccountDisabled(account, why);
    known.put(account, new Known(Optional.ofNullable(why), System.nanoTime()));
  }
}
