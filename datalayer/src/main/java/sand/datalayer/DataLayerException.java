package sand.datalayer;

/** A call the local data layer refuses; the codes are those of {@code DataErrorCode} in datalayer.thrift. */
public final class DataLayerException extends RuntimeException {

  /** Why a call failed. */
  public enum Code {
    /** Unknown credential, or a credential not allowed to make this call. */
    UNAUTHORIZED,
    /** A value above {@code value.max.bytes}. */
    TOO_LARGE,
    /** A counter that does not exist. */
    NOT_FOUND,
    /** An empty or malformed name, or a bad argument. */
    BAD_REQUEST,
    /** The global data layer could not be read (a miss while Cassandra is down). */
    UNAVAILABLE,
    /**
     * A write that would take the application above its memory quota on this host ({@code app.max.bytes}),
     * or the host above {@code max.bytes}, when no more clean data could be evicted; nothing changed.
     */
    QUOTA_EXCEEDED,
  }

  private final Code code;

  public DataLayerException(Code code, String message) {
    super(message);
    this.code = code;
  }

  public DataLayerException(Code code, String message, Throwable cause) {
    super(message, cause);
    this.code = code;
  }

  public Code code() {
    return code;
  }

  @Override
  public String toString() {
    return code + ": " + getMessage();
  }
}
