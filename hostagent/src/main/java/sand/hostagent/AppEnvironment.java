package sand.hostagent;

import java.util.Map;
import java.util.TreeMap;
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
  private SecretBox box; // made on first use: the cluster secret may be a read of the cluster state

  AppEnvironment(HostAgentTables store) {
    this.store = store;
  }

  AppEnv of(ApplicationRecord app) {
    Map<String, String> secrets = new TreeMap<>();
    for (StoredSecret s : store.secrets(app.appId())) {
      try {
        secrets.put(s.name(), box().open(app.appId(), s.name(), s.sealed()));
      } catch (SecretBox.Unsealable e) {
        throw new IllegalStateException(e.getMessage(), e);
      }
    }
    return new AppEnv(AppEnv.fromSettingsJson(app.settings()), secrets);
  }

  private synchronized SecretBox box() {
    if (box == null) {
      box = new SecretBox(store.clusterSecret());
    }
    return box;
  }
}
