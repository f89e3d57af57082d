package sand.hostagent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.thrift.TProcessor;
import sand.common.ThriftLimits;
import sand.common.ThriftServer;
import sand.datalayer.DataLayerSettings;
import sand.localbus.LocalBusServer;
import sand.localbus.LocalMessageBus;

/**
 * An application's own endpoints of the local bus and data layer: two Unix sockets in a folder that is
 * mounted into its sandbox (the only endpoints a sandbox started with {@code --network none} can reach).
 * Every call still carries the application's credential; the folder only limits who can connect.
 *
 * <p>Each endpoint keeps at most {@code bus.app.max.connections} connections open (a thread each), fewer
 * when the caller asks for fewer; a connection that presents no known credential within seconds is
 * closed, and nothing large is read before one (see {@link ThriftLimits}).
 */
final class AppSockets implements AutoCloseable {
  static final String BUS = "bus.sock";
  static final String DATA = "data.sock";

  private final Path dir;
  private final AutoCloseable bus;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final ThriftServer data;

  AppSockets(
      Path dir,
      String appId,
      LocalMessageBus messageBus,
      TProcessor dataProcessor,
      int maxConnections)
      throws IOException {
    this.dir = dir;
    int connections = Math.min(maxConnections, messageBus.settings().appMaxConnections());
    Files.createDirectories(dir);
    // The sandbox runs as uid 1000: it must be able to reach the sockets in the folder.
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
    bus = LocalBusServer.serveUnix(messageBus, "bus-" + appId, dir.resolve(BUS), connections);
    try {
      // The data layer refuses a value above its value.max.bytes itself; this bounds what is read
      // before it can.
      data = ThriftServer.unix(
              "data-" + appId,
              dataProcessor,
              dir.resolve(DATA),
              ThriftLimits.of(
                  ThriftLimits.known(messageBus.credentials()),
                  connections,
                  DataLayerSettings.VALUE_MAX_BYTES_LIMIT))
          .start();
    } catch (IOException | RuntimeException e) {
      closeBus();
      throw e;
    }
  }

  Path dir() {
    return dir;
  }

  private void closeBus() {
    try {
      bus.close();
    } catch (Exception e) {
      // the bus endpoint of an application that is going away: nothing left to do
    }
  }

  @Override
  public void close() {
    if (closed.getAndSet(true)) {
      return; // a sandbox scaled to zero closed them already
    }
    closeBus();
    data.close();
  }
}
