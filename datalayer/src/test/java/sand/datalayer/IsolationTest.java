package sand.datalayer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.datalayer.Layers.bytes;
import static sand.datalayer.Layers.text;

import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import sand.datalayer.DataLayerException.Code;

/** Each application reaches only its own data; the application comes from the credential only. */
class IsolationTest {
  private final Layers t = new Layers();

  @AfterEach
  void close() {
    t.close();
  }

  @Test
  void unknownOrMissingCredentialIsUnauthorized() {
    assertEquals(
        Code.UNAUTHORIZED,
        assertThrows(
                DataLayerException.class, () -> t.layer.forCredential("not-a-credential-at-all"))
            .code());
    assertEquals(
        Code.UNAUTHORIZED,
        assertThrows(DataLayerException.class, () -> t.layer.forCredential("")).code());
    assertEquals(
        Code.UNAUTHORIZED,
        assertThrows(DataLayerException.class, () -> t.layer.forCredential(null))
            .code());
  }

  @Test
  void aManagementRequestSpeaksForTheCredentialsApplicationOnly() {
    List<String> asked = new java.util.ArrayList<>();
    t.layer.onManagement((app, request) -> {
      asked.add(app);
      return new byte[] {'{', '}'};
    });
    t.layer.manage(Layers.CRED_A, bytes("{\"action\":\"getWorkflows\",\"data\":{}}"));
    assertEquals(List.of("appa"), asked);
    assertEquals(
        Code.UNAUTHORIZED,
        assertThrows(DataLayerException.class, () -> t.layer.manage(Layers.AGENT, bytes("{}")))
            .code());
    assertEquals(
        Code.TOO_LARGE,
        assertThrows(
                DataLayerException.class,
                () -> t.layer.manage(
                    Layers.CRED_A, new byte[LocalDataLayer.MANAGEMENT_MAX_BYTES + 1]))
            .code());
    assertEquals(List.of("appa"), asked);
  }

  @Test
  void theHostAgentCredentialNamesNoApplication() {
    assertEquals(
        Code.UNAUTHORIZED,
        assertThrows(DataLayerException.class, () -> t.layer.forCredential(Layers.AGENT))
            .code());
  }

  @Test
  void onlyTheHostAgentGrantsAndRevokes() {
    assertEquals(
        Code.UNAUTHORIZED,
        assertThrows(
                DataLayerException.class,
                () ->
                    t.layer.grantApplication(Layers.CRED_A, "appb", "stolen-credential-0123456789"))
            .code());
    assertEquals(
        Code.UNAUTHORIZED,
        assertThrows(
                DataLayerException.class, () -> t.layer.revokeApplication(Layers.CRED_A, "appb"))
            .code());
    assertEquals(
        Code.BAD_REQUEST,
        assertThrows(
                DataLayerException.class,
                () -> t.layer.grantApplication(Layers.AGENT, "appc", "short"))
            .code());
  }

  @Test
  void sameNamesInTwoApplicationsAreTwoItems() {
    t.a.put("k", bytes("a's"));
    t.a.putMapEntry("m", "x", bytes("a's"));
    t.a.addSetEntry("s", "a's");
    t.a.createCounter("c", 1);
    assertTrue(t.b.get("k").isEmpty());
    assertTrue(t.b.getMapEntry("m", "x").isEmpty());
    assertFalse(t.b.containsSetItem("s", "a's"));
    assertEquals(
        Code.NOT_FOUND,
        assertThrows(DataLayerException.class, () -> t.b.getCounterValue("c")).code());
    assertEquals(List.of(), t.b.listKeys("", 10));

    t.b.put("k", bytes("b's"));
    assertEquals("a's", text(t.a.get("k").orElseThrow()));
    assertEquals("b's", text(t.b.get("k").orElseThrow()));

    // In the global layer too, and through a second host with empty memory.
    assertTrue(t.a.flush(10_000) && t.b.flush(10_000));
    assertEquals("a's", text(t.global.readKv("appa", "k").orElseThrow()));
    assertEquals("b's", text(t.global.readKv("appb", "k").orElseThrow()));
    try (LocalDataLayer other = t.otherHost()) {
      assertEquals("b's", text(other.forCredential(Layers.CRED_B).get("k").orElseThrow()));
      assertTrue(other.forCredential(Layers.CRED_B).getMapEntry("m", "x").isEmpty());
    }
  }

  @Test
  void revokedCredentialIsRefusedAndTheWritesAreKept() {
    t.a.put("k", bytes("v"));
    t.layer.revokeApplication(Layers.AGENT, "appa");
    assertEquals(
        Code.UNAUTHORIZED,
        assertThrows(DataLayerException.class, () -> t.layer.forCredential(Layers.CRED_A))
            .code());
    assertTrue(t.layer.flush("appa", 10_000));
    assertEquals("v", text(t.global.readKv("appa", "k").orElseThrow()));
    // Granted again (redeploy), memory starts empty and reads through.
    t.layer.grantApplication(Layers.AGENT, "appa", Layers.CRED_A);
    assertEquals("v", text(t.layer.forCredential(Layers.CRED_A).get("k").orElseThrow()));
  }
}
