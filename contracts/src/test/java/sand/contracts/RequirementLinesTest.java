package sand.contracts;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class RequirementLinesTest {

  @Test
  void packagePinsWithExtrasRangesAndMarkersPass() {
    for (String ok : List.of(
        "requests==2.32.3",
        "six",
        "Pillow>=10,<11",
        "requests[socks, security]==2.32.3",
        "numpy ~= 1.26.0",
        "torch (>=2.0)",
        "importlib-metadata===7.0.1",
        "zope.interface!=5.0",
        "tomli>=1.1; python_version < \"3.11\"",
        "pkg==1.0.post1+local",
        "a_b.c-d==1.*",
        "  # a comment",
        "",
        "six==1.17.0  # pinned for thrift",
        "six==1.17.0 --hash=sha256:4721f391ed90541fddacab5acf947aa0d3dc7d27b2e1e8eda2be8970586c3274")) {
      assertDoesNotThrow(() -> RequirementLines.check(ok, "requirements.txt", false), ok);
    }
  }

  @Test
  void optionsPathsUrlsAndVcsLinksAreRefusedNamingTheLine() {
    for (String bad : List.of(
        "-e .",
        "--index-url http://evil.example/simple",
        "-r /etc/passwd",
        "./pkg",
        "/abs/pkg",
        "../x",
        "file:///x",
        "pkg @ https://h.example/p.whl",
        "git+https://h.example/r.git",
        "pkg @ file:///etc/passwd",
        "~/pkg",
        "pkg.whl ; os.system('x')",
        "C:\\pkg",
        "--no-index",
        "-i http://x",
        "pkg==1.0 --hash=md5:00",
        "pkg==1.0 --index-url=http://x")) {
      IllegalArgumentException e = assertThrows(
          IllegalArgumentException.class,
          () -> RequirementLines.check(
              "six==1.17.0\n" + bad + "\n", "requirements.txt of grain g", false),
          bad);
      assertTrue(
          e.getMessage()
              .startsWith(
                  "requirements.txt of grain g line 2: '" + bad.strip() + "' is not accepted"),
          e.getMessage());
      assertTrue(e.getMessage().contains("e.g. requests==2.32.3"), e.getMessage());
    }
  }

  @Test
  void theOperatorMayAllowHttpsDirectReferences() {
    RequirementLines.check("pkg @ https://h.example/pkg-1.0-py3-none-any.whl", "r", true);
    assertThrows(
        IllegalArgumentException.class,
        () -> RequirementLines.check("pkg @ http://h.example/p.whl", "r", true),
        "plain http stays refused");
    assertThrows(
        IllegalArgumentException.class,
        () -> RequirementLines.check("pkg @ file:///etc/passwd", "r", true));
    assertThrows(IllegalArgumentException.class, () -> RequirementLines.check("-e .", "r", true));
  }

  @Test
  void commentsAndBlankLinesAreNotRequirements() {
    assertFalse(RequirementLines.hasRequirements("# nothing\n\n   \n"));
    assertTrue(RequirementLines.hasRequirements("# one\nsix==1.17.0\n"));
    assertFalse(RequirementLines.hasRequirements(null));
  }
}
