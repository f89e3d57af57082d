package sand.cluster;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Events from the world (docs/triggers.md): an application's triggers, the claims that make each timer tick fire
 * once in the cluster, the idempotency keys that make a repeated request or record answer its first execution, and
 * the dead letters of events that failed every attempt. Only frontends read and write these tables.
 */
public interface TriggerTables {
  /**
   * One trigger of an application.
   *
   * @param kind "timer" or "queue"
   * @param spec the trigger as its route took it (JSON), validated by the frontend
   */
  record Trigger(String appId, String name, String kind, String spec, Instant created) {}

  /**
   * An event that failed every attempt.
   *
   * @param id       sortable: newer ids sort after older ones
   * @param source   what started it: "async", "timer:&lt;trigger&gt;", "queue:&lt;trigger&gt;",
   *     "bucket:&lt;bucket&gt;" (a data trigger), "redrive:&lt;id&gt;"
   * @param event    the event's input (JSON)
   * @param error    the last attempt's error (JSON)
   * @param attempts how many executions ran it
   * @param executions the ids of those executions, comma-separated
   */
  record DeadLetter(
      String appId,
      String id,
      String source,
      String event,
      String error,
      int attempts,
      String executions,
      Instant at) {}

  /**
   * The claim of an idempotency key: the execution of its delivery's latest attempt.
   *
   * @param bodySha256 hex SHA-256 of the request's body: the same key with another body is refused
   * @param attempt which attempt of the delivery {@code executionId} is (1 for the first)
   */
  record KeyClaim(String executionId, String bodySha256, int attempt) {
    public KeyClaim(String executionId, String bodySha256) {
      this(executionId, bodySha256, 1);
    }
  }

  void putTrigger(Trigger t);

  /** The application's triggers, by name. */
  List<Trigger> triggers(String appId);

  /** Every application's triggers, at most {@code limit} (the schedulers' view of the cluster). */
  List<Trigger> allTriggers(int limit);

  boolean deleteTrigger(String appId, String name);

  void deleteTriggers(String appId);

  /**
   * Claim a timer's tick (a lightweight transaction): true for exactly one caller in the cluster, the one that
   * fires it, and again for that caller ({@code by}) if it asks again (a claim whose result it could not learn: a
   * Paxos round that timed out as a replica died). Claims are kept a day.
   */
  boolean claimTick(String appId, String trigger, long tickEpochMs, String by);

  /**
   * Claim {@code key} for {@code claim}'s execution for {@code window}: empty when this call claimed it, else the
   * first claim (whose execution answers for this one).
   */
  Optional<KeyClaim> claimKey(String appId, String key, KeyClaim claim, Duration window);

  /** Give a key back when its execution never started (the request could not be sent). */
  void releaseKey(String appId, String key, String executionId);

  /**
   * Move the key's claim from {@code fromExecutionId} to the next attempt's execution (a lightweight transaction):
   * true when it was still {@code fromExecutionId}'s, so exactly one frontend runs each attempt (the delivery's, or
   * one taking over from a frontend that died between two attempts). The claim is kept {@code window} from now.
   */
  boolean moveKey(String appId, String key, String fromExecutionId, KeyClaim next, Duration window);

  /** The key's claim as it stands, if any. */
  Optional<KeyClaim> readKey(String appId, String key);

  void putDeadLetter(DeadLetter d, Duration keep);

  /** The newest {@code limit} dead letters, newest first; {@code before}: only ids sorting before it (a page). */
  List<DeadLetter> deadLetters(String appId, String before, int limit);

  Optional<DeadLetter> deadLetter(String appId, String id);

  boolean deleteDeadLetter(String appId, String id);
}
