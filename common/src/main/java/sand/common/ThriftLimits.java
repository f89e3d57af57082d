package sand.common;

import java.util.function.Predicate;

/**
 * What a Thrift endpoint lets a caller make it allocate (see {@link BoundedBinaryProtocol}).
 *
 * <p>A stranger, until its call's credential (field 1 of every call's arguments) is accepted, gets
 * {@link #STRANGER_STRING_MAX_BYTES} per string and {@link #STRANGER_CONTAINER_MAX} elements per
 * container; a caller whose credential is accepted gets the endpoint's own caps.
 *
 * @param authenticator true when a credential is known (the endpoint still checks what it may do)
 * @param maxConnections most connections open at once on the endpoint, including those not yet served
 * @param maxStringBytes largest string or binary an accepted caller may send (the endpoint's value cap
 *     plus headroom)
 * @param maxContainerSize most elements of a list, set or map an accepted caller may send
 * @param authTimeoutMs how long after accept a connection may go without presenting a known credential
 *     before it is closed
 */
public record ThriftLimits(
    Predicate<String> authenticator,
    int maxConnections,
    int maxStringBytes,
    int maxContainerSize,
    long authTimeoutMs) {

  /** Longest method name: ours are short; anything longer is not a call to us. */
  public static final int NAME_MAX_BYTES = 64;
  /** Longest string a caller may send before its credential is accepted (credentials are 64 hex digits). */
  public static final int STRANGER_STRING_MAX_BYTES = 256;
  /** Most container elements a caller may send before its credential is accepted. */
  public static final int STRANGER_CONTAINER_MAX = 16;
  /** Most elements of one container from an accepted caller, by default. */
  public static final int CONTAINER_MAX = 65_536;
  /** Above a value cap, room for the rest of a call (names, queue, framing). */
  public static final int HEADROOM_BYTES = 64 * 1024;
  /** How long a new connection has to present a known credential, by default. */
  public static final long AUTH_TIMEOUT_MS = 5_000;

  public ThriftLimits {
    if (authenticator == null) {
      throw new IllegalArgumentException("a Thrift endpoint needs an authenticator");
    }
    if (maxConnections < 1
        || maxStringBytes < STRANGER_STRING_MAX_BYTES
        || maxContainerSize < STRANGER_CONTAINER_MAX
        || authTimeoutMs < 1) {
      throw new IllegalArgumentException("bad Thrift limits: connections " + maxConnections
          + ", string " + maxStringBytes + " bytes, container " + maxContainerSize
          + ", auth timeout " + authTimeoutMs + " ms");
    }
  }

  /** Limits for an endpoint whose largest value is {@code valueMaxBytes}, with the default timeout and container cap. */
  public static ThriftLimits of(
      Predicate<String> authenticator, int maxConnections, int valueMaxBytes) {
    return new ThriftLimits(
        authenticator,
        maxConnections,
        (int) Math.min(Integer.MAX_VALUE - 8, (long) valueMaxBytes + HEADROOM_BYTES),
        CONTAINER_MAX,
        AUTH_TIMEOUT_MS);
  }

  /** An authenticator over a {@link Credentials} registry: known when it authenticates. */
  public static Predicate<String> known(Credentials credentials) {
    return credential -> {
      try {
        credentials.authenticate(credential);
        return true;
      } catch (Credentials.UnauthorizedException e) {
        return false;
      }
    };
  }

  public ThriftLimits withMaxConnections(int maxConnections) {
    return new ThriftLimits(
        authenticator, maxConnections, maxStringBytes, maxContainerSize, authTimeoutMs);
  }

  public ThriftLimits withAuthTimeoutMs(long authTimeoutMs) {
    return new ThriftLimits(
        authenticator, maxConnections, maxStringBytes, maxContainerSize, authTimeoutMs);
  }
}
