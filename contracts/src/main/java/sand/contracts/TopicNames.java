package sand.contracts;

import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Names in the global bus (docs/host-agent.md "Names"): a topic per grain {@code sand.<app>.<grain>},
 * a response topic per frontend {@code sand.response.<frontend>}, the control topic, and the
 * agents' consumer group.
 *
 * <p>An application id has no '.', so a grain topic splits unambiguously at its second dot. The
 * application ids {@code response} and {@code control} are reserved: {@code sand.response.x} is a
 * frontend's response topic, never grain {@code x} of an application "response".
 */
public final class TopicNames {
  public static final String PREFIX = "sand.";
  public static final String RESPONSE_PREFIX = "sand.response.";
  /** The control topic (deploy/undeploy events), one partition, read by every agent. */
  public static final String CONTROL = "sand.control";
  /** The consumer group every host agent joins for the grain topics it runs. */
  public static final String GROUP = "sand.hostagents";
  /** The value of a grain field that means "the workflow's output". */
  public static final String END = "end";

  public static final String APP_FORM = "[a-z0-9][a-z0-9_-]{0,62}";
  public static final String GRAIN_FORM = "[A-Za-z0-9][A-Za-z0-9_.-]{0,127}";
  /** Frontend ids go into topic names too, so they follow Kafka's legal characters. */
  public static final String FRONTEND_FORM = "[A-Za-z0-9][A-Za-z0-9_.-]{0,127}";
  /** Application ids that would make a grain topic look like another kind of topic. */
  public static final Set<String> RESERVED_APPS = Set.of("response", "control");

  private static final Pattern APP = Pattern.compile(APP_FORM);
  private static final Pattern GRAIN = Pattern.compile(GRAIN_FORM);
  private static final Pattern FRONTEND = Pattern.compile(FRONTEND_FORM);

  private TopicNames() {}

  /** {@code sand.<app>.<grain>}; throws IllegalArgumentException for a bad app or grain name. */
  public static String grainTopic(String app, String grain) {
    return new GrainRef(app, grain).topic();
  }

  /** {@code sand.response.<frontend>}; throws IllegalArgumentException for a bad frontend id. */
  public static String responseTopic(String frontend) {
    if (!validFrontend(frontend)) {
      throw new IllegalArgumentException(
          "bad frontend id '" + frontend + "': it must match " + FRONTEND_FORM);
    }
    return RESPONSE_PREFIX + frontend;
  }

  /** The grain a grain topic belongs to; empty for response, control and foreign topics. */
  public static Optional<GrainRef> parseGrainTopic(String topic) {
    if (topic == null || !topic.startsWith(PREFIX)) {
      return Optional.empty();
    }
    int dot = topic.indexOf('.', PREFIX.length());
    if (dot < 0) {
      return Optional.empty();
    }
    String app = topic.substring(PREFIX.length(), dot);
    String grain = topic.substring(dot + 1);
    if (!validApplication(app) || !validGrain(grain)) {
      return Optional.empty();
    }
    return Optional.of(new GrainRef(app, grain));
  }

  public static boolean validApplication(String app) {
    return app != null && APP.matcher(app).matches() && !RESERVED_APPS.contains(app);
  }

  public static boolean validGrain(String grain) {
    return grain != null && GRAIN.matcher(grain).matches();
  }

  public static boolean validFrontend(String frontend) {
    return frontend != null && FRONTEND.matcher(frontend).matches();
  }

  static void checkApplication(String app) {
    if (!validApplication(app)) {
      throw new IllegalArgumentException("bad application id '" + app + "': it must match "
          + APP_FORM + " and not be one of " + RESERVED_APPS);
    }
  }

  static void checkGrain(String grain) {
    if (!validGrain(grain)) {
      throw new IllegalArgumentException(
          "bad grain name '" + grain + "': it must match " + GRAIN_FORM);
    }
  }
}
