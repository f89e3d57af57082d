// The gate between the frontends and a host agent (docs/host-agent.md "The gate"): a frontend hands a request
// straight to a host agent that runs its entry grain, and takes its results straight from it, instead of
// through two Kafka round trips. Kafka still gets both: the agent backs the request up to the entry grain's
// topic (a 'processing' record, as for any event it delivers locally) and sends every result to the frontend's
// response topic too. A frontend that loses its connection to an agent before the backup of one of its
// requests was acknowledged puts that request into Kafka itself.
//
// Only platform processes hold the gate's credential (derived from the cluster secret); sandboxes have no
// network to reach it.

namespace java sand.contracts.gate

enum GateErrorCode {
  UNAUTHORIZED = 1,   // not the gate's credential
  BAD_REQUEST = 2,    // a malformed argument
}

exception GateError {
  1: GateErrorCode code,
  2: string message,
}

// What the agent did with a submitted event.
enum Admission {
  ACCEPTED = 0,       // in the entry grain's local queue; its backup to Kafka follows ("backed_up" on poll)
  NOT_HERE = 1,       // this host does not run the grain (or owns none of its partitions): use Kafka
  BUSY = 2,           // the local queue or the application's bus quota is full: use Kafka (it waits there)
  REFUSED = 3,        // not a valid request (bad envelope or tag): do not retry
}

service HostAgentGate {
  // Run each event (a request's JSON envelope, addressed to its application's entry grain) on this host.
  list<Admission> submit(1: string credential, 2: list<binary> events) throws (1: GateError err),

  // What this host has for frontend `frontend`, waiting up to timeoutMs for the first: each message is a JSON
  // object, either a result (the event that reached end, as on the response topic), {"backed_up": <event id>}
  // or a grain's management request (see answer).
  list<binary> poll(1: string credential, 2: string frontend, 3: i32 maxMessages, 4: i32 timeoutMs)
      throws (1: GateError err),
  // The reply to a grain's management request, which came in a poll as
  // {"management": {"id": <request id>, "app": <application id>, "request": {"action", "data"}}}
  // (LocalDataLayer.manage, docs/knix.md "From a grain"): the frontend ran it as the application's owner.
  void answer(1: string credential, 2: string requestId, 3: binary reply) throws (1: GateError err),
}
