package sand.frontend.invoke;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import sand.cluster.FrontendTables.AppName;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.cluster.InMemoryClusterStore;
import sand.contracts.ExecutionTag;
import sand.frontend.internal.ApiException;

/** An undeploy made through another frontend is seen at once, and its waiting requests get 409, not 504. */
class ControlWatcherTest {
  private static final String WORKFLOW =
      "{\"name\":\"shop\",\"entry\":\"a\",\"functions\":[{\"name\":\"a\",\"next\":[\"end\"]}]}";

  final InMemoryClusterStore store = new InMemoryClusterStore();
  final ExecutionLog log = new ExecutionLog(store, Duration.ofHours(1), 2, 100);
  final Results results =
      new Results(log, Clock.systemUTC(), new ExecutionTag(store.clusterSecret()), "fe-1");
  // a cache that never expires by itself: only the control event can make it read again
  final AppDirectory directory =
      new AppDirectory(store, Duration.ofHours(1), System::nanoTime, Runnable::run);
  final ControlWatcher watcher =
      new ControlWatcher(new MockConsumer<>("latest"), directory, results);

  @AfterEach
  void close() {
    log.close();
  }

  private void app(String desired) {
    store.claimAppName(new AppName("shop", "id-1", "alice", 30));
    store.putApplication(
        new ApplicationRecord("id-1", "shop", "alice", WORKFLOW, "", "{}", 1, desired, List.of()),
        Map.of());
  }

  private static byte[] event(String type, String app) {
    return ("{\"type\":\"" + type + "\",\"app\":\"" + app + "\",\"hosts\":null}")
        .getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void anUndeployThroughAnotherFrontendIsSeenAtOnce() {
    app("deployed");
    assertTrue(directory.find("shop").orElseThrow().deployed());
    app("undeployed"); // another frontend wrote it
    assertTrue(directory.find("shop").orElseThrow().deployed(), "cached: not read again yet");

    watcher.handle(event("undeploy", "id-1"));
    assertFalse(directory.find("shop").orElseThrow().deployed());
  }

  @Test
  void anotherApplicationsEventAndGarbageLeaveTheCacheAlone() {
    app("deployed");
    directory.find("shop");
    app("undeployed");
    watcher.handle(event("undeploy", "id-2"));
    watcher.handle("not json".getBytes(StandardCharsets.UTF_8));
    watcher.handle("{\"type\":\"undeploy\"}".getBytes(StandardCharsets.UTF_8));
    assertTrue(directory.find("shop").orElseThrow().deployed());
  }

  @Test
  void requestsStillWaitingAfterTheGraceAre409AndRecordedAsFailed() throws Exception {
    var waiting = results.expect("e1", "id-1");
    var other = results.expect("e2", "id-2");
    watcher.abandon("id-1");

    ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
        ExecutionException.class, () -> waiting.get(1, TimeUnit.SECONDS));
    ApiException why = (ApiException) e.getCause();
    assertEquals(409, why.status());
    assertTrue(why.getMessage().contains("undeployed while this request waited"), why.getMessage());
    assertFalse(other.isDone(), "another application's request keeps waiting");
  }
}
