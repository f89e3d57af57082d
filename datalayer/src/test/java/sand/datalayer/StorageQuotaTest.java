package sand.datalayer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import sand.datalayer.thrift.DataError;
import sand.datalayer.thrift.DataErrorCode;

/**
 * Bytes per application in the global layer (issue 26, finding 12): a grain writing values in a loop is told
 * QUOTA_EXCEEDED naming the quota once its application stores app.global.max.bytes; deleting frees; the count is
 * shared by hosts; an application may lower its own quota, never raise it; another application is not affected.
 */
class StorageQuotaTest {
  private static final int VALUE = 1000;
  private static final long QUOTA = 10_000;

  private static Layers layers() {
    return new Layers(LocalDataLayer.Options.defaults()
        .withValueMaxBytes(VALUE)
        .withRetryMaxBackoff(Duration.ofMillis(50))
        .withGlobalMaxBytes(QUOTA));
  }

  /** Puts of VALUE bytes through the Thrift face until refused; how many were accepted, and the refusal. */
  private static DataError fill(
      Layers t, DataLayerService service, String cred, String prefix, int[] accepted)
      throws Exception {
    for (int i = 0; i < 1000; i++) {
      try {
        service.put(cred, prefix + i, ByteBuffer.wrap(new byte[VALUE]));
        accepted[0]++;
      } catch (DataError e) {
        return e;
      }
      assertTrue(t.layer.flush("appa", 10_000)
          && t.layer.flush("appb", 10_000)); // counted once in the global layer
    }
    throw new AssertionError("1000 puts and never QUOTA_EXCEEDED");
  }

  private static void awaitRefresh() throws InterruptedException {
    Thread.sleep(StorageQuota.REFRESH_MS + 100);
  }

  @Test
  void writesInALoopAreRefusedAtTheQuotaAndDeletesFreeIt() throws Exception {
    try (Layers t = layers()) {
      DataLayerService service = new DataLayerService(t.layer);
      int[] accepted = {0};
      DataError e = fill(t, service, Layers.CRED_A, "k", accepted);
      assertEquals(DataErrorCode.QUOTA_EXCEEDED, e.code);
      assertTrue(
          e.message.contains("app.global.max.bytes") && e.message.contains("10000"), e.message);
      // each value counts with its key (2-3 bytes): 9 fit in 10,000 bytes, the 10th would not
      assertEquals(9, accepted[0]);
      StorageQuota.Usage used = t.layer.storage("appa");
      assertEquals(9 * VALUE + 9 * 2, used.usedBytes());
      assertEquals(QUOTA, used.maxBytes());
      assertEquals(used.usedBytes(), t.global.storedBytes("appa"));
      assertEquals(QUOTA, t.global.storageMax("appa").orElseThrow());
      // another application stores as before
      service.put(Layers.CRED_B, "x", ByteBuffer.wrap(new byte[VALUE]));
      // deleting keys frees their bytes; a replaced value counts only its new size
      for (int i = 0; i < 5; i++) {
        service.remove(Layers.CRED_A, "k" + i);
      }
      assertTrue(t.layer.flush(
          "appa", 10_000)); // until they reach the global layer, deletes wait as writes do
      service.put(Layers.CRED_A, "k5", ByteBuffer.wrap(new byte[10]));
      assertTrue(t.layer.flush("appa", 10_000));
      assertEquals(3 * (VALUE + 2) + 12, t.global.storedBytes("appa"));
      service.put(Layers.CRED_A, "again", ByteBuffer.wrap(new byte[VALUE]));
    }
  }

  @Test
  void writesOnTheirWayCountBeforeTheyReachTheGlobalLayer() throws Exception {
    try (Layers t = layers()) {
      DataLayerService service = new DataLayerService(t.layer);
      t.global.setWritesFailing(true); // Cassandra slow or away: the writes wait on this host
      int accepted = 0;
      DataError refused = null;
      for (int i = 0; i < 100 && refused == null; i++) {
        try {
          service.put(Layers.CRED_A, "k" + i, ByteBuffer.wrap(new byte[VALUE]));
          accepted++;
        } catch (DataError e) {
          refused = e;
        }
      }
      assertTrue(
          refused != null && refused.code == DataErrorCode.QUOTA_EXCEEDED, String.valueOf(refused));
      assertTrue(refused.message.contains("app.global.max.bytes"), refused.message);
      // each write waits with its bookkeeping (names, the write's own record), so fewer than 10 fit
      // in 10,000 bytes
      assertTrue(accepted >= 5 && accepted < 10, "accepted " + accepted);
      assertEquals(0, t.global.storedBytes("appa"));
      t.global.setWritesFailing(false);
    }
  }

  @Test
  void mapEntriesCountAndDeletingTheMapFreesThem() throws Exception {
    try (Layers t = layers()) {
      DataLayerService service = new DataLayerService(t.layer);
      for (int i = 0; i < 9; i++) {
        service.putMapEntry(Layers.CRED_A, "m", "e" + i, ByteBuffer.wrap(new byte[VALUE]));
        assertTrue(t.layer.flush("appa", 10_000));
      }
      DataError e = assertThrows(
          DataError.class,
          () -> service.putMapEntry(Layers.CRED_A, "m", "e9", ByteBuffer.wrap(new byte[VALUE])));
      assertEquals(DataErrorCode.QUOTA_EXCEEDED, e.code);
      service.deleteMap(Layers.CRED_A, "m");
      assertTrue(t.layer.flush("appa", 10_000));
      assertEquals(0, t.global.storedBytes("appa"));
      service.putMapEntry(Layers.CRED_A, "m", "e9", ByteBuffer.wrap(new byte[VALUE]));
    }
  }

  @Test
  void setItemsCountOnceAndDeletingTheSetFreesThem() throws Exception {
    try (Layers t = layers()) {
      DataLayerService service = new DataLayerService(t.layer);
      String item = "i".repeat(900);
      int added = 0;
      DataError refused = null;
      for (int i = 0; i < 100 && refused == null; i++) {
        try {
          service.addSetEntry(Layers.CRED_A, "s", i + item);
          added++;
          assertTrue(t.layer.flush("appa", 10_000));
        } catch (DataError e) {
          refused = e;
        }
      }
      assertTrue(
          refused != null && refused.code == DataErrorCode.QUOTA_EXCEEDED, String.valueOf(refused));
      assertEquals(11, added); // ten of 901 bytes, one of 902
      service.removeSetEntry(Layers.CRED_A, "s", "0" + item);
      assertTrue(t.layer.flush(
          "appa", 10_000)); // (the remove, on its way, counts against the quota until then)
      service.addSetEntry(Layers.CRED_A, "s", "1" + item); // there already: counted once
      assertTrue(t.layer.flush("appa", 10_000));
      assertEquals(9 * 901 + 902, t.global.storedBytes("appa"));
      service.deleteSet(Layers.CRED_A, "s");
      assertTrue(t.layer.flush("appa", 10_000));
      assertEquals(0, t.global.storedBytes("appa"));
    }
  }

  @Test
  void theCountIsSharedByHosts() throws Exception {
    try (Layers t = layers()) {
      DataLayerService service = new DataLayerService(t.layer);
      int[] accepted = {0};
      fill(t, service, Layers.CRED_A, "k", accepted);
      try (LocalDataLayer other = t.otherHost()) {
        DataError e = assertThrows(
            DataError.class,
            () -> new DataLayerService(other)
                .put(Layers.CRED_A, "elsewhere", ByteBuffer.wrap(new byte[VALUE])));
        assertEquals(DataErrorCode.QUOTA_EXCEEDED, e.code);
      }
    }
  }

  @Test
  void anApplicationMayLowerItsOwnQuotaButNotRaiseIt() throws Exception {
    try (Layers t = layers()) {
      DataLayerService service = new DataLayerService(t.layer);
      service.createCounter(Layers.CRED_A, StorageQuota.OWN_LIMIT, 2500);
      service.createCounter(Layers.CRED_B, StorageQuota.OWN_LIMIT, 1_000_000);
      assertTrue(t.layer.flush("appa", 10_000) && t.layer.flush("appb", 10_000));
      awaitRefresh();
      int[] accepted = {0};
      DataError e = fill(t, service, Layers.CRED_A, "k", accepted);
      assertEquals(2, accepted[0]);
      assertTrue(e.message.contains(StorageQuota.OWN_LIMIT), e.message);
      int[] acceptedB = {0};
      fill(t, service, Layers.CRED_B, "k", acceptedB);
      assertEquals(9, acceptedB[0]); // the operator's quota holds
    }
  }
}
