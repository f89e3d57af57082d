package sand.cluster.metrics;

import com.datastax.oss.driver.api.core.DriverException;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Labels;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import sand.cluster.globaldata.GlobalUnavailableException;

/**
 * Cassandra's health as this process sees it: every call through a {@link #watch watched} store is counted as
 * answered or failed (a driver error or {@link GlobalUnavailableException}: Cassandra did not answer; any other
 * exception is an answer), and per store whether the last call was answered and when one last was.
 *
 * <p>Series: {@code sand_cassandra_calls_total{store,outcome="ok"|"error"}}, {@code sand_cassandra_up{store}} (1: the
 * last call was answered), {@code sand_cassandra_last_success_timestamp_seconds{store}}. The store label is the
 * caller's name for it ({@link #CLUSTER_STATE}, {@link #GLOBAL_DATA}), so two values at most.
 */
public final class StoreHealth {
  public static final String CLUSTER_STATE = "cluster_state";
  public static final String GLOBAL_DATA = "global_data";

  private final Counter calls;
  private final LongSupplier millis;
  private final Map<String, State> stores = new ConcurrentHashMap<>();

  private static final class State {
    final CounterDataPoint ok;
    final CounterDataPoint error;
    volatile boolean up = true; // nothing failed yet
    volatile long lastOkMs;

    State(Counter calls, String store, long startMs) {
      ok = calls.labelValues(store, "ok");
      error = calls.labelValues(store, "error");
      lastOkMs = startMs; // a process that has not called yet is not "never answered"
    }
  }

  /** @param millis the wall clock, in ms (the timestamps are Unix time) */
  public StoreHealth(PrometheusRegistry registry, Labels constLabels, LongSupplier millis) {
    this.millis = millis;
    calls = Counter.builder()
        .name("sand_cassandra_calls_total")
        .help(
            "calls to Cassandra by this process, by store and outcome (error: Cassandra did not answer)")
        .labelNames("store", "outcome")
        .constLabels(constLabels)
        .register(registry);
    GaugeWithCallback.builder()
        .name("sand_cassandra_up")
        .help("1 when this process' last call to the store was answered, 0 when it failed")
        .labelNames("store")
        .constLabels(constLabels)
        .callback(cb -> stores.forEach((s, st) -> cb.call(st.up ? 1 : 0, s)))
        .register(registry);
    GaugeWithCallback.builder()
        .name("sand_cassandra_last_success_timestamp_seconds")
        .help(
            "Unix time of this process' last answered call to the store (its start before the first)")
        .labelNames("store")
        .constLabels(constLabels)
        .callback(cb -> stores.forEach((s, st) -> cb.call(st.lastOkMs / 1000.0, s)))
        .register(registry);
  }

  /** Whether this process' last call to {@code store} was answered (true before the first, and for no such store). */
  public boolean up(String store) {
    State st = stores.get(store);
    return st == null || st.up;
  }

  /**
   * {@code target} with every call counted under {@code store}. Methods returning another interface of the cluster
   * state (e.g. {@code endpoints()}) return it watched too, and are not counted themselves.
   */
  public <T> T watch(String store, Class<T> type, T target) {
    if (!type.isInterface()) {
      throw new IllegalArgumentException(
          type + " is not an interface: only interfaces can be watched");
    }
    State st = stores.computeIfAbsent(store, s -> new State(calls, s, millis.getAsLong()));
    return type.cast(Proxy.newProxyInstance(
        type.getClassLoader(), new Class<?>[] {type}, new Counting(store, st, target)));
  }

  private final class Counting implements InvocationHandler {
    private final String store;
    private final State st;
    private final Object target;
    private final Map<Method, Object> parts =
        new ConcurrentHashMap<>(); // watched accessors' results

    Counting(String store, State st, Object target) {
      this.store = store;
      this.st = st;
      this.target = target;
    }

    @Override
    public Object invoke(Object proxy, Method m, Object[] args) throws Throwable {
      if (m.getDeclaringClass() == Object.class) {
        return switch (m.getName()) {
          case "equals" -> proxy == args[0];
          case "hashCode" -> System.identityHashCode(proxy);
          default -> "watched " + target;
        };
      }
      Object result;
      try {
        result = m.invoke(target, args);
      } catch (InvocationTargetException e) {
        Throwable cause = e.getCause();
        if (cause instanceof DriverException || cause instanceof GlobalUnavailableException) {
          st.up = false;
          st.error.inc();
        } else {
          answered();
        }
        throw cause;
      }
      Class<?> r = m.getReturnType();
      if (result != null
          && r.isInterface()
          && r.getPackageName().startsWith("sand.cluster")
          && m.getParameterCount() == 0) {
        // an accessor of a part of the store: the part watched too (made once per accessor and
        // part)
        Object part = parts.get(m);
        if (part == null || ((Counting) Proxy.getInvocationHandler(part)).target != result) {
          part = watch(store, castClass(r), result);
          parts.put(m, part);
        }
        return part;
      }
      answered();
      return result;
    }

    private void answered() {
      st.up = true;
      st.lastOkMs = millis.getAsLong();
      st.ok.inc();
    }
  }

  @SuppressWarnings("unchecked")
  private static <T> Class<T> castClass(Class<?> c) {
    return (Class<T>) c;
  }
}
