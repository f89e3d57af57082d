package sand.cluster;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class StatementsTest {
  @Test
  void readsAndUpsertsAreTriedAgainConditionsAndIncrementsNot() {
    assertTrue(Statements.idempotent("SELECT * FROM ks.applications WHERE app_id = ?"));
    assertTrue(
        Statements.idempotent("INSERT INTO ks.executions (id, at) VALUES (?, ?) USING TTL ?"));
    assertTrue(Statements.idempotent("UPDATE ks.applications SET hosts = ? WHERE app_id = ?"));
    assertTrue(Statements.idempotent("DELETE FROM ks.notify WHERE id = ?"));
    assertFalse(Statements.idempotent("INSERT INTO ks.accounts (name) VALUES (?) IF NOT EXISTS"));
    assertFalse(
        Statements.idempotent("DELETE FROM ks.buckets WHERE owner = ? AND name = ? IF EXISTS"));
    assertFalse(Statements.idempotent("UPDATE ks.keys SET a = ? WHERE k = ? IF execution_id = ?"));
    assertFalse(Statements.idempotent("UPDATE ks.t SET used = used + ? WHERE app = ?"));
    assertFalse(Statements.idempotent("update ks.t set n = n - ? where app = ?"));
  }
}
