package sand.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.cluster.HostAgentTablesContract.code;
import static sand.cluster.HostAgentTablesContract.now;
import static sand.cluster.HostAgentTablesContract.uid;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import sand.cluster.FrontendTables.Account;
import sand.cluster.FrontendTables.AppName;
import sand.cluster.FrontendTables.ExecutionRecord;
import sand.cluster.FrontendTables.FrontendInfo;
import sand.cluster.FrontendTables.GrainVersion;
import sand.cluster.FrontendTables.KnixRecord;

/**
 * What every {@link ClusterStore} promises the frontends ({@link FrontendTables}), run against the fake and
 * against Cassandra (see {@link HostAgentTablesContract}).
 */
interface FrontendTablesContract {

  ClusterStore store();

  @Test
  default void aFrontendHeartbeatRegistersThenRenews() {
    String fe = uid("fe");
    Instant beat = now();
    store().frontendHeartbeat(fe, beat);
    store().frontendHeartbeat(fe, beat.plusSeconds(2));
    assertEquals(
        List.of(new FrontendInfo(fe, beat.plusSeconds(2))),
        store().frontends().stream().filter(f -> f.frontendId().equals(fe)).toList());
  }

  @Test
  default void anAccountIsCreatedOnceFoundByKeyDisabledAndDeleted() {
    String alice = uid("alice");
    Account account = new Account(alice, "k-" + alice, now());
    assertTrue(store().account(alice).isEmpty());
    assertTrue(store().createAccount(account));
    assertFalse(
        store().createAccount(new Account(alice, "other-" + alice, now())),
        "a name is claimed once");
    assertEquals(account, store().account(alice).orElseThrow());
    assertEquals(alice, store().accountByKey("k-" + alice).orElseThrow());
    assertTrue(store().accountByKey("other-" + alice).isEmpty(), "the loser's key is not stored");

    assertTrue(store().accountDisabled(alice).isEmpty());
    store().setAccountDisabled(alice, "unpaid");
    assertEquals("unpaid", store().accountDisabled(alice).orElseThrow());
    store().setAccountDisabled(alice, null);
    assertTrue(store().accountDisabled(alice).isEmpty());

    store().setAccountDisabled(alice, "closing");
    store().deleteAccount(account, Duration.ZERO);
    assertTrue(store().account(alice).isEmpty());
    assertTrue(store().accountByKey("k-" + alice).isEmpty());
    assertTrue(
        store().accountDisabled(alice).isEmpty(), "a deleted account leaves no reason behind");
    assertTrue(store().accountNameHeldUntil(alice).isEmpty(), "held for no time");
    assertTrue(store().createAccount(account), "a deleted name can be taken again");
  }

  @Test
  default void aDeletedAccountsNameIsHeldForTheTimeAskedThenFree() throws InterruptedException {
    String bob = uid("bob");
    Account account = new Account(bob, "k-" + bob, now());
    assertTrue(store().createAccount(account));
    assertTrue(store().accountNameHeldUntil(bob).isEmpty(), "a live account's name is not held");
    Instant deleted = now();
    store().deleteAccount(account, Duration.ofSeconds(2));
    assertTrue(store().account(bob).isEmpty(), "a held name is no account");
    assertTrue(store().accountByKey("k-" + bob).isEmpty(), "its key is gone at once");
    Instant until = store().accountNameHeldUntil(bob).orElseThrow();
    assertFalse(until.isBefore(deleted.plusSeconds(2)), until + " after a delete at " + deleted);
    assertTrue(until.isBefore(deleted.plusSeconds(5)), until + " after a delete at " + deleted);

    Account newcomer = new Account(bob, "new-" + bob, now());
    assertFalse(store().createAccount(newcomer), "the name is held");
    assertTrue(
        store().accountByKey("new-" + bob).isEmpty(), "the refused newcomer's key is not stored");
    long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
    while (!store().createAccount(newcomer)) {
      assertTrue(System.nanoTime() < deadline, "the name is still held 15 s after a hold of 2 s");
      Thread.sleep(250);
    }
    assertFalse(Instant.now().isBefore(deleted.plusSeconds(1)), "free too early");
    assertEquals(newcomer, store().account(bob).orElseThrow(), "nothing of the old row is left");
    assertTrue(store().accountNameHeldUntil(bob).isEmpty());
    assertEquals(bob, store().accountByKey("new-" + bob).orElseThrow());
    assertTrue(store().accountByKey("k-" + bob).isEmpty(), "the old key stays gone");
  }

  @Test
  default void grainVersionsAreClaimedOnceAndTheNewestWins() {
    String alice = uid("alice");
    Instant now = now();
    byte[] v1 = "a".getBytes(StandardCharsets.UTF_8);
    GrainVersion g1 = new GrainVersion(alice, "g", 1, v1, "py", "s1", 1, now);
    assertTrue(store().latestGrain(alice, "g").isEmpty());
    assertTrue(store().putGrainVersion(g1));
    assertFalse(
        store().putGrainVersion(new GrainVersion(alice, "g", 1, new byte[2], "zip", "x", 2, now)));
    assertArrayEquals(
        v1, store().latestGrain(alice, "g").orElseThrow().code(), "the first upload of v1 stays");
    assertTrue(store().putGrainVersion(new GrainVersion(alice, "g", 3, v1, "zip", "s3", 1, now)));
    assertTrue(store().putGrainVersion(new GrainVersion(alice, "g", 2, v1, "py", "s2", 1, now)));
    GrainVersion latest = store().latestGrain(alice, "g").orElseThrow();
    assertEquals(3, latest.version(), "the highest version, not the last written");
    assertEquals(
        List.of(alice, "g", "zip", "s3", 1L, now),
        List.of(
            latest.owner(),
            latest.name(),
            latest.kind(),
            latest.sha256(),
            latest.size(),
            latest.created()));

    assertTrue(store().putGrainVersion(new GrainVersion(alice, "a", 1, v1, "py", "sa", 1, now)));
    assertTrue(
        store().putGrainVersion(new GrainVersion(uid("bob"), "b", 1, v1, "py", "sb", 1, now)));
    List<GrainVersion> grains = store().grains(alice);
    assertEquals(
        List.of("a", "g"),
        grains.stream().map(GrainVersion::name).toList(),
        "by name, one per grain");
    assertEquals(
        List.of(1, 3), grains.stream().map(GrainVersion::version).toList(), "the newest of each");
    assertEquals(List.of(), store().grains(uid("nobody")));

    store().deleteGrain(alice, "g");
    assertTrue(store().latestGrain(alice, "g").isEmpty());
    assertEquals(
        List.of("a"), store().grains(alice).stream().map(GrainVersion::name).toList());
    assertTrue(store().putGrainVersion(g1), "every version went, so v1 can be uploaded again");
  }

  @Test
  default void anApplicationNameIsClaimedOnceUntilReleased() {
    String shop = uid("shop");
    AppName claim = new AppName(shop, "a000000000001", "alice", 0);
    assertTrue(store().appName(shop).isEmpty());
    assertEquals(claim, store().claimAppName(claim));
    assertEquals(
        claim,
        store().claimAppName(new AppName(shop, "a000000000002", "bob", 9)),
        "the holder's claim");
    store().setRequestTimeout(shop, 7);
    assertEquals(
        new AppName(shop, "a000000000001", "alice", 7), store().appName(shop).orElseThrow());
    assertEquals(
        7, store().claimAppName(new AppName(shop, "a000000000002", "bob", 0)).requestTimeoutS());
    store().releaseAppName(shop);
    assertTrue(store().appName(shop).isEmpty());
    AppName bobs = new AppName(shop, "a000000000002", "bob", 0);
    assertEquals(bobs, store().claimAppName(bobs));
  }

  @Test
  default void aTimeoutForAnUnclaimedNameClaimsNothing() {
    // A settings change can race the name's release; it must not leave a claim nobody holds.
    String name = uid("free");
    store().setRequestTimeout(name, 7);
    assertTrue(store().appName(name).isEmpty());
    AppName claim = new AppName(name, "a000000000003", "carol", 0);
    assertEquals(claim, store().claimAppName(claim));
  }

  @Test
  default void replacingApplicationCodeRemovesWhatIsNotInIt() {
    String id = uid("app");
    store()
        .putApplication(
            HostAgentTablesContract.app(id, HostAgentTables.DESIRED_DEPLOYED, List.of()),
            Map.of("old", code("old", "o"), "kept", code("kept", "1")));
    store().replaceApplicationCode(id, Map.of("new", code("new", "n"), "kept", code("kept", "2")));
    Map<String, HostAgentTables.GrainCode> stored = store().applicationCode(id);
    assertEquals(Set.of("new", "kept"), stored.keySet());
    assertEquals("sha-2", stored.get("kept").sha256());
    store().replaceApplicationCode(id, Map.of());
    assertEquals(Map.of(), store().applicationCode(id));
  }

  @Test
  default void deletingAnApplicationRemovesItsRowCodeAndStates() {
    String id = uid("app");
    String other = uid("app");
    store()
        .putApplication(
            HostAgentTablesContract.app(id, HostAgentTables.DESIRED_DEPLOYED, List.of()),
            Map.of("g", code("g", "x")));
    store()
        .putApplication(
            HostAgentTablesContract.app(other, HostAgentTables.DESIRED_DEPLOYED, List.of()),
            Map.of("g", code("g", "x")));
    store().setAppHostState(id, "h1", HostAgentTables.HOST_DEPLOYED, null, now());
    store().setAppHostState(other, "h1", HostAgentTables.HOST_DEPLOYED, null, now());
    store().deleteApplication(id);
    assertTrue(store().application(id).isEmpty());
    assertTrue(store().applications().stream().noneMatch(a -> a.appId().equals(id)));
    assertEquals(Map.of(), store().applicationCode(id));
    assertEquals(List.of(), store().appHostStates(id));
    assertTrue(store().application(other).isPresent(), "another application is untouched");
    assertEquals(1, store().appHostStates(other).size());

    store().clearAppHostStates(other);
    assertEquals(List.of(), store().appHostStates(other));
    assertTrue(store().application(other).isPresent(), "clearing states keeps the application");
  }

  @Test
  default void theFirstResultWinsWhateverOrderTheWritesArriveIn() {
    String e1 = uid("e");
    Instant now = now();
    Duration ttl = Duration.ofHours(1);
    long arrived = now.toEpochMilli() * 1000;
    assertTrue(store().execution(e1).isEmpty());
    // The worst order: the second result first, then the first, a timeout, and the start last.
    store()
        .endExecution(
            e1,
            "succeeded",
            "{\"ok\":2}",
            null,
            now,
            "[]",
            FrontendTables.resultRank(arrived + 5),
            ttl);
    store()
        .endExecution(
            e1,
            "succeeded",
            "{\"ok\":1}",
            null,
            now.plusSeconds(1),
            "[[\"frontend\",\"fe\",1]]",
            FrontendTables.resultRank(arrived),
            ttl);
    store()
        .endExecution(
            e1, "timeout", null, "no result", now, null, FrontendTables.RANK_TIMEOUT, ttl);
    store()
        .startExecution(
            new ExecutionRecord(e1, "a1", "alice", "running", null, null, now, null, "fe", null),
            ttl);
    assertEquals(
        new ExecutionRecord(
            e1,
            "a1",
            "alice",
            "succeeded",
            "{\"ok\":1}",
            null,
            now,
            now.plusSeconds(1),
            "fe",
            "[[\"frontend\",\"fe\",1]]"),
        store().execution(e1).orElseThrow());
  }

  @Test
  default void anEndReplacesTheRunningRecordAndAFailureBeatsATimeout() {
    String e = uid("e");
    Instant now = now();
    Duration ttl = Duration.ofHours(1);
    ExecutionRecord running =
        new ExecutionRecord(e, "a1", "alice", "running", null, null, now, null, "fe", null);
    store().startExecution(running, ttl);
    assertEquals(running, store().execution(e).orElseThrow());
    store()
        .endExecution(
            e,
            "timeout",
            null,
            "no result in 5 s",
            now.plusSeconds(5),
            null,
            FrontendTables.RANK_TIMEOUT,
            ttl);
    store()
        .endExecution(
            e,
            "failed",
            null,
            "Kafka down",
            now.plusSeconds(6),
            null,
            FrontendTables.RANK_FAILED,
            ttl);
    store()
        .endExecution(
            e,
            "timeout",
            null,
            "later timeout",
            now.plusSeconds(7),
            null,
            FrontendTables.RANK_TIMEOUT,
            ttl);
    assertEquals(
        new ExecutionRecord(
            e, "a1", "alice", "failed", null, "Kafka down", now, now.plusSeconds(6), "fe", null),
        store().execution(e).orElseThrow());
  }

  @Test
  default void anEndWithoutAStartIsKeptWithWhatItKnows() {
    String e = uid("e");
    Instant now = now();
    store()
        .endExecution(
            e,
            "succeeded",
            "{}",
            null,
            now,
            "[]",
            FrontendTables.resultRank(1),
            Duration.ofHours(1));
    assertEquals(
        new ExecutionRecord(e, null, null, "succeeded", "{}", null, null, now, null, "[]"),
        store().execution(e).orElseThrow());
  }

  @Test
  default void aSynchronousRequestIsRecordedInOneGoAndATimeoutDoesNotReplaceIt() {
    String e2 = uid("e");
    Instant now = now();
    Duration ttl = Duration.ofHours(1);
    store()
        .recordExecution(
            new ExecutionRecord(e2, "a1", "bob", "running", null, null, now, null, "fe", null),
            "succeeded",
            "{\"ok\":3}",
            null,
            now,
            "[]",
            FrontendTables.resultRank(now.toEpochMilli() * 1000),
            ttl);
    store()
        .endExecution(
            e2, "timeout", null, "no result", now, null, FrontendTables.RANK_TIMEOUT, ttl);
    assertEquals(
        new ExecutionRecord(e2, "a1", "bob", "succeeded", "{\"ok\":3}", null, now, now, "fe", "[]"),
        store().execution(e2).orElseThrow());
  }

  @Test
  default void recentExecutionsAreAnApplicationsNewestFirstSinceAndLimited() {
    String app = uid("app");
    Instant t0 = now();
    Duration ttl = Duration.ofHours(1);
    for (int i = 0; i < 4; i++) {
      store()
          .startExecution(
              new ExecutionRecord(
                  app + "-e" + i,
                  app,
                  "alice",
                  "running",
                  null,
                  null,
                  t0.plusSeconds(i),
                  null,
                  "fe",
                  null),
              ttl);
    }
    store()
        .recordExecution(
            new ExecutionRecord(
                app + "-sync",
                app,
                "alice",
                "running",
                null,
                null,
                t0.plusSeconds(10),
                null,
                "fe",
                null),
            "succeeded",
            "{}",
            null,
            t0,
            null,
            FrontendTables.resultRank(1),
            ttl);
    store()
        .startExecution(
            new ExecutionRecord(
                uid("other"), uid("app"), "alice", "running", null, null, t0, null, "fe", null),
            ttl);
    assertEquals(
        List.of(app + "-sync", app + "-e3", app + "-e2", app + "-e1", app + "-e0"),
        store().recentExecutions(app, t0, 10));
    assertEquals(List.of(app + "-sync", app + "-e3"), store().recentExecutions(app, t0, 2));
    assertEquals(
        List.of(app + "-sync", app + "-e3", app + "-e2"),
        store().recentExecutions(app, t0.plusSeconds(2), 10),
        "since is inclusive");
    assertEquals(List.of(), store().recentExecutions(uid("none"), t0, 10));
    assertEquals(
        List.of(app + "-e2", app + "-e1"),
        store().executionsBetween(app, t0.plusSeconds(1), t0.plusSeconds(2), 10).stream()
            .map(FrontendTables.ExecutionRef::executionId)
            .toList(),
        "since and until are inclusive, newest first");
    assertEquals(
        t0.plusSeconds(2).toEpochMilli(),
        store()
            .executionsBetween(app, t0, t0.plusSeconds(2), 1)
            .get(0)
            .started()
            .toEpochMilli());
  }

  @Test
  default void knixRecordsAreClaimedOnceListedByIdAndDeleted() {
    String scope = uid("acct");
    byte[] one = "{\"a\":1}".getBytes(StandardCharsets.UTF_8);
    assertTrue(store().knixRecord(scope, "function", "f1").isEmpty());
    assertTrue(store().claimKnixRecord(new KnixRecord(scope, "function", "f2", one)));
    assertFalse(store().claimKnixRecord(new KnixRecord(scope, "function", "f2", new byte[] {9})));
    assertArrayEquals(
        one, store().knixRecord(scope, "function", "f2").orElseThrow().value(), "the claim stays");
    store().putKnixRecord(new KnixRecord(scope, "function", "f1", new byte[0]));
    store().putKnixRecord(new KnixRecord(scope, "workflow", "w1", one));
    store().putKnixRecord(new KnixRecord(uid("acct"), "function", "f0", one));
    assertEquals(
        List.of("f1", "f2"),
        store().knixRecords(scope, "function").stream().map(KnixRecord::id).toList());
    KnixRecord f1 = store().knixRecord(scope, "function", "f1").orElseThrow();
    assertEquals(List.of(scope, "function", "f1"), List.of(f1.scope(), f1.kind(), f1.id()));
    assertArrayEquals(new byte[0], f1.value());

    store().putKnixRecord(new KnixRecord(scope, "function", "f1", one));
    assertArrayEquals(
        one, store().knixRecord(scope, "function", "f1").orElseThrow().value(), "a put overwrites");
    store().deleteKnixRecord(scope, "function", "f1");
    assertTrue(store().knixRecord(scope, "function", "f1").isEmpty());
    store().deleteKnixRecords(scope, "function");
    assertEquals(List.of(), store().knixRecords(scope, "function"));
    assertEquals(1, store().knixRecords(scope, "workflow").size(), "another kind is untouched");
    assertTrue(
        store().claimKnixRecord(new KnixRecord(scope, "function", "f2", one)),
        "a deleted id is free");
  }

  @Test
  default void executionsThatStartedTogetherAreListedById() {
    String app = uid("app");
    Instant t0 = now();
    for (String e : List.of("c", "a", "b")) {
      store()
          .startExecution(
              new ExecutionRecord(
                  app + "-" + e, app, "alice", "running", null, null, t0, null, "fe", null),
              Duration.ofHours(1));
    }
    assertEquals(
        List.of(app + "-a", app + "-b", app + "-c"), store().recentExecutions(app, t0, 10));
  }

  @Test
  default void instantsAreKeptToTheMillisecond() {
    Instant fine = Instant.parse("2026-11-26T10:00:00.123456789Z");
    Instant ms = Instant.parse("2026-11-26T10:00:00.123Z");
    String id = uid("x");
    store().upsertHost(new HostAgentTables.HostInfo(id, "bus", "data", "", 1, 0, fine, fine));
    HostAgentTables.HostInfo host = store().liveHosts(ms, Duration.ofSeconds(10)).stream()
        .filter(h -> h.hostId().equals(id))
        .findFirst()
        .orElseThrow();
    assertEquals(List.of(ms, ms), List.of(host.started(), host.heartbeat()));
    store().heartbeat(id, fine.plusSeconds(1));
    assertEquals(
        ms.plusSeconds(1),
        store().liveHosts(ms, Duration.ofSeconds(10)).stream()
            .filter(h -> h.hostId().equals(id))
            .findFirst()
            .orElseThrow()
            .heartbeat());
    store().setAppHostState(id, "h1", HostAgentTables.HOST_DEPLOYED, null, fine);
    assertEquals(ms, store().appHostStates(id).get(0).updated());
    store().frontendHeartbeat(id, fine);
    assertEquals(
        List.of(new FrontendInfo(id, ms)),
        store().frontends().stream().filter(f -> f.frontendId().equals(id)).toList());
    store().createAccount(new Account(id, "k-" + id, fine));
    assertEquals(ms, store().account(id).orElseThrow().created());
    store().putGrainVersion(new GrainVersion(id, "g", 1, new byte[0], "py", "s", 0, fine));
    assertEquals(ms, store().latestGrain(id, "g").orElseThrow().created());
    store()
        .recordExecution(
            new ExecutionRecord(id, id, id, "running", null, null, fine, null, "fe", null),
            "succeeded",
            "{}",
            null,
            fine,
            null,
            FrontendTables.resultRank(1),
            Duration.ofHours(1));
    ExecutionRecord e = store().execution(id).orElseThrow();
    assertEquals(List.of(ms, ms), List.of(e.started(), e.finished()));
    assertEquals(
        List.of(id),
        store().recentExecutions(id, fine, 10),
        "since is kept to the millisecond too");
  }

  @Test
  default void storedBytesAreCopies() {
    String id = uid("app");
    byte[] code = {1, 2, 3};
    store()
        .putApplication(
            HostAgentTablesContract.app(id, HostAgentTables.DESIRED_DEPLOYED, List.of()),
            Map.of("g", new HostAgentTables.GrainCode("g", code, "py", "s")));
    String owner = uid("alice");
    store().putGrainVersion(new GrainVersion(owner, "g", 1, code, "py", "s", 3, now()));
    code[0] = 9;
    store().applicationCode(id).get("g").code()[1] = 9;
    store().latestGrain(owner, "g").orElseThrow().code()[1] = 9;
    assertArrayEquals(new byte[] {1, 2, 3}, store().applicationCode(id).get("g").code());
    assertArrayEquals(
        new byte[] {1, 2, 3}, store().latestGrain(owner, "g").orElseThrow().code());
    assertArrayEquals(new byte[] {1, 2, 3}, store().grains(owner).get(0).code());
  }

  @Test
  default void aStoredValueIsACopy() {
    String scope = uid("acct");
    byte[] value = {1, 2, 3};
    store().putKnixRecord(new KnixRecord(scope, "chunk", "c0", value));
    value[0] = 9;
    store().knixRecord(scope, "chunk", "c0").orElseThrow().value()[1] = 9;
    assertArrayEquals(
        new byte[] {1, 2, 3},
        store().knixRecord(scope, "chunk", "c0").orElseThrow().value());
  }
}
