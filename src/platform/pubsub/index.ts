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
 * all local subscribers, and each channel is subscribed in Redis once however many listen.
 */
export function createRedisPubSub(publisher: Redis, subscriber: Redis, prefix: string): PubSub {
  const local = new EventEmitter();
  local.setMaxListeners(0);
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
  return {
    kind: 'redis',
    async publish(channel, message) {
      await publisher.publish(name(channel), JSON.stringify(message));
    },
    async subscribe(channel, handler) {
      const full = name(channel);
      if (local.listenerCount(full) === 0) await subscriber.subscribe(full);
      local.on(full, handler);
      return async () => {
        local.off(full, handler);
        if (local.listenerCount(full) === 0) await subscriber.unsubscribe(full);
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
