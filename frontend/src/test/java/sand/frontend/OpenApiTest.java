package sand.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import sand.frontend.internal.Json;
import sand.frontend.internal.Router;

/** The OpenAPI document kept in the repo lists exactly the routes the server has. */
class OpenApiTest {
  @Test
  void documentPathsAndMethodsEqualTheRoutes() throws Exception {
    try (TestFrontend fe = new TestFrontend()) {
      Set<String> served = fe.server.getBean(Router.class).routes().stream()
          .map(r -> r.method() + " " + r.template())
          .collect(Collectors.toCollection(TreeSet::new));
      Set<String> documented = new TreeSet<>();
      var paths = Json.MAPPER.readTree(SystemHandler.openapi()).path("paths");
      paths
          .fieldNames()
          .forEachRemaining(p -> paths
              .path(p)
              .fieldNames()
              .forEachRemaining(m -> documented.add(m.toUpperCase(Locale.ROOT) + " " + p)));
      assertEquals(served, documented);
    }
  }
}
