package sand.cluster;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;

/** {@link EndpointTables} in memory, for unit tests (timestamps kept to the millisecond, as Cassandra keeps them). */
final class InMemoryEndpointTables implements EndpointTables {
  private final Map<String, EndpointAuth> endpoints = new ConcurrentHashMap<>();
  private final Map<String, Map<String, InvokeKey>> invokeKeys = new ConcurrentHashMap<>();

  @Override
  public void putEndpointMode(String appId, String mode) {
    endpoints.compute(
        appId, (k, old) -> new EndpointAuth(appId, mode, old == null ? null : old.sealedSecret()));
  }

  @Override
  public void putSigningSecret(String appId, byte[] sealed) {
    endpoints.compute(
        appId,
        (k, old) -> new EndpointAuth(appId, old == null ? "public" : old.mode(), sealed.clone()));
  }

  @Override
  public Optional<EndpointAuth> endpointAuth(String appId) {
    return Optional.ofNullable(endpoints.get(appId));
  }

  @Override
  public void putInvokeKey(InvokeKey key) {
    invokeKeys
        .computeIfAbsent(key.appId(), k -> new ConcurrentSkipListMap<>())
        .put(
            key.id(),
            new InvokeKey(
                key.appId(),
                key.id(),
                key.name(),
                key.sha256(),
                key.prefix(),
                key.created().truncatedTo(java.time.temporal.ChronoUnit.MILLIS)));
  }

  @Override
  public List<InvokeKey> invokeKeys(String appId) {
    return List.copyOf(invokeKeys.getOrDefault(appId, Map.of()).values());
  }

  @Override
  public boolean deleteInvokeKey(String appId, String id) {
    Map<String, InvokeKey> m = invokeKeys.get(appId);
    return m != null && m.remove(id) != null;
  }

  @Override
  public void deleteEndpoint(String appId) {
    endpoints.remove(appId);
    invokeKeys.remove(appId);
  }
}
