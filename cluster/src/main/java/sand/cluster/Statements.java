package sand.cluster;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import java.util.regex.Pattern;

/**
 * The cluster state's prepared statements, marked idempotent unless they are conditional (a lightweight transaction:
 * {@code IF NOT EXISTS}, {@code IF EXISTS}, {@code IF col = ?}) or add to a value ({@code SET c = c + ?}). The driver
 * tries an idempotent request again on another node when its connection breaks under it (a Cassandra node killed):
 * without the mark, a read or an upsert in flight to a dying node failed its caller ("Unexpected error on channel", a
 * 502 for a request in the cluster's fault test). A conditional one is never tried again: a second try of a claim
 * that took would read "taken" and its caller would give up what it holds (a timer's tick, an application's name).
 */
final class Statements {
  private static final Pattern NOT_IDEMPOTENT = Pattern.compile(
      "\\bIF\\s+(NOT\\s+EXISTS|EXISTS|\\w+\\s*=)|\\bSET\\b.*\\b(\\w+)\\s*=\\s*\\2\\s*[-+]",
      Pattern.CASE_INSENSITIVE | Pattern.DOTALL);

  private Statements() {}

  static boolean idempotent(String cql) {
    return !NOT_IDEMPOTENT.matcher(cql).find();
  }

  static PreparedStatement prepare(CqlSession session, String cql) {
    return session.prepare(SimpleStatement.newInstance(cql).setIdempotent(idempotent(cql)));
  }
}
