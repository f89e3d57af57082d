// SAND local message bus (paper §3.2, §4.1): one per host, named FIFO queues served over Thrift.
//
// Queue names are "<application>/<grain>" for grain queues. The host agent's queue (LQ_HA) is the
// single host-wide queue named "__ha__": every application may publish to it, only the host agent may
// poll it, and every message taken from it carries the application that published it as stamped by
// the bus (a grain cannot pretend to be another application).
//
// Every call carries a credential. An application's credential reaches only "<its app>/..." queues
// (plus publishing to LQ_HA); the host agent's credential reaches every queue.

namespace java sand.localbus.thrift
namespace py localbus

const string HOST_AGENT_QUEUE = "__ha__"
// The longest a poll waits for a message (a longer timeoutMs is clamped to it): a waiting grain worker
// asks for this much, so an idle one wakes up once a minute, not once a second.
const i32 MAX_POLL_TIMEOUT_MS = 60000

enum BusErrorCode {
  UNAUTHORIZED = 1,   // unknown credential, or a queue of another application
  QUEUE_FULL = 2,     // bounded queue at capacity: back off and retry (nothing was enqueued)
  TOO_LARGE = 3,      // message above the configured size limit
  BAD_REQUEST = 4,    // malformed queue name, bad argument
  QUOTA_EXCEEDED = 5, // the application's (or the host's) share of the bus is used up: back off and retry
}

exception BusError {
  1: BusErrorCode code,
  2: string message,
}

// One message of a batch: where it goes and what it is.
struct Delivery {
  1: string queue,
  2: binary payload,
}

// A message taken from LQ_HA: the payload and the application the bus saw publish it.
struct HostAgentMessage {
  1: string application,
  2: binary payload,
}

service LocalBus {
  // Append one message to the tail of a queue (created on demand).
  void publish(1: string credential, 2: string queue, 3: binary payload) throws (1: BusError err),

  // Append every delivery, all or nothing: if any queue is full or not allowed, none is enqueued.
  // A grain instance publishes its outputs to the next grains and its copy to LQ_HA in one call.
  void publishBatch(1: string credential, 2: list<Delivery> deliveries) throws (1: BusError err),

  // Take up to maxMessages from the head of a queue, waiting up to timeoutMs for the first one.
  // A publish wakes a waiting poller at once. Returns an empty list on timeout.
  list<binary> poll(1: string credential, 2: string queue, 3: i32 maxMessages, 4: i32 timeoutMs)
      throws (1: BusError err),

  // Same for LQ_HA (host agent credential only), with the publishing application of each message.
  list<HostAgentMessage> pollHostAgent(1: string credential, 2: i32 maxMessages, 3: i32 timeoutMs)
      throws (1: BusError err),

  // Messages currently in a queue (0 for a queue that does not exist).
  i32 length(1: string credential, 2: string queue) throws (1: BusError err),

  // Drop a queue and the messages in it; returns how many messages were dropped.
  i32 deleteQueue(1: string credential, 2: string queue) throws (1: BusError err),

  // Host agent credential only: let applicationCredential act for application (a new sandbox), or
  // take every credential of an application away (undeploy). The embedding host agent normally does
  // this in-process; the calls exist for a standalone bus (tests, benchmarks).
  void grantApplication(1: string credential, 2: string application, 3: string applicationCredential)
      throws (1: BusError err),
  void revokeApplication(1: string credential, 2: string application) throws (1: BusError err),
}
