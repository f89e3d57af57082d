package sand.frontend.invoke;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.PrimitiveIterator;
import java.util.stream.DoubleStream;
import org.junit.jupiter.api.Test;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Json;

/** An alias's rules, its choice between two versions (by the numbers it is given), and qualifiers. */
class AliasTest {
  private static Alias parse(String name, String json) {
    return Alias.of(name, Json.parse(json.getBytes(), "alias"));
  }

  @Test
  void aCanaryTakesItsShareOfTheNumbersDrawn() {
    Alias a = parse("prod", "{\"version\": 1, \"weights\": {\"2\": 0.25}}");
    assertEquals(2, a.choose(0.0));
    assertEquals(2, a.choose(0.2499));
    assertEquals(1, a.choose(0.25));
    assertEquals(1, a.choose(0.99));
    PrimitiveIterator.OfDouble grid =
        DoubleStream.iterate(0, d -> d + 0.01).limit(100).iterator();
    int canary = 0;
    while (grid.hasNext()) {
      canary += a.choose(grid.nextDouble()) == 2 ? 1 : 0;
    }
    assertEquals(25, canary, "a quarter of evenly spread numbers");
    assertEquals(1, parse("prod", "{\"version\": 1}").choose(0.0), "no canary: always the version");
    assertEquals(2, parse("c", "{\"version\": 1, \"weights\": {\"2\": 1}}").choose(0.999));
  }

  @Test
  void anAliasSurvivesItsRecord() {
    Alias a = parse("canary", "{\"version\": 3, \"weights\": {\"4\": 0.1}}");
    assertEquals(a, Alias.decode("canary", a.encode()));
    assertEquals("{\"version\":3,\"weights\":{\"4\":0.1}}", new String(a.encode()));
  }

  @Test
  void badAliasesSayWhatIsWrong() {
    for (String name : List.of("", "Prod", "3", "-x", "a b", "x".repeat(33), "a@b")) {
      var e = assertThrows(IllegalArgumentException.class, () -> Alias.checkName(name), name);
      assertTrue(e.getMessage().contains(Alias.NAME_RULE), e.getMessage());
    }
    assertEquals("x".repeat(32), Alias.checkName("x".repeat(32)));
    for (String body : List.of(
        "[]",
        "{}",
        "{\"version\": \"1\"}",
        "{\"version\": 1.5}",
        "{\"version\": 0}",
        "{\"version\": 1, \"weights\": {\"1\": 0.5}}",
        "{\"version\": 1, \"weights\": {\"2\": 1.5}}",
        "{\"version\": 1, \"weights\": {\"2\": -0.1}}",
        "{\"version\": 1, \"weights\": {\"2\": \"x\"}}",
        "{\"version\": 1, \"weights\": {\"x\": 0.1}}",
        "{\"version\": 1, \"weights\": {\"2\": 0.1, \"3\": 0.1}}",
        "{\"version\": 1, \"weights\": [0.1]}")) {
      assertThrows(IllegalArgumentException.class, () -> parse("prod", body), body);
    }
  }

  private static AppDirectory.Target app(int version, Map<String, Alias> aliases) {
    return new AppDirectory.Target(
        "shop",
        "a000000000001",
        "alice",
        "greet",
        0,
        List.of(),
        InvokeAuth.Rule.PUBLIC,
        version,
        aliases);
  }

  @Test
  void aQualifierLeadsToTheRunningVersionOrSaysWhy() {
    Alias prod = new Alias("prod", 2, 0, 0);
    Alias old = new Alias("old", 1, 0, 0);
    Alias split = new Alias("split", 2, 1, 0.5);
    var app = app(2, Map.of("prod", prod, "old", old, "split", split));
    Qualifier.check(app, null, () -> 0.5);
    Qualifier.check(app, "prod", () -> 0.5);
    Qualifier.check(app, "2", () -> 0.5);
    assertEquals(409, status(() -> Qualifier.check(app, "1", () -> 0.5)));
    assertEquals(409, status(() -> Qualifier.check(app, "old", () -> 0.5)));
    assertEquals(409, status(() -> Qualifier.check(app, "split", () -> 0.9)));
    assertEquals(404, status(() -> Qualifier.check(app, "beta", () -> 0.5)));
    for (String bad : List.of("", "0", "x!", "9999999999", "Prod", "\u0663")) {
      assertEquals(400, status(() -> Qualifier.check(app, bad, () -> 0.5)), bad);
    }
    var e = assertThrows(ApiException.class, () -> Qualifier.check(app, "old", () -> 0.5));
    assertTrue(e.getMessage().contains("sand alias set shop <alias> 2"), e.getMessage());
    assertEquals("shop", Qualifier.appName("shop@prod"));
    assertEquals("prod", Qualifier.of("shop@prod"));
    assertEquals(null, Qualifier.of("shop"));
  }

  private static int status(Runnable r) {
    return assertThrows(ApiException.class, r::run).status();
  }
}
