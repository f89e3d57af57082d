package sand.datalayer.internal;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import sand.datalayer.DataKind;
import sand.datalayer.DataLayerException;
import sand.datalayer.GlobalDataLayer;
import sand.datalayer.GlobalUnavailableException;

/** What one application's stores share: its name, the global layer and the write-behind queue. */
public final class AppContext {
  private final String app;
  private final GlobalDataLayer global;
  private final WriteBehind writeBehind;
  private final Duration readThroughWait;

  public AppContext(String app, GlobalDataLayer global, WriteBehind writeBehind, Duration readThroughWait) {
    this.app = app;
    this.global = global;
    this.writeBehind = writeBehind;
    this.readThroughWait = readThroughWait;
  }

  public String app() {
    return app;
  }

  public GlobalDataLayer global() {
    return global;
  }

  public WriteBehind writeBehind() {
    return writeBehind;
  }

  /** Queue a write of one item; call it while holding the item's lock, so queue order is local order. */
  void backup(DataKind kind, String name, WriteBehind.Write write, boolean replacesWholeValue) {
    writeBehind.submit(new WriteBehind.Item(app, kind, name), write, replacesWholeValue);
  }

  /**
   * Read an item through the global layer (a miss in memory). Writes of the item still on their way
   * there are waited for first (they exist only after this host dropped the application's memory), so
   * a read never returns a value older than one written here. A global layer that cannot answer is
   * UNAVAILABLE for the caller.
   */
  <T> T readThrough(DataKind kind, String name, Function<GlobalDataLayer, T> read) {
    if (name != null) {
      CompletableFuture<Void> earlier = writeBehind.backupOf(new WriteBehind.Item(app, kind, name));
      if (!earlier.isDone()) {
        try {
          earlier.get(readThroughWait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
          throw unavailable(kind, name, "earlier writes of it are still being backed up");
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw unavailable(kind, name, "interrupted");
        }
      }
    }
    try {
      return read.apply(global);
    } catch (GlobalUnavailableException e) {
      throw unavailable(kind, name, e.getMessage());
    }
  }

  private DataLayerException unavailable(DataKind kind, String name, String why) {
    String what = name == null ? "the keys" : kind + " '" + name + "'";
    return new DataLayerException(DataLayerException.Code.UNAVAILABLE, "[app " + app + "] " + what
        + " is not in this host's memory and the global data layer could not be read (" + why
        + "); retry when Cassandra is reachable again");
  }
}
