package sand.hostagent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.transport.TTransport;
import org.apache.thrift.transport.TTransportException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import sand.common.Credentials;
import sand.common.ThriftServer;
import sand.localbus.LocalBusSettings;
import sand.localbus.LocalMessageBus;
import sand.localbus.thrift.LocalBus;

/** An application's own sockets: few connections (bus.app.max.connections), and nothing big before a credential. */
class AppSocketsTest {
  private static final String APP_CREDENTIAL = "app-credential-0123456789";

  @Test
  void eachEndpointKeepsAtMostTheApplicationsConnectionsAndClosesALengthBomb(@TempDir Path dir)
      throws Exception {
    Credentials credentials = new Credentials("host-agent-credential-0123456789");
    credentials.grant("app", APP_CREDENTIAL);
    LocalMessageBus bus =
        new LocalMessageBus(credentials, LocalBusSettings.defaults().withAppMaxConnections(3));
    List<TTransport> open = new ArrayList<>();
    try (AppSockets sockets = new AppSockets(
        dir.resolve("app"),
        "app",
        bus,
        (in, out) -> {
          in.readMessageBegin(); // the bounded protocol refuses a declared length here, before
          // any allocation
          throw new TTransportException("no data layer in this test");
        },
        1024)) {
      Path busSock = sockets.dir().resolve(AppSockets.BUS);
      for (int i = 0; i < 3; i++) {
        TTransport t = ThriftServer.connectUnix(busSock);
        open.add(t);
        assertEquals(
            0, new LocalBus.Client(new TBinaryProtocol(t)).length(APP_CREDENTIAL, "app/g"));
      }
      TTransport fourth = ThriftServer.connectUnix(busSock);
      open.add(fourth);
      assertThrows(
          TTransportException.class,
          () -> new LocalBus.Client(new TBinaryProtocol(fourth)).length(APP_CREDENTIAL, "app/g"),
          "a fourth connection is closed at accept");

      SocketChannel bomb =
          SocketChannel.open(UnixDomainSocketAddress.of(sockets.dir().resolve(AppSockets.DATA)));
      // One write: a call whose method name declares 100 MB (two writes race the server's close).
      bomb.write(ByteBuffer.allocate(8).putInt(0x80010001).putInt(100_000_000).flip());
      assertEquals(true, closed(bomb), "the data socket closes a length bomb");
      bomb.close();
    } finally {
      open.forEach(TTransport::close);
    }
  }

  /** The server closed the connection: end of stream, or a reset when it closed with our bytes unread. */
  private static boolean closed(SocketChannel ch) {
    try {
      return ch.read(ByteBuffer.allocate(1)) < 0;
    } catch (IOException e) {
      return true;
    }
  }
}
