package sand.localbus;

/**
 * One message of a batch: the queue it goes to and its payload. The bus keeps the payload array as
 * is (no copy): do not change it after publishing.
 */
public record Delivery(String queue, byte[] payload) {}
