package sand.cluster;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** {@link BucketTables} in Cassandra: one partition per account. */
final class CassandraBucketTables implements BucketTables {
  private final CqlSession session;
  private final PreparedStatement create;
  private final PreparedStatement one;
  private final PreparedStatement list;
  private final PreparedStatement targets;
  private final PreparedStatement delete;
  private final PreparedStatement putFired;
  private final PreparedStatement fired;

  static void createSchema(CqlSession s, String ks) {
    s.execute("CREATE TABLE IF NOT EXISTS " + ks + ".buckets (owner text, name text, "
        + "targets list<text>, created timestamp, PRIMARY KEY (owner, name))");
    s.execute(
        "CREATE TABLE IF NOT EXISTS " + ks + ".bucket_fired_events (execution_id text PRIMARY KEY, "
            + "app_id text, app text, bucket text, event text)");
  }

  CassandraBucketTables(CqlSession session, String ks) {
    this.session = session;
    String cols = "owner, name, targets, created";
    create = Statements.prepare(
        session, "INSERT INTO " + ks + ".buckets (" + cols + ") VALUES (?, ?, ?, ?) IF NOT EXISTS");
    one = Statements.prepare(
        session, "SELECT " + cols + " FROM " + ks + ".buckets WHERE owner = ? AND name = ?");
    list =
        Statements.prepare(session, "SELECT " + cols + " FROM " + ks + ".buckets WHERE owner = ?");
    targets = Statements.prepare(
        session,
        "UPDATE " + ks + ".buckets SET targets = ? WHERE owner = ? AND name = ? IF EXISTS");
    delete = Statements.prepare(
        session, "DELETE FROM " + ks + ".buckets WHERE owner = ? AND name = ? IF EXISTS");
    String fcols = "execution_id, app_id, app, bucket, event";
    putFired = Statements.prepare(
        session,
        "INSERT INTO " + ks + ".bucket_fired_events (" + fcols
            + ") VALUES (?, ?, ?, ?, ?) USING TTL ?");
    fired = Statements.prepare(
        session, "SELECT " + fcols + " FROM " + ks + ".bucket_fired_events WHERE execution_id = ?");
  }

  private static Bucket bucket(Row r) {
    return new Bucket(
        r.getString("owner"),
        r.getString("name"),
        List.copyOf(r.getList("targets", String.class)),
        r.getInstant("created"));
  }

  @Override
  public boolean createBucket(Bucket b) {
    return session
        .execute(create.bind(b.owner(), b.name(), b.targets(), b.created()))
        .wasApplied();
  }

  @Override
  public Optional<Bucket> bucket(String owner, String name) {
    Row r = session.execute(one.bind(owner, name)).one();
    return r == null ? Optional.empty() : Optional.of(bucket(r));
  }

  @Override
  public List<Bucket> buckets(String owner) {
    List<Bucket> out = new ArrayList<>();
    session.execute(list.bind(owner)).forEach(r -> out.add(bucket(r)));
    return out;
  }

  @Override
  public boolean setTargets(String owner, String name, List<String> t) {
    return session.execute(targets.bind(t, owner, name)).wasApplied();
  }

  @Override
  public boolean deleteBucket(String owner, String name) {
    return session.execute(delete.bind(owner, name)).wasApplied();
  }

  @Override
  public void putFiredEvent(FiredEvent e, Duration keep) {
    session.execute(putFired.bind(
        e.executionId(), e.appId(), e.app(), e.bucket(), e.event(), (int) keep.toSeconds()));
  }

  @Override
  public Optional<FiredEvent> firedEvent(String executionId) {
    Row r = session.execute(fired.bind(executionId)).one();
    return r == null
        ? Optional.empty()
        : Optional.of(new FiredEvent(
            r.getString("execution_id"),
            r.getString("app_id"),
            r.getString("app"),
            r.getString("bucket"),
            r.getString("event")));
  }
}
