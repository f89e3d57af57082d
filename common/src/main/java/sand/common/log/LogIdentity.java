package sand.common.log;

import org.slf4j.MDC;

/**
 * Who is logging and about what: the process's component and id, set once by its {@code main}, and the application
 * and execution a thread is working on (slf4j MDC keys {@link #APP} and {@link #EXEC}, set through {@link #scope}).
 * {@link SandLayout} puts them on every line. Plain slf4j: a module that logs through another binding loses nothing.
 */
public final class LogIdentity {
  /** MDC key: the application id (or name where no id is known yet) a thread works for. */
  public static final String APP = "app";

  /** MDC key: the execution id a thread works on. */
  public static final String EXEC = "exec";

  private static volatile String component = "-";
  private static volatile String host = "-";

  private LogIdentity() {}

  /**
   * Names this process on its log lines: {@code component} (hostagent, frontend) and {@code host} (the host agent's
   * host id, the frontend's id). Lines logged before (class loading) show "-".
   */
  public static void set(String component, String host) {
    LogIdentity.component = component == null || component.isBlank() ? "-" : component;
    LogIdentity.host = host == null || host.isBlank() ? "-" : host;
  }

  public static String component() {
    return component;
  }

  public static String host() {
    return host;
  }

  /**
   * Tags this thread's log lines with {@code app} and {@code exec} (null or empty: left as it was) until the scope
   * is closed, which puts back what was there, so scopes nest. Where an unused resource would warn (-Xlint:try),
   * close it in a finally block.
   */
  public static Scope scope(String app, String exec) {
    Scope s = new Scope();
    s.app(app);
    s.exec(exec);
    return s;
  }

  /** What {@link #scope} set; closing it restores the thread's previous app and execution. */
  public static final class Scope implements AutoCloseable {
    private String prevApp;
    private String prevExec;
    private boolean setApp;
    private boolean setExec;

    private Scope() {}

    /** Tags the scope's lines with application {@code app} from now on (null or empty: no change). */
    public void app(String app) {
      if (app == null || app.isEmpty()) {
        return;
      }
      if (!setApp) {
        prevApp = MDC.get(APP);
        setApp = true;
      }
      MDC.put(APP, app);
    }

    /** Tags the scope's lines with execution {@code exec} from now on (known only part-way, e.g. once a report is read). */
    public void exec(String exec) {
      if (exec == null || exec.isEmpty()) {
        return;
      }
      if (!setExec) {
        prevExec = MDC.get(EXEC);
        setExec = true;
      }
      MDC.put(EXEC, exec);
    }

    @Override
    public void close() {
      if (setApp) {
        restore(APP, prevApp);
      }
      if (setExec) {
        restore(EXEC, prevExec);
      }
    }

    private static void restore(String key, String prev) {
      if (prev == null) {
        MDC.remove(key);
      } else {
        MDC.put(key, prev);
      }
    }
  }
}
