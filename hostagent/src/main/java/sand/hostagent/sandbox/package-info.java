/**
 * Sandboxes (paper §3.1, §4.1): one Docker container per application on this host, in which a
 * supervisor runs one grain worker per grain. {@link sand.hostagent.sandbox.SandboxManager} deploys,
 * undeploys, watches and restarts them through a {@link sand.hostagent.sandbox.DockerEngine}
 * ({@link sand.hostagent.sandbox.DockerHttpEngine} on the Engine's socket,
 * {@link sand.hostagent.sandbox.FakeDockerEngine} in tests). Contract: docs/host-agent.md, Sandbox.
 */
package sand.hostagent.sandbox;
