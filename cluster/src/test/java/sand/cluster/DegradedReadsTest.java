package sand.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.retry.RetryDecision;
import com.datastax.oss.driver.api.core.retry.RetryVerdict;
import com.datastax.oss.driver.internal.core.retry.DefaultRetryPolicy;
import org.junit.jupiter.api.Test;

class DegradedReadsTest {
  private final DegradedReads policy = new DegradedReads("test");
  private final SimpleStatement read = SimpleStatement.newInstance("SELECT * FROM sand.apps")
      .setConsistencyLevel(DefaultConsistencyLevel.LOCAL_QUORUM);

  @Test
  void aQuorumReadOneReplicaLeftUnansweredIsAskedAgainAtOne() {
    long before = DegradedReads.downgraded();
    RetryVerdict v =
        policy.onReadTimeoutVerdict(read, DefaultConsistencyLevel.LOCAL_QUORUM, 2, 1, false, 0);
    assertEquals(RetryDecision.RETRY_SAME, v.getRetryDecision());
    assertEquals(DefaultConsistencyLevel.ONE, v.getRetryRequest(read).getConsistencyLevel());
    assertEquals(before + 1, DegradedReads.downgraded());
    // the driver's default policy, which the cluster state used before, failed the read
    assertEquals(
        RetryDecision.RETHROW,
        new DefaultRetryPolicy(null, "default")
            .onReadTimeoutVerdict(read, DefaultConsistencyLevel.LOCAL_QUORUM, 2, 1, false, 0)
            .getRetryDecision());
  }

  @Test
  void itIsAskedAgainOnceAndNotWhenNoReplicaAnswered() {
    assertEquals(
        RetryDecision.RETHROW,
        policy
            .onReadTimeoutVerdict(read, DefaultConsistencyLevel.ONE, 2, 1, false, 1)
            .getRetryDecision());
    assertEquals(
        RetryDecision.RETHROW,
        policy
            .onReadTimeoutVerdict(read, DefaultConsistencyLevel.LOCAL_QUORUM, 2, 0, false, 0)
            .getRetryDecision());
  }

  @Test
  void aConditionalReadIsNeverWeakened() {
    assertEquals(
        RetryDecision.RETHROW,
        policy
            .onReadTimeoutVerdict(read, DefaultConsistencyLevel.SERIAL, 2, 1, false, 0)
            .getRetryDecision());
  }
}
