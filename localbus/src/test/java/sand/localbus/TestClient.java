package sand.localbus;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.apache.thrift.TConfiguration;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.transport.TSocket;
import org.apache.thrift.transport.TTransport;
import org.apache.thrift.transport.TTransportException;
import sand.common.ThriftServer;
import sand.localbus.thrift.LocalBus;

/** A Thrift client of the bus over TCP or a Unix socket, as a grain worker or the host agent would use. */
final class TestClient implements AutoCloseable {
  final LocalBus.Client bus;
  private final TTransport transport;

  private TestClient(TTransport transport) {
    this.transport = transport;
    this.bus = new LocalBus.Client(new TBinaryProtocol(transport));
  }

  static TestClient tcp(int port) throws TTransportException {
    TSocket socket = new TSocket(new TConfiguration(), "127.0.0.1", port, 0);
    socket.open();
    return new TestClient(socket);
  }

  static TestClient unix(Path path) throws IOException, TTransportException {
    return new TestClient(ThriftServer.connectUnix(path));
  }

  static ByteBuffer buf(String s) {
    return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
  }

  static String str(ByteBuffer b) {
    byte[] a = new byte[b.remaining()];
    b.duplicate().get(a);
    return new String(a, StandardCharsets.UTF_8);
  }

  @Override
  public void close() {
    transport.close();
  }
}
