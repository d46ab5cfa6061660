import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { realServices, uniqueName } from '../../../test/support/platform.ts';
import { createMemoryPubSub, createRedisPubSub, type PubSub } from './index.ts';

/** Two handles on one bus: for Redis they are separate connections, like two processes. */
const subjects: [string, () => Promise<[PubSub, PubSub]>][] = [
  [
    'memory',
    async () => {
      const bus = createMemoryPubSub();
      return [bus, bus];
    },
  ],
];
if (realServices.redisUrl) {
  const url = realServices.redisUrl;
  const connections: Redis[] = [];
  after(() => {
    for (const connection of connections) connection.disconnect();
  });
  subjects.push([
    'redis',
    async () => {
      const prefix = uniqueName();
      const open = () => {
        const connection = new Redis(url, { maxRetriesPerRequest: 1 });
        connections.push(connection);
        return connection;
      };
      return [createRedisPubSub(open(), open(), prefix), createRedisPubSub(open(), open(), prefix)];
    },
  ]);
}

const until = async (check: () => boolean, ms = 2000) => {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await sleep(10);
};

for (const [name, make] of subjects) {
  describe(`pub/sub contract: ${name}`, () => {
    test('fans out to every subscriber, on every handle', async () => {
      const [one, two] = await make();
      const seen: string[] = [];
      await one.subscribe('board', (m) => seen.push(`one:${(m as { n: number }).n}`));
      await two.subscribe('board', (m) => seen.push(`two:${(m as { n: number }).n}`));
      await one.publish('board', { n: 1 });
      await two.publish('board', { n: 2 });
      await until(() => seen.length === 4);
      assert.deepEqual(seen.sort(), ['one:1', 'one:2', 'two:1', 'two:2']);
    });

    test('channels are separate and unsubscribing stops delivery', async () => {
      const [one, two] = await make();
      const seen: unknown[] = [];
      const stop = await two.subscribe('a', (m) => seen.push(m));
      await two.subscribe('b', () => seen.push('wrong channel'));
      await one.publish('a', { first: true });
      await until(() => seen.length === 1);
      await stop();
      await one.publish('a', { second: true });
      await sleep(100);
      assert.deepEqual(seen, [{ first: true }]);
    });
  });
}

test('redis: the last subscriber leaving while another subscribe is in flight leaves the channel subscribed', {
  skip: !realServices.redisUrl && 'needs Redis (REDIS_URL)',
}, async () => {
  const publisher = new Redis(realServices.redisUrl!, { maxRetriesPerRequest: 1 });
  const subscriber = new Redis(realServices.redisUrl!, { maxRetriesPerRequest: 1 });
  try {
    // Redis has the second SUBSCRIBE at once; this process hears back only when let go.
    const subscribe = subscriber.subscribe.bind(subscriber);
    let calls = 0;
    let letGo = () => {};
    const held = new Promise<void>((resolve) => {
      letGo = resolve;
    });
    subscriber.subscribe = (async (...channels: string[]) => {
      const answer = await subscribe(...channels);
      if (++calls === 2) await held;
      return answer;
    }) as typeof subscriber.subscribe;
    const bus = createRedisPubSub(publisher, subscriber, uniqueName());

    const seen: unknown[] = [];
    const first = bus.subscribe('c', () => {});
    const second = bus.subscribe('c', (message) => seen.push(message));
    await (await first)();
    letGo();
    await second;
    await bus.publish('c', { n: 1 });
    await until(() => seen.length === 1);
    assert.deepEqual(seen, [{ n: 1 }]);
  } finally {
    publisher.disconnect();
    subscriber.disconnect();
  }
});
