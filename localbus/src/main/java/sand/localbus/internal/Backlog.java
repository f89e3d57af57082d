package sand.localbus.internal;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The messages a {@link LocalQueue} holds, in the order they are taken. A grain queue is one FIFO
 * ({@link #fifo()}); LQ_HA is {@link #fair(Function) fair}: one FIFO per publishing application, taken
 * round-robin, so a burst from one application waits behind nobody else's next message. Not thread-safe:
 * the queue's lock guards it.
 *
 * @param <E> what is queued
 */
public interface Backlog<E> {

  void addLast(E e);

  /** Put a message back where it was taken from: it is the next one taken. */
  void addFirst(E e);

  E peekFirst();

  E pollFirst();

  int size();

  default boolean isEmpty() {
    return size() == 0;
  }

  /** Every message held, for a snapshot (in taking order for a FIFO). */
  void forEach(Consumer<? super E> action);

  /** Remove everything, handing each message to {@code dropped}. */
  void clear(Consumer<? super E> dropped);

  /** One FIFO. */
  static <E> Backlog<E> fifo() {
    return new Fifo<>();
  }

  /** One FIFO per key, taken round-robin across keys in the order they last became non-empty. */
  static <E> Backlog<E> fair(Function<? super E, String> key) {
    return new Fair<>(key);
  }

  /** A plain FIFO. */
  final class Fifo<E> implements Backlog<E> {
    private final ArrayDeque<E> items = new ArrayDeque<>();

    @Override
    public void addLast(E e) {
      items.addLast(e);
    }

    @Override
    public void addFirst(E e) {
      items.addFirst(e);
    }

    @Override
    public E peekFirst() {
      return items.peekFirst();
    }

    @Override
    public E pollFirst() {
      return items.pollFirst();
    }

    @Override
    public int size() {
      return items.size();
    }

    @Override
    public void forEach(Consumer<? super E> action) {
      items.forEach(action);
    }

    @Override
    public void clear(Consumer<? super E> dropped) {
      items.forEach(dropped);
      items.clear();
    }
  }

  /** Round-robin over per-key FIFOs; the key at the head of {@code turns} gives the next message. */
  final class Fair<E> implements Backlog<E> {
    private final Function<? super E, String> key;
    /** Keys with messages, in turn order; each FIFO is non-empty. */
    private final LinkedHashMap<String, ArrayDeque<E>> turns = new LinkedHashMap<>();

    private int size;

    Fair(Function<? super E, String> key) {
      this.key = key;
    }

    /** Messages of {@code k} waiting now. */
    public int sizeOf(String k) {
      ArrayDeque<E> q = turns.get(k);
      return q == null ? 0 : q.size();
    }

    @Override
    public void addLast(E e) {
      turns.computeIfAbsent(key.apply(e), k -> new ArrayDeque<>()).addLast(e);
      size++;
    }

    @Override
    public void addFirst(E e) {
      String k = key.apply(e);
      ArrayDeque<E> q = turns.remove(k);
      if (q == null) {
        q = new ArrayDeque<>();
      }
      q.addFirst(e);
      // its key takes the next turn: rebuild the order with it first (put-backs are rare)
      LinkedHashMap<String, ArrayDeque<E>> rest = new LinkedHashMap<>(turns);
      turns.clear();
      turns.put(k, q);
      turns.putAll(rest);
      size++;
    }

    @Override
    public E peekFirst() {
      Iterator<ArrayDeque<E>> it = turns.values().iterator();
      return it.hasNext() ? it.next().peekFirst() : null;
    }

    @Override
    public E pollFirst() {
      Iterator<Map.Entry<String, ArrayDeque<E>>> it = turns.entrySet().iterator();
      if (!it.hasNext()) {
        return null;
      }
      Map.Entry<String, ArrayDeque<E>> head = it.next();
      E e = head.getValue().pollFirst();
      it.remove();
      if (!head.getValue().isEmpty()) {
        turns.put(head.getKey(), head.getValue()); // to the back of the turn order
      }
      size--;
      return e;
    }

    @Override
    public int size() {
      return size;
    }

    @Override
    public void forEach(Consumer<? super E> action) {
      turns.values().forEach(q -> q.forEach(action));
    }

    @Override
    public void clear(Consumer<? super E> dropped) {
      turns.values().forEach(q -> q.forEach(dropped));
      turns.clear();
      size = 0;
    }
  }
}
