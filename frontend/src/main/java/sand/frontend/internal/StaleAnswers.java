package sand.frontend.internal;

import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The developer and admin API degraded, not dark, while the cluster state does not answer (issue 31: with Cassandra
 * down every call answered 502): the last 200 this frontend gave each caller for a GET is kept, and a GET whose
 * Cassandra read failed even when tried again answers it, marked stale (RFC 9111's {@code Warning: 110} and
 * {@code Age}, and {@code X-Sand-Stale} saying why), instead of a 502. Kept per caller (an account, the operator,
 * or no one), so nobody is shown what another may read; at most {@link #MAX_AGE} old; bounded in entries and bytes
 * (the oldest go first). Writes still fail: a change must reach Cassandra.
 */
public final class StaleAnswers {
  static final Duration MAX_AGE = Duration.ofMinutes(15);
  private static final int MAX_ENTRIES = 4096;
  private static final long MAX_BYTES = 16L * 1024 * 1024;
  /** Larger answers (a big listing) are not kept: the cache is for a dashboard's reads, not a copy of the state. */
  private static final int MAX_ANSWER_BYTES = 256 * 1024;

  private record Kept(Reply reply, long atNanos) {}

  private final LinkedHashMap<String, Kept> kept = new LinkedHashMap<>(64, 0.75f, true);
  private long bytes;

  /** Who asks, and what: the key of a kept answer. */
  public static String key(Call call, String path, String query) {
    String who =
        call.isAdmin() ? "admin" : call.account() == null ? "-" : "account:" + call.account();
    return who + " " + path + (query == null || query.isEmpty() ? "" : "?" + query);
  }

  /** Keep {@code reply} if it is a successful JSON answer small enough. */
  public void keep(String key, Reply reply) {
    if (reply.status() != 200
        || !Reply.JSON.equals(reply.contentType())
        || reply.body().length > MAX_ANSWER_BYTES) {
      return;
    }
    synchronized (this) {
      Kept old = kept.put(key, new Kept(reply, System.nanoTime()));
      bytes += reply.body().length - (old == null ? 0 : old.reply().body().length);
      Iterator<Map.Entry<String, Kept>> it = kept.entrySet().iterator();
      while ((kept.size() > MAX_ENTRIES || bytes > MAX_BYTES) && it.hasNext()) {
        bytes -= it.next().getValue().reply().body().length;
        it.remove();
      }
    }
  }

  /** The answer kept for {@code key}, marked stale, if there is one young enough; else null. */
  public Reply stale(String key) {
    Kept k;
    synchronized (this) {
      k = kept.get(key);
    }
    if (k == null) {
      return null;
    }
    long ageS = Duration.ofNanos(System.nanoTime() - k.atNanos()).toSeconds();
    if (ageS > MAX_AGE.toSeconds()) {
      return null;
    }
    return k.reply()
        .withHeader("Warning", "110 sand \"Response is Stale\"")
        .withHeader("Age", Long.toString(ageS))
        .withHeader(
            "X-Sand-Stale",
            "the cluster state (Cassandra) did not answer; this is what this frontend answered "
                + ageS + " s ago");
  }

  synchronized int size() {
    return kept.size();
  }
}
