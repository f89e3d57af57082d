package sand.contracts.asl;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import sand.contracts.Workflow;

/**
 * The ASL validator: the shared cases of asl-cases.json, whole messages (also run by tests/test_asl.py on
 * grainworker/asl_validate.py), the locations and messages the grain worker gives, and the frontend's path through
 * {@link Workflow#parse(JsonNode)}.
 */
class AslValidatorTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static JsonNode cases() throws Exception {
    try (var in = AslValidatorTest.class.getResourceAsStream("/asl-cases.json")) {
      return JSON.readTree(in);
    }
  }

  private static JsonNode json(String text) {
    try {
      return JSON.readTree(text.replace('`', '"'));
    } catch (Exception e) {
      throw new AssertionError(text, e);
    }
  }

  /** A machine starting at state A with the given states ({@code `} for {@code "}). */
  private static JsonNode machine(String states) {
    return json("{`StartAt`: `A`, `States`: {" + states + "}}");
  }

  private static String rejected(JsonNode doc) {
    return assertThrows(
            AslValidator.Invalid.class, () -> AslValidator.validate(doc), doc.toString())
        .getMessage();
  }

  @Test
  void sharedValidMachinesAreAccepted() throws Exception {
    JsonNode valid = cases().get("valid");
    assertTrue(valid.size() >= 8);
    for (JsonNode doc : valid) {
      assertDoesNotThrow(() -> AslValidator.validate(doc), doc.toString());
      assertDoesNotThrow(() -> Workflow.parse(doc), doc.toString());
    }
  }

  @Test
  void sharedInvalidMachinesAreRejectedNamingStateAndField() throws Exception {
    JsonNode invalid = cases().get("invalid");
    assertTrue(invalid.size() >= 25);
    List<String> failures = new ArrayList<>();
    for (JsonNode c : invalid) {
      JsonNode doc = c.get("doc");
      String message;
      try {
        AslValidator.validate(doc);
        failures.add(c.get("note").asText() + ": accepted");
        continue;
      } catch (AslValidator.Invalid e) {
        message = e.getMessage();
      }
      if (!message.equals(c.get("error").asText())) {
        failures.add(c.get("note").asText() + ": " + message);
      }
      if (Workflow.isAsl(
          doc)) { // the frontend's path: an upload refused with the validator's message
        assertEquals(
            message,
            assertThrows(Workflow.Invalid.class, () -> Workflow.parse(doc)).getMessage());
      }
    }
    assertEquals(List.of(), failures);
  }

  @Test
  void messagesAreTheGrainWorkersWordForWord() {
    assertEquals(
        "States.A.Next: \"Missing\" is not a state of this machine (states in a Parallel branch or Map "
            + "iterator only reach each other); one of: A, B",
        rejected(machine("`A`: {`Type`: `Pass`, `Next`: `Missing`}, `B`: {`Type`: `Succeed`}")));
    assertEquals(
        "States.A.Type: \"task\" is not a state type (did you mean \"Task\"?); write one of Task, Choice, "
            + "Pass, Wait, Succeed, Fail, Parallel, Map",
        rejected(machine("`A`: {`Type`: `task`, `End`: true}")));
    assertEquals(
        "States.A.Next: missing; write \"Next\": \"<state name>\" or \"End\": true",
        rejected(machine("`A`: {`Type`: `Pass`}")));
    assertEquals(
        "States.A.Retry[0].ErrorEquals: \"States.Timout\" is not a predefined error (did you mean "
            + "\"States.Timeout\"?); names starting with 'States.' are reserved",
        rejected(
            machine(
                "`A`: {`Type`: `Task`, `Resource`: `r`, `End`: true, `Retry`: [{`ErrorEquals`: [`States.Timout`]}]}")));
    assertEquals(
        "States.A.OutputPath: \"$..deep\" is not a valid Path (recursive descent '..' is not supported); "
            + "write e.g. \"$.a.b\", \"$.list[0]\" or \"$['a b']\"",
        rejected(machine("`A`: {`Type`: `Pass`, `OutputPath`: `$..deep`, `End`: true}")));
    assertEquals(
        "States.A.ResultPath: \"$.a[*]\" must be a Reference Path selecting a single node (no [*], [a,b], "
            + "[a:b] or .*); write e.g. \"$.items\" or \"$.items[0]\"",
        rejected(machine("`A`: {`Type`: `Pass`, `ResultPath`: `$.a[*]`, `End`: true}")));
    assertEquals(
        "States.A.Parameters.greeting.$: \"States.Fromat('hi {}', $.name)\" is not a valid intrinsic "
            + "function call (unknown intrinsic function \"States.Fromat\" (did you mean \"States.Format\"?)); write e.g. "
            + "\"States.Format('Hello {}', $.name)\"",
        rejected(
            machine(
                "`A`: {`Type`: `Pass`, `Parameters`: {`greeting.$`: `States.Fromat('hi {}', $.name)`}, `End`: true}")));
    assertEquals(
        "States.A.Parameters.x.$: \"States.MathAdd(1)\" is not a valid intrinsic function call "
            + "(States.MathAdd takes 2 argument(s), got 1); write e.g. \"States.Format('Hello {}', $.name)\"",
        rejected(machine(
            "`A`: {`Type`: `Pass`, `Parameters`: {`x.$`: `States.MathAdd(1)`}, `End`: true}")));
    assertEquals(
        "States.C.Choices[0].StringMatches: open escape: only \\* and \\\\ may follow a backslash; "
            + "write \\\\* for a literal star and \\\\\\\\ for a backslash",
        rejected(json("{`StartAt`: `C`, "
            + "`States`: {`C`: {`Type`: `Choice`, `Choices`: [{`Variable`: `$.a`, `StringMatches`: `a\\\\b`, "
            + "`Next`: `C`}]}}}")));
    assertEquals(
        "States.A.Retry[0].BackoffRate: must be a number >= 1.0, got 0.5",
        rejected(
            machine(
                "`A`: {`Type`: `Task`, `Resource`: `r`, `End`: true, `Retry`: [{`ErrorEquals`: [`E`], `BackoffRate`: 0.5}]}")));
    assertEquals(
        "States.A.Credentials: must be a JSON object, got [{\"a\": \"b\"}, true, null, 1e+20]",
        rejected(
            machine(
                "`A`: {`Type`: `Task`, `Resource`: `r`, `End`: true, `Credentials`: [{`a`: `b`}, true, null, 1e20]}")));
    assertEquals(
        "States.Lonely: unreachable from StartAt \"A\"; add a Next, Default or Catch leading to it, or "
            + "remove it",
        rejected(machine("`A`: {`Type`: `Pass`, `End`: true}, `Lonely`: {`Type`: `Succeed`}")));
    assertEquals(
        "Steps: unknown field (did you mean \"States\"?); remove it",
        rejected(json("{`StartAt`: `A`, `Steps`: {}, `States`: {`A`: {`Type`: `Succeed`}}}")));
    assertEquals(
        "States.A.Nex: unknown field (did you mean \"Next\"?); remove it",
        rejected(machine("`A`: {`Type`: `Pass`, `Nex`: `A`, `End`: true}")));
    assertEquals(
        "States.C.Choices[0].NumericEqual: unknown comparison operator (did you mean \"NumericEquals\"?); "
            + "use one of the spec's operators (StringEquals, NumericLessThan, IsPresent, ...) or And/Or/Not",
        rejected(json(
            "{`StartAt`: `C`, `States`: {`C`: {`Type`: `Choice`, `Choices`: [{`Variable`: `$.x`, "
                + "`NumericEqual`: 1, `Next`: `C`}]}}}")));
  }

  @Test
  void everyFieldIsCheckedWhereItAppears() {
    String[][] table = { // state A, then where the message must point
      {
        "{`Type`: `Task`, `Resource`: `r`, `End`: true, `TimeoutSecondsPath`: `$.t`, `TimeoutSeconds`: 5}",
        "States.A.TimeoutSecondsPath"
      },
      {
        "{`Type`: `Task`, `Resource`: `r`, `End`: true, `HeartbeatSecondsPath`: `$.h[*]`}",
        "States.A.HeartbeatSecondsPath"
      },
      {"{`Type`: `Task`, `Resource`: ` `, `End`: true}", "States.A.Resource"},
      {"{`Type`: `Task`, `Resource`: `r`, `End`: true, `Credentials`: `x`}", "States.A.Credentials"
      },
      {
        "{`Type`: `Task`, `Resource`: `r`, `End`: true, `ResultSelector`: {`a.$`: `$.b`, `a`: 1}}",
        "States.A.ResultSelector.a"
      },
      {
        "{`Type`: `Task`, `Resource`: `r`, `End`: true, `Parameters`: {`x`: [{`y.$`: `nope`}]}}",
        "States.A.Parameters.x[0].y.$"
      },
      {
        "{`Type`: `Task`, `Resource`: `r`, `End`: true, `Parameters`: {`x.$`: 3}}",
        "States.A.Parameters.x.$"
      },
      {
        "{`Type`: `Task`, `Resource`: `r`, `End`: true, `Retry`: {`ErrorEquals`: [`E`]}}",
        "States.A.Retry"
      },
      {
        "{`Type`: `Task`, `Resource`: `r`, `End`: true, `Retry`: [{`MaxAttempts`: 1}]}",
        "States.A.Retry[0].ErrorEquals"
      },
      {
        "{`Type`: `Task`, `Resource`: `r`, `End`: true, `Retry`: [{`ErrorEquals`: [`E`], `MaxDelaySeconds`: 0}]}",
        "States.A.Retry[0].MaxDelaySeconds"
      },
      {
        "{`Type`: `Task`, `Resource`: `r`, `End`: true, `Retry`: [{`ErrorEquals`: [`E`], `JitterStrategy`: `X`}]}",
        "States.A.Retry[0].JitterStrategy"
      },
      {
        "{`Type`: `Task`, `Resource`: `r`, `End`: true, `Retry`: [{`ErrorEquals`: [`E`], `BackoffRate`: true}]}",
        "States.A.Retry[0].BackoffRate"
      },
      {
        "{`Type`: `Task`, `Resource`: `r`, `End`: true, `Catch`: [{`ErrorEquals`: [``], `Next`: `A`}]}",
        "States.A.Catch[0].ErrorEquals"
      },
      {
        "{`Type`: `Task`, `Resource`: `r`, `End`: true, `Catch`: [{`ErrorEquals`: [`E`], `Next`: `A`, `Retry`: 1}]}",
        "States.A.Catch[0].Retry"
      },
      {"{`Type`: `Pass`, `End`: `yes`}", "States.A.End"},
      {"{`Type`: `Pass`, `End`: true, `Comment`: 1}", "States.A.Comment"},
      {"{`Type`: `Pass`, `End`: true, `QueryLanguage`: `JSONata`}", "States.A.QueryLanguage"},
      {"{`Type`: `Pass`, `End`: true, `Assign`: {`x`: 1}}", "States.A.Assign"},
      {"{`Type`: `Pass`, `End`: true, `OutputPath`: `$.a[0:4:2]`}", "States.A.OutputPath"},
      {"{`Type`: `Pass`, `End`: true, `InputPath`: `$.a[?(@.b)]`}", "States.A.InputPath"},
      {"{`Type`: `Pass`, `End`: true, `InputPath`: 5}", "States.A.InputPath"},
      {
        "{`Type`: `Wait`, `SecondsPath`: `$.s`, `TimestampPath`: `$.t`, `End`: true}",
        "States.A.TimestampPath"
      },
      {"{`Type`: `Wait`, `Timestamp`: `2016-02-30T00:00:00Z`, `End`: true}", "States.A.Timestamp"},
      {"{`Type`: `Fail`, `ErrorPath`: `States.Format('{}'`}", "States.A.ErrorPath"},
      {"{`Type`: `Fail`, `ErrorPath`: `$.errors[*]`}", "States.A.ErrorPath"},
      {
        "{`Type`: `Map`, `End`: true, `Iterator`: {`StartAt`: `I`, `States`: {`I`: {`Type`: `Succeed`}}}, "
            + "`ItemProcessor`: {`StartAt`: `J`, `States`: {`J`: {`Type`: `Succeed`}}}}",
        "States.A.Iterator"
      },
      {
        "{`Type`: `Map`, `End`: true, `Iterator`: {`StartAt`: `I`, `States`: {`I`: {`Type`: `Succeed`}}}, "
            + "`Parameters`: {}, `ItemSelector`: {}}",
        "States.A.ItemSelector"
      },
      {
        "{`Type`: `Map`, `End`: true, `Iterator`: {`StartAt`: `I`, `States`: {`I`: {`Type`: `Succeed`}}}, "
            + "`MaxConcurrency`: 1.5}",
        "States.A.MaxConcurrency"
      },
      {"{`Type`: `Map`, `End`: true, `Iterator`: [1]}", "States.A.Iterator"},
      {
        "{`Type`: `Map`, `End`: true, `ItemProcessor`: {`StartAt`: `I`, `States`: {`I`: {`Type`: `Succeed`}}, "
            + "`Version`: `1.0`}}",
        "States.A.ItemProcessor.Version"
      },
      {
        "{`Type`: `Parallel`, `End`: true, `Branches`: [{`StartAt`: `B`, `States`: {`B`: {`Type`: `Pass`, "
            + "`End`: true}, `A2`: {`Type`: `Pass`, `End`: true}}}]}",
        "States.A.Branches[0].States.A2"
      },
      {
        "{`Type`: `Choice`, `Choices`: [{`Variable`: `$.a`, `IsNull`: true, `Next`: `A`, `And`: []}]}",
        "States.A.Choices[0].And"
      },
      {
        "{`Type`: `Choice`, `Choices`: [{`IsNull`: true, `Next`: `A`}]}",
        "States.A.Choices[0].Variable"
      },
      {"{`Type`: `Choice`, `Choices`: [{`Not`: [], `Next`: `A`}]}", "States.A.Choices[0].Not"},
      {"{`Type`: `Choice`, `Choices`: [`x`]}", "States.A.Choices[0]"},
      {
        "{`Type`: `Choice`, `Choices`: [{`Variable`: `$.a`, `IsPresent`: `yes`, `Next`: `A`}]}",
        "States.A.Choices[0].IsPresent"
      },
      {
        "{`Type`: `Choice`, `Choices`: [{`Variable`: `$.a`, `NumericEquals`: true, `Next`: `A`}]}",
        "States.A.Choices[0].NumericEquals"
      },
      {
        "{`Type`: `Choice`, `Choices`: [{`Variable`: `$.a`, `StringEqualsPath`: 3, `Next`: `A`}]}",
        "States.A.Choices[0].StringEqualsPath"
      },
      {
        "{`Type`: `Choice`, `Choices`: [{`Not`: {`Variable`: `$.a`, `StringEquals`: 1}, `Next`: `A`}]}",
        "States.A.Choices[0].Not.StringEquals"
      },
    };
    List<String> failures = new ArrayList<>();
    for (String[] row : table) {
      String message = rejected(machine("`A`: " + row[0]));
      if (!message.startsWith(row[1] + ": ")) {
        failures.add(row[1] + " <- " + message);
      }
    }
    assertEquals(List.of(), failures);
  }

  @Test
  void topLevelFieldsAreNamedBareAndNamesAreUniqueEverywhere() {
    assertTrue(rejected(json("{`StartAt`: 1, `States`: {}}")).startsWith("StartAt: "));
    assertTrue(rejected(
            json("{`StartAt`: `A`, `States`: {`A`: {`Type`: `Succeed`}}, `TimeoutSeconds`: 0}"))
        .startsWith("TimeoutSeconds: "));
    assertTrue(rejected(json("{`StartAt`: `A`, `States`: {`A`: `Succeed`}}"))
        .startsWith("States.A.Type: "));
    String longName = "A".repeat(81);
    assertTrue(rejected(machine("`A`: {`Type`: `Pass`, `Next`: `" + longName + "`}, `" + longName
            + "`: {`Type`: `Succeed`}"))
        .startsWith("States." + longName + ": a state name must have 1 to 80"));
    assertEquals(
        "States.Out: the name \"Out\" is already used at States.P.Branches[0].States.Out; state names must be "
            + "unique in the whole machine, branches and iterators included - rename one",
        rejected(json("{`StartAt`: "
            + "`P`, `States`: {`P`: {`Type`: `Parallel`, `Branches`: [{`StartAt`: `Out`, `States`: {`Out`: {`Type`: "
            + "`Succeed`}}}], `Next`: `Out`}, `Out`: {`Type`: `Succeed`}}}")));
    assertTrue(rejected(
            json("{`StartAt`: `A`, `States`: {`A`: {`Type`: `Pass`, `Next`: `B`}, `B`: {`Type`: "
                + "`Pass`, `Next`: `A`}}}"))
        .startsWith("States: no terminal state"));
  }

  @Test
  void specReferencePathsAndIntrinsicsAreAccepted() {
    for (String path : List.of(
        "$",
        "$.store.book",
        "$.store\\\\.book",
        "$.\\\\stor\\\\e.boo\\\\k",
        "$.foo.\\\\.bar",
        "$.foo\\\\@bar.baz\\\\[\\\\[.\\\\?pretty",
        "$.&Ж中.\uD800\uDF46",
        "$.ledgers.branch[0].pending.count",
        "$.ledgers[0][22][315].foo",
        "$['store']['book']",
        "$['store'][0]['book']",
        "$.a[-1]",
        "$[ 'x\\\\'y' ]")) {
      assertDoesNotThrow(
          () -> AslValidator.validate(
              machine("`A`: {`Type`: `Pass`, `ResultPath`: `" + path + "`, `End`: true}")),
          path);
    }
    for (String call : List.of(
        "States.Format('{} and {}', $.a, $$.Map.Item.Value)",
        "States.UUID()",
        "States.Array(1, -2.5e3, null, true, 'it\\\\'s', States.ArrayLength($.list[*]))",
        " States.MathRandom(1, 9) ",
        "States.Format('\\\\{\\\\} {}', $['a b'])")) {
      assertDoesNotThrow(
          () -> AslValidator.validate(
              machine("`A`: {`Type`: `Pass`, `Parameters`: {`x.$`: `" + call + "`}, `End`: true}")),
          call);
    }
    assertTrue(
        rejected(machine("`A`: {`Type`: `Pass`, `Parameters`: {`x.$`: `States.Format('{}', 01)`}, "
                + "`End`: true}"))
            .contains("(Extra data: line 1 column 2 (char 1))"));
    assertTrue(rejected(machine("`A`: {`Type`: `Pass`, `Parameters`: {`x.$`: `"
            + "States.Array(".repeat(AslIntrinsics.MAX_CALL_DEPTH + 1) + "`}, `End`: true}"))
        .startsWith("States.A.Parameters.x.$: "));
  }

  @Test
  void valuesAreShownAsPythonsJsonDumpsShowsThem() {
    assertEquals("1e+20", AslText.number(1e20));
    assertEquals("1.5e-07", AslText.number(1.5e-7));
    assertEquals("0.0001", AslText.number(0.0001));
    assertEquals("1000000000000000.0", AslText.number(1e15));
    assertEquals(
        "\"it's \\\"q\\\" \\\\ \\n \\u0001 \u200b é\"",
        AslText.show("it's \"q\" \\ \n \u0001 \u200b é"));
    assertEquals(
        "[{\"a\": \"b\"}, true, null, 1e+20, 12345678901234567890]",
        AslText.show(json("[{`a`: `b`}, true, null, 1e20, 12345678901234567890]")));
    assertEquals(
        " (did you mean \"Next\"?)", AslText.suggest("Nxt", List.of("End", "Next", "Type")));
    assertEquals("", AslText.suggest("B", List.of("A")));
  }
}
