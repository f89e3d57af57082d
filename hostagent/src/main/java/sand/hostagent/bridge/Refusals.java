package sand.hostagent.bridge;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import sand.hostagent.bridge.HostAgentQueueProcessor.Refusal;

/** Reports (or parts of them) refused, counted by application and fixed reason: a metric's labels. */
final class Refusals {
  private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();

  void refuse(String app, Refusal why) {
    counts.computeIfAbsent(app + "\u0000" + why.label(), k -> new LongAdder()).increment();
  }

  /** (application, reason) → how many, in order. */
  Map<List<String>, Long> snapshot() {
    Map<List<String>, Long> out = new TreeMap<>(
        Comparator.comparing((List<String> k) -> k.get(0)).thenComparing(k -> k.get(1)));
    counts.forEach((k, v) -> {
      int i = k.indexOf('\u0000');
      out.put(List.of(k.substring(0, i), k.substring(i + 1)), v.sum());
    });
    return out;
  }
}
