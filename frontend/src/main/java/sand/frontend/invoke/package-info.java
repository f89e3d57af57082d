/**
 * The end-user request path: {@code POST /app/{app}} ({@link sand.frontend.invoke.InvokeHandler}) to the entry
 * grain through a host agent's gate ({@link sand.frontend.invoke.AgentGates}) or Kafka, and the result back from
 * the gate or this frontend's response topic ({@link sand.frontend.invoke.ResponseListener}, {@link
 * sand.frontend.invoke.Results}), with the executions' records ({@link sand.frontend.invoke.ExecutionLog}).
 */
package sand.frontend.invoke;
