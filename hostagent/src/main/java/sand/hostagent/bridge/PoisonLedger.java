package sand.hostagent.bridge;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import sand.contracts.ConditionFlag;

/**
 * Poison events (issue 26, finding 1): an event whose processing kills the host agent is replayed by the next
 * start's {@link Recovery}, kills it again, and so crash-loops the host. The ledger counts, per event, the starts
 * of this host agent that found it in flight (each one follows a death of the agent while it ran), on disk, and
 * the count is written <em>before</em> the event is replayed: a death during the replay is counted even though
 * nothing else survives it. An event found in flight for the {@link #deaths()}-th time is not replayed; it goes
 * to the dead letters (a line in {@code dead-letters.jsonl} beside the ledger, and its caller's error result).
 *
 * <p>The agent cannot tell which of its events in flight killed it, so every one counts: an event waiting in its
 * grain's queue behind a poison event shares its fate (its processing coincided with the same deaths). An event in
 * flight when the agent was stopped or died of something else is counted too; it is then replayed and finishes,
 * and its count no longer matters (a finished event is not replayed).
 * The ledger is this host's: on a cluster, an event that kills every host it lands on is stopped after
 * {@link #deaths()} deaths per host.
 *
 * <p>Both files are bounded: the ledger keeps the {@link #REMEMBERED} events counted last; the dead letters are
 * rotated once at {@link #DEAD_LETTERS_MAX_BYTES} (one older file kept). Thread-safe.
 */
public final class PoisonLedger {
  /** Events whose count is kept (the oldest counted are forgotten first). */
  static final int REMEMBERED = 10_000;
  /** The dead-letters file is moved to {@code .1} when it grows past this. */
  static final long DEAD_LETTERS_MAX_BYTES = 4L << 20;

  static final String LEDGER_FILE = "poison-ledger";
  static final String DEAD_LETTERS_FILE = "dead-letters.jsonl";

  /** The ledger Recovery uses (installed by the host agent at start; off in tests that do not install one). */
  private static volatile PoisonLedger installed = off();

  private final Path dir;
  private final int deaths;
  private final Map<String, Integer> counts;

  private PoisonLedger(Path dir, int deaths, int remembered) {
    this.dir = dir;
    this.deaths = deaths;
    this.counts = new LinkedHashMap<>(16, 0.75f, false) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, Integer> eldest) {
        return size() > remembered;
      }
    };
  }

  /**
   * The ledger kept in {@code dir} (created if missing): an event found in flight at {@code deaths} starts is a
   * poison event.
   */
  public static PoisonLedger open(Path dir, int deaths) throws IOException {
    return open(dir, deaths, REMEMBERED);
  }

  static PoisonLedger open(Path dir, int deaths, int remembered) throws IOException {
    if (deaths < 1) {
      throw new IllegalArgumentException("deaths must be at least 1, not " + deaths);
    }
    PoisonLedger l = new PoisonLedger(dir, deaths, remembered);
    Files.createDirectories(dir);
    Path f = dir.resolve(LEDGER_FILE);
    if (Files.exists(f)) {
      for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
        int sp = line.indexOf(' ');
        if (sp > 0) {
          try {
            l.counts.put(line.substring(sp + 1), Integer.parseInt(line.substring(0, sp)));
          } catch (NumberFormatException e) {
            // a torn line cannot be: the file is replaced whole; ignore anything else
          }
        }
      }
    }
    return l;
  }

  /** No ledger: every event is replayed however often (no host agent installed one). */
  public static PoisonLedger off() {
    return new PoisonLedger(null, Integer.MAX_VALUE, 0);
  }

  /** Open the ledger in {@code stateDir} (to outlive the agent) and install it (issue 26 finding 1). */
  public static void installIn(Path stateDir, int deaths) {
    try {
      install(open(stateDir, deaths));
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("cannot open the poison ledger in " + stateDir, e);
    }
  }

  /** Make {@code ledger} the one every {@link Recovery} created from now on uses. */
  public static void install(PoisonLedger ledger) {
    installed = ledger;
  }

  static PoisonLedger installed() {
    return installed;
  }

  /** Starts that may find an event in flight before it is a poison event. */
  public int deaths() {
    return deaths;
  }

  /** How many starts found {@code key}'s event in flight so far (0 if none). */
  public synchronized int count(String key) {
    return counts.getOrDefault(key, 0);
  }

  /**
   * This start found {@code key}'s event in flight: its count goes up by one and is on disk when this returns.
   *
   * @return the new count; the event is a poison event when it is {@link #deaths()} or more
   */
  public synchronized int bump(String key) {
    int n = counts.getOrDefault(key, 0) + 1;
    counts.remove(key); // re-inserted last: the events counted last are the ones kept
    counts.put(key, n);
    if (dir != null) {
      StringBuilder b = new StringBuilder();
      counts.forEach((k, v) -> b.append(v).append(' ').append(k).append('\n'));
      writeDurably(dir.resolve(LEDGER_FILE), b.toString().getBytes(StandardCharsets.UTF_8));
    }
    return n;
  }

  /** Whether an event counted {@code count} times is a poison event. */
  public boolean poisoned(int count) {
    return count >= deaths;
  }

  /** Record a poison event in the dead letters: its application, ids, grain, the reason, and the event itself. */
  public synchronized void deadLetter(
      String app, String grain, String eventId, ObjectNode event, String reason) {
    if (dir == null) {
      return;
    }
    ObjectNode line = ConditionFlag.JSON.createObjectNode();
    line.put("at_ms", System.currentTimeMillis())
        .put("app", app)
        .put("grain", grain)
        .put("event_id", eventId)
        .put("execution_id", event == null ? "" : event.path("execution_id").asText())
        .put("reason", reason);
    if (event != null) {
      line.set("event", event);
    }
    Path f = dir.resolve(DEAD_LETTERS_FILE);
    try {
      if (Files.exists(f) && Files.size(f) > DEAD_LETTERS_MAX_BYTES) {
        Files.move(f, dir.resolve(DEAD_LETTERS_FILE + ".1"), StandardCopyOption.REPLACE_EXISTING);
      }
      byte[] bytes =
          (ConditionFlag.JSON.writeValueAsString(line) + "\n").getBytes(StandardCharsets.UTF_8);
      try (FileChannel ch = FileChannel.open(
          f, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
        ch.write(ByteBuffer.wrap(bytes));
        ch.force(true);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the dead letters in " + f, e);
    }
  }

  /** The dead letters recorded (newest file only), oldest first: for tests and operators' tools. */
  public synchronized List<String> deadLetters() throws IOException {
    Path f = dir == null ? null : dir.resolve(DEAD_LETTERS_FILE);
    return f == null || !Files.exists(f)
        ? List.of()
        : Files.readAllLines(f, StandardCharsets.UTF_8);
  }

  /** Replace {@code file} whole: a crash leaves the old or the new content, never a mix. */
  private static void writeDurably(Path file, byte[] content) {
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    try {
      try (FileChannel ch = FileChannel.open(
          tmp,
          StandardOpenOption.CREATE,
          StandardOpenOption.WRITE,
          StandardOpenOption.TRUNCATE_EXISTING)) {
        ch.write(ByteBuffer.wrap(content));
        ch.force(true);
      }
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the poison ledger " + file, e);
    }
  }

  @Override
  public String toString() {
    return dir == null
        ? "no poison ledger"
        : "poison ledger in " + dir + " (" + deaths + " deaths)";
  }
}
