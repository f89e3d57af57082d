package sand.frontend;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import sand.cluster.ClusterStore;
import sand.cluster.FrontendTables.ExecutionRecord;
import sand.cluster.FrontendTables.ExecutionRef;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Call;
import sand.frontend.internal.Json;
import sand.frontend.internal.Reply;
import sand.frontend.internal.Router;

/**
 * {@code GET /api/v1/apps/{app}/executions}: an application's executions, newest first, a page at a time
 * (docs/api.md "Listing executions"). Filters: {@code status} (running, succeeded, failed, timeout), {@code since}
 * and {@code until} (epoch milliseconds; default the last 24 hours). The answer's {@code next} is an
 * opaque cursor for the following page (null at the end). Another account's application answers 404.
 */
public final class AppExecutionsHandler {
  public static final int LIMIT_MAX = 100;
  public static final int LIMIT_DEFAULT = 20;
  /** With a status filter, how many executions one page looks at, at most (its {@code next} goes on from there). */
  public static final int SCAN_MAX = 1000;

  static final Set<String> STATUSES = Set.of("running", "succeeded", "failed", "timeout");

  private final ClusterStore store;
  private final AppsHandler apps;
  private final Clock clock;

  public AppExecutionsHandler(ClusterStore store, AppsHandler apps, Clock clock) {
    this.store = store;
    this.apps = apps;
    this.clock = clock;
  }

  public void routes(Router r) {
    r.add("GET", "/api/v1/apps/{app}/executions", true, this::list);
  }

  /** Where a page starts: at or before {@code started}, after {@code executionId} among equal starts. */
  record Cursor(Instant started, String executionId) {
    String encode() {
      return Base64.getUrlEncoder()
          .withoutPadding()
          .encodeToString(
              (started.toEpochMilli() + ":" + executionId).getBytes(StandardCharsets.UTF_8));
    }

    static Cursor decode(String s) {
      try {
        String v = new String(Base64.getUrlDecoder().decode(s), StandardCharsets.UTF_8);
        int colon = v.indexOf(':');
        String id = v.substring(colon + 1);
        if (colon < 1 || !id.matches("[0-9a-f]{1,64}")) {
          throw new IllegalArgumentException(v);
        }
        return new Cursor(Instant.ofEpochMilli(Long.parseLong(v.substring(0, colon))), id);
      } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
        throw ApiException.badRequest("cursor '" + s
            + "' is not one this API gave: pass the 'next' of the previous page as it was");
      }
    }
  }

  Reply list(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    Instant now = clock.instant();
    Instant since = time(call, "since", now.minus(Duration.ofDays(1)));
    Instant until = time(call, "until", now.plus(Duration.ofMinutes(1)));
    int limit = call.count("limit", LIMIT_DEFAULT, LIMIT_MAX);
    String status = call.query("status");
    if (status != null
        && !STATUSES.contains(status)) { // an empty status= too: leave it out for every state
      throw ApiException.badRequest(
          "status=" + status + " is unknown: one of " + new java.util.TreeSet<>(STATUSES));
    }
    String after = call.query("cursor");
    Cursor cursor = after == null || after.isEmpty() ? null : Cursor.decode(after);
    if (cursor != null && cursor.started().isBefore(until)) {
      until = cursor.started();
    }
    boolean filtered = status != null && !status.isEmpty();
    ObjectNode out = Json.object().put("app", o.name().name());
    ArrayNode arr = out.putArray("executions");
    Cursor next = null;
    int scanned = 0;
    ExecutionRef last =
        null; // the last execution this page looked at: the next page goes on after it
    int budget = filtered ? SCAN_MAX : limit;
    // Ties at the cursor's millisecond are read again and skipped up to the cursor's id.
    List<ExecutionRef> refs =
        store.executionsBetween(o.app().appId(), since, until, budget + LIMIT_MAX + 1);
    for (ExecutionRef ref : refs) {
      if (cursor != null
          && ref.started().toEpochMilli() == cursor.started().toEpochMilli()
          && ref.executionId().compareTo(cursor.executionId()) <= 0) {
        continue;
      }
      if (last != null && (arr.size() == limit || scanned == budget)) {
        next = new Cursor(Instant.ofEpochMilli(last.started().toEpochMilli()), last.executionId());
        break;
      }
      scanned++;
      last = ref;
      ExecutionRecord e = store.execution(ref.executionId()).orElse(null);
      if (e != null && (!filtered || status.equals(e.status()))) {
        arr.add(describe(e));
      }
    }
    out.put("next", next == null ? null : next.encode());
    return Reply.ok(out);
  }

  static ObjectNode describe(ExecutionRecord e) {
    ObjectNode x = Json.object()
        .put("execution_id", e.executionId())
        .put("status", e.status())
        .put("started", AppStatus.iso(e.started()))
        .put("finished", AppStatus.iso(e.finished()));
    if (e.started() != null && e.finished() != null) {
      x.put("duration_ms", Duration.between(e.started(), e.finished()).toNanos() / 1e6);
    } else {
      x.putNull("duration_ms");
    }
    return x.put("error", e.error());
  }

  /** The latest time a query may name (as JavaScript's Date allows; the OpenAPI document says the same). */
  static final long TIME_MAX_MS = 8_640_000_000_000_000L;

  /** Epoch milliseconds, 0..{@link #TIME_MAX_MS}. */
  private static Instant time(Call call, String name, Instant dflt) {
    String v = call.query(name);
    if (v == null) {
      return dflt;
    }
    try {
      long ms = Long.parseLong(v);
      if (ms >= 0 && ms <= TIME_MAX_MS) {
        return Instant.ofEpochMilli(ms);
      }
    } catch (NumberFormatException e) {
      // the message below
    }
    throw ApiException.badRequest(
        name + "=" + v + " is not a time: epoch milliseconds in 0.." + TIME_MAX_MS);
  }
}
