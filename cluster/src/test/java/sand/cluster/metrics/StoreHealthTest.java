package sand.cluster.metrics;

import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.datastax.oss.driver.api.core.AllNodesFailedException;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Labels;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import sand.cluster.ClusterStore;
import sand.cluster.InMemoryClusterStore;

/** Cassandra's health as a process sees it: answered and failed calls, and when one last was answered. */
class StoreHealthTest {
  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final AtomicLong now = new AtomicLong(1_000_000);
  private final StoreHealth health = new StoreHealth(registry, Labels.of("host", "h1"), now::get);

  /** A store whose every call fails as the driver does when no Cassandra node answers. */
  interface Table {
    String read(String key);

    Table part();
  }

  private static Table failing(boolean driverError) {
    return new Table() {
      @Override
      public String read(String key) {
        if (driverError) {
          throw AllNodesFailedException.fromErrors(List.of());
        }
        throw new IllegalArgumentException("no row " + key); // an answer: Cassandra is there
      }

      @Override
      public Table part() {
        return this;
      }
    };
  }

  private String text() {
    return Exposition.text(registry);
  }

  @Test
  void answeredCallsAreCountedAndStampTheLastSuccess() {
    ClusterStore store =
        health.watch(StoreHealth.CLUSTER_STATE, ClusterStore.class, new InMemoryClusterStore());
    now.set(5_000_000);
    store.liveHosts(java.time.Instant.EPOCH, java.time.Duration.ofSeconds(1));
    store.endpoints(); // an accessor of a part: not a call
    String t = text();
    assertTrue(
        t.contains(
            "sand_cassandra_calls_total{host=\"h1\",outcome=\"ok\",store=\"cluster_state\"} 1.0"),
        t);
    assertTrue(t.contains("sand_cassandra_up{host=\"h1\",store=\"cluster_state\"} 1.0"), t);
    assertTrue(
        t.contains(
            "sand_cassandra_last_success_timestamp_seconds{host=\"h1\",store=\"cluster_state\"} 5000.0"),
        t);
  }

  @Test
  void aDriverErrorMeansCassandraIsAwayAnyOtherExceptionIsAnAnswer() {
    Table away = health.watch(StoreHealth.GLOBAL_DATA, Table.class, failing(true));
    assertThrows(AllNodesFailedException.class, () -> away.read("k"));
    assertThrows(
        AllNodesFailedException.class, () -> away.part().read("k")); // a part is watched too
    String t = text();
    assertTrue(t.contains("sand_cassandra_up{host=\"h1\",store=\"global_data\"} 0.0"), t);
    assertTrue(
        t.contains(
            "sand_cassandra_calls_total{host=\"h1\",outcome=\"error\",store=\"global_data\"} 2.0"),
        t);
    Table answers = health.watch(StoreHealth.GLOBAL_DATA, Table.class, failing(false));
    assertThrows(IllegalArgumentException.class, () -> answers.read("k"));
    assertTrue(text().contains("sand_cassandra_up{host=\"h1\",store=\"global_data\"} 1.0"));
  }

  @Test
  void aPartIsWrappedOnceAndOnlyInterfacesAreWatched() {
    Table t = health.watch(StoreHealth.GLOBAL_DATA, Table.class, failing(false));
    assertSame(t.part(), t.part());
    assertThrows(
        IllegalArgumentException.class,
        () -> health.watch("x", Object.class, new Object()),
        "a class cannot be proxied");
  }
}
