package sand.frontend;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Semaphore;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.ClusterStore;
import sand.cluster.FrontendTables.KnixRecord;
import sand.contracts.TopicNames;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Call;
import sand.frontend.internal.Json;
import sand.frontend.internal.LoopbackApi;
import sand.frontend.internal.Reply;
import sand.frontend.internal.Router;
import sand.frontend.internal.Throttle;

/**
 * The KNIX door (docs/knix.md): {@code POST /management} with KNIX MicroFunctions' {@code {"action", "data"}}
 * requests, so that KNIX's SDK and CLI ({@code mfn-sdk}, {@code mfn-cli} 0.8.9) work against SAND unchanged.
 *
 * <p>It is a second door into the same rooms: a KNIX function is a SAND grain of the caller's account, a KNIX
 * workflow a SAND application, a KNIX token the account's API key. Every change is made through SAND's own REST
 * API with that key ({@link LoopbackApi}), so the API's checks apply as they do to any client. What KNIX has and
 * SAND does not keep is kept here as {@link KnixRecord}s: logins by e-mail, the KNIX ids of functions and
 * workflows, the pieces of an uploaded function (text code, zip chunks, requirements) and of a workflow (its JSON).
 *
 * <p>Replies are KNIX's: HTTP 200 with {@code {"status": "success", "data": {...}}} or {@code {"status": "failure",
 * "data": {"message": ...}}}.
 */
final class KnixManagement {
  private static final Logger LOG = LoggerFactory.getLogger(KnixManagement.class);
  static final String VERSION = "SAND (KNIX management API as of mfn-sdk 0.8.9)";
  /** Where the execution endpoint of a KNIX workflow is, under its application's path. */
  static final String ENDPOINT_SUFFIX = "/knix";
  private static final String LOGIN_SCOPE = "login";
  private static final String FUNCTION = "function";
  private static final String WORKFLOW = "workflow";
  private static final SecureRandom RANDOM = new SecureRandom();

  /** A request KNIX answers with {@code status: failure}. */
  static final class Failure extends RuntimeException {
    Failure(String message) {
      super(message);
    }
  }

  private final ClusterStore store;
  private final AuthHandler auth;
  private final LoopbackApi.Api api;
  private final KnixStorage storage;
  private final Clock clock;
  private final int iterations;
  private Throttle signUpsPerAddress = new Throttle("sign-ups per client address", "-", 0);
  private Throttle loginsPerAddress = new Throttle("logins per client address", "-", 0);
  private Throttle loginsPerEmail = new Throttle("logins per e-mail", "-", 0);
  /** Password derivations at once: each takes a core for a fraction of a second (PBKDF2, {@link KnixLogins}). */
  private Semaphore hashing = new Semaphore(2, true);
  private int hashSlots = 2;
  private final java.util.concurrent.atomic.AtomicInteger hashWaiters = new java.util.concurrent.atomic.AtomicInteger();
  private volatile JsonNode decoy;
  private long maxZipBytes = DEFAULT_MAX_ZIP_BYTES;
  private long maxUnpackedBytes = 4 * DEFAULT_MAX_ZIP_BYTES;

  KnixManagement(ClusterStore store, AuthHandler auth, LoopbackApi.Api api, KnixStorage storage, Clock clock,
                 int iterations) {
    this.store = store;
    this.auth = auth;
    this.api = api;
    this.storage = storage;
    this.clock = clock;
    this.iterations = iterations;
  }

  /** What a zip holds at most unless {@link #limitZips} says otherwise (the frontend's default body limit). */
  static final long DEFAULT_MAX_ZIP_BYTES = 10L << 20;
  /** How long a login waits for a free derivation slot before it answers 503 busy. */
  static final long HASH_WAIT_MS = 5_000;
  /** Logins that may wait for a slot, per slot; more answer 503 busy at once. */
  static final int WAITERS_PER_SLOT = 8;

  /**
   * Limits on strangers' attempts (issue 26, finding 8): sign-ups per client address, logins per client address and
   * per e-mail; at most {@code hashSlots} password derivations at once (a few more wait up to
   * {@link #HASH_WAIT_MS}; the rest answer 503 busy at once).
   */
  KnixManagement limitLogins(Throttle signUps, Throttle loginsByAddress, Throttle loginsByEmail, int hashSlots) {
    this.signUpsPerAddress = signUps;
    this.loginsPerAddress = loginsByAddress;
    this.loginsPerEmail = loginsByEmail;
    this.hashing = new Semaphore(hashSlots, true);
    this.hashSlots = hashSlots;
    return this;
  }

  /**
   * A function's uploaded zip (its chunks together) is at most {@code maxZipBytes}, and unpacks to at most
   * {@code maxUnpackedBytes} in at most {@link GrainUpload#MAX_ENTRIES} entries: what the grain API takes.
   */
  KnixManagement limitZips(long maxZip, long maxUnpacked) {
    this.maxZipBytes = maxZip;
    this.maxUnpackedBytes = maxUnpacked;
    return this;
  }

  public void routes(Router r) {
    r.add("POST", "/management", false, this::handle);
  }

  /** One password derivation, in one of the few slots (503 busy when none frees up in time). */
  private <T> T hashed(Derivation<T> d) throws KnixLogins.WrongPassword {
    boolean got;
    // a wait holds a Jetty thread: only a few may wait (logins from many addresses must not take every thread)
    if (hashWaiters.incrementAndGet() > WAITERS_PER_SLOT * hashSlots) {
      got = false;
    } else {
      try {
        got = hashing.tryAcquire(HASH_WAIT_MS, java.util.concurrent.TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        got = false;
      }
    }
    hashWaiters.decrementAndGet();
    if (!got) {
      throw new ApiException(503, "busy", "this frontend is checking as many passwords as it can at once; try again "
          + "in a moment", java.util.Map.of(Reply.RETRY_AFTER_S, "1"));
    }
    try {
      return d.run();
    } finally {
      hashing.release();
    }
  }

  @FunctionalInterface
  private interface Derivation<T> {
    T run() throws KnixLogins.WrongPassword;
  }

  private JsonNode decoy() {
    JsonNode d = decoy;
    if (d == null) {
      d = KnixLogins.decoy(iterations);
      decoy = d;
    }
    return d;
  }

  Reply handle(Call call) {
    if (call.body().length == 0) { // not KNIX's client at all: the API's own 400
      throw ApiException.badRequest("the management API needs a JSON body {\"action\": ..., \"data\": {...}} "
          + "(KNIX MicroFunctions' actions, docs/knix.md)");
    }
    JsonNode req;
    try {
      req = call.json("management request");
    } catch (ApiException e) {
      return failure(e.getMessage());
    }
    String action = req.path("action").asText("");
    JsonNode data = req.path("data");
    try {
      ObjectNode out = switch (action) {
        case "version" -> Json.object().put("message", VERSION);
        case "signUp" -> signUp(data.path("user"), call);
        case "logIn" -> logIn(data.path("user"), call);
        default -> {
          String token = data.path("user").path("token").asText("");
          if (token.isEmpty()) {
            throw new Failure("User verification failed: no token (log in first: action logIn)");
          }
          String account;
          try {
            account = auth.account(token);
          } catch (ApiException e) {
            throw new Failure("User verification failed: " + e.getMessage());
          }
          yield authenticated(action, data, new Caller(account, token, call));
        }
      };
      return success(out);
    } catch (Failure e) {
      return failure(e.getMessage());
    } catch (ApiException e) {
      if (e.status() == 429 || e.code().equals("busy")) { // HTTP's own answer, with Retry-After, as the API gives it
        throw e;
      }
      if (e.status() >= 500) {
        LOG.warn("[knix {}] {}", action, e.getMessage());
      }
      return failure(e.getMessage());
    }
  }

  /** Who is calling: the account, its key, and the call (for the endpoints' base URL). */
  record Caller(String account, String token, Call call) {}

  private ObjectNode authenticated(String action, JsonNode data, Caller c) {
    return switch (action) {
      case "deleteAccount" -> deleteAccount(c);
      case "getFunctions" -> getFunctions(c);
      case "addFunction" -> addFunction(c, data.path("function"));
      case "modifyFunction" -> modifyFunction(c, data.path("function"));
      case "deleteFunction" -> deleteFunction(c, data.path("function"));
      case "uploadFunctionCode" -> uploadFunctionCode(c, data.path("function"));
      case "uploadFunctionZipMetadata" -> uploadZipMetadata(c, data.path("function"));
      case "getFunctionZipMetadata" -> getZipMetadata(c, data.path("function"));
      case "getFunctionCode" -> getFunctionCode(c, data.path("function"));
      case "getFunctionZip" -> getFunctionZip(c, data.path("function"));
      case "uploadFunctionRequirements" -> uploadRequirements(c, data.path("function"));
      case "getFunctionRequirements" -> getRequirements(c, data.path("function"));
      case "getWorkflows" -> getWorkflows(c, data.path("workflow"));
      case "addWorkflow" -> addWorkflow(c, data.path("workflow"));
      case "modifyWorkflow" -> modifyWorkflow(c, data.path("workflow"));
      case "deleteWorkflow" -> deleteWorkflow(c, data.path("workflow"));
      case "uploadWorkflowJSON" -> uploadWorkflowJson(c, data.path("workflow"));
      case "getWorkflowJSON" -> getWorkflowJson(c, data.path("workflow"));
      case "deployWorkflow" -> deployWorkflow(c, data.path("workflow"));
      case "undeployWorkflow" -> undeployWorkflow(c, data.path("workflow"));
      case "retrieveAllWorkflowLogs" -> workflowLogs(c, data.path("workflow"));
      case "clearAllWorkflowLogs" -> clearLogs(c, data.path("workflow"));
      case "performStorageAction" -> storage.perform(c.account(), data.path("storage"), wid -> appId(c, wid));
      default -> throw new Failure("Unsupported action: '" + action + "'" + (action.isEmpty() ? " (send {\"action\": "
          + "..., \"data\": {...}})" : "; SAND's KNIX door has no triggers, buckets or sessions (docs/knix.md)"));
    };
  }

  // ---- accounts

  private ObjectNode signUp(JsonNode user, Call call) {
    String email = text(user, "email", "user");
    String password = text(user, "password", "user");
    signUpsPerAddress.take(call.clientAddress());
    String name = user.path("name").asText(email);
    if (email.chars().anyMatch(Character::isWhitespace)) {
      throw new Failure("The e-mail may not contain spaces.");
    }
    if (!store.claimKnixRecord(new KnixRecord(LOGIN_SCOPE, "user", email, Json.bytes(Json.object()
        .put("pending", true))))) {
      throw new Failure("User already exists.");
    }
    try {
      String base = accountName(email);
      for (int attempt = 0; ; attempt++) {
        String account = attempt == 0 ? base : base.substring(0, Math.min(base.length(), 55)) + "-" + hex(3);
        LoopbackApi.Answer a = api.call("POST", "/api/v1/accounts", "", "application/json",
            Json.bytes(Json.object().put("name", account)));
        if (a.status() == 409 && attempt < 5) {
          continue;
        }
        if (!a.ok()) {
          throw new Failure("Sign-up failed: " + a.message());
        }
        String key = a.body().path("api_key").asText();
        ObjectNode login;
        try {
          login = hashed(() -> KnixLogins.record(account, name, password, key, iterations));
        } catch (KnixLogins.WrongPassword e) {
          throw new IllegalStateException(e); // making a record checks no password
        }
        store.putKnixRecord(new KnixRecord(LOGIN_SCOPE, "user", email, Json.bytes(login)));
        LOG.info("[knix] {} signed up as account {}", email, account);
        return Json.object().put("message", "User created successfully.").put("account", account);
      }
    } catch (RuntimeException e) {
      store.deleteKnixRecord(LOGIN_SCOPE, "user", email);
      throw e;
    }
  }

  private ObjectNode logIn(JsonNode user, Call call) {
    String email = text(user, "email", "user");
    String password = text(user, "password", "user");
    // the e-mail's limit first: a flood against one e-mail does not also use up its address's logins
    loginsPerEmail.take(email.toLowerCase(Locale.ROOT));
    loginsPerAddress.take(call.clientAddress());
    JsonNode rec = store.knixRecord(LOGIN_SCOPE, "user", email).map(r -> Json.parse(r.value(), "login"))
        .filter(r -> !r.path("pending").asBoolean(false)).orElse(null);
    String key;
    try {
      // an unknown e-mail is checked against a decoy record: the same work, so the same time, as a known one
      key = hashed(() -> KnixLogins.apiKey(rec == null ? decoy() : rec, password));
      if (rec == null) {
        throw new KnixLogins.WrongPassword();
      }
    } catch (KnixLogins.WrongPassword e) {
      throw new Failure("Authentication failed; wrong username and/or password.");
    }
    String account = rec.path("account").asText();
    return Json.object().put("message", "Successfully logged in.").put("token", key)
        .put("storageEndpoint", "/storage/" + account).put("name", rec.path("name").asText(email))
        .put("email", email).put("account", account);
  }

  private ObjectNode deleteAccount(Caller c) {
    LoopbackApi.Answer a = api.call("DELETE", "/api/v1/accounts/" + c.account(), c.token(), null, null);
    if (!a.ok()) {
      throw new Failure("Couldn't delete account: " + a.message());
    }
    for (KnixRecord r : store.knixRecords(c.account(), FUNCTION)) {
      store.deleteKnixRecords(c.account(), zipKind(r.id()));
    }
    store.deleteKnixRecords(c.account(), FUNCTION);
    store.deleteKnixRecords(c.account(), WORKFLOW);
    for (KnixRecord r : loginsOf(c.account())) {
      store.deleteKnixRecord(LOGIN_SCOPE, "user", r.id());
    }
    return Json.object().put("message", "Account deleted.");
  }

  private List<KnixRecord> loginsOf(String account) {
    return store.knixRecords(LOGIN_SCOPE, "user").stream()
        .filter(r -> account.equals(Json.parse(r.value(), "login").path("account").asText())).toList();
  }

  /** A SAND account name for an e-mail: its letters and digits, the rest as '-'. */
  static String accountName(String email) {
    String s = email.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_-]+", "-").replaceAll("^[^a-z0-9]+", "");
    s = s.length() > 48 ? s.substring(0, 48) : s;
    return s.isEmpty() ? "knix-" + hex(4) : s;
  }

  // ---- functions

  private ObjectNode getFunctions(Caller c) {
    ObjectNode out = Json.object();
    ArrayNode list = out.putArray("functions");
    for (KnixRecord r : store.knixRecords(c.account(), FUNCTION)) {
      list.add(functionView(r.id(), Json.parse(r.value(), FUNCTION)));
    }
    return out.put("message", "Found " + list.size() + " functions.");
  }

  private static ObjectNode functionView(String id, JsonNode f) {
    return Json.object().put("id", id).put("name", f.path("name").asText()).put("runtime", f.path("runtime").asText())
        .put("modified", f.path("modified").asDouble());
  }

  private ObjectNode addFunction(Caller c, JsonNode fn) {
    String name = text(fn, "name", "function");
    checkFunctionName(c, name, null);
    String id = hex(16);
    ObjectNode f = Json.object().put("name", name).put("runtime", fn.path("runtime").asText("Python 3.6"))
        .put("modified", now()).put("code", "").put("requirements", "").put("metadata", "").put("chunks", -1);
    checkRuntime(f.path("runtime").asText());
    store.putKnixRecord(new KnixRecord(c.account(), FUNCTION, id, Json.bytes(f)));
    return Json.object().put("message", "Function added.").set("function", functionView(id, f));
  }

  private void checkFunctionName(Caller c, String name, String except) {
    if (name.equals("end") || name.equals("exit") || !TopicNames.validGrain(name)) {
      throw new Failure("Invalid function name '" + name + "': a SAND grain name is 1-128 of A-Z a-z 0-9 _ . -, "
          + "starting with a letter or digit, and not 'end' or 'exit'");
    }
    for (KnixRecord r : store.knixRecords(c.account(), FUNCTION)) {
      if (!r.id().equals(except) && name.equals(Json.parse(r.value(), FUNCTION).path("name").asText())) {
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
    return store.knixRecord(c.account(), FUNCTION, id).map(r -> (ObjectNode) Json.parse(r.value(), FUNCTION))
        .orElseThrow(() -> new Failure("Function with id '" + id + "' does not exist."));
  }

  private void saveFunction(Caller c, String id, ObjectNode f) {
    f.put("modified", now());
    store.putKnixRecord(new KnixRecord(c.account(), FUNCTION, id, Json.bytes(f)));
  }

  private ObjectNode modifyFunction(Caller c, JsonNode fn) {
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
      LoopbackApi.Answer a = api.call("DELETE", "/api/v1/grains/" + enc(old), c.token(), null, null);
      if (!a.ok() && a.status() != 404) {
        throw new Failure("Couldn't rename function: " + a.message());
      }
    }
    saveFunction(c, id, f);
    return Json.object().put("message", "Function modified.").set("function", functionView(id, f));
  }

  private ObjectNode deleteFunction(Caller c, JsonNode fn) {
    String id = text(fn, "id", "function");
    ObjectNode f = functionRecord(c, fn);
    LoopbackApi.Answer a = api.call("DELETE", "/api/v1/grains/" + enc(f.path("name").asText()), c.token(), null,
        null);
    if (!a.ok() && a.status() != 404) {
      throw new Failure("Couldn't delete function: " + a.message());
    }
    store.deleteKnixRecords(c.account(), zipKind(id));
    store.deleteKnixRecord(c.account(), FUNCTION, id);
    return Json.object().put("message", "Function deleted.");
  }

  private ObjectNode uploadFunctionCode(Caller c, JsonNode fn) {
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
        store.putKnixRecord(new KnixRecord(c.account(), zipKind(id), chunkId(chunk),
            code.getBytes(StandardCharsets.US_ASCII)));
      }
      default -> throw new Failure("Unknown code format '" + format + "': text or zip");
    }
    saveFunction(c, id, f);
    return Json.object().put("message", "Function code uploaded.");
  }

  private ObjectNode uploadZipMetadata(Caller c, JsonNode fn) {
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

  private ObjectNode getZipMetadata(Caller c, JsonNode fn) {
    ObjectNode f = functionRecord(c, fn);
    return Json.object().put("message", "Function zip metadata.").set("function", Json.object()
        .put("id", fn.path("id").asText()).put("metadata", f.path("metadata").asText(""))
        .put("chunks", f.path("chunks").asInt(-1)));
  }

  private ObjectNode getFunctionCode(Caller c, JsonNode fn) {
    ObjectNode f = functionRecord(c, fn);
    return Json.object().put("message", "Function code.").set("function", Json.object()
        .put("id", fn.path("id").asText()).put("code", f.path("code").asText("")).put("format", "text"));
  }

  private ObjectNode getFunctionZip(Caller c, JsonNode fn) {
    String id = text(fn, "id", "function");
    ObjectNode f = functionRecord(c, fn);
    int chunk = fn.path("chunk").asInt(-1);
    if (chunk < 0 || chunk >= f.path("chunks").asInt(-1)) {
      throw new Failure("No zip chunk " + chunk + " (the function has " + Math.max(0, f.path("chunks").asInt(-1))
          + ")");
    }
    String code = store.knixRecord(c.account(), zipKind(id), chunkId(chunk))
        .map(r -> new String(r.value(), StandardCharsets.US_ASCII)).orElse("");
    return Json.object().put("message", "Function zip chunk.").set("function", Json.object().put("id", id)
        .put("chunk", chunk).put("code", code).put("format", "zip"));
  }

  private ObjectNode uploadRequirements(Caller c, JsonNode fn) {
    String id = text(fn, "id", "function");
    ObjectNode f = functionRecord(c, fn);
    String req = repair(fn.path("requirements").asText(""));
    decode(req, "requirements");
    f.put("requirements", req);
    publish(c, id, f);
    saveFunction(c, id, f);
    return Json.object().put("message", "Function requirements uploaded.");
  }

  private ObjectNode getRequirements(Caller c, JsonNode fn) {
    ObjectNode f = functionRecord(c, fn);
    return Json.object().put("message", "Function requirements.").set("function", Json.object()
        .put("id", fn.path("id").asText()).put("requirements", f.path("requirements").asText("")));
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
      a = api.call("PUT", "/api/v1/grains/" + enc(name), c.token(), "application/zip",
          zip(name, chunks < 1 ? null : assembled(c, id, chunks), hasCode ? code : null, req, maxUnpackedBytes));
    }
    if (!a.ok()) {
      throw new Failure("Function '" + name + "' was not stored: " + a.message());
    }
  }

  private byte[] assembled(Caller c, String id, int chunks) {
    StringBuilder b64 = new StringBuilder();
    long maxB64 = (maxZipBytes + 2) / 3 * 4 + 4;
    for (int i = 0; i < chunks; i++) {
      Optional<KnixRecord> r = store.knixRecord(c.account(), zipKind(id), chunkId(i));
      if (r.isEmpty()) {
        throw new Failure("Zip chunk " + i + " of " + chunks + " was not uploaded.");
      }
      if (b64.length() + r.get().value().length > maxB64) { // before holding it: chunks are many and each large
        throw new Failure("The uploaded zip is larger than " + maxZipBytes + " bytes (the largest grain SAND takes; "
            + "frontend setting max.body.bytes)");
      }
      b64.append(new String(r.get().value(), StandardCharsets.US_ASCII));
    }
    while (b64.length() % 4 != 0) {
      b64.append('=');
    }
    return decode(b64.toString(), "zip");
  }

  /** The grain's zip: {@code base}'s entries, {@code code} as {@code <name>.py}, {@code req} as requirements.txt. */
  static byte[] zip(String name, byte[] base, byte[] code, byte[] req) {
    return zip(name, base, code, req, 4 * DEFAULT_MAX_ZIP_BYTES);
  }

  /**
   * The same, unpacking {@code base} only up to {@code maxUnpacked} bytes in all and {@link GrainUpload#MAX_ENTRIES}
   * entries (a zip bomb of a few MB inflating to gigabytes is refused at the cap, never held: issue 26, finding 6).
   */
  static byte[] zip(String name, byte[] base, byte[] code, byte[] req, long maxUnpacked) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (ZipOutputStream z = new ZipOutputStream(out)) {
      if (base != null) {
        try (ZipInputStream in = new ZipInputStream(new ByteArrayInputStream(base))) {
          ZipEntry e;
          int entries = 0;
          long unpacked = 0;
          byte[] buf = new byte[8192];
          while ((e = in.getNextEntry()) != null) {
            if (++entries > GrainUpload.MAX_ENTRIES) {
              throw new Failure("The uploaded zip has more than " + GrainUpload.MAX_ENTRIES + " entries.");
            }
            String n = e.getName();
            if ((code != null && n.equals(name + ".py")) || (req.length > 0 && n.equals("requirements.txt"))) {
              continue;
            }
            z.putNextEntry(new ZipEntry(n));
            int r;
            while ((r = in.read(buf)) > 0) {
              unpacked += r;
              if (unpacked > maxUnpacked) {
                throw new Failure("The uploaded zip unpacks to more than " + maxUnpacked + " bytes (4 x the frontend "
                    + "setting max.body.bytes, as for any grain).");
              }
              z.write(buf, 0, r);
            }
            z.closeEntry();
          }
        }
      }
      if (code != null) {
        z.putNextEntry(new ZipEntry(name + ".py"));
        z.write(code);
        z.closeEntry();
      }
      if (req.length > 0) {
        z.putNextEntry(new ZipEntry("requirements.txt"));
        z.write(req);
        z.closeEntry();
      }
    } catch (IOException | IllegalArgumentException e) {
      throw new Failure("The uploaded zip cannot be read: " + e.getMessage());
    }
    return out.toByteArray();
  }

  // ---- workflows

  private ObjectNode workflowRecord(Caller c, String id) {
    if (id == null || id.isEmpty()) {
      throw new Failure("workflow.id is missing");
    }
    return store.knixRecord(c.account(), WORKFLOW, id).map(r -> (ObjectNode) Json.parse(r.value(), WORKFLOW))
        .orElseThrow(() -> new Failure("Workflow with id '" + id + "' does not exist."));
  }

  private void saveWorkflow(Caller c, String id, ObjectNode w) {
    w.put("modified", now());
    store.putKnixRecord(new KnixRecord(c.account(), WORKFLOW, id, Json.bytes(w)));
  }

  /** KNIX's view of a workflow: its SAND application's status and, when deployed, its endpoint. */
  private ObjectNode workflowView(Caller c, String id, JsonNode w) {
    String app = w.path("app").asText();
    LoopbackApi.Answer a = api.call("GET", "/api/v1/apps/" + enc(app), c.token(), null, null);
    String status = "undeployed";
    String error = null;
    if (a.ok()) {
      status = a.body().path("status").asText("undeployed");
      error = a.body().path("error").isTextual() ? a.body().path("error").asText() : null;
    } else if (a.status() != 404) {
      throw new Failure("Couldn't read workflow status: " + a.message());
    }
    ObjectNode v = Json.object().put("id", id).put("name", w.path("name").asText()).put("status", status)
        .put("modified", w.path("modified").asDouble()).put("app", app).put("ASL_type", w.path("asl_type")
            .asText("unknown"));
    ArrayNode endpoints = v.putArray("endpoints");
    if (status.equals("deployed")) {
      endpoints.add(baseUrl(c.call()) + "/app/" + enc(app) + ENDPOINT_SUFFIX);
    }
    if (status.equals("failed") && error != null) {
      v.put("deployment_error", error);
    }
    return v;
  }

  /** The id of a KNIX workflow's SAND application (its data space), once the workflow was deployed. */
  private String appId(Caller c, String workflowId) {
    String app = workflowRecord(c, workflowId).path("app").asText();
    LoopbackApi.Answer a = api.call("GET", "/api/v1/apps/" + enc(app), c.token(), null, null);
    if (!a.ok()) {
      throw new Failure("Workflow '" + workflowId + "' has no data yet: it exists once the workflow was deployed ("
          + a.message() + ")");
    }
    return a.body().path("id").asText();
  }

  private ObjectNode getWorkflows(Caller c, JsonNode wf) {
    if (wf.has("id")) {
      String id = wf.path("id").asText();
      return Json.object().put("message", "Workflow found.").set(WORKFLOW, workflowView(c, id, workflowRecord(c, id)));
    }
    ObjectNode out = Json.object();
    ArrayNode list = out.putArray("workflows");
    for (KnixRecord r : store.knixRecords(c.account(), WORKFLOW)) {
      list.add(workflowView(c, r.id(), Json.parse(r.value(), WORKFLOW)));
    }
    return out.put("message", "Found " + list.size() + " workflows.");
  }

  private ObjectNode addWorkflow(Caller c, JsonNode wf) {
    String name = text(wf, "name", "workflow");
    String id = hex(16);
    String app = appName(name, id);
    ObjectNode w = Json.object().put("name", name).put("app", app).put("json", "").put("modified", now())
        .put("logs_cleared_ms", 0);
    store.putKnixRecord(new KnixRecord(c.account(), WORKFLOW, id, Json.bytes(w)));
    ObjectNode v = Json.object().put("id", id).put("name", name).put("status", "undeployed")
        .put("modified", w.path("modified").asDouble()).put("app", app);
    v.putArray("endpoints");
    return Json.object().put("message", "Workflow added.").set(WORKFLOW, v);
  }

  /** The SAND application of a KNIX workflow: its name's letters and digits, and the id's start (names are global). */
  static String appName(String name, String id) {
    String s = name.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_-]+", "-").replaceAll("^[^a-z0-9]+", "");
    s = s.length() > 40 ? s.substring(0, 40) : s;
    return (s.isEmpty() ? "wf" : s) + "-" + id.substring(0, 8);
  }

  private ObjectNode modifyWorkflow(Caller c, JsonNode wf) {
    String id = text(wf, "id", "workflow");
    ObjectNode w = workflowRecord(c, id);
    w.put("name", wf.path("name").asText(w.path("name").asText()));
    saveWorkflow(c, id, w);
    return Json.object().put("message", "Workflow modified.").set(WORKFLOW, workflowView(c, id, w));
  }

  private ObjectNode deleteWorkflow(Caller c, JsonNode wf) {
    String id = text(wf, "id", "workflow");
    ObjectNode w = workflowRecord(c, id);
    String status = workflowView(c, id, w).path("status").asText();
    if (!status.equals("undeployed") && !status.equals("failed")) {
      throw new Failure("Couldn't delete workflow; workflow is still " + status + ". Undeploy workflow first.");
    }
    LoopbackApi.Answer a = api.call("DELETE", "/api/v1/apps/" + enc(w.path("app").asText()), c.token(), null, null);
    if (!a.ok() && a.status() != 404) {
      throw new Failure("Couldn't delete workflow: " + a.message());
    }
    store.deleteKnixRecord(c.account(), WORKFLOW, id);
    return Json.object().put("message", "Workflow deleted.");
  }

  private ObjectNode uploadWorkflowJson(Caller c, JsonNode wf) {
    String id = text(wf, "id", "workflow");
    ObjectNode w = workflowRecord(c, id);
    String json = repair(wf.path("json").asText(""));
    JsonNode parsed = Json.parse(decode(json, "json"), "the workflow JSON");
    w.put("json", json).put("asl_type", KnixWorkflows.isAsl(parsed) ? "unknown" : "");
    saveWorkflow(c, id, w);
    return Json.object().put("message", "Workflow JSON uploaded.");
  }

  private ObjectNode getWorkflowJson(Caller c, JsonNode wf) {
    String id = text(wf, "id", "workflow");
    ObjectNode w = workflowRecord(c, id);
    return Json.object().put("message", "Workflow JSON.").set(WORKFLOW, Json.object().put("id", id)
        .put("json", w.path("json").asText("")));
  }

  private ObjectNode deployWorkflow(Caller c, JsonNode wf) {
    String id = text(wf, "id", "workflow");
    ObjectNode w = workflowRecord(c, id);
    if (w.path("json").asText("").isEmpty()) {
      throw new Failure("workflow JSON does not exist.");
    }
    String app = w.path("app").asText();
    ObjectNode sand = KnixWorkflows.toSand(Json.parse(decode(w.path("json").asText(), "json"), "the workflow JSON"),
        app);
    LoopbackApi.Answer a = api.call("PUT", "/api/v1/apps/" + enc(app), c.token(), "application/json",
        Json.bytes(sand));
    if (!a.ok()) {
      throw new Failure("Couldn't deploy workflow: " + a.message());
    }
    a = api.call("POST", "/api/v1/apps/" + enc(app) + "/deploy", c.token(), null, null);
    if (!a.ok()) {
      throw new Failure("Couldn't deploy workflow: " + a.message());
    }
    return Json.object().put("message", "Successfully deployed workflow " + id + ".")
        .set(WORKFLOW, workflowView(c, id, w));
  }

  private ObjectNode undeployWorkflow(Caller c, JsonNode wf) {
    String id = text(wf, "id", "workflow");
    ObjectNode w = workflowRecord(c, id);
    LoopbackApi.Answer a = api.call("POST", "/api/v1/apps/" + enc(w.path("app").asText()) + "/undeploy", c.token(),
        null, null);
    if (!a.ok() && a.status() != 404 && a.status() != 409) {
      throw new Failure("Couldn't undeploy workflow: " + a.message());
    }
    return Json.object().put("message", "Successfully undeployed workflow " + id + ".");
  }

  /**
   * KNIX's logs of a workflow: every log line of its recent executions (SAND keeps them per execution), oldest
   * first, as {@code [timestamp µs] [time] [LEVEL] [execution id] [grain] text}; {@code exceptions} the ERROR lines.
   */
  private ObjectNode workflowLogs(Caller c, JsonNode wf) {
    String id = text(wf, "id", "workflow");
    ObjectNode w = workflowRecord(c, id);
    long earliestUs = (long) wf.path("ts_earliest").asDouble(0);
    int lines = Math.max(1, Math.min(10_000, wf.path("num_lines").asInt(500)));
    long sinceMs = Math.max(earliestUs / 1000, w.path("logs_cleared_ms").asLong(0));
    if (sinceMs == 0) {
      sinceMs = clock.millis() - 24 * 3600_000L;
    }
    LoopbackApi.Answer a = api.call("GET", "/api/v1/apps/" + enc(w.path("app").asText()) + "/logs?since=" + sinceMs
        + "&limit=" + AppsHandler.LOGS_MAX_EXECUTIONS, c.token(), null, null);
    List<String[]> all = new ArrayList<>(); // [µs, line, level]
    if (a.ok()) {
      for (JsonNode e : a.body().path("executions")) {
        for (JsonNode l : e.path("logs")) {
          Instant t = Instant.parse(l.path("time").asText());
          long us = t.getEpochSecond() * 1_000_000L + t.getNano() / 1000;
          if (us <= earliestUs) {
            continue;
          }
          String level = l.path("level").asText();
          all.add(new String[] {Long.toString(us), "[" + us + "] [" + t + "] [" + level + "] ["
              + e.path("execution_id").asText() + "] [" + l.path("grain").asText() + "] " + l.path("text").asText(),
              level});
        }
      }
    } else if (a.status() != 404) {
      throw new Failure("Couldn't read the logs: " + a.message());
    }
    all.sort((x, y) -> Long.compare(Long.parseLong(x[0]), Long.parseLong(y[0])));
    List<String[]> last = all.subList(Math.max(0, all.size() - lines), all.size());
    StringBuilder log = new StringBuilder();
    StringBuilder errors = new StringBuilder();
    for (String[] l : last) {
      log.append(l[1]).append('\n');
      if (l[2].equals("ERROR") || l[2].equals("STDERR")) {
        errors.append(l[1]).append('\n');
      }
    }
    Base64.Encoder b64 = Base64.getEncoder();
    ObjectNode out = Json.object().put("id", id)
        .put("log", b64.encodeToString(log.toString().getBytes(StandardCharsets.UTF_8)))
        .put("progress", "")
        .put("exceptions", b64.encodeToString(errors.toString().getBytes(StandardCharsets.UTF_8)));
    if (last.isEmpty()) {
      out.put("timestamp", earliestUs);
    } else {
      out.put("timestamp", Long.parseLong(last.get(last.size() - 1)[0]));
    }
    return Json.object().put("message", "Workflow logs.").set(WORKFLOW, out);
  }

  /** SAND keeps executions' logs for execution.ttl.hours: "cleared" hides those before now from this door. */
  private ObjectNode clearLogs(Caller c, JsonNode wf) {
    String id = text(wf, "id", "workflow");
    ObjectNode w = workflowRecord(c, id);
    w.put("logs_cleared_ms", clock.millis());
    saveWorkflow(c, id, w);
    return Json.object().put("message", "Workflow logs cleared.");
  }

  // ---- helpers

  /** The URL callers reached this frontend at: through nginx, the address they called nginx at. */
  static String baseUrl(Call call) {
    String host = call.header("X-Forwarded-Host");
    if (host == null || host.isBlank()) {
      host = call.header("Host");
    }
    String proto = call.header("X-Forwarded-Proto");
    return (proto == null || proto.isBlank() ? "http" : proto) + "://" + host;
  }

  private static String text(JsonNode node, String field, String where) {
    JsonNode v = node.path(field);
    if (!v.isTextual() || v.asText().isEmpty()) {
      throw new Failure(where + "." + field + " is missing");
    }
    return v.asText();
  }

  /** KNIX's repair of base64 that went through form encoding: '+' arrived as ' '. */
  private static String repair(String b64) {
    return b64.replace(' ', '+');
  }

  private static byte[] decode(String b64, String what) {
    try {
      return Base64.getMimeDecoder().decode(b64);
    } catch (IllegalArgumentException e) {
      throw new Failure("The " + what + " is not base64: " + e.getMessage());
    }
  }

  private static String zipKind(String functionId) {
    return "zip:" + functionId;
  }

  private static String chunkId(int chunk) {
    return String.format("%06d", chunk);
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
  }

  private double now() {
    return clock.millis() / 1000.0;
  }

  private static String hex(int bytes) {
    byte[] b = new byte[bytes];
    RANDOM.nextBytes(b);
    return HexFormat.of().formatHex(b);
  }

  private static Reply success(ObjectNode data) {
    return Reply.ok(Json.object().put("status", "success").set("data", data));
  }

  static Reply failure(String message) {
    ObjectNode data = Json.object().put("message", message);
    return Reply.ok(Json.object().put("status", "failure").set("data", data));
  }
}
