package sand.hostagent;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.snapshots.Labels;
import java.util.function.ToDoubleFunction;
import sand.datalayer.LocalDataLayer;
import sand.hostagent.Metrics.AppLabel;
import sand.hostagent.bridge.GlobalBusBridge;
import sand.hostagent.bridge.HostAgentQueueProcessor;
import sand.hostagent.sandbox.SandboxCgroups;
import sand.hostagent.sandbox.SandboxManager;
import sand.localbus.LocalMessageBus;
import sand.localbus.QueueStats;

/**
 * The host's values read when Prometheus scrapes: its local queues, sandboxes (and each one's CPU and memory from
 * its cgroup), each application's share of the bus and the data layer against its quota, the Kafka consumer's lag
 * per grain topic, take-overs, and what was refused. Each is a gauge, or a counter when it only grows.
 */
final class HostMetrics {
  /** What the host agent measures, as it has them. */
  record Parts(
      LocalMessageBus bus,
      long busAppMaxBytes,
      LocalDataLayer data,
      long dataAppMaxBytes,
      SandboxManager sandboxes,
      SandboxCgroups cgroups,
      HostAgentQueueProcessor processor,
      GlobalBusBridge bridge) {}

  private HostMetrics() {}

  static void register(Metrics m, Parts p) {
    queues(
        m, p.bus(), "sand_queue_length", "messages waiting in a local queue", QueueStats::length);
    queues(
        m,
        p.bus(),
        "sand_queue_published_total",
        "messages published to a local queue",
        QueueStats::published);
    m.gauge(
            "sand_sandboxes",
            "sandboxes on this host",
            () -> p.sandboxes().list().size())
        .gauge(
            "sand_data_backups_pending",
            "data layer writes not yet in Cassandra",
            () -> p.data().pendingWrites())
        .perApp(
            "sand_bus_app_bytes",
            "bytes an application has waiting in the local bus (payloads plus 64 per message)",
            () -> p.bus().applicationUsage(),
            u -> u.bytes())
        .gauge(
            "sand_bus_app_max_bytes",
            "the quota of sand_bus_app_bytes (localbus app.queued.max.bytes)",
            () -> p.busAppMaxBytes())
        .perApp(
            "sand_bus_app_queues",
            "local queues of an application",
            () -> p.bus().applicationUsage(),
            u -> u.queues())
        .perApp(
            "sand_data_app_bytes",
            "bytes an application holds in the local data layer",
            () -> p.data().usage(),
            u -> u.bytes())
        .gauge(
            "sand_data_app_max_bytes",
            "the quota of sand_data_app_bytes (datalayer app.max.bytes)",
            () -> p.dataAppMaxBytes())
        .perApp(
            "sand_data_app_pending_bytes",
            "of those, bytes waiting for Cassandra",
            () -> p.data().usage(),
            u -> u.pendingBytes())
        .perApp(
            "sand_data_app_evicted_total",
            "items of an application evicted from memory (already in Cassandra)",
            () -> p.data().usage(),
            u -> u.evictedItems())
        .gauge(
            "sand_kafka_backlog_bytes",
            "reports waiting for Kafka",
            () -> p.processor().pendingBytes())
        .counter(
            "sand_outputs_refused_total",
            "grain outputs refused: forged execution or unknown grain",
            () -> p.processor().refusedOutputs())
        .perApp(
            "sand_events_in_flight",
            "events delivered into a local queue of this host and not finished yet",
            () -> p.processor().inFlightByApplication(),
            Number::doubleValue)
        .perApp(
            "sand_events_in_flight_bytes",
            "bytes of those events (bridge.in.flight.app.max.bytes bounds them)",
            () -> p.processor().inFlightBytesByApplication(),
            Number::doubleValue)
        .counter(
            "sand_takeovers_total",
            "events of other hosts processed here: their host failed, or they stayed unfinished past "
                + "bridge.takeover.timeout.ms",
            () -> p.bridge().takenOver())
        .gauge(
            "sand_partitions_recovering",
            "grain topic partitions of this host replaying what their last owner did not finish",
            () -> p.bridge().partitionsRecovering());
    refusals(m, p.processor());
    lag(m, p.bridge());
    cgroups(m, p.sandboxes(), p.cgroups());
  }

  private static Labels host(Metrics m) {
    return m.hostLabels();
  }

  private static void queues(
      Metrics m, LocalMessageBus bus, String name, String help, ToDoubleFunction<QueueStats> f) {
    // the host agent's own queues (LQ_HA) have no application: app and account are ""
    var labels = new String[] {"queue", "app", "account"};
    if (name.endsWith("_total")) {
      CounterWithCallback.builder()
          .name(name)
          .help(help)
          .labelNames(labels)
          .constLabels(host(m))
          .callback(cb -> eachQueue(m, bus, f, cb::call))
          .register(m.registry());
    } else {
      GaugeWithCallback.builder()
          .name(name)
          .help(help)
          .labelNames(labels)
          .constLabels(host(m))
          .callback(cb -> eachQueue(m, bus, f, cb::call))
          .register(m.registry());
    }
  }

  private static void eachQueue(
      Metrics m, LocalMessageBus bus, ToDoubleFunction<QueueStats> f, Metrics.Callback cb) {
    for (QueueStats s : bus.queueStats()) {
      AppLabel a = m.labelOfQueue(s);
      cb.call(
          f.applyAsDouble(s), s.queue(), a == null ? "" : a.app(), a == null ? "" : a.account());
    }
  }

  private static void refusals(Metrics m, HostAgentQueueProcessor processor) {
    CounterWithCallback.builder()
        .name("sand_reports_refused_total")
        .help("LQ_HA reports (or parts of them) refused, by application and reason")
        .labelNames("app", "account", "reason")
        .constLabels(host(m))
        .callback(cb -> processor.refusedReports().forEach((k, v) -> {
          AppLabel a = m.label(k.get(0));
          cb.call(v, a.app(), a.account(), k.get(1));
        }))
        .register(m.registry());
  }

  private static void lag(Metrics m, GlobalBusBridge bridge) {
    GaugeWithCallback.builder()
        .name("sand_kafka_consumer_lag")
        .help(
            "records of a grain topic not yet consumed by this host (its partitions, as of the last fetch)")
        .labelNames("topic", "app", "account")
        .constLabels(host(m))
        .callback(cb -> bridge.consumerLag().forEach((topic, lag) -> {
          AppLabel a = m.labelOfTopic(topic);
          if (a != null) {
            cb.call(lag, topic, a.app(), a.account());
          }
        }))
        .register(m.registry());
  }

  private static void cgroups(Metrics m, SandboxManager sandboxes, SandboxCgroups cgroups) {
    m.gauge(
        "sand_sandbox_cgroups_available",
        "1 when this host agent sees the cgroup filesystem (the sand_sandbox_cpu/memory series need it)",
        () -> cgroups.available() ? 1 : 0);
    CounterWithCallback.builder()
        .name("sand_sandbox_cpu_seconds_total")
        .help("CPU time of a sandbox's processes (its container's cgroup)")
        .labelNames("app", "account")
        .constLabels(host(m))
        .callback(
            cb -> eachSandbox(m, sandboxes, cgroups, (app, u) -> cb.call(u.cpuSeconds(), app)))
        .register(m.registry());
    GaugeWithCallback.builder()
        .name("sand_sandbox_memory_bytes")
        .help("memory charged to a sandbox's container cgroup (page cache included)")
        .labelNames("app", "account")
        .constLabels(host(m))
        .callback(
            cb -> eachSandbox(m, sandboxes, cgroups, (app, u) -> cb.call(u.memoryBytes(), app)))
        .register(m.registry());
  }

  private static void eachSandbox(
      Metrics m,
      SandboxManager sandboxes,
      SandboxCgroups cgroups,
      java.util.function.BiConsumer<String[], SandboxCgroups.Usage> each) {
    sandboxes
        .containerIds()
        .forEach((app, id) -> cgroups.read(id).ifPresent(u -> {
          AppLabel a = m.label(app);
          each.accept(new String[] {a.app(), a.account()}, u);
        }));
  }
}
