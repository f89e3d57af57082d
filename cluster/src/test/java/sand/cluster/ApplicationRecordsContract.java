package sand.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.cluster.HostAgentTablesContract.uid;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import sand.cluster.ApplicationRecords.AppRecord;

/** What every {@link ClusterStore} promises about {@link ApplicationRecords}, on the fake and on Cassandra. */
interface ApplicationRecordsContract {

  ClusterStore store();

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  default void recordsArePutReadListedInIdOrderAndDeleted() {
    String app = uid("a");
    store().putAppRecord(new AppRecord(app, "invoke_key", "B", b("2")));
    store().putAppRecord(new AppRecord(app, "invoke_key", "A", b("1")));
    store().putAppRecord(new AppRecord(app, "invoke_key", "A", b("1b")));
    store().putAppRecord(new AppRecord(app, "alias", "prod", b("{}")));
    assertArrayEquals(
        b("1b"), store().appRecord(app, "invoke_key", "A").orElseThrow().value());
    assertEquals(
        List.of("A", "B"),
        store().appRecords(app, "invoke_key").stream().map(AppRecord::id).toList());
    assertTrue(store().appRecords(uid("other"), "invoke_key").isEmpty());

    store().deleteAppRecord(app, "invoke_key", "A");
    assertTrue(store().appRecord(app, "invoke_key", "A").isEmpty());
    store().deleteAppRecords(app);
    assertTrue(store().appRecords(app, "invoke_key").isEmpty());
    assertTrue(store().appRecords(app, "alias").isEmpty());
  }
}
