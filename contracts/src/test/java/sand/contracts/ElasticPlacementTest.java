package sand.contracts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ElasticPlacementTest {
  @Test
  void maxHostsMakesTheSchedulerPlaceIt() {
    assertEquals(Optional.empty(), ElasticPlacement.of("{\"timeout_s\": 5}"));
    assertEquals(
        Optional.of(new ElasticPlacement(1, 3, Duration.ofSeconds(60))),
        ElasticPlacement.of("{\"max_hosts\": 3}"));
    assertEquals(
        Optional.of(new ElasticPlacement(2, 4, Duration.ofMillis(1500))),
        ElasticPlacement.of("{\"max_hosts\": 4, \"min_hosts\": 2, \"scale_in_after_s\": 1.5}"));
  }

  @Test
  void badValuesAreRefusedWithWhatToWrite() {
    for (String[] c : new String[][] {
      {"{\"max_hosts\": 0}", "from 1 to"},
      {"{\"max_hosts\": 2.5}", "whole number"},
      {"{\"max_hosts\": \"3\"}", "whole number"},
      {"{\"max_hosts\": 2, \"min_hosts\": 3}", "above max_hosts=2"},
      {"{\"min_hosts\": 2}", "need max_hosts"},
      {"{\"max_hosts\": 2, \"scale_in_after_s\": 0}", "from 1 to 86400"},
    }) {
      IllegalArgumentException e = assertThrows(
          IllegalArgumentException.class, () -> ApplicationSettings.fromJson(c[0]), c[0]);
      assertTrue(e.getMessage().contains(c[1]), c[0] + ": " + e.getMessage());
    }
  }

  @Test
  void theOperatorsHostsCapCapsIt() {
    ElasticPlacement p = new ElasticPlacement(3, 5, Duration.ofSeconds(60));
    assertEquals(new ElasticPlacement(2, 2, Duration.ofSeconds(60)), p.capped(2));
    assertEquals(p, p.capped(0));
  }

  @Test
  void aLoadReportReadsBackAsWritten() {
    LoadReport r = new LoadReport(
        42.5, 4096, 1024, 2, 1, java.util.Map.of("app", new LoadReport.AppLoad(3, 1, 99, false)));
    assertEquals(r, LoadReport.parse(r.toJson()));
    assertEquals(0, LoadReport.parse("not json").app("app").busy());
  }
}
