package sand.cluster.globaldata;

/**
 * The global data layer could not serve a call (Cassandra down, timed out or refusing the request).
 * Reads turn it into UNAVAILABLE for the caller; the write-behind retries the write with back-off.
 */
public final class GlobalUnavailableException extends RuntimeException {
  public GlobalUnavailableException(String message) {
    super(message);
  }

  public GlobalUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
