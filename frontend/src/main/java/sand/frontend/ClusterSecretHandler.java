package sand.frontend;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.ClusterKeysRefresher;
import sand.cluster.ClusterSecrets;
import sand.cluster.ClusterStore;
import sand.cluster.EndpointTables.EndpointAuth;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.cluster.SecretBox;
import sand.cluster.SecretTables.StoredSecret;
import sand.contracts.ClusterKeys;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Call;
import sand.frontend.internal.Json;
import sand.frontend.internal.Reply;
import sand.frontend.internal.Router;
import sand.frontend.invoke.InvokeAuth;

/**
 * Rotating the cluster secret without downtime (docs/operations.md "Rotating the cluster secret"), the operator's,
 * in three steps, each refused until the one before has reached every process ({@link ClusterKeysRefresher#SETTLED}):
 *
 * <ol>
 *   <li>{@code begin}: a new secret is written as the next one; every process accepts it (tags, seals, the gates'
 *       credential) but still makes with the current one.
 *   <li>{@code switch}: the next one becomes current and the current one previous; every process makes with the
 *       new one and still accepts the old one (requests and sealed values made before the switch).
 *   <li>{@code finish}: every sealed value (applications' secrets, endpoints' signing secrets) still sealed under the
 *       old secret is sealed again under the new one, and the old one is dropped.
 * </ol>
 */
final class ClusterSecretHandler {
  private static final Logger LOG = LoggerFactory.getLogger(ClusterSecretHandler.class);

  private final ClusterStore store;
  private final Clock clock;

  ClusterSecretHandler(ClusterStore store, Clock clock) {
    this.store = store;
    this.clock = clock;
  }

  void routes(Router r) {
    r.add(
        "GET", "/api/v1/admin/cluster-secret", false, c -> Reply.ok(state(AdminHandler.admin(c))));
    r.add("POST", "/api/v1/admin/cluster-secret/{step}", false, c -> step(AdminHandler.admin(c)));
  }

  private ObjectNode state(Call c) {
    Map<String, ClusterSecrets.Row> rows = store.clusterSecrets().rows();
    ObjectNode out = Json.object();
    ClusterSecrets.Row next = rows.get(ClusterSecrets.NEXT);
    ClusterSecrets.Row previous = rows.get(ClusterSecrets.PREVIOUS);
    out.put("step", next != null ? "begun" : previous != null ? "switched" : "none under way");
    for (var e : List.of(
        Map.entry("current", ClusterSecrets.CURRENT),
        Map.entry("next", ClusterSecrets.NEXT),
        Map.entry("previous", ClusterSecrets.PREVIOUS))) {
      ClusterSecrets.Row row = rows.get(e.getValue());
      if (row != null) {
        out.putObject(e.getKey())
            .put("fingerprint", fingerprint(row.value()))
            .put("written", row.written().toString());
      } else {
        out.putNull(e.getKey());
      }
    }
    out.put("next_step", next != null ? "switch" : previous != null ? "finish" : "begin");
    out.put("next_step_allowed_in_s", secondsLeft(next != null ? next : previous));
    return out;
  }

  private Reply step(Call c) {
    String step = c.param("step");
    Map<String, ClusterSecrets.Row> rows = store.clusterSecrets().rows();
    ClusterSecrets.Row current = rows.get(ClusterSecrets.CURRENT);
    ClusterSecrets.Row next = rows.get(ClusterSecrets.NEXT);
    ClusterSecrets.Row previous = rows.get(ClusterSecrets.PREVIOUS);
    if (current == null) {
      throw new ApiException(409, "conflict", "the cluster has no secret yet: nothing to rotate");
    }
    ObjectNode out = Json.object();
    switch (step) {
      case "begin" -> {
        refuseIf(next != null, "a rotation has begun already: its next step is 'switch'");
        refuseIf(previous != null, "the last rotation is not finished: its next step is 'finish'");
        if (!store
            .clusterSecrets()
            .putIfAbsent(ClusterSecrets.NEXT, new SecureRandom().generateSeed(32))) {
          throw new ApiException(409, "conflict", "another rotation began at the same time");
        }
      }
      case "switch" -> {
        refuseIf(next == null, "no rotation has begun: its first step is 'begin'");
        settled(next, "every process accepts the next secret");
        store.clusterSecrets().promote(current.value(), next.value());
      }
      case "finish" -> {
        refuseIf(previous == null, "no rotation was switched: 'begin', then 'switch'");
        settled(previous, "every process makes with the new secret");
        ClusterKeys both = ClusterKeys.of(current.value());
        both.use(current.value(), List.of(previous.value()));
        out.set("resealed", reseal(new SecretBox(both)));
        store.clusterSecrets().delete(ClusterSecrets.PREVIOUS);
      }
      default ->
        throw new ApiException(404, "not_found", "no step '" + step + "': begin, switch or finish");
    }
    LOG.warn("[admin] cluster secret rotation: {} by the admin key from {}", step, c.origin());
    out.setAll(state(c));
    return Reply.ok(out);
  }

  /** Seal again under the current key what does not open with it (and does with an accepted one). */
  private ObjectNode reseal(SecretBox box) {
    int secrets = 0;
    int signing = 0;
    int failed = 0;
    for (ApplicationRecord app : store.applications()) {
      String id = app.appId();
      try {
        for (StoredSecret s : store.secrets(id)) {
          if (!box.sealedWithCurrent(id, s.name(), s.sealed())) {
            String value = box.open(id, s.name(), s.sealed());
            store.putSecret(
                new StoredSecret(id, s.name(), box.seal(id, s.name(), value), s.updated()));
            secrets++;
          }
        }
        EndpointAuth auth = store.endpoints().endpointAuth(id).orElse(null);
        if (auth != null
            && auth.sealedSecret() != null
            && !box.sealedWithCurrent(id, InvokeAuth.SECRET_NAME, auth.sealedSecret())) {
          String value = box.open(id, InvokeAuth.SECRET_NAME, auth.sealedSecret());
          store.endpoints().putSigningSecret(id, box.seal(id, InvokeAuth.SECRET_NAME, value));
          signing++;
        }
      } catch (SecretBox.Unsealable e) {
        failed++; // sealed under neither: it was unusable before the rotation too
        LOG.warn("[admin] cluster secret rotation: application {}: {}", id, e.getMessage());
      }
    }
    return Json.object()
        .put("secrets", secrets)
        .put("signing_secrets", signing)
        .put("unsealable", failed);
  }

  private static void refuseIf(boolean refused, String why) {
    if (refused) {
      throw new ApiException(409, "conflict", why);
    }
  }

  private void settled(ClusterSecrets.Row row, String what) {
    long s = secondsLeft(row);
    if (s > 0) {
      throw new ApiException(
          409,
          "conflict",
          "not yet: in " + s + " s " + what + " (each reads the cluster secret every "
              + ClusterKeysRefresher.EVERY.toSeconds() + " s)");
    }
  }

  /** Seconds until {@code row} is {@link ClusterKeysRefresher#SETTLED} old, 0 when it is (or there is none). */
  private long secondsLeft(ClusterSecrets.Row row) {
    if (row == null) {
      return 0;
    }
    Duration left =
        Duration.between(clock.instant(), row.written().plus(ClusterKeysRefresher.SETTLED));
    return left.isNegative() || left.isZero() ? 0 : left.toSeconds() + 1;
  }

  /** The first 12 hex digits of the secret's SHA-256: which one, without showing it. */
  static String fingerprint(byte[] secret) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(secret), 0, 6);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every Java runtime", e);
    }
  }
}
