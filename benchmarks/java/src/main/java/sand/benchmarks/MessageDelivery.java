package sand.benchmarks;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.transport.TSocket;
import sand.localbus.thrift.BusError;
import sand.localbus.thrift.BusErrorCode;
import sand.common.ThriftServer;
import sand.localbus.thrift.LocalBus;

/**
 * Java side of benchmarks/message_delivery.py (paper Fig 5b): one role per process.
 *
 * <pre>
 * local-consumer|local-producer|local-throughput ADDRESS AGENT_CRED APP_CRED --count N --warmup W --gap-ms G
 *   (ADDRESS is host:port or unix:/path/of/the/bus.sock)
 * kafka-consumer|kafka-producer BOOTSTRAP TOPIC --count N --warmup W --gap-ms G
 * </pre>
 * Send times are System.nanoTime() (CLOCK_MONOTONIC, system-wide on Linux, so comparable across
 * processes). A consumer prints "ready" once connected, then one JSON line with the latencies.
 */
public final class MessageDelivery {
  private static final String QUEUE = "bench/consumer";
  private static final int PAYLOAD_BYTES = 100;

  private MessageDelivery() {}

  public static void main(String[] args) throws Exception {
    String role = args[0];
    int count = intArg(args, "--count", 2000);
    int warmup = intArg(args, "--warmup", 100);
    long gapNanos = (long) (Double.parseDouble(stringArg(args, "--gap-ms", "2")) * 1_000_000);
    switch (role) {
      case "local-consumer" -> localConsumer(args[1], args[3], count, warmup);
      case "local-producer" -> localProducer(args[1], args[3], count, gapNanos);
      case "local-throughput" -> localThroughput(args[1], args[3], count);
      case "kafka-consumer" -> kafkaConsumer(args[1], args[2], count, warmup);
      case "kafka-producer" -> kafkaProducer(args[1], args[2], count, gapNanos);
      default -> throw new IllegalArgumentException("unknown role " + role);
    }
  }

  /** A client on {@code host:port} (TCP) or {@code unix:/path} (the bus's Unix socket). */
  private static LocalBus.Client bus(String address) throws Exception {
    if (address.startsWith("unix:")) {
      return new LocalBus.Client(new TBinaryProtocol(ThriftServer.connectUnix(Path.of(address.substring("unix:".length())))));
    }
    int colon = address.lastIndexOf(':');
    TSocket socket = new TSocket(address.substring(0, colon), Integer.parseInt(address.substring(colon + 1)));
    socket.open();
    return new LocalBus.Client(new TBinaryProtocol(socket));
  }


  private static ByteBuffer stamp() {
    ByteBuffer b = ByteBuffer.allocate(PAYLOAD_BYTES);
    b.putLong(0, System.nanoTime());
    return b;
  }

  private static void localConsumer(String address, String cred, int count, int warmup) throws Exception {
    LocalBus.Client c = bus(address);
    c.poll(cred, QUEUE, 1000, 0);
    System.out.println("ready");
    System.out.flush();
    long[] lat = new long[count];
    int n = 0;
    while (n < count) {
      for (ByteBuffer m : c.poll(cred, QUEUE, 1, 10_000)) {
        lat[n++] = System.nanoTime() - m.getLong(m.position());
      }
    }
    report(lat, warmup);
  }

  private static void localProducer(String address, String cred, int count, long gapNanos) throws Exception {
    LocalBus.Client c = bus(address);
    for (int i = 0; i < count; i++) {
      c.publish(cred, QUEUE, stamp());
      pause(gapNanos);
    }
  }

  private static void localThroughput(String address, String cred, int count) throws Exception {
    LocalBus.Client consumer = bus(address);
    consumer.poll(cred, QUEUE, 1000, 0);
    AtomicReference<Throwable> failed = new AtomicReference<>();
    Thread producer = new Thread(() -> {
      try {
        LocalBus.Client p = bus(address);
        ByteBuffer payload = ByteBuffer.allocate(PAYLOAD_BYTES);
        for (int i = 0; i < count; i++) {
          try {
            p.publish(cred, QUEUE, payload.duplicate());
          } catch (BusError e) {
            if (e.code != BusErrorCode.QUEUE_FULL) {
              throw e;
            }
            pause(1_000_000); // the consumer fell behind (a busy machine): back off and retry, as told
            i--;
          }
        }
      } catch (Exception e) {
        failed.set(e);
      }
    });
    long t0 = System.nanoTime();
    producer.start();
    int got = 0;
    while (got < count) {
      got += consumer.poll(cred, QUEUE, 1000, 1_000).size();
      if (failed.get() != null) {
        throw new IllegalStateException("the producer failed after " + got + " messages", failed.get());
      }
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    producer.join();
    System.out.println(count / seconds);
  }

  private static void kafkaConsumer(String bootstrap, String topic, int count, int warmup) {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("enable.auto.commit", "false");
    try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(),
        new ByteArrayDeserializer())) {
      TopicPartition tp = new TopicPartition(topic, 0);
      c.assign(List.of(tp));
      c.seekToEnd(List.of(tp));
      c.position(tp);
      System.out.println("ready");
      System.out.flush();
      long[] lat = new long[count];
      int n = 0;
      while (n < count) {
        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofSeconds(10))) {
          long now = System.nanoTime();
          if (n < count) {
            lat[n++] = now - ByteBuffer.wrap(r.value()).getLong(0);
          }
        }
      }
      report(lat, warmup);
    }
  }

  private static void kafkaProducer(String bootstrap, String topic, int count, long gapNanos) {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(),
        new ByteArraySerializer())) {
      for (int i = 0; i < count; i++) {
        producer.send(new ProducerRecord<>(topic, 0, null, stamp().array()));
        producer.flush();
        pause(gapNanos);
      }
    }
  }

  private static void pause(long nanos) {
    try {
      Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void report(long[] lat, int warmup) {
    long[] kept = Arrays.copyOfRange(lat, Math.min(warmup, lat.length), lat.length);
    List<String> parts = new ArrayList<>(kept.length);
    for (long v : kept) {
      parts.add(Long.toString(v));
    }
    System.out.println("{\"latencies_ns\": [" + String.join(",", parts) + "]}");
  }

  private static int intArg(String[] args, String name, int dflt) {
    return Integer.parseInt(stringArg(args, name, Integer.toString(dflt)));
  }

  private static String stringArg(String[] args, String name, String dflt) {
    for (int i = 0; i < args.length - 1; i++) {
      if (args[i].equals(name)) {
        return args[i + 1];
      }
    }
    return dflt;
  }
}
