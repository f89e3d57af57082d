package sand.frontend.invoke;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import sand.cluster.FrontendTables.AppName;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.cluster.InMemoryClusterStore;

class AppDirectoryTest {
  private static final String WORKFLOW =
      "{\"name\":\"shop\",\"entry\":\"a\",\"functions\":[{\"name\":\"a\",\"next\":[\"end\"]}]}";

  /** Counts the reads of the application's name (the first of a refresh's three queries). */
  private static final class CountingStore extends InMemoryClusterStore {
    final AtomicInteger reads = new AtomicInteger();

    @Override
    public Optional<AppName> appName(String name) {
      reads.incrementAndGet();
      return super.appName(name);
    }
  }

  private final CountingStore store = new CountingStore();
  private final AtomicLong now = new AtomicLong(1_000_000_000L);
  private final ArrayDeque<Runnable> refreshes = new ArrayDeque<>();
  private final AppDirectory directory =
      new AppDirectory(store, Duration.ofSeconds(1), now::get, refreshes::add);

  private void app(String desired) {
    store.claimAppName(new AppName("shop", "id-1", "alice", 30));
    store.putApplication(
        new ApplicationRecord("id-1", "shop", "alice", WORKFLOW, "", "{}", 1, desired, List.of()),
        Map.of());
  }

  @Test
  void anOldEntryIsAnsweredAtOnceAndReadAgainInTheBackground() {
    app("undeployed");
    assertFalse(directory.find("shop").orElseThrow().deployed());
    assertEquals(1, store.reads.get());

    app("deployed");
    now.addAndGet(Duration.ofSeconds(2).toNanos());
    assertFalse(
        directory.find("shop").orElseThrow().deployed(), "the request is answered from memory");
    assertFalse(directory.find("shop").orElseThrow().deployed());
    assertEquals(1, store.reads.get(), "no request waited for a read");
    assertEquals(1, refreshes.size(), "one refresh at a time per application");

    refreshes.poll().run();
    assertEquals(2, store.reads.get());
    assertTrue(directory.find("shop").orElseThrow().deployed(), "the refresh replaced the entry");
    assertTrue(refreshes.isEmpty(), "a fresh entry is not read again");
  }

  @Test
  void anEntryIdleForFiveMaxAgesIsReadBeforeItAnswers() {
    app("undeployed");
    assertFalse(directory.find("shop").orElseThrow().deployed());
    app("deployed");
    now.addAndGet(Duration.ofSeconds(AppDirectory.IDLE_FACTOR).toNanos());
    assertTrue(
        directory.find("shop").orElseThrow().deployed(),
        "an entry that old is not trusted: a revoked key must not get in");
    assertEquals(2, store.reads.get());
    assertTrue(refreshes.isEmpty());
  }

  @Test
  void aChangeThroughThisFrontendIsReadByTheNextRequestEvenWhileARefreshIsUnderWay() {
    app("undeployed");
    directory.find("shop");
    now.addAndGet(Duration.ofSeconds(2).toNanos());
    directory.find("shop"); // schedules a refresh
    app("deployed");
    directory.forget("shop");
    assertTrue(directory.find("shop").orElseThrow().deployed());
    store.putApplication(
        new ApplicationRecord(
            "id-1", "shop", "alice", WORKFLOW, "", "{}", 2, "undeployed", List.of()),
        Map.of());
    directory.forget("shop");
    assertFalse(directory.find("shop").orElseThrow().deployed());
    refreshes.poll().run(); // the old refresh must not put back what it read over the newer entry
    assertFalse(directory.find("shop").orElseThrow().deployed());
  }

  @Test
  void aFailedRefreshKeepsTheOldEntryAndIsTriedAgain() {
    app("deployed");
    directory.find("shop");
    now.addAndGet(Duration.ofSeconds(2).toNanos());
    AppDirectory failing = new AppDirectory(
        new InMemoryClusterStore() {
          private int calls;

          @Override
          public Optional<AppName> appName(String name) {
            if (++calls > 1) {
              throw new IllegalStateException("Cassandra is down");
            }
            return store.appName(name);
          }

          @Override
          public Optional<ApplicationRecord> application(String appId) {
            return store.application(appId);
          }
        },
        Duration.ofSeconds(1),
        now::get,
        refreshes::add);
    assertTrue(failing.find("shop").orElseThrow().deployed());
    now.addAndGet(Duration.ofSeconds(2).toNanos());
    failing.find("shop");
    refreshes.poll().run();
    assertTrue(failing.find("shop").orElseThrow().deployed(), "still answered from the old entry");
    assertEquals(1, refreshes.size(), "and read again by the next request");
  }

  @Test
  void zeroMaxAgeReadsOnEveryRequest() {
    app("deployed");
    AppDirectory always = new AppDirectory(store, Duration.ZERO, now::get, refreshes::add);
    always.find("shop");
    always.find("shop");
    assertEquals(2, store.reads.get());
    assertTrue(refreshes.isEmpty());
  }
}
