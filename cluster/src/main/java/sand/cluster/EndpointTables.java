package sand.cluster;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * How an application's end-user endpoint ({@code POST /app/{app}}) is protected (docs/security.md, "Protected
 * endpoints"): its mode, its invoke keys (only their SHA-256 is stored) and its signing secret (sealed by
 * {@link SecretBox}: the frontend needs the secret itself to check an HMAC). Written by the frontend's
 * {@code /api/v1/apps/{app}/endpoint|keys|signing-secret} routes, read when an application is cached for invocations.
 */
public interface EndpointTables {
  /**
   * One invoke key.
   *
   * @param sha256 hex SHA-256 of the key (the key itself is answered once and never stored)
   * @param prefix the key's first characters, to recognise it in a list
   */
  record InvokeKey(
      String appId, String id, String name, String sha256, String prefix, Instant created) {}

  /**
   * The endpoint's protection: {@code mode} ("public", "key" or "hmac"); {@code sealedSecret} the signing secret as
   * {@link SecretBox#seal} made it, null when none was created.
   */
  record EndpointAuth(String appId, String mode, byte[] sealedSecret) {}

  /** Set the mode, keeping the signing secret. */
  void putEndpointMode(String appId, String mode);

  /** Set the signing secret, keeping the mode. */
  void putSigningSecret(String appId, byte[] sealed);

  /** The application's protection; empty when it was never set (a public endpoint). */
  Optional<EndpointAuth> endpointAuth(String appId);

  void putInvokeKey(InvokeKey key);

  /** The application's invoke keys, by id. */
  List<InvokeKey> invokeKeys(String appId);

  /** Revoke one key; false if there was none of that id. */
  boolean deleteInvokeKey(String appId, String id);

  /** Forget the application's protection and keys (when it is deleted). */
  void deleteEndpoint(String appId);
}
