package sand.cluster;

import java.util.List;
import java.util.Optional;
import sand.contracts.ElasticPlacement;

/**
 * Small records that belong to one application, by kind (docs/api.md): its invoke keys (hashed), its
 * endpoint's protection, its versions and aliases, the scheduler's last placement of it. One
 * partition per (application, kind), rows in id order; an application's records go when it is deleted.
 */
public interface ApplicationRecords {
  /** The kinds an application's deletion removes. */
  List<String> KINDS =
      List.of("invoke_key", "endpoint", "version", "code", "alias", ElasticPlacement.RECORD_KIND);

  /** One record; {@code value} is the kind's own encoding (JSON text or sealed bytes). */
  record AppRecord(String appId, String kind, String id, byte[] value) {}

  void putAppRecord(AppRecord record);

  Optional<AppRecord> appRecord(String appId, String kind, String id);

  /** The application's records of {@code kind}, in id order. */
  List<AppRecord> appRecords(String appId, String kind);

  void deleteAppRecord(String appId, String kind, String id);

  /** Every record of the application, of every kind in {@link #KINDS}. */
  default void deleteAppRecords(String appId) {
    KINDS.forEach(k -> deleteAppRecords(appId, k));
  }

  void deleteAppRecords(String appId, String kind);
}
