package sand.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import sand.contracts.ConditionFlag;

/** A condition flag on a grain topic is keyed by its event id (docs/host-agent.md "Records on a grain topic"). */
class KafkaClientsTest {

  @Test
  void aFlagsRecordIsKeyedByItsEventId() {
    ConditionFlag finished = ConditionFlag.finished("e1", "h1");
    ProducerRecord<String, byte[]> r = KafkaClients.record("sand.shop.resize", 1, finished);
    assertEquals("sand.shop.resize", r.topic());
    assertEquals("e1", r.key());
    assertEquals(1, r.partition());
    assertArrayEquals(finished.value(), r.value());
    assertNull(KafkaClients.record("t", null, finished).partition());
  }

  @Test
  void aReplicatedTopicAcknowledgesAWriteOnlyOnceTwoReplicasHaveIt() {
    assertEquals(
        "2",
        KafkaClients.newTopic("sand.shop.resize", 3, (short) 3)
            .configs()
            .get("min.insync.replicas"));
    assertEquals(
        "1",
        KafkaClients.newTopic("sand.shop.resize", 1, (short) 1)
            .configs()
            .get("min.insync.replicas"));
    assertEquals(
        Integer.toString(KafkaClients.MAX_REQUEST_BYTES),
        KafkaClients.newTopic("t", 1, (short) 2).configs().get("max.message.bytes"));
  }

  @Test
  void everyClientGivesUpOnABrokerWhoseHostIsGoneWithinSeconds() {
    for (Properties p : List.of(
        KafkaClients.adminProperties("b:9092"),
        KafkaClients.producerProperties("b:9092", "h1"),
        KafkaClients.consumerProperties("b:9092", "g", "h1"))) {
      assertEquals("b:9092", p.get("bootstrap.servers"));
      assertEquals(2_000L, p.get("socket.connection.setup.timeout.ms"));
      assertEquals(5_000L, p.get("socket.connection.setup.timeout.max.ms"));
    }
  }

  @Test
  void withALoginEveryClientUsesScramAndWithoutOneNoSasl(@TempDir Path tmp) throws Exception {
    Path pw = Files.writeString(tmp.resolve("frontend.password"), "pw-0123456789");
    Files.setPosixFilePermissions(pw, PosixFilePermissions.fromString("rw-------"));
    Properties p = KafkaClients.clientProperties(
        "b:9092", Optional.of(new ClusterSettings.Login("frontend", pw)));
    assertEquals("SASL_PLAINTEXT", p.get("security.protocol"));
    assertEquals("SCRAM-SHA-512", p.get("sasl.mechanism"));
    assertEquals(
        "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"frontend\" "
            + "password=\"pw-0123456789\";",
        p.get("sasl.jaas.config"));
    Properties none = KafkaClients.clientProperties("b:9092", Optional.empty());
    assertEquals(null, none.get("security.protocol"));
    assertEquals(null, none.get("sasl.jaas.config"));
  }
}
