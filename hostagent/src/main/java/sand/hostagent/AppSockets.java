package sand.hostagent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.apache.thrift.TProcessor;
import sand.common.ThriftServer;

/**
 * An application's own endpoints of the local bus and data layer: two Unix sockets in a folder that is
 * mounted into its sandbox (the only endpoints a sandbox started with {@code --network none} can reach).
 * Every call still carries the application's credential; the folder only limits who can connect.
 */
final class AppSockets implements AutoCloseable {
  static final String BUS = "bus.sock";
  static final String DATA = "data.sock";

  private final Path dir;
  private final ThriftServer bus;
  private final ThriftServer data;

  AppSockets(Path dir, String appId, TProcessor busProcessor, TProcessor dataProcessor, int maxConnections)
      throws IOException {
    this.dir = dir;
    Files.createDirectories(dir);
    // The sandbox runs as uid 1000: it must be able to reach the sockets in the folder.
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
    bus = ThriftServer.unix("bus-" + appId, busProcessor, dir.resolve(BUS), maxConnections).start();
    try {
      data = ThriftServer.unix("data-" + appId, dataProcessor, dir.resolve(DATA), maxConnections).start();
    } catch (IOException | RuntimeException e) {
      bus.close();
      throw e;
    }
  }

  Path dir() {
    return dir;
  }

  @Override
  public void close() {
    bus.close();
    data.close();
  }
}
