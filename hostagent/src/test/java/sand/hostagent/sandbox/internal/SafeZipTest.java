package sand.hostagent.sandbox.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SafeZipTest {
  @TempDir
  Path tmp;

  private static byte[] zip(String... nameThenContent) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ZipOutputStream z = new ZipOutputStream(bytes)) {
      for (int i = 0; i < nameThenContent.length; i += 2) {
        z.putNextEntry(new ZipEntry(nameThenContent[i]));
        if (nameThenContent[i + 1] != null) {
          z.write(nameThenContent[i + 1].getBytes(StandardCharsets.UTF_8));
        }
        z.closeEntry();
      }
    }
    return bytes.toByteArray();
  }

  private Path dest() throws IOException {
    return Files.createDirectories(tmp.resolve("code"));
  }

  @Test
  void unpacksFilesAndFoldersAndHandsBackTheSkippedEntry() throws Exception {
    ByteArrayOutputStream req = new ByteArrayOutputStream();
    List<Path> written = SafeZip.extract(
        zip(
            "pkg/",
            null,
            "pkg/__init__.py",
            "X = 1\n",
            "requirements.txt",
            "six\n",
            "deep/er/file.txt",
            "x"),
        dest(),
        100,
        new SafeZip.Budget(1000),
        "requirements.txt",
        req);
    assertEquals(List.of(Path.of("pkg/__init__.py"), Path.of("deep/er/file.txt")), written);
    assertEquals("X = 1\n", Files.readString(tmp.resolve("code/pkg/__init__.py")));
    assertEquals("six\n", req.toString(StandardCharsets.UTF_8));
  }

  @Test
  void refusesNamesThatLeaveTheFolder() throws Exception {
    Path dest = dest();
    for (String name : List.of("../x", "a/../../x", "/abs", "a\\..\\x", "C:/x", "./../x")) {
      SafeZip.ZipRefused e = assertThrows(
          SafeZip.ZipRefused.class,
          () -> SafeZip.extract(zip(name, "boom"), dest, 100, new SafeZip.Budget(1000), null, null),
          name);
      assertTrue(e.getMessage().startsWith("entry '" + name + "'"), e.getMessage());
    }
    try (var files = Files.list(tmp)) {
      assertEquals(List.of(dest), files.toList(), "nothing written next to the folder");
    }
  }

  @Test
  void refusesDuplicatesAndOverwrites() throws Exception {
    Path dest = dest();
    Files.writeString(dest.resolve("mine.py"), "keep");
    assertThrows(
        SafeZip.ZipRefused.class,
        () -> SafeZip.extract(
            zip("mine.py", "evil"), dest, 100, new SafeZip.Budget(1000), null, null));
    assertEquals("keep", Files.readString(dest.resolve("mine.py")));
  }

  @Test
  void countsInflatedBytesAgainstTheBudgetAndEntriesAgainstTheLimit() throws Exception {
    Path dest = dest();
    byte[] bomb = zip("zeros", "\0".repeat(100_000));
    assertTrue(bomb.length < 1000, "compresses well");
    assertTrue(assertThrows(
            SafeZip.ZipRefused.class,
            () -> SafeZip.extract(bomb, dest, 100, new SafeZip.Budget(10_000), null, null))
        .getMessage()
        .contains("code size limit"));
    assertTrue(assertThrows(
            SafeZip.ZipRefused.class,
            () -> SafeZip.extract(
                zip("a", "", "b", "", "c", ""),
                tmp.resolve("code"),
                2,
                new SafeZip.Budget(10),
                null,
                null))
        .getMessage()
        .contains("more than 2 entries"));
  }

  @Test
  void refusesWhatIsNotAZip() throws Exception {
    assertTrue(assertThrows(
            SafeZip.ZipRefused.class,
            () -> SafeZip.extract(
                "not a zip".getBytes(StandardCharsets.UTF_8),
                dest(),
                100,
                new SafeZip.Budget(10),
                null,
                null))
        .getMessage()
        .contains("empty or not a zip"));
  }
}
