package sand.cluster.metrics;

import io.prometheus.metrics.core.metrics.Info;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Labels;

/**
 * The metrics every SAND process has: the JVM's (memory, GC, threads, classes) and the process' (CPU seconds,
 * resident memory, open files) from the Prometheus client's instrumentation, and
 * {@code sand_build_info{component,version,java_version} 1}.
 */
public final class ProcessMetrics {
  /** The version a jar's manifest names (Maven's project version), "dev" when run from classes. */
  public static final String VERSION = version();

  private ProcessMetrics() {}

  /**
   * @param component   "hostagent" or "frontend"
   * @param constLabels the process' own label ({@code host} or {@code frontend}), on every series
   */
  public static void register(PrometheusRegistry registry, String component, Labels constLabels) {
    JvmMetrics.builder().constLabels(constLabels).register(registry);
    Info.builder()
        .name("sand_build_info")
        .help("the build this process runs (always 1)")
        .labelNames("component", "version", "java_version")
        .constLabels(constLabels)
        .register(registry)
        .addLabelValues(component, VERSION, System.getProperty("java.version", ""));
  }

  private static String version() {
    String v = ProcessMetrics.class.getPackage().getImplementationVersion();
    return v == null || v.isBlank() ? "dev" : v;
  }
}
