package sand.hostagent.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.hostagent.bridge.TestHost.APP;
import static sand.hostagent.bridge.TestHost.CRED;
import static sand.hostagent.bridge.TestHost.OTHER_APP;
import static sand.hostagent.bridge.TestHost.OTHER_CRED;
import static sand.hostagent.bridge.TestHost.PUBLISH;
import static sand.hostagent.bridge.TestHost.RESIZE;
import static sand.hostagent.bridge.TestHost.STORE;
import static sand.hostagent.bridge.TestHost.bytes;
import static sand.hostagent.bridge.TestHost.event;
import static sand.hostagent.bridge.TestHost.eventually;
import static sand.hostagent.bridge.TestHost.output;
import static sand.hostagent.bridge.TestHost.report;
import static sand.hostagent.bridge.TestHost.reportJson;
import static sand.hostagent.bridge.TestHost.tp;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import sand.cluster.globaldata.CanonicalEncoding;
import sand.cluster.globaldata.InMemoryGlobalDataLayer;
import sand.common.log.LogIdentity;
import sand.contracts.ConditionFlag;
import sand.contracts.ConditionFlag.Flag;
import sand.contracts.DataKind;
import sand.contracts.DataMetadata;
import sand.contracts.TopicNames;
import sand.localbus.LocalMessageBus;

/** Figure 4 steps 5b-10b and the data flag of §4.3, over MockProducer. */
class HostAgentQueueProcessorTest {
  private TestHost h = new TestHost();

  @AfterEach
  void close() {
    h.close();
  }

  /** e0 came from the frontend into resize-1 and was delivered here; its instance now reports. */
  private void e0Delivered() throws Exception {
    h.assign(tp(RESIZE, 0), tp(RESIZE, 1), tp(STORE, 1));
    h.add(tp(RESIZE, 1), 0, ConditionFlag.newEvent(event("e0", RESIZE), ""));
    h.bridge.pollOnce();
    assertEquals(1, h.drain(RESIZE).size());
  }

  private void publishReport(String credential, byte[] report) {
    h.bus.publish(credential, LocalMessageBus.HOST_AGENT_QUEUE, report);
  }

  @Test
  void aSupervisorsWorkerReportReachesTheHealthCallbackForTheBusStampedApplicationOnly()
      throws Exception {
    List<List<String>> got = new CopyOnWriteArrayList<>();
    h.health = (app, grain, state, message) -> got.add(List.of(app, grain, state, message));
    // names another application in its body: the bus's stamp (the credential's application) is what
    // counts
    publishReport(
        CRED,
        ("{\"type\":\"worker\",\"app\":\"" + OTHER_APP + "\",\"grain\":\"resize\","
                + "\"state\":\"crash-looping\",\"message\":\"grain worker resize exited with code 1\"}")
            .getBytes());
    publishReport(
        CRED,
        "{\"type\":\"worker\",\"grain\":\"nosuchgrain\",\"state\":\"crash-looping\"}".getBytes());
    assertEquals(2, h.processor.processOnce());
    eventually("both on the health thread (it may write Cassandra)", () -> got.size() == 2);
    assertEquals(
        List.of(
            List.of(APP, "resize", "crash-looping", "grain worker resize exited with code 1"),
            List.of(APP, "nosuchgrain", "crash-looping", "")),
        got,
        "a worker report is about the stamped application (the deployer checks the grain: a sandbox still starting "
            + "is not known here yet)");
    assertTrue(
        h.producer.history().isEmpty(),
        "a worker report is not an instance's report: nothing to Kafka");
  }

  @Test
  void linesLoggedWhileAReportIsHandledCarryItsApplicationAndExecution() throws Exception {
    // docs/operations.md "Logs": the bridge tags the thread handling a report (MDC app, exec) for
    // SandLayout.
    Logger logger = (Logger)
        LoggerFactory.getLogger(HostAgentQueueProcessor.class); // ReportForwarder logs as it
    ListAppender<ILoggingEvent> seen = new ListAppender<>();
    seen.start();
    Level before = logger.getLevel();
    logger.setLevel(Level.DEBUG);
    logger.addAppender(seen);
    try {
      e0Delivered();
      publishReport(
          CRED,
          report(
              "finished",
              APP,
              "resize",
              "e0",
              List.of(output("o3", APP, "end", false, "exec-e0")),
              List.of()));
      assertEquals(1, h.processor.processOnce());
      ILoggingEvent line = seen.list.stream()
          .filter(e -> e.getFormattedMessage().contains("result to frontend"))
          .findFirst()
          .orElseThrow(() -> new AssertionError("no 'result to frontend' line: " + seen.list));
      assertEquals(APP, line.getMDCPropertyMap().get(LogIdentity.APP));
      assertEquals("exec-e0", line.getMDCPropertyMap().get(LogIdentity.EXEC));
    } finally {
      logger.detachAppender(seen);
      logger.setLevel(before);
    }
    assertNull(MDC.get(LogIdentity.APP), "the scope ends with the report");
  }

  @Test
  void localRemoteAndEndOutputsAndDataGoWhereTheyBelong() throws Exception {
    e0Delivered();
    h.global.setAvailable(false); // Cassandra away: the data flag must wait for the backup
    h.data.forApplication(APP).put("photo", bytes("jpeg"));
    publishReport(
        CRED,
        report(
            "finished",
            APP,
            "resize",
            "e0",
            List.of(
                output("o1", APP, "store", true, "exec-e0"),
                output("o2", APP, "publish", false, "exec-e0"),
                output("o3", APP, "end", false, "exec-e0")),
            List.of(List.of("kv", "photo"))));
    assertEquals(1, h.processor.processOnce());

    eventually("the three outputs sent", () -> h.producer.history().size() >= 3);
    ProducerRecord<String, byte[]> backup = h.sent(STORE.topic()).get(0);
    assertEquals(
        Flag.PROCESSING, ConditionFlag.parse(backup.key(), backup.value()).flag());
    assertEquals(1, backup.partition(), "the only partition of store this host owns");
    assertEquals("o1", backup.key());
    assertEquals(
        List.of(Flag.NEW),
        h.flags(PUBLISH.topic()).stream().map(ConditionFlag::flag).toList());
    ProducerRecord<String, byte[]> result =
        h.sent(TopicNames.responseTopic(TestHost.FRONTEND)).get(0);
    assertEquals("exec-e0", result.key());
    assertEquals("o3", ConditionFlag.JSON.readTree(result.value()).path("id").asText());
    assertEquals(false, ConditionFlag.JSON.readTree(result.value()).has("local"));
    Thread.sleep(100);
    assertEquals(
        List.of(),
        h.flags(RESIZE.topic()),
        "no data or finished flag before the data is in Cassandra");

    h.global.setAvailable(true);
    eventually("data then finished flags of e0", () -> h.flags(RESIZE.topic()).size() == 2);
    List<ConditionFlag> flags = h.flags(RESIZE.topic());
    assertEquals(
        List.of(Flag.DATA, Flag.FINISHED),
        flags.stream().map(ConditionFlag::flag).toList());
    assertEquals(
        List.of(
            new DataMetadata(DataKind.KV, "photo", 4, CanonicalEncoding.sha256Hex(bytes("jpeg")))),
        flags.get(0).data());
    assertTrue(
        h.sent(RESIZE.topic()).stream().allMatch(r -> r.partition() == 1), "in e0's own partition");
    eventually(
        "e0 no longer holds the commit",
        () -> h.bridge.tracker().committable(tp(RESIZE, 1)).equals(OptionalLong.of(1)));
    assertEquals(1, h.reports.size());

    // the store instance that handled o1 (delivered locally) finishes: o1's finished flag joins its
    // backup
    publishReport(CRED, report("finished", APP, "store", "o1", List.of(), List.of()));
    h.processor.processOnce();
    eventually("o1 finished", () -> h.flags(STORE.topic()).size() == 2);
    assertEquals(ConditionFlag.finished("o1", "h1"), h.flags(STORE.topic()).get(1));
    assertEquals(1, h.sent(STORE.topic()).get(1).partition());
  }

  @Test
  void sentEventsAreBackedUpAndTheFinishedFlagWaitsForThem() throws Exception {
    e0Delivered();
    publishReport(
        CRED,
        report(
            "sent",
            APP,
            "resize",
            "e0",
            List.of(output("s1", APP, "publish", false, "exec-e0")),
            List.of()));
    publishReport(CRED, report("finished", APP, "resize", "e0", List.of(), List.of()));
    h.processor.processOnce();
    eventually("finished", () -> h.flags(RESIZE.topic()).size() == 1);
    assertEquals(
        List.of(ConditionFlag.newEvent(
            (ObjectNode) output("s1", APP, "publish", false, "exec-e0").without("local"), "h1")),
        h.flags(PUBLISH.topic()));
    assertTrue(h.producer.history().indexOf(h.sent(PUBLISH.topic()).get(0))
        < h.producer.history().indexOf(h.sent(RESIZE.topic()).get(0)));
  }

  @Test
  void aReportNamingAnotherApplicationIsRefused() throws Exception {
    e0Delivered();
    publishReport(CRED, report("finished", OTHER_APP, "resize", "e0", List.of(), List.of()));
    publishReport(
        CRED,
        report(
            "finished",
            APP,
            "resize",
            "e0",
            List.of(output("x", OTHER_APP, "store", false, "exec-e0")),
            List.of()));
    // mall's grain knows e0's id and tries to mark it finished: e0 is shop's
    publishReport(OTHER_CRED, report("finished", OTHER_APP, "resize", "e0", List.of(), List.of()));
    assertEquals(3, h.processor.processOnce());
    Thread.sleep(100);
    assertEquals(List.of(), h.producer.history());
    assertEquals(1, h.reports.size(), "only mall's own (harmless) report is accepted");
    assertTrue(h.bridge.tracker().isPending(tp(RESIZE, 1), "e0"));
  }

  @Test
  void aResultForAnotherApplicationsExecutionIsRefused() throws Exception {
    e0Delivered();
    // mall's grain learned shop's execution id and even its tag, and answers shop's caller with its
    // own result
    ObjectNode forged = output("f1", OTHER_APP, "end", false, "exec-e0");
    forged.put("tag", TestHost.TAGS.of(APP, "exec-e0", TestHost.FRONTEND));
    ObjectNode untagged = output("f2", OTHER_APP, "end", false, "exec-e0");
    untagged.remove("tag");
    ObjectNode otherFrontend = output("f3", APP, "end", false, "exec-e0");
    otherFrontend.put("frontend", "fe-elsewhere"); // shop's own grain redirecting its result
    publishReport(
        OTHER_CRED, report("finished", OTHER_APP, "x", "m0", List.of(forged, untagged), List.of()));
    publishReport(CRED, report("sent", APP, "resize", "e0", List.of(otherFrontend), List.of()));
    assertEquals(2, h.processor.processOnce());
    Thread.sleep(100);
    assertEquals(List.of(), h.producer.history(), "no result reached any response topic");
    assertEquals(3, h.processor.refusedOutputs());

    publishReport(
        CRED,
        report(
            "finished",
            APP,
            "resize",
            "e0",
            List.of(output("o3", APP, "end", false, "exec-e0")),
            List.of()));
    h.processor.processOnce();
    eventually(
        "shop's own result sent",
        () -> h.sent(TopicNames.responseTopic(TestHost.FRONTEND)).size() == 1);
  }

  @Test
  void outputsToGrainsOutsideTheWorkflowMakeNoTopics() throws Exception {
    e0Delivered();
    List<ObjectNode> outs = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      outs.add(output("n" + i, APP, "made-up-" + i, false, "exec-e0"));
    }
    publishReport(CRED, report("finished", APP, "resize", "e0", outs, List.of()));
    h.processor.processOnce();
    eventually("e0 finished", () -> h.flags(RESIZE.topic()).size() == 1);
    assertTrue(
        h.producer.history().stream().noneMatch(r -> r.topic().contains("made-up")),
        "nothing was produced to a made-up grain's topic");
    assertEquals(500, h.processor.refusedOutputs());
  }

  @Test
  void failedKafkaSendsAreRetriedUntilTaken() throws Exception {
    h.close();
    h = new TestHost("h1", new InMemoryGlobalDataLayer(), 10_000, false);
    e0Delivered();
    publishReport(
        CRED,
        report(
            "finished",
            APP,
            "resize",
            "e0",
            List.of(output("o1", APP, "store", true, "exec-e0")),
            List.of()));
    h.processor.processOnce();
    assertEquals(1, h.producer.history().size());
    assertTrue(h.producer.errorNext(new TimeoutException("Kafka away")));
    h.add(tp(RESIZE, 1), 1, ConditionFlag.newEvent(event("e1", RESIZE), ""));
    h.bridge.pollOnce();
    assertEquals(
        List.of("e1"),
        TestHost.ids(h.drain(RESIZE)),
        "local execution goes on while Kafka refuses sends");
    eventually("the backup sent again", () -> h.producer.history().size() == 2);
    assertTrue(h.producer.errorNext(new TimeoutException("still away")));
    eventually("and again", () -> h.producer.history().size() == 3);
    assertEquals(
        List.of(), h.flags(RESIZE.topic()), "e0 is not finished while its output is not in Kafka");
    assertTrue(h.producer.completeNext());
    eventually(
        "e0's finished flag once the backup is in",
        () -> h.flags(RESIZE.topic()).size() == 1);
    assertTrue(h.producer.completeNext());
    eventually("e0 finished", () -> !h.bridge.tracker().isPending(tp(RESIZE, 1), "e0"));
    assertEquals(
        List.of("o1", "o1", "o1", "e0"),
        h.producer.history().stream().map(ProducerRecord::key).toList());
    assertTrue(h.bridge.sender().retries() >= 2);
    assertEquals(0, h.processor.pendingBytes());
  }

  @Test
  void theProcessorStopsTakingReportsWhileKafkaHoldsTooMuch() throws Exception {
    h.close();
    h = new TestHost(
        "h1", new InMemoryGlobalDataLayer(), 10_000, false, s -> s.withMaxPendingBytes(1));
    e0Delivered();
    publishReport(
        CRED,
        report(
            "finished",
            APP,
            "resize",
            "e0",
            List.of(output("o1", APP, "store", true, "exec-e0")),
            List.of()));
    publishReport(
        CRED,
        report(
            "sent",
            APP,
            "store",
            "o1",
            List.of(output("o2", APP, "publish", false, "exec-e0")),
            List.of()));
    h.processor.start();
    eventually("the first report's backup sent", () -> h.producer.history().size() == 1);
    Thread.sleep(200);
    assertEquals(
        1, h.producer.history().size(), "the second report waits: Kafka holds the whole budget");
    assertTrue(h.processor.pendingBytes() > 0);
    assertTrue(h.producer.completeNext()); // o1's backup is in: e0's finished flag goes
    eventually("e0's finished flag sent", () -> h.producer.history().size() == 2);
    assertTrue(h.producer.completeNext()); // e0 done: the budget is free again
    eventually("the second report handled", () -> h.producer.history().size() == 3);
    assertEquals("o2", h.producer.history().get(2).key());
    assertTrue(h.producer.completeNext());
    eventually("nothing pending", () -> h.processor.pendingBytes() == 0);
  }

  @Test
  void aLocalOutputForAGrainNotRunningHereIsPublishedForItsHosts() throws Exception {
    e0Delivered();
    publishReport(
        CRED,
        report(
            "finished",
            APP,
            "resize",
            "e0",
            List.of(output("o1", APP, "publish", true, "exec-e0")),
            List.of()));
    h.processor.processOnce();
    eventually("forwarded", () -> h.flags(PUBLISH.topic()).size() == 1);
    assertEquals(Flag.NEW, h.flags(PUBLISH.topic()).get(0).flag());
  }

  @Test
  void withoutAPartitionOfTheNextGrainTheBackupIsPlacedByItsKey() throws Exception {
    h.assign(
        tp(RESIZE, 0), tp(RESIZE, 1)); // store runs here but this host owns none of its partitions
    publishReport(
        CRED,
        report(
            "finished",
            APP,
            "resize",
            "e9",
            List.of(output("o1", APP, "store", true, "exec-e9")),
            List.of()));
    h.processor.processOnce();
    publishReport(CRED, report("finished", APP, "store", "o1", List.of(), List.of()));
    h.processor.processOnce();
    eventually("backup and finished", () -> h.sent(STORE.topic()).size() == 2);
    List<ProducerRecord<String, byte[]>> recs = h.sent(STORE.topic());
    assertEquals(null, recs.get(0).partition());
    assertEquals(null, recs.get(1).partition(), "same key, so the same partition as the backup");
  }
  // ---- issue 26: reports are the grain's own writing

  private void useLimits(ReportLimits limits) throws Exception {
    h.close();
    h = new TestHost("h1", new InMemoryGlobalDataLayer(), 10_000, true, s -> s.withReports(limits));
  }

  private static ReportLimits limits(int threads, int dataItems, int inFlightMax, Duration expiry) {
    return new ReportLimits(
        threads, 2000, 16L << 20, dataItems, inFlightMax, 16L << 20, expiry, 256L << 20);
  }

  @Test
  void reportsOfMadeUpGrainsOrStatusesAreRefusedAndCountedUnderFixedReasons() throws Exception {
    e0Delivered();
    for (int i = 0; i < 100; i++) {
      publishReport(CRED, report("finished", APP, "g-" + i, "x" + i, List.of(), List.of()));
      ObjectNode r = reportJson("finished", APP, "resize", "y" + i, List.of(), List.of());
      r.put("status", "s-" + i);
      publishReport(CRED, ConditionFlag.toBytes(r));
    }
    while (h.processor.processOnce() > 0) {
      // all of them
    }
    assertEquals(
        List.of(), h.reports, "no listener (metrics, logs) sees a made-up grain or status");
    assertEquals(
        Map.of(List.of(APP, "unknown_grain"), 100L, List.of(APP, "unknown_status"), 100L),
        h.processor.refusedReports());
  }

  @Test
  void aDataListIsDeduplicatedAndItsMetadataComputedOncePerWrite() throws Exception {
    e0Delivered();
    h.data.forApplication(APP).put("photo", bytes("jpeg"));
    List<List<String>> same = new ArrayList<>();
    for (int i = 0; i < 10_000; i++) {
      same.add(List.of("kv", "photo"));
    }
    publishReport(CRED, report("finished", APP, "resize", "e0", List.of(), same));
    h.processor.processOnce();
    eventually("data then finished flags of e0", () -> h.flags(RESIZE.topic()).size() == 2);
    DataMetadata photo =
        new DataMetadata(DataKind.KV, "photo", 4, CanonicalEncoding.sha256Hex(bytes("jpeg")));
    assertEquals(
        List.of(photo),
        h.flags(RESIZE.topic()).get(0).data(),
        "10,000 mentions of one item: one in the flag");
    assertEquals(1, h.data.forApplication(APP).metadataComputed(), "its SHA-256 computed once");
  }

  @Test
  void aDataListLongerThanTheCapGetsNoDataFlagButTheEventFinishes() throws Exception {
    useLimits(limits(2, 3, 1000, Duration.ofMinutes(10)));
    e0Delivered();
    List<List<String>> many = new ArrayList<>();
    for (int i = 0; i < 10_000; i++) {
      many.add(List.of("kv", "k" + i));
    }
    publishReport(CRED, report("finished", APP, "resize", "e0", List.of(), many));
    h.processor.processOnce();
    eventually("e0 finished", () -> h.flags(RESIZE.topic()).size() == 1);
    assertEquals(
        Flag.FINISHED,
        h.flags(RESIZE.topic()).get(0).flag(),
        "no data flag: recovery re-runs it instead");
    assertEquals(0, h.data.forApplication(APP).metadataComputed());
    assertEquals(Map.of(List.of(APP, "data_list_too_long"), 1L), h.processor.refusedReports());
  }

  @Test
  void outputsClaimingALocalDeliveryAreBoundedPerApplicationAndExpire() throws Exception {
    useLimits(limits(2, 256, 3, Duration.ofMillis(200)));
    e0Delivered();
    List<ObjectNode> outs = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      outs.add(output("f" + i, APP, "store", true, "exec-e0"));
    }
    publishReport(CRED, report("sent", APP, "resize", "e0", outs, List.of()));
    h.processor.processOnce();
    eventually("three backups", () -> h.sent(STORE.topic()).size() == 3);
    Thread.sleep(50);
    assertEquals(
        3, h.sent(STORE.topic()).size(), "the application's bound of such events in flight is 3");
    assertEquals(Map.of(List.of(APP, "in_flight_full"), 2L), h.processor.refusedReports());
    assertEquals(Map.of(APP, 4), h.processor.inFlightByApplication(), "e0 and three claimed");

    // the consumer reads the backups: nobody finishes them (forged), so they hold the partition's
    // commit
    List<ProducerRecord<String, byte[]>> backups = h.sent(STORE.topic());
    for (int i = 0; i < backups.size(); i++) {
      h.add(
          tp(STORE, 1),
          i,
          ConditionFlag.parse(backups.get(i).key(), backups.get(i).value()));
    }
    h.bridge.pollOnce();
    assertEquals(OptionalLong.of(0), h.bridge.tracker().committable(tp(STORE, 1)));

    Thread.sleep(250);
    h.processor.expireLocal(System.nanoTime());
    assertEquals(
        Map.of(APP, 1), h.processor.inFlightByApplication(), "the claimed ones expired; e0 stays");
    assertEquals(
        OptionalLong.of(3), h.bridge.tracker().committable(tp(STORE, 1)), "the commit moves on");
    for (ProducerRecord<String, byte[]> b : backups) {
      assertFalse(h.bridge.tracker().isPending(tp(STORE, 1), b.key()));
    }
    // room again
    publishReport(
        CRED,
        report(
            "sent",
            APP,
            "resize",
            "e0",
            List.of(output("g0", APP, "store", true, "exec-e0")),
            List.of()));
    h.processor.processOnce();
    eventually("a new one backed up", () -> h.sent(STORE.topic()).size() == 4);
  }

  @Test
  void oneApplicationsSlowReportsDoNotHoldUpAnothers() throws Exception {
    e0Delivered();
    CountDownLatch release = new CountDownLatch(1);
    h.onReport = r -> {
      if (r.app().equals(APP)) {
        try {
          release.await(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    };
    for (int i = 0; i < 3; i++) {
      publishReport(CRED, report("sent", APP, "resize", "e0", List.of(), List.of()));
    }
    publishReport(OTHER_CRED, report("finished", OTHER_APP, "x", "m0", List.of(), List.of()));
    h.processor.start();
    try {
      eventually(
          "mall's report handled while shop's first hangs",
          () -> h.reports.stream().anyMatch(r -> r.app().equals(OTHER_APP))
              && h.reports.stream().anyMatch(r -> r.app().equals(APP)));
      Thread.sleep(100);
      assertEquals(
          1,
          h.reports.stream().filter(r -> r.app().equals(APP)).count(),
          "shop's are handled one at a time");
    } finally {
      release.countDown();
    }
    eventually("shop's all handled, in order", () -> h.reports.size() == 4);
  }

  @Test
  void aReportsLogLinesAreBoundToTheExecutionOfItsEventOnly() throws Exception {
    e0Delivered();
    ObjectNode foreign = reportJson("sent", APP, "resize", "e0", List.of(), List.of());
    foreign.put("execution_id", "exec-of-another-tenant");
    foreign.withArray("logs").addArray().add(1).add("INFO").add("injected");
    ObjectNode noSuchEvent =
        reportJson("sent", APP, "resize", "no-such-event", List.of(), List.of());
    noSuchEvent.withArray("logs").addArray().add(1).add("INFO").add("injected");
    ObjectNode own = reportJson("sent", APP, "resize", "e0", List.of(), List.of());
    own.withArray("logs").addArray().add(1).add("INFO").add("mine");
    publishReport(CRED, ConditionFlag.toBytes(foreign));
    publishReport(CRED, ConditionFlag.toBytes(noSuchEvent));
    publishReport(CRED, ConditionFlag.toBytes(own));
    while (h.processor.processOnce() > 0) {
      // all of them
    }
    assertEquals(
        List.of(false, false, true),
        h.reports.stream().map(InstanceReport::executionBound).toList());
    assertEquals(Map.of(List.of(APP, "foreign_execution"), 2L), h.processor.refusedReports());
  }
}
