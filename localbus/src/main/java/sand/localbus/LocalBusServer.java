package sand.localbus;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import org.apache.thrift.transport.TTransportException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.common.ConfigDef;
import sand.common.Credentials;
import sand.common.ThriftLimits;
import sand.common.ThriftServer;

/**
 * A {@link LocalMessageBus} served over Thrift on TCP ({@code host:port}) and, when
 * {@code unix.socket} is set, on that Unix socket too. The host agent embeds one next to its own bus;
 * {@link #main} runs one standalone (tests, benchmarks).
 */
public final class LocalBusServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LocalBusServer.class);

  private final LocalMessageBus bus;
  private final LocalBusSettings settings;
  private LongPollProcessor processor;
  private ThriftServer tcp;
  private ThriftServer unix;

  /** A server with a bus of its own. */
  public LocalBusServer(LocalBusSettings settings, Credentials credentials) {
    this(new LocalMessageBus(credentials, settings), settings);
  }

  /** A server for an existing bus (the host agent's). */
  public LocalBusServer(LocalMessageBus bus, LocalBusSettings settings) {
    this.bus = bus;
    this.settings = settings;
  }

  /**
   * Bind the endpoints and serve on background threads; returns once each endpoint has answered a
   * call, so a client (or the ready line of {@link #main}) never races the accept loop.
   */
  public synchronized LocalBusServer start() throws IOException {
    if (tcp != null) {
      throw new IllegalStateException("localbus: already started on " + tcp.address());
    }
    LongPollProcessor processor = new LongPollProcessor(bus);
    ThriftServer newTcp;
    try {
      newTcp = ThriftServer.tcp(
          "localbus",
          processor,
          settings.host(),
          settings.port(),
          limits(bus, settings.maxConnections()));
    } catch (TTransportException e) {
      processor.close();
      throw new IOException(
          "localbus: cannot listen on " + settings.host() + ":" + settings.port() + " ("
              + e.getMessage()
              + "); is another bus running there? Choose another port (port 0 picks a free one)",
          e);
    }
    if (!settings.unixSocket().isEmpty()) {
      try {
        unix = ThriftServer.unix(
            "localbus-unix",
            processor,
            Path.of(settings.unixSocket()),
            limits(bus, settings.maxConnections()));
      } catch (IOException | RuntimeException e) {
        newTcp.close();
        processor.close();
        throw new IOException(
            "localbus: cannot listen on Unix socket " + settings.unixSocket() + " (" + e
                + "); check that its directory is writable",
            e);
      }
      unix.start();
    }
    tcp = newTcp.start();
    this.processor = processor;
    LOG.info(
        "[localbus] ready on {}{} (queue capacity {}, LQ_HA capacity {}, message max {} bytes)",
        tcp.address(),
        unix == null ? "" : " and " + unix.address(),
        settings.queueCapacity(),
        settings.hostAgentQueueCapacity(),
        settings.messageMaxBytes());
    return this;
  }

  /** The bound TCP port (the real one when configured as 0); -1 before {@link #start()}. */
  public synchronized int port() {
    return tcp == null ? -1 : tcp.port();
  }

  /** The Unix socket served, if any. */
  public Optional<Path> unixSocket() {
    return settings.unixSocket().isEmpty()
        ? Optional.empty()
        : Optional.of(Path.of(settings.unixSocket()));
  }

  public LocalMessageBus bus() {
    return bus;
  }

  /**
   * Serve {@code bus} on one more Unix socket (an application's own endpoint, mounted into its sandbox)
   * with the same long-poll hand-off as the main endpoints. Closing the result stops that endpoint.
   */
  public static AutoCloseable serveUnix(
      LocalMessageBus bus, String name, Path socket, int maxConnections) throws IOException {
    LongPollProcessor processor = new LongPollProcessor(bus);
    ThriftServer server;
    try {
      server = ThriftServer.unix(name, processor, socket, limits(bus, maxConnections))
          .start();
    } catch (IOException | RuntimeException e) {
      processor.close();
      throw e;
    }
    return () -> {
      server.close();
      processor.close();
    };
  }

  /**
   * What a caller may make the bus's endpoints read: a stranger, next to nothing; a caller with a known
   * credential, a message of message.max.bytes and the rest of its call.
   */
  static ThriftLimits limits(LocalMessageBus bus, int maxConnections) {
    return ThriftLimits.of(
        ThriftLimits.known(bus.credentials()), maxConnections, bus.settings().messageMaxBytes());
  }

  /** Stop serving; waiting pollers are interrupted and return empty. Closing twice is harmless. */
  @Override
  public synchronized void close() {
    if (processor != null) {
      processor.close(); // parked polls are answered empty while their connections are still up
      processor = null;
    }
    if (unix != null) {
      unix.close();
      unix = null;
    }
    if (tcp != null) {
      tcp.close();
      tcp = null;
    }
  }

  /**
   * Run a standalone bus configured by the environment ({@code SAND_LOCALBUS_*}; {@code --help} lists
   * the settings). Prints {@code localbus listening on <host>:<port>} once it serves; stops on SIGTERM.
   */
  public static void main(String[] args) throws InterruptedException {
    ConfigDef def = LocalBusSettings.definition();
    if (args.length == 1 && (args[0].equals("--help") || args[0].equals("-h"))) {
      System.out.println(
          "Usage: LocalBusServer (settings from the environment)\n\n" + def.toMarkdown());
      return;
    }
    if (args.length > 0) {
      fail(
          2,
          "unexpected argument '" + args[0]
              + "': settings come from SAND_LOCALBUS_* variables; see --help");
    }
    LocalBusSettings settings = null;
    String credential = null;
    try {
      ConfigDef.Config config = def.parse(Map.of());
      settings = LocalBusSettings.from(config);
      credential = config.getString(LocalBusSettings.CREDENTIAL);
    } catch (ConfigDef.ConfigException | IllegalArgumentException e) {
      fail(2, e.getMessage());
    }
    if (credential == null || credential.isBlank()) {
      fail(
          2,
          "localbus: " + def.envName(LocalBusSettings.CREDENTIAL)
              + " is empty; a standalone bus needs "
              + "the host agent credential: set it to a secret that clients acting as the host agent also use");
    }
    LocalBusServer server = new LocalBusServer(settings, new Credentials(credential));
    try {
      server.start();
    } catch (IOException e) {
      fail(1, e.getMessage());
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(new Thread(
            () -> {
              server.close();
              stopped.countDown();
            },
            "localbus-shutdown"));
    // The one line a harness waits for: the bus answers from now on.
    System.out.println("localbus listening on " + settings.host() + ":" + server.port());
    System.out.flush();
    stopped.await();
  }

  private static void fail(int status, String message) {
    System.err.println("Error: " + message);
    System.exit(status);
  }
}
