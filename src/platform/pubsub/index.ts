import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';

/** Fan-out of small JSON messages to every subscriber in every process (live pages, SSE). */
export interface PubSub {
  readonly kind: 'memory' | 'redis';
  publish(channel: string, message: unknown): Promise<void>;
  /** Resolves once the subscription is active; call the returned function to stop. */
  subscribe(channel: string, handler: (message: unknown) => void): Promise<() => Promise<void>>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export function createMemoryPubSub(): PubSub {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return {
    kind: 'memory',
    async publish(channel, message) {
      // Same contract as Redis: subscribers receive a copy, never the publisher's object.
      const copy = JSON.stringify(message);
      queueMicrotask(() => emitter.emit(channel, JSON.parse(copy)));
    },
    async subscribe(channel, handler) {
      emitter.on(channel, handler);
      return async () => {
        emitter.off(channel, handler);
      };
    },
    ping: async () => {},
    close: async () => {
      emitter.removeAllListeners();
    },
  };
}

/**
 * Redis pub/sub needs a connection of its own in subscriber mode; one per process is shared by
 * all local subscribers, and each channel is subscribed in Redis once however many listen. A
 * channel's local subscribers are counted from the moment they ask, not from when Redis answers:
 * a last subscriber leaving while another's SUBSCRIBE is in flight must not UNSUBSCRIBE under it.
 * The connection sends commands in the order they are given, so an UNSUBSCRIBE and a later
 * SUBSCRIBE of the same channel reach Redis in that order.
 */
export function createRedisPubSub(publisher: Redis, subscriber: Redis, prefix: string): PubSub {
  const local = new EventEmitter();
  local.setMaxListeners(0);
  const channels = new Map<string, { subscribers: number; subscribed: Promise<unknown> }>();
  const name = (channel: string) => `${prefix}:ps:${channel}`;
  subscriber.on('message', (fullChannel: string, raw: string) => {
    let message: unknown;
    try {
      message = JSON.parse(raw);
    } catch {
      return;
    }
    local.emit(fullChannel, message);
  });

  /** One subscriber fewer; the last one out unsubscribes the channel in Redis. */
  async function leave(full: string, entry: { subscribers: number }) {
    entry.subscribers--;
    if (entry.subscribers > 0 || channels.get(full) !== entry) return;
    channels.delete(full);
    await subscriber.unsubscribe(full);
  }

  return {
    kind: 'redis',
    async publish(channel, message) {
      await publisher.publish(name(channel), JSON.stringify(message));
    },
    async subscribe(channel, handler) {
      const full = name(channel);
      let entry = channels.get(full);
      if (!entry) {
        entry = { subscribers: 0, subscribed: subscriber.subscribe(full) };
        channels.set(full, entry);
      }
      entry.subscribers++;
      const joined = entry;
      try {
        await joined.subscribed;
      } catch (error) {
        await leave(full, joined).catch(() => {});
        throw error;
      }
      local.on(full, handler);
      return async () => {
        local.off(full, handler);
        await leave(full, joined);
      };
    },
    async ping() {
      await publisher.ping();
    },
    async close() {
      local.removeAllListeners();
    },
  };
}
