package sand.frontend.internal;

import com.datastax.oss.driver.api.core.DriverException;
import org.apache.kafka.common.KafkaException;

/** Failures of the platform behind the frontend, as the caller sees them. */
public final class Errors {
  private Errors() {}

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
