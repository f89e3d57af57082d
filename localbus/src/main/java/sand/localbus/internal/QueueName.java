package sand.localbus.internal;

import java.util.regex.Pattern;
import sand.localbus.BusException;

/**
 * A checked queue name: a grain queue {@code "<application>/<grain>"} or LQ_HA {@code "__ha__"}.
 *
 * @param name the full name
 * @param application the owning application, or null for LQ_HA
 */
public record QueueName(String name, String application) {

  /** LQ_HA, the host agent's queue (HOST_AGENT_QUEUE in localbus.thrift). */
  public static final String HOST_AGENT_QUEUE = "__ha__";

  /** What an application or grain name must look like. */
  public static final String PART_FORM = "[A-Za-z0-9][A-Za-z0-9_.-]{0,127}";

  private static final Pattern PART = Pattern.compile(PART_FORM);
  private static final int MAX_ECHO = 200;

  /** True for LQ_HA. */
  public boolean hostAgentQueue() {
    return application == null;
  }

  /** True when {@code application} can own queues. */
  public static boolean validApplication(String application) {
    return application != null && PART.matcher(application).matches();
  }

  /** Parse {@code name}, or throw BAD_REQUEST naming it and the expected form. */
  public static QueueName parse(String name) {
    if (HOST_AGENT_QUEUE.equals(name)) {
      return new QueueName(name, null);
    }
    int slash = name == null ? -1 : name.indexOf('/');
    if (slash > 0
        && validApplication(name.substring(0, slash))
        && PART.matcher(name).region(slash + 1, name.length()).matches()) {
      return new QueueName(name, name.substring(0, slash));
    }
    throw new BusException(
        BusException.Code.BAD_REQUEST,
        "bad queue name " + echo(name)
            + ": expected '<application>/<grain>' with application and grain each matching "
            + PART_FORM
            + ", or '" + HOST_AGENT_QUEUE + "' for the host agent's queue");
  }

  /** A caller-supplied string quoted for an error message, cut short so a huge one cannot flood logs. */
  public static String echo(String s) {
    if (s == null) {
      return "(none)";
    }
    String cut =
        s.length() > MAX_ECHO ? s.substring(0, MAX_ECHO) + "...(" + s.length() + " chars)" : s;
    return "'" + cut + "'";
  }

  @Override
  public String toString() {
    return name;
  }
}
