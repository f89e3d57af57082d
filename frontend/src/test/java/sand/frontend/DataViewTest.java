package sand.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** GET /api/v1/apps/{app}/data: the application's keys by prefix, a page at a time, one value; read-only, owner's. */
class DataViewTest {
  TestFrontend fe;
  String alice;
  String id;

  @BeforeEach
  void start() throws Exception {
    fe = new TestFrontend();
    alice = fe.signUp("alice");
    assertEquals(
        200, fe.call("PUT", "/api/v1/apps/shop", alice, TestFrontend.HELLO).status());
    id = fe.store.appName("shop").orElseThrow().appId();
    for (String k : List.of("order:1", "order:2", "order:3", "orders", "user:ann", "a")) {
      fe.data.writeKv(id, k, ("v-" + k).getBytes(StandardCharsets.UTF_8));
    }
    fe.data.writeKv(id, "blob", new byte[] {(byte) 0xff, 0, 1});
    fe.data.writeKv("another-app", "order:9", new byte[] {1});
  }

  @AfterEach
  void stop() throws Exception {
    fe.close();
  }

  private List<String> keys(JsonNode page) {
    List<String> out = new ArrayList<>();
    page.path("keys").forEach(k -> out.add(k.asText()));
    return out;
  }

  @Test
  void keysByPrefixAPageAtATime() throws Exception {
    JsonNode p1 = fe.call("GET", "/api/v1/apps/shop/data?prefix=order:&limit=2", alice, null)
        .json();
    assertEquals(List.of("order:1", "order:2"), keys(p1));
    JsonNode p2 = fe.call(
            "GET",
            "/api/v1/apps/shop/data?prefix=order:&limit=2&cursor="
                + p1.path("next").asText(),
            alice,
            null)
        .json();
    assertEquals(List.of("order:3"), keys(p2));
    assertTrue(p2.path("next").isNull());
    assertEquals(
        List.of("a", "blob", "order:1", "order:2", "order:3", "orders", "user:ann"),
        keys(fe.call("GET", "/api/v1/apps/shop/data", alice, null).json()));
  }

  @Test
  void oneValueAsTextOrBase64() throws Exception {
    JsonNode v =
        fe.call("GET", "/api/v1/apps/shop/data?key=user:ann", alice, null).json();
    assertEquals("v-user:ann", v.path("value").asText());
    assertEquals("utf-8", v.path("encoding").asText());
    JsonNode b = fe.call("GET", "/api/v1/apps/shop/data?key=blob", alice, null).json();
    assertEquals("base64", b.path("encoding").asText());
    assertEquals("/wAB", b.path("value").asText());
    assertEquals(
        404, fe.call("GET", "/api/v1/apps/shop/data?key=nope", alice, null).status());
  }

  @Test
  void badQueriesAre400AndAnotherAccountGets404() throws Exception {
    assertEquals(
        400, fe.call("GET", "/api/v1/apps/shop/data?limit=0", alice, null).status());
    assertEquals(
        400, fe.call("GET", "/api/v1/apps/shop/data?cursor=a*b", alice, null).status());
    assertEquals(
        400,
        fe.call("GET", "/api/v1/apps/shop/data?prefix=user:&cursor=b3JkZXI6MQ", alice, null)
            .status());
    assertEquals(
        404, fe.call("GET", "/api/v1/apps/shop/data", fe.signUp("bob"), null).status());
  }
}
