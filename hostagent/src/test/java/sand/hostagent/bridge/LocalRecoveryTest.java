package sand.hostagent.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.hostagent.bridge.TestHost.APP;
import static sand.hostagent.bridge.TestHost.CRED;
import static sand.hostagent.bridge.TestHost.FRONTEND;
import static sand.hostagent.bridge.TestHost.RESIZE;
import static sand.hostagent.bridge.TestHost.STORE;
import static sand.hostagent.bridge.TestHost.event;
import static sand.hostagent.bridge.TestHost.eventually;
import static sand.hostagent.bridge.TestHost.ids;
import static sand.hostagent.bridge.TestHost.output;
import static sand.hostagent.bridge.TestHost.report;
import static sand.hostagent.bridge.TestHost.tp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import sand.cluster.globaldata.InMemoryGlobalDataLayer;
import sand.contracts.ConditionFlag;
import sand.contracts.ConditionFlag.Flag;
import sand.contracts.TopicNames;
import sand.localbus.LocalMessageBus;

/**
 * Lost grain instances re-delivered on this host (LocalRecovery): by a grain worker's "lost" report, a
 * supervisor's "exited" report and a dead sandbox; one result per event, and the commit moves on.
 */
class LocalRecoveryTest {
  private TestHost h;

  private void host(int lostRetries) {
    h = new TestHost(
        "h1", new InMemoryGlobalDataLayer(), 10_000, true, s -> s.withLostRetries(lostRetries));
  }

  @AfterEach
  void close() {
    if (h != null) {
      h.close();
    }
  }

  /** Events e0..e(n-1) from the frontend into resize-1 (offsets 0..n-1), in resize's local queue now. */
  private void delivered(int n) throws Exception {
    h.assign(tp(RESIZE, 0), tp(RESIZE, 1), tp(STORE, 1));
    for (int i = 0; i < n; i++) {
      ObjectNode e = event("e" + i, RESIZE).put("sent_ns", 1_700_000_000_000_000_000L + i);
      h.add(tp(RESIZE, 1), i, ConditionFlag.newEvent(e, ""));
    }
    h.bridge.pollOnce();
  }

  /** What a grain worker does: take up to {@code n} events of resize's queue. */
  private List<String> workerTakes(int n) throws Exception {
    List<String> out = new ArrayList<>();
    for (byte[] b : h.bus.poll(TestHost.AGENT, RESIZE.localQueue(), n, 0)) {
      out.add(ConditionFlag.JSON.readTree(b).path("id").asText());
    }
    return out;
  }

  private void publish(byte[] report) {
    h.bus.publish(CRED, LocalMessageBus.HOST_AGENT_QUEUE, report);
  }

  private static byte[] workerExited(String grain) {
    return ("{\"type\":\"worker\",\"app\":\"" + APP + "\",\"grain\":\"" + grain
            + "\",\"state\":\"exited\"," + "\"message\":\"grain worker " + grain
            + " was killed by SIGKILL\"}")
        .getBytes();
  }

  /** The grain worker's report of an instance killed from outside: status lost, its error to end. */
  private static byte[] lostReport(String eventId) throws Exception {
    ObjectNode err =
        output("err-" + eventId + "-" + System.nanoTime(), APP, "end", false, "exec-" + eventId);
    err.putObject("value")
        .putObject("error")
        .put("type", "Killed")
        .put("message", "grain instance of resize was killed by signal 9")
        .put("grain", "resize");
    ObjectNode r = (ObjectNode) ConditionFlag.JSON.readTree(
        report("finished", APP, "resize", eventId, List.of(err), List.of()));
    r.put("status", "lost");
    return ConditionFlag.toBytes(r);
  }

  private static byte[] okReport(String eventId, String resultId) {
    return report(
        "finished",
        APP,
        "resize",
        eventId,
        List.of(output(resultId, APP, "end", false, "exec-" + eventId)),
        List.of());
  }

  private List<JsonNode> results() throws Exception {
    List<JsonNode> out = new ArrayList<>();
    for (ProducerRecord<String, byte[]> r : h.sent(TopicNames.responseTopic(FRONTEND))) {
      out.add(ConditionFlag.JSON.readTree(r.value()));
    }
    return out;
  }

  private List<Flag> flagsOf(String eventId) {
    return h.flags(RESIZE.topic()).stream()
        .filter(f -> f.eventId().equals(eventId))
        .map(ConditionFlag::flag)
        .toList();
  }

  @Test
  void aDeadWorkersTakenEventsAreDeliveredAgainAheadOfTheQueueButNotWhatWaitsThere()
      throws Exception {
    host(2);
    delivered(3);
    assertEquals(
        List.of("e0", "e1"), workerTakes(2)); // the worker dies with these two (polled, or running)
    publish(workerExited("resize"));
    assertEquals(1, h.processor.processOnce());

    List<ObjectNode> queue = h.drain(RESIZE);
    assertEquals(
        List.of("e0", "e1", "e2"), ids(queue), "taken ones first, in order; e2 was never taken");
    assertEquals(2, queue.get(0).path("attempt").asInt());
    assertEquals(2, queue.get(1).path("attempt").asInt());
    assertFalse(queue.get(2).has("attempt"), "e2 was still queued: not a re-run");

    for (int i = 0; i < 3; i++) {
      publish(okReport("e" + i, "r" + i));
    }
    h.processor.processOnce();
    eventually("every event finished", () -> h.flags(RESIZE.topic()).size() == 3);
    eventually(
        "the commit passes all three",
        () -> h.bridge.tracker().committable(tp(RESIZE, 1)).equals(OptionalLong.of(3)));
    assertEquals(3, results().size());
  }

  @Test
  void aKilledInstanceRunsAgainUpToTheRetriesThenItsCallerGetsOneErrorResult() throws Exception {
    host(1);
    delivered(1);
    assertEquals(List.of("e0"), workerTakes(1));
    publish(lostReport("e0"));
    h.processor.processOnce();
    List<ObjectNode> again = h.drain(RESIZE);
    assertEquals(List.of("e0"), ids(again), "run again");
    assertEquals(2, again.get(0).path("attempt").asInt());
    Thread.sleep(50);
    assertEquals(List.of(), results(), "no error result while the event runs again");
    assertEquals(List.of(), flagsOf("e0"));

    publish(lostReport("e0")); // its second run is killed too: lost.retries=1 is used up
    h.processor.processOnce();
    assertEquals(List.of(), h.drain(RESIZE), "not run a third time");
    eventually(
        "the error result", () -> h.sent(TopicNames.responseTopic(FRONTEND)).size() == 1);
    JsonNode error = results().get(0).path("value").path("error");
    assertEquals("Killed", error.path("type").asText());
    assertEquals(
        "grain instance of resize was killed by signal 9 (run 2 of the event; not run again)",
        error.path("message").asText());
    eventually("e0 finished", () -> flagsOf("e0").equals(List.of(Flag.FINISHED)));
    eventually(
        "the commit passes e0",
        () -> h.bridge.tracker().committable(tp(RESIZE, 1)).equals(OptionalLong.of(1)));
  }

  @Test
  void aKilledInstanceThatRunsAgainAndSucceedsAnswersOnceWithItsResult() throws Exception {
    host(2);
    delivered(1);
    workerTakes(1);
    publish(lostReport("e0"));
    h.processor.processOnce();
    assertEquals(List.of("e0"), ids(h.drain(RESIZE)));
    publish(okReport("e0", "r0"));
    h.processor.processOnce();
    eventually("e0 finished", () -> flagsOf("e0").equals(List.of(Flag.FINISHED)));
    assertEquals(
        List.of("r0"), results().stream().map(r -> r.path("id").asText()).toList());
  }

  @Test
  void whenTwoRunsOfAnEventReportTheFirstWinsAndTheOtherIsDropped() throws Exception {
    host(2);
    delivered(1);
    workerTakes(1);
    publish(
        workerExited("resize")); // its instance lives on as an orphan; e0 is delivered again anyway
    h.processor.processOnce();
    assertEquals(List.of("e0"), ids(h.drain(RESIZE)));
    publish(okReport("e0", "from-the-orphan"));
    publish(okReport("e0", "from-the-rerun"));
    assertEquals(2, h.processor.processOnce());
    eventually("e0 finished", () -> flagsOf("e0").equals(List.of(Flag.FINISHED)));
    Thread.sleep(50);
    assertEquals(
        List.of("from-the-orphan"),
        results().stream().map(r -> r.path("id").asText()).toList());
    assertEquals(List.of(Flag.FINISHED), flagsOf("e0"), "one finished flag");
  }

  @Test
  void aDeadSandboxsTakenEventsRunAgainAndPastTheRetriesTheCallerGetsALostError() throws Exception {
    host(0);
    delivered(2);
    assertEquals(List.of("e0"), workerTakes(1));
    h.bridge.sandboxExited(APP);
    assertEquals(List.of("e1"), ids(h.drain(RESIZE)), "no retries: e0 is not delivered again");
    assertEquals(1, h.processor.processOnce(), "the agent's own report of e0's lost run");
    eventually(
        "the error result", () -> h.sent(TopicNames.responseTopic(FRONTEND)).size() == 1);
    JsonNode result = results().get(0);
    assertEquals("exec-e0", result.path("execution_id").asText());
    assertEquals("Lost", result.path("value").path("error").path("type").asText());
    assertEquals(
        "grain instance of resize was lost (its sandbox died) in run 1 of the event; not run again",
        result.path("value").path("error").path("message").asText());
    eventually("e0 finished", () -> flagsOf("e0").equals(List.of(Flag.FINISHED)));

    publish(okReport("e0", "late")); // the dead sandbox's report was on its way after all: dropped
    h.processor.processOnce();
    Thread.sleep(50);
    assertEquals(1, results().size());
  }

  @Test
  void aDeadSandboxsTakenEventIsDeliveredAgainWithItsAttempt() throws Exception {
    host(2);
    delivered(1);
    workerTakes(1);
    h.bridge.sandboxExited(APP);
    List<ObjectNode> again = h.drain(RESIZE);
    assertEquals(List.of("e0"), ids(again));
    assertEquals(2, again.get(0).path("attempt").asInt());
    assertTrue(h.reports.isEmpty());
  }
}
