package sand.frontend.knix;

import static sand.frontend.knix.Base64Text.decode;
import static sand.frontend.knix.Base64Text.repair;
import static sand.frontend.knix.KnixRequests.enc;
import static sand.frontend.knix.KnixRequests.text;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Locale;
import sand.cluster.ClusterStore;
import sand.cluster.FrontendTables.KnixRecord;
import sand.contracts.TopicNames;
import sand.frontend.internal.Ids;
import sand.frontend.internal.Json;
import sand.frontend.internal.LoopbackApi;
import sand.frontend.knix.KnixManagement.Failure;

/**
 * KNIX's function actions: a KNIX function is a grain of the caller's account, stored through SAND's grain API
 * ({@link #publish}) whenever its code, zip or requirements change; what KNIX keeps that SAND does not (its id, the
 * text code, zip chunks, requirements) is kept as {@link KnixRecord}s.
 */
final class KnixFunctions {
  static final String FUNCTION = "function";
  /** What a zip holds at most unless {@link #limitZips} says otherwise (the frontend's default body limit). */
  static final long DEFAULT_MAX_ZIP_BYTES = 10L << 20;

  private final ClusterStore store;
  private final LoopbackApi.Api api;
  private final Clock clock;
  private long maxZipBytes = DEFAULT_MAX_ZIP_BYTES;
  private long maxUnpackedBytes = 4 * DEFAULT_MAX_ZIP_BYTES;

  KnixFunctions(ClusterStore store, LoopbackApi.Api api, Clock clock) {
    this.store = store;
    this.api = api;
    this.clock = clock;
  }

  /** See {@link KnixManagement#limitZips}. */
  void limitZips(long maxZip, long maxUnpacked) {
    this.maxZipBytes = maxZip;
    this.maxUnpackedBytes = maxUnpacked;
  }

  /** Forget every function of an account (its account is deleted). */
  static void forgetAll(ClusterStore store, String account) {
    for (KnixRecord r : store.knixRecords(account, FUNCTION)) {
      store.deleteKnixRecords(account, zipKind(r.id()));
    }
    store.deleteKnixRecords(account, FUNCTION);
  }

  ObjectNode getFunctions(Caller c) {
    ObjectNode out = Json.object();
    ArrayNode list = out.putArray("functions");
    for (KnixRecord r : store.knixRecords(c.account(), FUNCTION)) {
      list.add(functionView(r.id(), Json.parse(r.value(), FUNCTION)));
    }
    return out.put("message", "Found " + list.size() + " functions.");
  }

  private static ObjectNode functionView(String id, JsonNode f) {
    return Json.object()
        .put("id", id)
        .put("name", f.path("name").asText())
        .put("runtime", f.path("runtime").asText())
        .put("modified", f.path("modified").asDouble());
  }

  ObjectNode addFunction(Caller c, JsonNode fn) {
    String name = text(fn, "name", "function");
    checkFunctionName(c, name, null);
    String id = Ids.hex(16);
    ObjectNode f = Json.object()
        .put("name", name)
        .put("runtime", fn.path("runtime").asText("Python 3.6"))
        .put("modified", now())
        .put("code", "")
        .put("requirements", "")
        .put("metadata", "")
        .put("chunks", -1);
    checkRuntime(f.path("runtime").asText());
    store.putKnixRecord(new KnixRecord(c.account(), FUNCTION, id, Json.bytes(f)));
    return Json.object().put("message", "Function added.").set("function", functionView(id, f));
  }

  private void checkFunctionName(Caller c, String name, String except) {
    if (name.equals("end") || name.equals("exit") || !TopicNames.validGrain(name)) {
      throw new Failure(
          "Invalid function name '" + name + "': a SAND grain name is 1-128 of A-Z a-z 0-9 _ . -, "
              + "starting with a letter or digit, and not 'end' or 'exit'");
    }
    for (KnixRecord r : store.knixRecords(c.account(), FUNCTION)) {
      if (!r.id().equals(except)
          && name.equals(Json.parse(r.value(), FUNCTION).path("name").asText())) {
        throw new Failure("A function named '" + name + "' exists already (id " + r.id() + ").");
      }
    }
  }

  private static void checkRuntime(String runtime) {
    if (!runtime.toLowerCase(Locale.ROOT).contains("python")) {
      throw new Failure("Unsupported runtime '" + runtime + "': SAND runs Python grains only");
    }
  }

  private ObjectNode functionRecord(Caller c, JsonNode fn) {
    String id = text(fn, "id", "function");
    return store
        .knixRecord(c.account(), FUNCTION, id)
        .map(r -> (ObjectNode) Json.parse(r.value(), FUNCTION))
        .orElseThrow(() -> new Failure("Function with id '" + id + "' does not exist."));
  }

  private void saveFunction(Caller c, String id, ObjectNode f) {
    f.put("modified", now());
    store.putKnixRecord(new KnixRecord(c.account(), FUNCTION, id, Json.bytes(f)));
  }

  ObjectNode modifyFunction(Caller c, JsonNode fn) {
    String id = text(fn, "id", "function");
    ObjectNode f = functionRecord(c, fn);
    String old = f.path("name").asText();
    String name = fn.path("name").asText(old);
    if (fn.has("runtime")) {
      checkRuntime(fn.path("runtime").asText());
      f.put("runtime", fn.path("runtime").asText());
    }
    if (!name.equals(old)) {
      checkFunctionName(c, name, id);
      f.put("name", name);
      publish(c, id, f);
      LoopbackApi.Answer a =
          api.call("DELETE", "/api/v1/grains/" + enc(old), c.token(), null, null);
      if (!a.ok() && a.status() != 404) {
        throw new Failure("Couldn't rename function: " + a.message());
      }
    }
    saveFunction(c, id, f);
    return Json.object().put("message", "Function modified.").set("function", functionView(id, f));
  }

  ObjectNode deleteFunction(Caller c, JsonNode fn) {
    String id = text(fn, "id", "function");
    ObjectNode f = functionRecord(c, fn);
    // KNIX lets a function go while a deployed workflow runs it (the workflow keeps its copy): so
    // does SAND's API
    // when asked to keep deployed applications running the code they were deployed with
    LoopbackApi.Answer a = api.call(
        "DELETE",
        "/api/v1/grains/" + enc(f.path("name").asText()) + "?keep_deployed=1",
        c.token(),
        null,
        null);
    if (!a.ok() && a.status() != 404) {
      throw new Failure("Couldn't delete function: " + a.message());
    }
    store.deleteKnixRecords(c.account(), zipKind(id));
    store.deleteKnixRecord(c.account(), FUNCTION, id);
    return Json.object().put("message", "Function deleted.");
  }

  ObjectNode uploadFunctionCode(Caller c, JsonNode fn) {
    String id = text(fn, "id", "function");
    ObjectNode f = functionRecord(c, fn);
    String format = fn.path("format").asText("text");
    String code = repair(fn.path("code").asText(""));
    switch (format) {
      case "text" -> {
        decode(code, "code");
        f.put("code", code);
        publish(c, id, f);
      }
      case "zip" -> {
        int chunk = fn.path("chunk").asInt(-1);
        if (chunk < 0 || chunk > 10_000) {
          throw new Failure("A zip chunk needs its number: function.chunk (0, 1, ...)");
        }
        store.putKnixRecord(new KnixRecord(
            c.account(), zipKind(id), chunkId(chunk), code.getBytes(StandardCharsets.US_ASCII)));
      }
      default -> throw new Failure("Unknown code format '" + format + "': text or zip");
    }
    saveFunction(c, id, f);
    return Json.object().put("message", "Function code uploaded.");
  }

  ObjectNode uploadZipMetadata(Caller c, JsonNode fn) {
    String id = text(fn, "id", "function");
    ObjectNode f = functionRecord(c, fn);
    int chunks = fn.path("chunks").asInt(-1);
    if (chunks < 1) {
      throw new Failure("function.chunks must be the number of zip chunks uploaded (1 or more)");
    }
    f.put("chunks", chunks).put("metadata", repair(fn.path("metadata").asText("")));
    publish(c, id, f);
    saveFunction(c, id, f);
    return Json.object().put("message", "Function zip metadata uploaded.");
  }

  ObjectNode getZipMetadata(Caller c, JsonNode fn) {
    ObjectNode f = functionRecord(c, fn);
    return Json.object()
        .put("message", "Function zip metadata.")
        .set(
            "function",
            Json.object()
                .put("id", fn.path("id").asText())
                .put("metadata", f.path("metadata").asText(""))
                .put("chunks", f.path("chunks").asInt(-1)));
  }

  ObjectNode getFunctionCode(Caller c, JsonNode fn) {
    ObjectNode f = functionRecord(c, fn);
    return Json.object()
        .put("message", "Function code.")
        .set(
            "function",
            Json.object()
                .put("id", fn.path("id").asText())
                .put("code", f.path("code").asText(""))
                .put("format", "text"));
  }

  ObjectNode getFunctionZip(Caller c, JsonNode fn) {
    String id = text(fn, "id", "function");
    ObjectNode f = functionRecord(c, fn);
    int chunk = fn.path("chunk").asInt(-1);
    if (chunk < 0 || chunk >= f.path("chunks").asInt(-1)) {
      throw new Failure("No zip chunk " + chunk + " (the function has "
          + Math.max(0, f.path("chunks").asInt(-1)) + ")");
    }
    String code = store
        .knixRecord(c.account(), zipKind(id), chunkId(chunk))
        .map(r -> new String(r.value(), StandardCharsets.US_ASCII))
        .orElse("");
    return Json.object()
        .put("message", "Function zip chunk.")
        .set(
            "function",
            Json.object().put("id", id).put("chunk", chunk).put("code", code).put("format", "zip"));
  }

  ObjectNode uploadRequirements(Caller c, JsonNode fn) {
    String id = text(fn, "id", "function");
    ObjectNode f = functionRecord(c, fn);
    String req = repair(fn.path("requirements").asText(""));
    decode(req, "requirements");
    f.put("requirements", req);
    publish(c, id, f);
    saveFunction(c, id, f);
    return Json.object().put("message", "Function requirements uploaded.");
  }

  ObjectNode getRequirements(Caller c, JsonNode fn) {
    ObjectNode f = functionRecord(c, fn);
    return Json.object()
        .put("message", "Function requirements.")
        .set(
            "function",
            Json.object()
                .put("id", fn.path("id").asText())
                .put("requirements", f.path("requirements").asText("")));
  }

  /**
   * Store the function as the account's grain of its name: its text code alone as Python source; with a zip or
   * requirements, a zip of the uploaded zip's files, the text code as {@code <name>.py} (KNIX's rule: the text code
   * wins over the zip's copy) and the requirements as {@code requirements.txt}. Nothing to store yet (no code): no-op.
   */
  private void publish(Caller c, String id, ObjectNode f) {
    String name = f.path("name").asText();
    byte[] code = decode(f.path("code").asText(""), "code");
    byte[] req = decode(f.path("requirements").asText(""), "requirements");
    int chunks = f.path("chunks").asInt(-1);
    boolean hasCode = !new String(code, StandardCharsets.UTF_8).isBlank();
    LoopbackApi.Answer a;
    if (chunks < 1 && req.length == 0) {
      if (!hasCode) {
        return;
      }
      a = api.call("PUT", "/api/v1/grains/" + enc(name), c.token(), "text/x-python", code);
    } else {
      a = api.call(
          "PUT",
          "/api/v1/grains/" + enc(name),
          c.token(),
          "application/zip",
          ZipAssembly.zip(
              name,
              chunks < 1 ? null : assembled(c, id, chunks),
              hasCode ? code : null,
              req,
              maxUnpackedBytes));
    }
    if (!a.ok()) {
      throw new Failure("Function '" + name + "' was not stored: " + a.message());
    }
  }

  private byte[] assembled(Caller c, String id, int chunks) {
    return ZipAssembly.join(
        i -> store.knixRecord(c.account(), zipKind(id), chunkId(i)).map(KnixRecord::value),
        chunks,
        maxZipBytes);
  }

  private static String zipKind(String functionId) {
    return "zip:" + functionId;
  }

  private static String chunkId(int chunk) {
    return String.format("%06d", chunk);
  }

  private double now() {
    return clock.millis() / 1000.0;
  }
}
