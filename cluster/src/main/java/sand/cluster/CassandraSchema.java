package sand.cluster;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.servererrors.InvalidQueryException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The cluster state's keyspace and tables, made if missing (idempotent: every host agent and frontend runs it). */
final class CassandraSchema {
  private static final Logger LOG = LoggerFactory.getLogger(CassandraSchema.class);

  private CassandraSchema() {}

  static void create(CqlSession s, String ks, int replication) {
    s.execute(
        "CREATE KEYSPACE IF NOT EXISTS " + ks + " WITH replication = {'class': 'SimpleStrategy', "
            + "'replication_factor': " + replication + "}");
    s.execute(
        "CREATE TABLE IF NOT EXISTS " + ks + ".hosts (host_id text PRIMARY KEY, bus_address text, "
            + "gate_address text, "
            + "data_address text, capacity int, memory_mb int, started timestamp, heartbeat timestamp)");
    try { // a keyspace created before host agents had a gate
      s.execute("ALTER TABLE " + ks + ".hosts ADD gate_address text");
    } catch (InvalidQueryException e) {
      // the column exists
    }
    // a keyspace created before host agents reported their memory (issue 31): added once
    if (s.execute("SELECT column_name FROM system_schema.columns WHERE keyspace_name = '" + ks
                + "' AND table_name = 'hosts' AND column_name = 'memory_mb'")
            .one()
        == null) {
      try {
        s.execute("ALTER TABLE " + ks + ".hosts ADD memory_mb int");
      } catch (InvalidQueryException e) {
        // another process added it meanwhile
      }
    }
    // Heartbeats rewrite these rows every 2 s: a read never waits to repair a replica (a blocking
    // read repair
    // towards a node that just died timed out an API read while a quorum was alive), the next beat
    // does it.
    var rr = s.execute("SELECT read_repair FROM system_schema.tables WHERE keyspace_name = '" + ks
            + "' AND table_name = 'hosts'")
        .one();
    if (rr != null
        && !"NONE".equals(rr.getString("read_repair"))) { // once: a schema change is not free
      s.execute("ALTER TABLE " + ks + ".hosts WITH read_repair = 'NONE'");
    }
    s.execute(
        "CREATE TABLE IF NOT EXISTS " + ks + ".applications (app_id text PRIMARY KEY, name text, "
            + "owner text, workflow text, requirements text, settings text, version int, desired text, "
            + "hosts list<text>)");
    s.execute("CREATE TABLE IF NOT EXISTS " + ks
        + ".application_code (app_id text, resource text, code blob, "
        + "kind text, sha256 text, PRIMARY KEY (app_id, resource))");
    s.execute(
        "CREATE TABLE IF NOT EXISTS " + ks + ".app_hosts (app_id text, host_id text, status text, "
            + "error text, updated timestamp, PRIMARY KEY (app_id, host_id))");
    s.execute("CREATE TABLE IF NOT EXISTS " + ks
        + ".execution_logs (execution_id text, ts bigint, seq int, "
        + "grain text, level text, text text, PRIMARY KEY (execution_id, ts, seq))");
    s.execute("CREATE TABLE IF NOT EXISTS " + ks
        + ".cluster_secrets (name text PRIMARY KEY, value blob)");
    CassandraFrontendTables.createSchema(s, ks);
    CassandraApplicationRecords.createSchema(s, ks);
    CassandraSecretTables.createSchema(s, ks);
    CassandraHostSchedules.createSchema(s, ks);
    CassandraHostLoads.createSchema(s, ks);
    LOG.info("cluster state: keyspace {} ready", ks);
  }
}
