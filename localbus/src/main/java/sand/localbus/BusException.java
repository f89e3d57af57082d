package sand.localbus;

/**
 * A bus call refused; {@link #code()} says why, the message says which queue, for whom, and what to do.
 * Unchecked, like the Thrift {@code BusError} it becomes on the wire.
 */
public final class BusException extends RuntimeException {

  /** Why a call was refused; the values are those of {@code BusErrorCode} in localbus.thrift. */
  public enum Code {
    /** Unknown credential, or a queue or operation outside the caller's application. */
    UNAUTHORIZED(1),
    /** The queue is at capacity; nothing was enqueued: back off and retry. */
    QUEUE_FULL(2),
    /** A payload above message.max.bytes. */
    TOO_LARGE(3),
    /** A malformed queue or application name, or a missing argument. */
    BAD_REQUEST(4),
    /**
     * The application's share of the bus (bytes waiting, queues) or the host's is used up; nothing was
     * enqueued: its grains are not keeping up, back off and retry.
     */
    QUOTA_EXCEEDED(5);

    private final int value;

    Code(int value) {
      this.value = value;
    }

    /** The wire value of this code in {@code BusErrorCode}. */
    public int value() {
      return value;
    }
  }

  private final Code code;

  public BusException(Code code, String message) {
    super(message);
    this.code = code;
  }

  public Code code() {
    return code;
  }

  @Override
  public String toString() {
    return "BusException[" + code + "]: " + getMessage();
  }
}
