package sand.datalayer;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.thrift.TBaseHelper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.contracts.DataKind;
import sand.contracts.DataMetadata;
import sand.datalayer.thrift.DataError;
import sand.datalayer.thrift.DataErrorCode;
import sand.datalayer.thrift.Value;

/**
 * The Thrift face of a {@link LocalDataLayer} ({@code service LocalDataLayer} in datalayer.thrift).
 * Each call authenticates its credential and works on that application's data only; refusals become
 * {@link DataError} with the same code, anything unexpected is logged and becomes a Thrift
 * application error.
 */
public final class DataLayerService implements sand.datalayer.thrift.LocalDataLayer.Iface {
  private static final Logger LOG = LoggerFactory.getLogger(DataLayerService.class);

  private final LocalDataLayer layer;

  public DataLayerService(LocalDataLayer layer) {
    this.layer = layer;
  }

  /** A processor to hand to {@link sand.common.ThriftServer}. */
  public sand.datalayer.thrift.LocalDataLayer.Processor<DataLayerService> processor() {
    return new sand.datalayer.thrift.LocalDataLayer.Processor<>(this);
  }

  // ---- key-value

  @Override
  public void put(String credential, String key, ByteBuffer value) throws DataError {
    call("put", () -> {
      ApplicationData data = layer.forCredential(credential);
      if (value
          != null) { // the application's quota in the global layer (a null value is BAD_REQUEST
        // below)
        layer.checkStorage(data.application(), value.remaining(), "key '" + key + "'");
      }
      data.put(key, value == null ? null : TBaseHelper.byteBufferToByteArray(value));
      return null;
    });
  }

  @Override
  public Value get(String credential, String key) throws DataError {
    return call("get", () -> value(layer.forCredential(credential).get(key)));
  }

  @Override
  public boolean remove(String credential, String key) throws DataError {
    return call("remove", () -> layer.forCredential(credential).remove(key));
  }

  @Override
  public List<String> listKeys(String credential, String start, int count) throws DataError {
    return call("listKeys", () -> layer.forCredential(credential).listKeys(start, count));
  }

  // ---- maps

  @Override
  public void putMapEntry(String credential, String mapName, String key, ByteBuffer value)
      throws DataError {
    call("putMapEntry", () -> {
      ApplicationData data = layer.forCredential(credential);
      if (value != null) {
        layer.checkStorage(
            data.application(), value.remaining(), "an entry of map '" + mapName + "'");
      }
      byte[] bytes = value == null ? null : TBaseHelper.byteBufferToByteArray(value);
      data.putMapEntry(mapName, key, bytes);
      layer.mapEntryPut(data.application(), mapName, key, bytes);
      return null;
    });
  }

  @Override
  public Value getMapEntry(String credential, String mapName, String key) throws DataError {
    return call(
        "getMapEntry", () -> value(layer.forCredential(credential).getMapEntry(mapName, key)));
  }

  @Override
  public boolean deleteMapEntry(String credential, String mapName, String key) throws DataError {
    return call(
        "deleteMapEntry", () -> layer.forCredential(credential).deleteMapEntry(mapName, key));
  }

  @Override
  public boolean containsMapKey(String credential, String mapName, String key) throws DataError {
    return call(
        "containsMapKey", () -> layer.forCredential(credential).containsMapKey(mapName, key));
  }

  @Override
  public List<String> getMapKeys(String credential, String mapName) throws DataError {
    return call("getMapKeys", () -> layer.forCredential(credential).getMapKeys(mapName));
  }

  @Override
  public Map<String, ByteBuffer> retrieveMap(String credential, String mapName) throws DataError {
    return call("retrieveMap", () -> {
      Map<String, ByteBuffer> out = new LinkedHashMap<>();
      layer
          .forCredential(credential)
          .retrieveMap(mapName)
          .forEach((k, v) -> out.put(k, ByteBuffer.wrap(v)));
      return out;
    });
  }

  @Override
  public boolean deleteMap(String credential, String mapName) throws DataError {
    return call("deleteMap", () -> layer.forCredential(credential).deleteMap(mapName));
  }

  // ---- sets

  @Override
  public boolean addSetEntry(String credential, String setName, String item) throws DataError {
    return call("addSetEntry", () -> {
      ApplicationData data = layer.forCredential(credential);
      if (item != null) {
        layer.checkStorage(
            data.application(),
            item.getBytes(StandardCharsets.UTF_8).length,
            "an item of set '" + setName + "'");
      }
      return data.addSetEntry(setName, item);
    });
  }

  @Override
  public boolean removeSetEntry(String credential, String setName, String item) throws DataError {
    return call(
        "removeSetEntry", () -> layer.forCredential(credential).removeSetEntry(setName, item));
  }

  @Override
  public boolean containsSetItem(String credential, String setName, String item) throws DataError {
    return call(
        "containsSetItem", () -> layer.forCredential(credential).containsSetItem(setName, item));
  }

  @Override
  public Set<String> retrieveSet(String credential, String setName) throws DataError {
    return call("retrieveSet", () -> layer.forCredential(credential).retrieveSet(setName));
  }

  @Override
  public boolean deleteSet(String credential, String setName) throws DataError {
    return call("deleteSet", () -> layer.forCredential(credential).deleteSet(setName));
  }

  // ---- counters

  @Override
  public void createCounter(String credential, String counter, long initial) throws DataError {
    call("createCounter", () -> {
      layer.forCredential(credential).createCounter(counter, initial);
      return null;
    });
  }

  @Override
  public long getCounterValue(String credential, String counter) throws DataError {
    return call("getCounterValue", () -> layer.forCredential(credential).getCounterValue(counter));
  }

  @Override
  public long incrementCounter(String credential, String counter, long delta) throws DataError {
    return call(
        "incrementCounter", () -> layer.forCredential(credential).incrementCounter(counter, delta));
  }

  @Override
  public long decrementCounter(String credential, String counter, long delta) throws DataError {
    return call(
        "decrementCounter", () -> layer.forCredential(credential).decrementCounter(counter, delta));
  }

  @Override
  public boolean deleteCounter(String credential, String counter) throws DataError {
    return call("deleteCounter", () -> layer.forCredential(credential).deleteCounter(counter));
  }

  // ---- data backup flag

  @Override
  public List<sand.datalayer.thrift.DataMetadata> metadata(
      String credential, List<sand.datalayer.thrift.DataMetadata> items) throws DataError {
    return call("metadata", () -> {
      ApplicationData data = layer.forCredential(credential);
      List<sand.datalayer.thrift.DataMetadata> out = new ArrayList<>();
      for (sand.datalayer.thrift.DataMetadata item :
          items == null ? List.<sand.datalayer.thrift.DataMetadata>of() : items) {
        out.add(toThrift(data.metadata(kind(item.getKind()), item.getName())));
      }
      return out;
    });
  }

  @Override
  public boolean verifyGlobal(String credential, sand.datalayer.thrift.DataMetadata expected)
      throws DataError {
    return call("verifyGlobal", () -> {
      ApplicationData data = layer.forCredential(credential);
      if (expected == null) {
        throw new DataLayerException(
            DataLayerException.Code.BAD_REQUEST, "verifyGlobal needs the expected metadata");
      }
      return data.verifyGlobal(new DataMetadata(
          kind(expected.getKind()),
          expected.getName(),
          expected.getSize(),
          expected.getSha256() == null ? "" : expected.getSha256()));
    });
  }

  @Override
  public boolean flush(String credential, int timeoutMs) throws DataError {
    return call("flush", () -> layer.forCredential(credential).flush(timeoutMs));
  }

  @Override
  public ByteBuffer manage(String credential, ByteBuffer request) throws DataError {
    byte[] bytes = new byte[request.remaining()];
    request.get(bytes);
    return call("manage", () -> ByteBuffer.wrap(layer.manage(credential, bytes)));
  }

  // ---- administration

  @Override
  public void grantApplication(String credential, String application, String applicationCredential)
      throws DataError {
    call("grantApplication", () -> {
      layer.grantApplication(credential, application, applicationCredential);
      return null;
    });
  }

  @Override
  public void revokeApplication(String credential, String application) throws DataError {
    call("revokeApplication", () -> {
      layer.revokeApplication(credential, application);
      return null;
    });
  }

  // ---- mapping

  private static Value value(Optional<byte[]> v) {
    Value out = new Value();
    v.ifPresent(bytes -> out.setData(ByteBuffer.wrap(bytes)));
    return out;
  }

  private static sand.datalayer.thrift.DataMetadata toThrift(DataMetadata m) {
    return new sand.datalayer.thrift.DataMetadata(
        m.kind().wireName(), m.name(), m.size(), m.sha256());
  }

  private static <T> T call(String op, Supplier<T> body) throws DataError {
    try {
      return body.get();
    } catch (DataLayerException e) {
      LOG.debug("{} refused: {}", op, e.toString());
      throw new DataError(DataErrorCode.valueOf(e.code().name()), e.getMessage());
    } catch (RuntimeException e) {
      LOG.error("{} failed unexpectedly", op, e);
      throw e;
    }
  }

  /** The kind a client named; an unknown one is the client's mistake (BAD_REQUEST), not the server's. */
  private static DataKind kind(String wireName) {
    try {
      return DataKind.parse(wireName);
    } catch (IllegalArgumentException e) {
      throw new DataLayerException(DataLayerException.Code.BAD_REQUEST, e.getMessage());
    }
  }
}
