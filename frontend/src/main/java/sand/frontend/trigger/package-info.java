/**
 * Events from the world (docs/triggers.md): timers whose every tick runs an application once in the cluster
 * ({@link sand.frontend.trigger.TimerScheduler}), Kafka topics whose records run it
 * ({@link sand.frontend.trigger.QueueConsumers}), and what makes work that no caller waits for dependable: retries,
 * dead letters and idempotency keys ({@link sand.frontend.trigger.Deliveries}).
 */
package sand.frontend.trigger;
