package sand.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.thrift.TException;
import org.apache.thrift.TProcessor;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.protocol.TField;
import org.apache.thrift.protocol.TMessage;
import org.apache.thrift.protocol.TMessageType;
import org.apache.thrift.protocol.TProtocolUtil;
import org.apache.thrift.protocol.TStruct;
import org.apache.thrift.protocol.TType;
import org.apache.thrift.transport.TIOStreamTransport;
import org.apache.thrift.transport.TTransport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The endpoint's own limits: connections, the credential deadline, and a length bomb on TCP and Unix sockets. */
class ThriftServerTest {
  private static final String GOOD = "a-credential-of-the-application";

  /** Answers a call with the bytes of its string fields, counted. */
  private static final TProcessor COUNT = (in, out) -> {
    TMessage m = in.readMessageBegin();
    in.readStructBegin();
    int n = 0;
    while (true) {
      TField f = in.readFieldBegin();
      if (f.type == TType.STOP) {
        break;
      }
      if (f.type == TType.STRING) {
        n += in.readBinary().remaining();
      } else {
        TProtocolUtil.skip(in, f.type);
      }
      in.readFieldEnd();
    }
    in.readStructEnd();
    in.readMessageEnd();
    out.writeMessageBegin(new TMessage(m.name, TMessageType.REPLY, m.seqid));
    out.writeI32(n);
    out.writeMessageEnd();
    out.getTransport().flush();
  };

  private final List<AutoCloseable> closing = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable c : closing) {
      c.close();
    }
  }

  private ThriftServer tcp(ThriftLimits limits) throws Exception {
    ThriftServer s = ThriftServer.tcp("test", COUNT, "127.0.0.1", 0, limits).start();
    closing.add(s);
    return s;
  }

  private Socket connect(ThriftServer s) throws IOException {
    Socket socket = new Socket("127.0.0.1", s.port());
    socket.setSoTimeout(10_000);
    closing.add(socket);
    return socket;
  }

  /** One call with {@code credential} and a payload; returns what the server counted. */
  private static int call(TTransport t, String credential, int payloadBytes) throws TException {
    TBinaryProtocol p = new TBinaryProtocol(t);
    p.writeMessageBegin(new TMessage("count", TMessageType.CALL, 1));
    p.writeStructBegin(new TStruct("args"));
    p.writeFieldBegin(new TField("credential", TType.STRING, (short) 1));
    p.writeString(credential);
    p.writeFieldEnd();
    p.writeFieldBegin(new TField("payload", TType.STRING, (short) 2));
    p.writeBinary(ByteBuffer.wrap(new byte[payloadBytes]));
    p.writeFieldEnd();
    p.writeFieldStop();
    p.writeStructEnd();
    p.writeMessageEnd();
    t.flush();
    p.readMessageBegin();
    int n = p.readI32();
    p.readMessageEnd();
    return n;
  }

  private static int call(Socket s, String credential, int payloadBytes) throws Exception {
    return call(
        new TIOStreamTransport(s.getInputStream(), s.getOutputStream()), credential, payloadBytes);
  }

  /** True when the server closes the connection (EOF) before the socket's read timeout. */
  private static boolean closedByServer(InputStream in) throws IOException {
    try {
      return in.read() < 0;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true; // reset
    }
  }

  /** The 8 bytes that made TBinaryProtocol allocate 100 MB: a versioned call header and a method name's length. */
  private static void lengthBomb(DataOutputStream out) throws IOException {
    out.writeInt(0x80010001);
    out.writeInt(100_000_000);
    out.flush();
  }

  @Test
  void aLengthBombClosesItsConnectionAndTheEndpointServesOthers() throws Exception {
    ThriftServer s = tcp(ThriftLimits.of(GOOD::equals, 64, 1 << 20));
    Socket bomb = connect(s);
    lengthBomb(new DataOutputStream(bomb.getOutputStream()));
    assertTrue(closedByServer(bomb.getInputStream()), "the bomb's connection is closed");
    Socket good = connect(s);
    assertEquals(
        GOOD.length() + (1 << 20),
        call(good, GOOD, 1 << 20),
        "a 1 MB call from a known caller works");
  }

  @Test
  void aStrangersLargeArgumentClosesItsConnection() throws Exception {
    ThriftServer s = tcp(ThriftLimits.of(GOOD::equals, 64, 1 << 20));
    Socket stranger = connect(s);
    try {
      call(stranger, "not-known", 100_000);
    } catch (TException expected) {
      // the server closed the connection mid-call
    }
    assertTrue(closedByServer(stranger.getInputStream()));
    assertEquals(GOOD.length() + 10, call(connect(s), GOOD, 10));
  }

  @Test
  void connectionsBeyondTheCapAreClosedAtAccept() throws Exception {
    ThriftServer s = tcp(ThriftLimits.of(GOOD::equals, 2, 1 << 20));
    Socket first = connect(s);
    Socket second = connect(s);
    assertEquals(GOOD.length(), call(first, GOOD, 0));
    assertEquals(GOOD.length(), call(second, GOOD, 0));
    Socket third = connect(s);
    assertTrue(closedByServer(third.getInputStream()), "a third connection is refused");
    assertEquals(1, s.refusedConnections());
    first.close();
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (s.openConnections() > 1 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertEquals(GOOD.length(), call(connect(s), GOOD, 0), "a slot freed is taken again");
  }

  @Test
  void aConnectionWithoutAKnownCredentialIsClosedAfterTheDeadline() throws Exception {
    ThriftServer s = tcp(ThriftLimits.of(GOOD::equals, 64, 1 << 20).withAuthTimeoutMs(200));
    Socket silent = connect(s);
    Socket known = connect(s);
    assertEquals(GOOD.length(), call(known, GOOD, 0));
    Socket wrong = connect(s);
    try {
      call(wrong, "not-known", 0); // answered (the service would say UNAUTHORIZED), but not trusted
    } catch (TException ignored) {
      // closed already: also fine
    }
    assertTrue(
        closedByServer(silent.getInputStream()),
        "a silent connection is closed after the deadline");
    assertTrue(
        closedByServer(wrong.getInputStream()),
        "so is one that only presented unknown credentials");
    Thread.sleep(400);
    assertEquals(
        GOOD.length(),
        call(known, GOOD, 0),
        "a connection that presented a known credential stays");
  }

  @Test
  void theUnixEndpointHasTheSameLimits(@TempDir Path dir) throws Exception {
    ThriftServer s = ThriftServer.unix(
            "test-unix", COUNT, dir.resolve("t.sock"), ThriftLimits.of(GOOD::equals, 2, 1 << 20))
        .start();
    closing.add(s);
    List<SocketChannel> bombs = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(dir.resolve("t.sock")));
      closing.add(ch);
      lengthBomb(new DataOutputStream(Channels.newOutputStream(ch)));
      bombs.add(ch);
    }
    for (SocketChannel ch : bombs) {
      assertEquals(
          -1,
          new DataInputStream(Channels.newInputStream(ch)).read(),
          "the bomb's connection is closed");
    }
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (s.openConnections() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    TTransport t = ThriftServer.connectUnix(dir.resolve("t.sock"));
    closing.add(t::close);
    assertEquals(GOOD.length() + 1000, call(t, GOOD, 1000));
  }
}
