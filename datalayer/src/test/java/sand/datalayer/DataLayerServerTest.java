package sand.datalayer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.datalayer.Layers.bytes;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.transport.TIOStreamTransport;
import org.apache.thrift.transport.TSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import sand.cluster.globaldata.CanonicalEncoding;
import sand.cluster.globaldata.InMemoryGlobalDataLayer;
import sand.common.ConfigDef;
import sand.common.ConfigDef.Config;
import sand.common.Credentials;
import sand.datalayer.thrift.DataError;
import sand.datalayer.thrift.DataErrorCode;
import sand.datalayer.thrift.DataMetadata;
import sand.datalayer.thrift.LocalDataLayer.Client;

/** The Thrift server end to end on 127.0.0.1:0, and the standalone settings. */
class DataLayerServerTest {

  private static Config config(String... overrides) {
    return DataLayerServer.parse(Map.of(), overrides, System.out);
  }

  @Test
  void oneRoundTripOverThrift() throws Exception {
    InMemoryGlobalDataLayer global = new InMemoryGlobalDataLayer();
    Config config =
        config("credential=" + Layers.AGENT, "port=0", "global=memory", "value.max.bytes=100");
    try (DataLayerServer server =
            new DataLayerServer(config, new Credentials(Layers.AGENT), global).start();
        TSocket socket = new TSocket("127.0.0.1", server.port())) {
      assertTrue(server.port() > 0);
      socket.open();
      Client client = new Client(new TBinaryProtocol(socket));
      client.grantApplication(Layers.AGENT, "appa", Layers.CRED_A);

      assertFalse(client.get(Layers.CRED_A, "k").isSetData());
      client.put(Layers.CRED_A, "k", ByteBuffer.wrap(bytes("v")));
      assertArrayEquals(bytes("v"), client.get(Layers.CRED_A, "k").getData());
      assertEquals(List.of("k"), client.listKeys(Layers.CRED_A, "", 10));
      client.putMapEntry(Layers.CRED_A, "m", "x", ByteBuffer.wrap(bytes("1")));
      assertEquals(
          Map.of("x", ByteBuffer.wrap(bytes("1"))), client.retrieveMap(Layers.CRED_A, "m"));
      assertTrue(client.addSetEntry(Layers.CRED_A, "s", "i"));
      assertEquals(Set.of("i"), client.retrieveSet(Layers.CRED_A, "s"));
      client.createCounter(Layers.CRED_A, "c", 1);
      assertEquals(3, client.incrementCounter(Layers.CRED_A, "c", 2));
      assertTrue(client.flush(Layers.CRED_A, 10_000));

      List<DataMetadata> meta = client.metadata(
          Layers.CRED_A,
          List.of(new DataMetadata("kv", "k", 0, ""), new DataMetadata("kv", "absent", 0, "")));
      assertEquals(
          new DataMetadata("kv", "k", 1, CanonicalEncoding.sha256Hex(bytes("v"))), meta.get(0));
      assertEquals(-1, meta.get(1).getSize());
      assertEquals("", meta.get(1).getSha256());
      assertTrue(client.verifyGlobal(Layers.CRED_A, meta.get(0)));

      assertEquals(
          DataErrorCode.UNAUTHORIZED,
          assertThrows(DataError.class, () -> client.get("unknown-credential-xxxxxxxx", "k"))
              .getCode());
      assertEquals(
          DataErrorCode.TOO_LARGE,
          assertThrows(
                  DataError.class, () -> client.put(Layers.CRED_A, "k", ByteBuffer.allocate(101)))
              .getCode());
      assertEquals(
          DataErrorCode.NOT_FOUND,
          assertThrows(DataError.class, () -> client.getCounterValue(Layers.CRED_A, "nope"))
              .getCode());
      assertEquals(
          DataErrorCode.BAD_REQUEST,
          assertThrows(DataError.class, () -> client.get(Layers.CRED_A, "")).getCode());
      assertEquals(
          DataErrorCode.BAD_REQUEST,
          assertThrows(
                  DataError.class,
                  () -> client.metadata(
                      Layers.CRED_A, List.of(new DataMetadata("table", "k", 0, ""))))
              .getCode());
      assertEquals(
          DataErrorCode.UNAUTHORIZED,
          assertThrows(
                  DataError.class,
                  () -> client.grantApplication(
                      Layers.CRED_A, "appb", "stolen-credential-0123456789"))
              .getCode());

      client.revokeApplication(Layers.AGENT, "appa");
      assertEquals(
          DataErrorCode.UNAUTHORIZED,
          assertThrows(DataError.class, () -> client.get(Layers.CRED_A, "k")).getCode());
    }
    assertArrayEquals(bytes("v"), global.readKv("appa", "k").orElseThrow());
  }

  @Test
  void aFullQuotaIsQuotaExceededOverThrift() throws Exception {
    Config config = config(
        "credential=" + Layers.AGENT,
        "port=0",
        "global=memory",
        "value.max.bytes=100",
        "app.max.bytes=20000");
    try (DataLayerServer server = new DataLayerServer(
                config, new Credentials(Layers.AGENT), new InMemoryGlobalDataLayer())
            .start();
        TSocket socket = new TSocket("127.0.0.1", server.port())) {
      socket.open();
      Client client = new Client(new TBinaryProtocol(socket));
      client.grantApplication(Layers.AGENT, "appa", Layers.CRED_A);
      DataError e = assertThrows(DataError.class, () -> {
        for (int i = 0;
            i < 1000;
            i++) { // one map cannot be evicted piecemeal: it outgrows the quota
          client.putMapEntry(Layers.CRED_A, "m", "e" + i, ByteBuffer.allocate(100));
        }
      });
      assertEquals(DataErrorCode.QUOTA_EXCEEDED, e.getCode());
      assertTrue(
          e.getMessage().contains("[app appa]") && e.getMessage().contains("quota 20000 bytes"),
          e.getMessage());
    }
  }

  @Test
  void alsoServesOnAUnixSocketWhenConfigured(@TempDir Path dir) throws Exception {
    Path socketPath = dir.resolve("datalayer.sock");
    Config config = config("credential=" + Layers.AGENT, "port=0", "unix.socket=" + socketPath);
    Credentials credentials = new Credentials(Layers.AGENT);
    credentials.grant("appa", Layers.CRED_A);
    try (DataLayerServer server =
            new DataLayerServer(config, credentials, new InMemoryGlobalDataLayer()).start();
        SocketChannel channel = SocketChannel.open(UnixDomainSocketAddress.of(socketPath));
        TIOStreamTransport transport = new TIOStreamTransport(
            Channels.newInputStream(channel), Channels.newOutputStream(channel))) {
      Client client = new Client(new TBinaryProtocol(transport));
      client.put(Layers.CRED_A, "k", ByteBuffer.wrap(bytes("over unix")));
      assertArrayEquals(
          bytes("over unix"),
          server.localDataLayer().forApplication("appa").get("k").orElseThrow());
    }
  }

  @Test
  void standaloneNeedsTheHostAgentCredential() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> config("port=0"));
    assertTrue(e.getMessage().contains("SAND_DATALAYER_CREDENTIAL"), e.getMessage());
  }

  @Test
  void badSettingsNameTheKeyAndWhatItMustBe() {
    ConfigDef.ConfigException e = assertThrows(
        ConfigDef.ConfigException.class,
        () -> config("credential=agent-credential-0123", "global=redis"));
    assertTrue(
        e.getMessage().contains("global") && e.getMessage().contains("cassandra or memory"),
        e.getMessage());
    assertThrows(
        ConfigDef.ConfigException.class,
        () -> config("credential=agent-credential-0123", "cassandra.keyspace=Bad-Name"));
    assertThrows(
        ConfigDef.ConfigException.class,
        () -> config("credential=agent-credential-0123", "no.such.setting=1"));
    assertThrows(
        IllegalArgumentException.class,
        () -> config("credential=agent-credential-0123", "not-key-value"));
  }

  @Test
  void environmentAndDefaults() {
    Config c = DataLayerServer.parse(
        Map.of("SAND_DATALAYER_CREDENTIAL", "agent-credential-0123", "SAND_DATALAYER_PORT", "0"),
        new String[0],
        System.out);
    assertEquals(0, c.getInt("port"));
    assertEquals("127.0.0.1", c.getString("host"));
    assertEquals(10485760, c.getInt("value.max.bytes"));
    assertEquals(64L << 20, c.getLong("app.max.bytes"));
    assertEquals(512L << 20, c.getLong("max.bytes"));
    assertEquals("127.0.0.1:9042", c.getString("cassandra.contact"));
    assertEquals("sand", DataLayerSettings.cassandra(c).keyspace());
    assertEquals(9042, DataLayerSettings.cassandra(c).contactPoints().get(0).getPort());
  }

  @Test
  void helpPrintsTheSettings() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    DataLayerServer.parse(Map.of(), new String[] {"--help"}, new PrintStream(out, true));
    assertTrue(out.toString().contains("SAND_DATALAYER_CASSANDRA_CONTACT"));
  }
}
