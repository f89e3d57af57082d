package sand.frontend.internal;

import com.datastax.oss.driver.api.core.DriverException;
import java.util.concurrent.CompletionException;
import org.apache.kafka.common.KafkaException;

/** Failures of the platform behind the frontend, as the caller sees them. */
public final class Errors {
  private Errors() {}

  /** Whether {@code t} (or what it wraps, as a completion stage does) is Cassandra's driver failing. */
  public static boolean cassandra(Throwable t) {
    Throwable c = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
    return c instanceof DriverException;
  }

  /** Cassandra or Kafka did not answer: 502, the frontend itself is fine. Anything else stays as it is. */
  public static RuntimeException platform(RuntimeException e) {
    if (e instanceof ApiException a) {
      return a;
    }
    if (e instanceof DriverException) {
      return new ApiException(
          502,
          "unavailable",
          "the cluster state (Cassandra) did not answer: " + e.getMessage()
              + "; try again shortly");
    }
    if (e instanceof KafkaException) {
      return new ApiException(
          502,
          "unavailable",
          "the global message bus (Kafka) did not answer: " + e.getMessage()
              + "; try again shortly");
    }
    return e;
  }
}
