package sand.common;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Who is calling: maps opaque credentials to the application they act for, or to the host agent.
 *
 * <p>One registry is shared by the local bus and the local data layer of a host agent, so a sandbox's
 * credential works for both and is revoked from both at once on undeploy.
 */
public final class Credentials {

  /** The authenticated caller: an application, or the host agent (which may act on any application). */
  public record Principal(String application, boolean hostAgent) {
    public static final Principal HOST_AGENT = new Principal(null, true);

    /** True when this caller may touch the given application's queues or data. */
    public boolean mayAccess(String app) {
      return hostAgent || Objects.equals(application, app);
    }

    @Override
    public String toString() {
      return hostAgent ? "host agent" : "application " + application;
    }
  }

  /** Thrown for an unknown credential or a call outside the caller's application. */
  public static final class UnauthorizedException extends RuntimeException {
    public UnauthorizedException(String message) {
      super(message);
    }
  }

  private final String hostAgentCredential;
  private final Map<String, String> applicationByCredential = new ConcurrentHashMap<>();

  public Credentials(String hostAgentCredential) {
    if (hostAgentCredential == null || hostAgentCredential.isEmpty()) {
      throw new IllegalArgumentException("the host agent credential must not be empty");
    }
    this.hostAgentCredential = hostAgentCredential;
  }

  /** Let {@code credential} act for {@code application} (a sandbox was started). */
  public void grant(String application, String credential) {
    if (application == null || application.isEmpty() || application.contains("/")) {
      throw new IllegalArgumentException(
          "bad application name '" + application + "': non-empty, no '/'");
    }
    if (credential == null || credential.length() < 16) {
      throw new IllegalArgumentException(
          "credential for " + application + " must be at least 16 characters");
    }
    if (credential.equals(hostAgentCredential)) {
      throw new IllegalArgumentException("an application cannot get the host agent's credential");
    }
    applicationByCredential.put(credential, application);
  }

  /** Take every credential of {@code application} away (undeploy). */
  public void revoke(String application) {
    applicationByCredential.values().removeIf(application::equals);
  }

  /** The caller behind {@code credential}; throws {@link UnauthorizedException} if there is none. */
  public Principal authenticate(String credential) {
    if (credential == null || credential.isEmpty()) {
      throw new UnauthorizedException("no credential given");
    }
    if (credential.equals(hostAgentCredential)) {
      return Principal.HOST_AGENT;
    }
    String app = applicationByCredential.get(credential);
    if (app == null) {
      throw new UnauthorizedException("unknown credential");
    }
    return new Principal(app, false);
  }

  /** Authenticate and require the host agent. */
  public Principal requireHostAgent(String credential, String what) {
    Principal p = authenticate(credential);
    if (!p.hostAgent()) {
      throw new UnauthorizedException(what + " is for the host agent only, not " + p);
    }
    return p;
  }
}
