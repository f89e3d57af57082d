package sand.hostagent.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.hostagent.bridge.TestHost.APP;
import static sand.hostagent.bridge.TestHost.CRED;
import static sand.hostagent.bridge.TestHost.RESIZE;
import static sand.hostagent.bridge.TestHost.STORE;
import static sand.hostagent.bridge.TestHost.event;
import static sand.hostagent.bridge.TestHost.eventually;
import static sand.hostagent.bridge.TestHost.ids;
import static sand.hostagent.bridge.TestHost.output;
import static sand.hostagent.bridge.TestHost.report;
import static sand.hostagent.bridge.TestHost.tp;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import sand.cluster.globaldata.InMemoryGlobalDataLayer;
import sand.contracts.ConditionFlag;
import sand.contracts.ConditionFlag.Flag;
import sand.localbus.LocalMessageBus;

/**
 * Issue 26, finding 14: host X runs grain store but owns none of its partitions, so the backup of an event a
 * resize instance delivered into store's local queue goes into a partition of host Y, which takes it over when it
 * stays unfinished for the takeover timeout. An event waiting longer than that in X's busy queue must not run twice.
 */
class BackupRenewalTest {
  private final InMemoryGlobalDataLayer global = new InMemoryGlobalDataLayer();
  private TestHost x;
  private TestHost y;
  private int forwarded;
  private long yOffset;

  @AfterEach
  void close() {
    if (x != null) {
      x.close();
    }
    if (y != null) {
      y.close();
    }
  }

  /** X takes e0 from resize and its instance delivers o1..on locally into store; Y owns store's partitions. */
  private void setUp(boolean autoComplete, int outputs) throws Exception {
    x = new TestHost("hx", global, 10_000, autoComplete);
    y = new TestHost("hy", global, 10_000, true);
    x.assign(tp(RESIZE, 0), tp(RESIZE, 1)); // runs resize and store, owns no partition of store
    y.assign(tp(STORE, 0), tp(STORE, 1));
    x.add(tp(RESIZE, 1), 0, ConditionFlag.newEvent(event("e0", RESIZE), ""));
    x.bridge.pollOnce();
    assertEquals(1, x.drain(RESIZE).size());
    List<ObjectNode> outs = new ArrayList<>();
    for (int i = 1; i <= outputs; i++) {
      outs.add(output("o" + i, APP, "store", true, "exec-e0"));
    }
    x.bus.publish(
        CRED,
        LocalMessageBus.HOST_AGENT_QUEUE,
        report("sent", APP, "resize", "e0", outs, List.of()));
    x.processor.processOnce();
    if (!autoComplete) {
      eventually("backups sent", () -> x.sent(STORE.topic()).size() == outputs);
      for (int i = 0; i < outputs; i++) {
        x.producer.completeNext();
      }
    }
    eventually("backups acknowledged", () -> x.bridge.sender().unacknowledged() == 0);
    assertEquals(Collections.nCopies(outputs, Flag.PROCESSING), flags(x.sent(STORE.topic())));
    assertTrue(
        x.sent(STORE.topic()).stream().allMatch(r -> r.partition() == null),
        "keyed: Y's partition");
    forward();
    y.bridge.pollOnce();
  }

  /** What X sent to store's topic since the last call, into Y's consumer (one partition: the order is the point). */
  private void forward() {
    List<ProducerRecord<String, byte[]>> sent = x.sent(STORE.topic());
    for (; forwarded < sent.size(); forwarded++) {
      ProducerRecord<String, byte[]> r = sent.get(forwarded);
      y.consumer.addRecord(new ConsumerRecord<>(r.topic(), 0, yOffset++, r.key(), r.value()));
    }
  }

  private void advance(Duration d) {
    x.clock.advance(d);
    y.clock.advance(d);
  }

  private static List<Flag> flags(List<ProducerRecord<String, byte[]>> records) {
    return records.stream()
        .map(r -> ConditionFlag.parse(r.key(), r.value()).flag())
        .toList();
  }

  private void finishOnX(String id) throws Exception {
    x.bus.publish(
        CRED,
        LocalMessageBus.HOST_AGENT_QUEUE,
        report("finished", APP, "store", id, List.of(), List.of()));
    x.processor.processOnce();
  }

  @Test
  void anEventWaitingLongerThanTheTakeoverTimeoutIsNotTakenOverWhileItsHostRenewsItsBackup()
      throws Exception {
    setUp(true, 1);
    Duration timeout = y.settings.takeoverTimeout();
    Duration every = Duration.ofMillis(x.bridge.renewEveryMs());
    assertEquals(
        0,
        x.bridge.renewBackups(),
        "in flight for less than a third of the timeout: nothing extra");
    for (int round = 0;
        round < 7;
        round++) { // 7 x timeout/3: more than twice the timeout in X's queue
      advance(every);
      assertEquals(1, x.bridge.renewBackups());
      eventually("renewal acknowledged", () -> x.bridge.sender().unacknowledged() == 0);
      forward();
      y.bridge.pollOnce();
      y.bridge.pollOnce();
      assertEquals(List.of(), y.drain(STORE), "X is alive and renews o1: Y does not run it");
    }
    finishOnX("o1");
    eventually("o1's finished flag", () -> flags(x.sent(STORE.topic())).contains(Flag.FINISHED));
    advance(every);
    assertEquals(0, x.bridge.renewBackups(), "finished: no renewal");
    forward();
    y.bridge.pollOnce();
    advance(timeout);
    y.bridge.pollOnce();
    y.bridge.pollOnce();
    assertEquals(List.of(), y.drain(STORE), "finished on X: never run on Y");
    assertEquals(
        Flag.FINISHED, flags(x.sent(STORE.topic())).get(x.sent(STORE.topic()).size() - 1));
  }

  @Test
  void anEventLeftInTheQueueOfAnApplicationUndeployedHereIsHandedBackAndRunsOnceOnItsBackupsHost()
      throws Exception {
    setUp(true, 2);
    finishOnX("o1");
    eventually("o1's finished flag", () -> flags(x.sent(STORE.topic())).contains(Flag.FINISHED));
    x.bridge.updateGrains(
        Set.of()); // undeployed on X: o2, still in X's queue of store, goes with it
    x.bridge.forgetApplication(APP); // the sandbox is gone
    eventually("o2 handed back", () -> flags(x.sent(STORE.topic())).contains(Flag.NEW));
    assertEquals(
        List.of(Flag.PROCESSING, Flag.PROCESSING, Flag.FINISHED, Flag.NEW),
        flags(x.sent(STORE.topic())));
    forward();
    y.bridge.pollOnce();
    y.bridge.pollOnce();
    assertEquals(List.of("o2"), ids(y.drain(STORE)), "at once: no takeover timeout, X is alive");
    advance(y.settings.takeoverTimeout());
    y.bridge.pollOnce();
    y.bridge.pollOnce();
    assertEquals(List.of(), y.drain(STORE), "once: its processing record is not taken over after");
  }

  @Test
  void withoutRenewalsTheWaitingEventIsTakenOverAndRunsTwice() throws Exception {
    setUp(
        true,
        1); // the old behaviour: X never renews (as when X has died: then this take-over is the
    // point)
    advance(y.settings.takeoverTimeout());
    forward();
    y.bridge.pollOnce();
    y.bridge.pollOnce();
    assertEquals(List.of("o1"), ids(y.drain(STORE)), "Y runs o1 while it still waits in X's queue");
  }

  @Test
  void theFinishedFlagWaitsForARenewalInFlightAndNoneFollowsIt() throws Exception {
    setUp(false, 1);
    advance(Duration.ofMillis(x.bridge.renewEveryMs()));
    assertEquals(1, x.bridge.renewBackups());
    finishOnX("o1"); // the renewal is not acknowledged yet
    Thread.sleep(100);
    assertEquals(
        List.of(Flag.PROCESSING, Flag.PROCESSING),
        flags(x.sent(STORE.topic())),
        "no finished flag before the renewal is in Kafka (a retried send could overtake it)");
    advance(Duration.ofMillis(x.bridge.renewEveryMs()));
    assertEquals(0, x.bridge.renewBackups(), "finishing has begun: no renewal");
    assertTrue(x.producer.completeNext());
    eventually("finished after the renewal", () -> x.sent(STORE.topic()).size() == 3);
    assertTrue(x.producer.completeNext());
    assertEquals(
        List.of(Flag.PROCESSING, Flag.PROCESSING, Flag.FINISHED), flags(x.sent(STORE.topic())));
  }

  @Test
  void renewalsRacingWithFinishesNeverComeAfterTheFinishedFlag() throws Exception {
    int n = 60;
    setUp(true, n);
    AtomicBoolean stop = new AtomicBoolean();
    Thread renewer = new Thread(() -> {
      while (!stop.get()) {
        x.clock.advance(Duration.ofMillis(x.bridge.renewEveryMs()));
        x.bridge.renewBackups();
      }
    });
    renewer.start();
    try {
      for (int i = 1; i <= n; i++) {
        finishOnX("o" + i);
        Thread.sleep(1);
      }
      eventually(
          "every finished flag",
          () -> flags(x.sent(STORE.topic())).stream()
                  .filter(f -> f == Flag.FINISHED)
                  .count()
              == n);
    } finally {
      stop.set(true);
      renewer.join(5_000);
    }
    eventually("every send acknowledged", () -> x.bridge.sender().unacknowledged() == 0);
    Map<String, Integer> finishedAt = new HashMap<>();
    int renewals = 0;
    List<ProducerRecord<String, byte[]>> sent = x.sent(STORE.topic());
    for (int i = 0; i < sent.size(); i++) {
      ConditionFlag f = ConditionFlag.parse(sent.get(i).key(), sent.get(i).value());
      if (f.flag() == Flag.FINISHED) {
        finishedAt.put(f.eventId(), i);
      } else if (f.flag() == Flag.PROCESSING) {
        assertTrue(
            !finishedAt.containsKey(f.eventId()),
            "a processing record of " + f.eventId()
                + " after its finished flag: another host would run it again");
        renewals += i >= n ? 1 : 0;
      }
    }
    assertEquals(n, finishedAt.size());
    assertTrue(renewals > 0, "the race was run: renewals were sent while events finished");
  }
}
