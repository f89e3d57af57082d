package sand.datalayer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import sand.cluster.globaldata.InMemoryGlobalDataLayer;
import sand.common.Credentials;

/** A local data layer over the in-memory global layer, with two applications granted: the unit tests' fixture. */
final class Layers implements AutoCloseable {
  static final String AGENT = "host-agent-credential-0123456789";
  static final String CRED_A = "credential-of-app-a-0123456789";
  static final String CRED_B = "credential-of-app-b-0123456789";

  final Credentials credentials = new Credentials(AGENT);
  final InMemoryGlobalDataLayer global = new InMemoryGlobalDataLayer();
  final LocalDataLayer layer;
  final ApplicationData a;
  final ApplicationData b;

  Layers() {
    this(LocalDataLayer.Options.defaults()
        .withValueMaxBytes(1000)
        .withRetryMaxBackoff(Duration.ofMillis(50)));
  }

  Layers(LocalDataLayer.Options options) {
    layer = new LocalDataLayer(credentials, global, options);
    layer.grantApplication(AGENT, "appa", CRED_A);
    layer.grantApplication(AGENT, "appb", CRED_B);
    a = layer.forCredential(CRED_A);
    b = layer.forCredential(CRED_B);
  }

  /** A second host: empty memory over the same global layer and credentials. */
  LocalDataLayer otherHost() {
    return new LocalDataLayer(credentials, global, layer.options());
  }

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static String text(byte[] b) {
    return new String(b, StandardCharsets.UTF_8);
  }

  @Override
  public void close() {
    global.setAvailable(true);
    global.setWritesFailing(false);
    global.refuseWrites(w -> false);
    layer.close();
  }
}
