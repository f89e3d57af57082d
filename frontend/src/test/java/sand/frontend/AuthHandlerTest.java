package sand.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.datastax.oss.driver.api.core.DriverTimeoutException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import sand.cluster.FrontendTables.Account;
import sand.cluster.InMemoryClusterStore;
import sand.frontend.internal.ApiException;

/** The known keys' ages: how long a frontend may serve a key it read, against how long a deleted name is held. */
class AuthHandlerTest {
  @Test
  void aDeletedAccountsNameIsHeldLongerThanAnyFrontendServesItsKey() {
    assertTrue(AuthHandler.KEY_MAX_STALE.compareTo(AuthHandler.KEY_MAX_AGE) >= 0);
    assertTrue(
        AuthHandler.DELETED_NAME_HELD
                .minus(AuthHandler.KEY_MAX_STALE)
                .compareTo(Duration.ofSeconds(20))
            >= 0,
        "a margin for the key's read and the clocks");
  }

  @Test
  void whileCassandraDoesNotAnswerAKnownKeyIsServedOnlyUpToKeyMaxStaleAfterItsRead() {
    AtomicBoolean away = new AtomicBoolean();
    InMemoryClusterStore store = new InMemoryClusterStore() {
      @Override
      public Optional<String> accountByKey(String apiKeySha256) {
        if (away.get()) {
          throw new DriverTimeoutException("Query timed out after PT10S");
        }
        return super.accountByKey(apiKeySha256);
      }
    };
    store.createAccount(new Account("alice", AuthHandler.sha256("sand_alice"), Instant.now()));
    AtomicLong now = new AtomicLong(1_000);
    AuthHandler auth = new AuthHandler(
        store, "", "", new DisabledAccounts(store, AuthHandler.KEY_MAX_AGE), now::get, null);
    assertEquals("alice", auth.account("sand_alice"));

    away.set(true);
    now.addAndGet(AuthHandler.KEY_MAX_AGE.plusSeconds(1).toNanos());
    assertEquals("alice", auth.account("sand_alice"), "Cassandra away: the key it knew");
    now.set(1_000 + AuthHandler.KEY_MAX_STALE.toNanos());
    ApiException e = assertThrows(ApiException.class, () -> auth.account("sand_alice"));
    assertEquals(
        502, e.status(), "read too long ago to be served without Cassandra: " + e.getMessage());

    away.set(false);
    assertEquals("alice", auth.account("sand_alice"), "read again once Cassandra answers");
  }
}
