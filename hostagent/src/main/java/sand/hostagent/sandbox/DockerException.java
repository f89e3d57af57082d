package sand.hostagent.sandbox;

/** A Docker Engine call that failed: {@link #status()} is the HTTP status (0 when the Engine did not answer). */
public final class DockerException extends RuntimeException {
  private final int status;

  public DockerException(int status, String message) {
    super(message);
    this.status = status;
  }

  public DockerException(String message, Throwable cause) {
    super(message, cause);
    this.status = 0;
  }

  public int status() {
    return status;
  }

  public boolean notFound() {
    return status == 404;
  }

  public boolean conflict() {
    return status == 409;
  }
}
