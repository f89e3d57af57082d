package sand.hostagent;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import sand.cluster.ClusterKeysRefresher;
import sand.cluster.HostAgentTables;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.cluster.SecretBox;
import sand.cluster.SecretTables.StoredSecret;
import sand.contracts.AppEnv;

/**
 * An application's environment as its sandbox gets it: settings.env and its secrets, opened here once per deploy
 * (a request never looks a secret up). A secret that does not open fails the deploy, naming the secret, never its
 * value.
 */
final class AppEnvironment {
  private final HostAgentTables store;

  AppEnvironment(HostAgentTables store) {
    this.store = store;
  }

  AppEnv of(ApplicationRecord app) {
    Map<String, String> secrets = new TreeMap<>();
    SecretBox box = null; // the keys read once per deploy, and only for an application with secrets
    for (StoredSecret s : store.secrets(app.appId())) {
      try {
        box = box == null ? box() : box;
        secrets.put(s.name(), box.open(app.appId(), s.name(), s.sealed()));
      } catch (SecretBox.Unsealable e) {
        throw new IllegalStateException(e.getMessage(), e);
      }
    }
    return new AppEnv(AppEnv.fromSettingsJson(app.settings()), secrets);
  }

  /**
   * A digest of {@code env}, kept to tell whether a new version changed it: an update swaps code into the running
   * sandbox, which keeps the environment it started with, so a changed environment needs a new sandbox.
   */
  static String digest(AppEnv env) {
    try {
      MessageDigest d = MessageDigest.getInstance("SHA-256");
      for (Map<String, String> m : List.of(env.config(), env.secrets())) {
        d.update((byte) m.size());
        m.forEach((k, v) -> {
          for (String x : new String[] {k, v}) {
            byte[] b = x.getBytes(StandardCharsets.UTF_8);
            d.update(ByteBuffer.allocate(4).putInt(b.length).array());
            d.update(b);
          }
        });
      }
      return HexFormat.of().formatHex(d.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  /** Read at each deploy: the cluster secret may have been rotated since the last one (ClusterKeysRefresher). */
  private SecretBox box() {
    return new SecretBox(ClusterKeysRefresher.read(store));
  }
}
