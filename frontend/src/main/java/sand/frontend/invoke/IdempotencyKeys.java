package sand.frontend.invoke;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import sand.cluster.ClusterStore;
import sand.cluster.FrontendTables.ExecutionRecord;
import sand.cluster.TriggerTables.KeyClaim;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Json;

/**
 * Idempotency keys (docs/triggers.md "Delivery semantics"): the first request or event with a key claims it for a
 * day; a later one with the same key runs nothing and answers the first execution's outcome. A key whose first
 * execution never ended (its frontend died with it) is claimed again after the wait, so the event still runs: at
 * least once, and every run carries the same key.
 */
public final class IdempotencyKeys {
  public static final String HEADER = "Idempotency-Key";
  /** Answered with a repeated key's reply: the reply is the first execution's. */
  public static final String REPLAYED_HEADER = "Idempotent-Replayed";
  /** How long a key is remembered (Stripe's and the IETF draft's usual day). */
  public static final Duration WINDOW = Duration.ofHours(24);

  public static final int MAX_CHARS = 255;
  private static final Pattern FORM = Pattern.compile("[\\x21-\\x7e]{1," + MAX_CHARS + "}");
  private static final long POLL_MS = 100;

  private final ClusterStore store;
  private final ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "idempotency-keys");
    t.setDaemon(true);
    return t;
  });

  public IdempotencyKeys(ClusterStore store) {
    this.store = store;
  }

  /** The header's key, checked (400 naming the rule), or null when the request has none. */
  public static String check(String key) {
    if (key == null) {
      return null;
    }
    if (!FORM.matcher(key).matches()) {
      throw ApiException.badRequest("the " + HEADER + " header must be 1.." + MAX_CHARS
          + " visible ASCII characters (e.g. a UUID)");
    }
    return key;
  }

  public static String sha256(byte[] body) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  public static String sha256(JsonNode value) {
    return sha256(Json.text(value).getBytes(StandardCharsets.UTF_8));
  }

  /** Claim {@code key} for {@code executionId}: empty when claimed now, else the first claim. */
  public Optional<KeyClaim> claim(String appId, String key, String executionId, String bodySha256) {
    return store.triggers().claimKey(appId, key, new KeyClaim(executionId, bodySha256), WINDOW);
  }

  /**
   * The delivery goes on to its {@code attempt}th attempt as {@code executionId}: true when the key was still
   * {@code fromExecutionId}'s (else another frontend took the delivery over and runs it). Cassandra away: true, as
   * running an attempt twice is better than losing it.
   */
  public boolean move(
      String appId,
      String key,
      String fromExecutionId,
      String executionId,
      String bodySha256,
      int attempt) {
    try {
      return store
          .triggers()
          .moveKey(
              appId, key, fromExecutionId, new KeyClaim(executionId, bodySha256, attempt), WINDOW);
    } catch (RuntimeException e) {
      return true;
    }
  }

  /** The key's claim as it stands; empty when there is none. */
  public Optional<KeyClaim> current(String appId, String key) {
    return store.triggers().readKey(appId, key);
  }

  /** The claim's execution never started (it could not be sent): let the key be used again. */
  public void release(String appId, String key, String executionId) {
    try {
      store.triggers().releaseKey(appId, key, executionId);
    } catch (RuntimeException e) {
      // the claim stays until its window ends; a repeat then waits for an execution that never ends
    }
  }

  /**
   * The record of {@code executionId} once it has ended (succeeded or failed), read every 100 ms; empty when it has
   * not ended within {@code wait} (still running, timed out, or lost with its frontend).
   */
  public CompletableFuture<Optional<ExecutionRecord>> awaitEnd(String executionId, Duration wait) {
    CompletableFuture<Optional<ExecutionRecord>> out = new CompletableFuture<>();
    long deadline = System.nanoTime() + wait.toNanos();
    Runnable[] poll = new Runnable[1];
    poll[0] = () -> {
      try {
        Optional<ExecutionRecord> r = store.execution(executionId);
        if (r.isPresent() && ended(r.get())) {
          out.complete(r);
          return;
        }
      } catch (RuntimeException e) {
        // Cassandra away for a moment: try again until the deadline
      }
      if (System.nanoTime() >= deadline) {
        out.complete(Optional.empty());
      } else {
        poller.schedule(poll[0], POLL_MS, TimeUnit.MILLISECONDS);
      }
    };
    poller.execute(poll[0]);
    return out;
  }

  static boolean ended(ExecutionRecord r) {
    return "succeeded".equals(r.status()) || "failed".equals(r.status());
  }

  /** The reply body a finished execution's first caller got: its output, or {"error": ...}. */
  public static JsonNode body(ExecutionRecord r) {
    if ("succeeded".equals(r.status())) {
      return r.result() == null ? Json.MAPPER.nullNode() : Json.stored(r.result());
    }
    JsonNode error = r.error() == null ? Json.object() : Json.stored(r.error());
    return Json.object().set("error", error);
  }

  public void close() {
    poller.shutdownNow();
  }
}
