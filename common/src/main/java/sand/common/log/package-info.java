/**
 * How SAND's Java processes log: {@link sand.common.log.SandLayout} (ISO-8601 UTC times, component, host, app and
 * execution on every line; text or JSON lines), {@link sand.common.log.LogIdentity} (what the lines name),
 * wired by common's {@code logback.xml} (stderr) and {@code logback-file.xml} (a file the process rolls itself).
 */
package sand.common.log;
