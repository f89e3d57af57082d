package sand.hostagent.sandbox;

/** A deploy that failed: the message says for which application, what failed, and what to do next. */
public final class SandboxException extends Exception {
  public SandboxException(String message) {
    super(message);
  }

  public SandboxException(String message, Throwable cause) {
    super(message, cause);
  }
}
