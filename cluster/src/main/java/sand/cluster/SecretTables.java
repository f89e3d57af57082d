package sand.cluster;

import java.time.Instant;
import java.util.List;

/**
 * The applications' secrets in the cluster state (docs/security.md, "Secrets"): each one sealed by
 * {@link SecretBox} (AES-256-GCM under a key derived from the cluster secret, bound to its application and
 * name), never stored in clear. The frontend writes them (PUT/DELETE /api/v1/apps/{app}/secrets/{name}); the host
 * agent reads and opens them when it deploys the application.
 */
public interface SecretTables {
  /**
   * One stored secret.
   *
   * @param sealed  what {@link SecretBox#seal} made of the value
   * @param updated when it was last set
   */
  record StoredSecret(String appId, String name, byte[] sealed, Instant updated) {
    /** The size of the value in bytes (the sealed form minus its nonce, version and tag). */
    public int valueBytes() {
      return sealed.length - SecretBox.OVERHEAD;
    }
  }

  /** Set (or replace) the secret {@code name} of {@code appId}. */
  void putSecret(StoredSecret secret);

  /** The application's secrets, by name. */
  List<StoredSecret> secrets(String appId);

  /** Remove one secret; false if there was none of that name. */
  boolean deleteSecret(String appId, String name);

  /** Remove every secret of the application (when it is deleted). */
  default void deleteSecrets(String appId) {
    secrets(appId).forEach(s -> deleteSecret(appId, s.name()));
  }
}
