package sand.hostagent.sandbox;

import java.time.Instant;

/**
 * What the host agent knows about one application's sandbox on this host.
 *
 * @param container   the container's name ({@code sand-<app>-<host>})
 * @param containerId its id, or "" when there is none
 * @param exitCode    the container's last exit code (meaningful when {@link State#EXITED})
 * @param restarts    how often {@link SandboxManager#restartDead()} restarted it
 * @param error       why the last deploy or restart failed, or ""
 * @param deployedAt  when the running deployment was made (null if never)
 */
public record SandboxStatus(
    String app,
    String container,
    String containerId,
    State state,
    int exitCode,
    boolean oomKilled,
    int restarts,
    String error,
    Instant deployedAt) {

  /** The sandbox's state; {@code app_hosts.status} is derived from it by the host agent. */
  public enum State {
    /** Being prepared (code, pip, container). */
    DEPLOYING,
    /** The container runs. */
    RUNNING,
    /** The container exists but does not run (it died or was stopped). */
    EXITED,
    /** Deployed, but its container is gone. */
    MISSING,
    /** The last deploy failed and no sandbox runs for it ({@link #error()} says why). */
    FAILED
  }
}
