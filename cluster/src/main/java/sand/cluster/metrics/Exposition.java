package sand.cluster.metrics;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/** A registry's scrape in Prometheus' text format 0.0.4 (what {@code GET /metrics} answers). */
public final class Exposition {
  /** {@code text/plain; version=0.0.4; charset=utf-8}. */
  public static final String CONTENT_TYPE = PrometheusTextFormatWriter.CONTENT_TYPE;

  private static final PrometheusTextFormatWriter WRITER = PrometheusTextFormatWriter.create();

  private Exposition() {}

  /** Every metric of {@code registry}, callbacks read now. */
  public static byte[] bytes(PrometheusRegistry registry) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(16 * 1024);
    try {
      WRITER.write(out, registry.scrape());
    } catch (IOException e) { // a ByteArrayOutputStream does not throw
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  public static String text(PrometheusRegistry registry) {
    return new String(bytes(registry), StandardCharsets.UTF_8);
  }
}
