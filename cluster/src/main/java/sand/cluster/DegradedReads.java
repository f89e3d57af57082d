package sand.cluster;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.context.DriverContext;
import com.datastax.oss.driver.api.core.retry.RetryVerdict;
import com.datastax.oss.driver.api.core.servererrors.WriteType;
import com.datastax.oss.driver.api.core.session.Request;
import com.datastax.oss.driver.internal.core.retry.ConsistencyDowngradingRetryPolicy;
import com.datastax.oss.driver.internal.core.retry.ConsistencyDowngradingRetryVerdict;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.common.log.LogThrottle;

/**
 * The cluster state's retry policy: a quorum read that a replica left unanswered (a node dead but not yet known to
 * be, so the coordinator still waited for it) is asked again at the consistency the replicas that did answer can
 * give, instead of failing. So the developer and admin API keep answering while a Cassandra node dies (issue 31: an
 * application's GET answered 502 "Cassandra timeout during read query at consistency LOCAL_QUORUM (2 responses were
 * required but only 1 replica responded)" while h3 crashed). The price: such a read may miss a write the dead node
 * alone had acknowledged; quorum writes are never weakened this way, because the driver asks a retry policy about a
 * write timeout only for idempotent statements, and the cluster state's writes are not marked so. Logged, at most
 * once a minute, so an operator sees the cluster ran degraded.
 */
public final class DegradedReads extends ConsistencyDowngradingRetryPolicy {
  private static final Logger LOG = LoggerFactory.getLogger(DegradedReads.class);
  private static final LogThrottle throttle = new LogThrottle(Duration.ofMinutes(1));
  private static final AtomicLong downgraded = new AtomicLong();

  /** The driver makes one per execution profile, by reflection (advanced.retry-policy.class). */
  public DegradedReads(DriverContext context, String profileName) {
    super(context, profileName);
  }

  /** For tests: no driver context (the prefix names the policy in the driver's own trace lines). */
  DegradedReads(String logPrefix) {
    super(logPrefix);
  }

  /** Requests answered at a lower consistency than asked, since this process started. */
  public static long downgraded() {
    return downgraded.get();
  }

  @Override
  public RetryVerdict onReadTimeoutVerdict(
      Request request,
      ConsistencyLevel cl,
      int blockFor,
      int received,
      boolean dataPresent,
      int retryCount) {
    return noted(
        super.onReadTimeoutVerdict(request, cl, blockFor, received, dataPresent, retryCount),
        "read timed out",
        cl,
        received,
        blockFor);
  }

  @Override
  public RetryVerdict onUnavailableVerdict(
      Request request, ConsistencyLevel cl, int required, int alive, int retryCount) {
    return noted(
        super.onUnavailableVerdict(request, cl, required, alive, retryCount),
        "unavailable",
        cl,
        alive,
        required);
  }

  @Override
  public RetryVerdict onWriteTimeoutVerdict(
      Request request,
      ConsistencyLevel cl,
      WriteType writeType,
      int blockFor,
      int received,
      int retryCount) {
    return noted(
        super.onWriteTimeoutVerdict(request, cl, writeType, blockFor, received, retryCount),
        "write timed out",
        cl,
        received,
        blockFor);
  }

  private static RetryVerdict noted(
      RetryVerdict v, String what, ConsistencyLevel cl, int got, int needed) {
    if (v instanceof ConsistencyDowngradingRetryVerdict) {
      downgraded.incrementAndGet();
      if (throttle.allow()) {
        LOG.warn(
            "cluster state: a request at {} {} ({} of {} replicas answered): asked again at the consistency they"
                + " can give ({} such requests so far; a Cassandra node is down or slow)",
            cl,
            what,
            got,
            needed,
            downgraded.get());
      }
    }
    return v;
  }
}
