import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyReply, FastifyRequest } from 'fastify';
import pino from 'pino';
import type { SseStream } from '../../platform/http/sse.ts';
import { createMemoryPubSub } from '../../platform/pubsub/index.ts';
import { createLiveFeed } from './live.ts';
import { type FeedAnnouncement, feedChannel } from './service.ts';

/**
 * The live feed's unread count against a mark made meanwhile: a count read before the mark
 * committed must not reach the page after the mark's own count (the page would show it until the
 * next event). The repository is a stand-in whose count the test answers by hand, so the read can
 * be held open across the mark.
 */
test('an unread count read while a mark was announced is read again, never sent stale after it', async () => {
  const pubsub = createMemoryPubSub();
  const sent: { event: string; data: unknown }[] = [];
  let close = () => {};
  const stream: SseStream = {
    send: (event, data) => sent.push({ event, data }),
    closed: new Promise<void>((resolve) => {
      close = resolve;
    }),
    close: () => close(),
  };
  let count = 3;
  const reads: ((unread: number) => void)[] = [];
  const live = createLiveFeed({
    pubsub,
    sse: { open: () => stream },
    repo: {
      after: async () => [],
      lastSeq: async () => '0',
      unread: () => new Promise<number>((resolve) => reads.push(resolve)),
    },
    log: pino({ level: 'silent' }),
    pollMs: 60_000,
  });
  const user = 'u1';
  const done = live.stream(user, undefined, {} as FastifyRequest, {} as FastifyReply);
  /** The count read the stream has started, answered by the caller. */
  const nextRead = async () => {
    for (let turn = 0; reads.length === 0; turn++) {
      assert.ok(turn < 100, 'the stream reads the count again');
      await new Promise((resolve) => setImmediate(resolve));
    }
    return reads.shift() as (unread: number) => void;
  };

  // The stream's first count is being read (3 unread) when the user marks everything read.
  const stale = await nextRead();
  count = 0;
  const mark: FeedAnnouncement = { kind: 'state', up_to: 'n1', mark: 'read', unread: count };
  await pubsub.publish(feedChannel(user), mark);
  await new Promise((resolve) => setImmediate(resolve));
  stale(3);
  (await nextRead())(count);
  await new Promise((resolve) => setImmediate(resolve));

  assert.deepEqual(
    sent.map(({ event, data }) => [event, (data as { unread: number }).unread]),
    [
      ['state', 0],
      ['unread', 0],
    ],
  );
  stream.close();
  await done;
  await pubsub.close();
});
