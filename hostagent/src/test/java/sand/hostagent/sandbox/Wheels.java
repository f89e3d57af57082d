package sand.hostagent.sandbox;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

/** A minimal pure-Python wheel (PEP 427) made in memory: a requirement pip installs with no network. */
final class Wheels {
  private Wheels() {}

  static byte[] minimal(String name, String version, String moduleSource) throws IOException {
    String info = name + "-" + version + ".dist-info/";
    Map<String, byte[]> files = new LinkedHashMap<>();
    files.put(name + ".py", moduleSource.getBytes(StandardCharsets.UTF_8));
    files.put(info + "METADATA", ("Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n")
        .getBytes(StandardCharsets.UTF_8));
    files.put(info + "WHEEL", "Wheel-Version: 1.0\nGenerator: sand-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        .getBytes(StandardCharsets.UTF_8));
    StringBuilder record = new StringBuilder();
    for (Map.Entry<String, byte[]> f : files.entrySet()) {
      record.append(f.getKey()).append(",sha256=").append(sha256(f.getValue())).append(',')
          .append(f.getValue().length).append('\n');
    }
    record.append(info).append("RECORD,,\n");
    files.put(info + "RECORD", record.toString().getBytes(StandardCharsets.UTF_8));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (ZipOutputStream z = new ZipOutputStream(out)) {
      for (Map.Entry<String, byte[]> f : files.entrySet()) {
        z.putNextEntry(new ZipEntry(f.getKey()));
        z.write(f.getValue());
        z.closeEntry();
      }
    }
    return out.toByteArray();
  }

  private static String sha256(byte[] b) {
    try {
      return Base64.getUrlEncoder().withoutPadding().encodeToString(MessageDigest.getInstance("SHA-256").digest(b));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
