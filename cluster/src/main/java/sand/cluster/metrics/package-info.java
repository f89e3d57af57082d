/**
 * What the host agents' and the frontends' Prometheus metrics share (docs/operations.md, "Metrics, dashboard and
 * alerts"): the text exposition of a registry, the JVM, process and build-info metrics every SAND process has, and
 * Cassandra's health as the process sees it ({@link sand.cluster.metrics.StoreHealth}). Metrics are made with the
 * Prometheus Java client, so types, HELP and naming follow its conventions rather than a hand-written renderer.
 *
 * <p>Labels, one scheme on every process: {@code app} is an application's name and {@code account} its owner,
 * taken only from applications the cluster state holds (never from what a grain wrote), so series are bounded by
 * what operators deployed; the host agent adds {@code host}, a frontend {@code frontend}.
 */
package sand.cluster.metrics;
