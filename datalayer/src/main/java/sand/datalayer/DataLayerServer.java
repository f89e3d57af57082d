package sand.datalayer;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.apache.thrift.transport.TTransportException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.globaldata.GlobalDataLayer;
import sand.cluster.globaldata.GlobalUnavailableException;
import sand.common.ConfigDef;
import sand.common.ConfigDef.Config;
import sand.common.Credentials;
import sand.common.ThriftLimits;
import sand.common.ThriftServer;

/**
 * The local data layer served over Thrift: embeddable ({@code new DataLayerServer(config, credentials,
 * global).start()}, then {@link #close()}) or standalone through {@link #main}.
 *
 * <p>Standalone, settings come from {@code SAND_DATALAYER_*} variables or {@code key=value} arguments
 * (see {@link DataLayerSettings}); {@code credential} (the host agent credential) is required. When
 * ready it prints one line to stdout, {@code datalayer listening on <host>:<port>}; SIGTERM stops it
 * after waiting (bounded by {@code shutdown.flush.ms}) for pending writes to reach the global layer.
 */
public final class DataLayerServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DataLayerServer.class);

  private final Config config;
  private final LocalDataLayer layer;
  private final Credentials credentials;
  private ThriftServer tcp;
  private ThriftServer unix;

  /** A server over a new local data layer; the caller keeps ownership of {@code global}. */
  public DataLayerServer(Config config, Credentials credentials, GlobalDataLayer global) {
    this.config = config;
    this.credentials = credentials;
    this.layer = new LocalDataLayer(credentials, global, DataLayerSettings.options(config));
  }

  /** Bind (TCP host:port, and the Unix socket when configured) and start serving. */
  public DataLayerServer start() throws IOException {
    DataLayerService service = new DataLayerService(layer);
    try {
      tcp = ThriftServer.tcp(
              "datalayer",
              service.processor(),
              config.getString("host"),
              config.getInt("port"),
              limits())
          .start();
    } catch (TTransportException e) {
      throw new IOException(
          "datalayer: cannot bind " + config.getString("host") + ":" + config.getInt("port") + " ("
              + e.getMessage() + "); pick another port (SAND_DATALAYER_PORT, 0 = any free port)",
          e);
    }
    String socket = config.getString("unix.socket");
    if (!socket.isEmpty()) {
      unix = ThriftServer.unix("datalayer", service.processor(), Path.of(socket), limits())
          .start();
    }
    return this;
  }

  /**
   * What a caller may make the endpoints read: a stranger, next to nothing; a caller with a known
   * credential, a value of value.max.bytes and the rest of its call.
   */
  private ThriftLimits limits() {
    return ThriftLimits.of(
        ThriftLimits.known(credentials),
        config.getInt("max.connections"),
        config.getInt("value.max.bytes"));
  }

  /** The bound TCP port (useful with port 0). */
  public int port() {
    return tcp.port();
  }

  /** host:port of the TCP endpoint. */
  public String address() {
    return tcp.address();
  }

  public LocalDataLayer localDataLayer() {
    return layer;
  }

  /** Stop serving, then wait (bounded by {@code shutdown.flush.ms}) for pending writes. The global layer stays open. */
  @Override
  public void close() {
    if (tcp != null) {
      tcp.close();
    }
    if (unix != null) {
      unix.close();
    }
    layer.close();
  }

  /** Run standalone until SIGTERM; see the class comment. Exit 2 for bad settings, 1 when Cassandra is unreachable. */
  public static void main(String[] args) throws InterruptedException {
    Config config;
    try {
      config = parse(args);
    } catch (ConfigDef.ConfigException | IllegalArgumentException e) {
      fail(2, e.getMessage());
      return;
    }
    if (args.length == 1 && (args[0].equals("--help") || args[0].equals("-h"))) {
      return;
    }
    GlobalDataLayer global;
    try {
      global = DataLayerSettings.openGlobal(config);
    } catch (GlobalUnavailableException | IllegalArgumentException e) {
      fail(1, e.getMessage());
      return;
    }
    DataLayerServer server;
    try {
      server = new DataLayerServer(config, new Credentials(config.getString("credential")), global);
    } catch (IllegalArgumentException e) {
      global.close();
      fail(2, e.getMessage());
      return;
    }
    try {
      server.start();
    } catch (IOException e) {
      server.close();
      global.close();
      fail(1, e.getMessage());
      return;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(new Thread(
            () -> {
              LOG.info("stopping (signal)");
              server.close();
              global.close();
              stopped.countDown();
            },
            "datalayer-shutdown"));
    System.out.println("datalayer listening on " + server.address());
    System.out.flush();
    stopped.await();
  }

  /**
   * The standalone settings from the environment and {@code key=value} arguments; checks that the host
   * agent credential is set. {@code --help} prints the settings table.
   */
  static Config parse(String[] args) {
    return parse(System.getenv(), args, System.out);
  }

  static Config parse(Map<String, String> env, String[] args, PrintStream help) {
    Map<String, String> overrides = new LinkedHashMap<>();
    for (String arg : args) {
      if (arg.equals("--help") || arg.equals("-h")) {
        help.println(
            "usage: java -cp 'datalayer/target/datalayer-<version>.jar:datalayer/target/lib/*' "
                + DataLayerServer.class.getName()
                + " [key=value ...]\n\nSettings (or SAND_DATALAYER_<KEY>):\n");
        help.print(DataLayerSettings.DEF.toMarkdown());
        return DataLayerSettings.DEF.parse(env, Map.of("credential", "help-only-credential"));
      }
      int eq = arg.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException(
            "datalayer: argument '" + arg + "' is not key=value; see --help");
      }
      overrides.put(arg.substring(0, eq), arg.substring(eq + 1));
    }
    Config config = DataLayerSettings.DEF.parse(env, overrides);
    if (config.getString("credential").isEmpty()) {
      throw new IllegalArgumentException(
          "datalayer: credential is empty: set " + DataLayerSettings.DEF.envName("credential")
              + " (or pass credential=...) to the host agent credential; it is required standalone");
    }
    return config;
  }

  private static void fail(int status, String message) {
    System.err.println("Error: " + message);
    System.exit(status);
  }
}
