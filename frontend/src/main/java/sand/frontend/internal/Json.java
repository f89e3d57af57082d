package sand.frontend.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;

/** The one JSON mapper of the frontend, and small helpers around it. */
public final class Json {
  public static final ObjectMapper MAPPER = new ObjectMapper();

  private Json() {}

  public static ObjectNode object() {
    return MAPPER.createObjectNode();
  }

  public static byte[] bytes(JsonNode node) {
    try {
      return MAPPER.writeValueAsBytes(node);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e); // a tree of JSON nodes always serialises
    }
  }

  public static String text(JsonNode node) {
    try {
      return MAPPER.writeValueAsString(node);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Parse JSON text; 400 naming {@code what} and the position when it is not JSON. */
  public static JsonNode parse(byte[] body, String what) {
    try {
      JsonNode n = MAPPER.readTree(body);
      if (n == null || n.isMissingNode()) {
        throw ApiException.badRequest(what + " is empty: send a JSON value");
      }
      return n;
    } catch (JsonProcessingException e) {
      var loc = e.getLocation();
      throw ApiException.badRequest(what + " is not valid JSON: " + e.getOriginalMessage()
          + (loc == null ? "" : " at line " + loc.getLineNr() + " column " + loc.getColumnNr()));
    } catch (IOException e) {
      throw ApiException.badRequest(what + " cannot be read: " + e.getMessage());
    }
  }

  /** Parse stored JSON text (written by us or a grain); null stays null, unparsable text becomes a string. */
  public static JsonNode stored(String text) {
    if (text == null) {
      return null;
    }
    try {
      return MAPPER.readTree(text);
    } catch (JsonProcessingException e) {
      return MAPPER.getNodeFactory().textNode(text);
    }
  }
}
