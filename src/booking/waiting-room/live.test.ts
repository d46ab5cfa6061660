import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { sql } from 'kysely';
import { type BookingTestApp, book, bookingTestApp, hold, seedShow } from '../../../test/support/booking.ts';
import { sseEvents } from '../../../test/support/sse-reader.ts';
import { TEST_CARDS } from '../../payments/api.ts';
import type { BookingTestSeams } from '../module.ts';
import type { QueueStatus } from './schemas.ts';

/**
 * The live positions of a waiting room when pub/sub is not enough: a message lost on the way, an
 * admission made while a stream reads its first position. One admission at a time.
 */
const apps: BookingTestApp[] = [];
after(() => Promise.all(apps.map((app) => app.close())));

async function hotShowApp(resyncSeconds: number, seams?: BookingTestSeams) {
  const t = await bookingTestApp({
    env: { BOOKING_QUEUE_CAPACITY: '1', BOOKING_LIVE_RESYNC_SECONDS: String(resyncSeconds) },
    seams,
  });
  apps.push(t);
  const { showId } = await seedShow(t, { hot: true });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.app.server.address() as { port: number };
  /** `userId`'s place in line, asked over the API. */
  const queue = async (userId: string): Promise<QueueStatus> =>
    (await t.app.inject({ url: `/api/v1/shows/${showId}/queue`, headers: t.asUser(userId) })).json();
  /** `userId`'s live stream of positions. */
  const events = async (userId: string) => {
    const response = await fetch(`http://127.0.0.1:${port}/api/v1/shows/${showId}/queue/events`, {
      headers: t.asUser(userId),
    });
    assert.equal(response.status, 200);
    return sseEvents(response);
  };
  return { t, showId, queue, events };
}

describe('live waiting-room positions', () => {
  test('an admission whose pub/sub message was lost reaches the stream at the next re-read', async () => {
    const { t, showId, queue, events } = await hotShowApp(1);
    const [first, second] = [randomUUID(), randomUUID()];
    assert.equal((await queue(first)).status, 'ADMITTED');
    const stream = await events(second);
    try {
      assert.equal((await stream.until<QueueStatus>('position')).position, 1);
      // What finishing and admitting do, but without the message that would tell the processes.
      const now = t.clock.now();
      await sql`update booking_queue_entries set
          status = case when user_id = ${first} then 'DONE' else 'ADMITTED' end,
          admitted_at = ${now}, admitted_until = ${new Date(now.getTime() + 10 * 60_000)}
        where show_id = ${showId}`.execute(t.adapters.database.db);
      const admitted = await stream.until<QueueStatus>('admitted');
      assert.equal(admitted.user_id, second);
      assert.ok(admitted.admission_token);
    } finally {
      await stream.cancel();
    }
  });

  test('an admission made while a stream reads its first position still reaches it', async () => {
    // Once armed, the stream's read of its entry admits it (the admitted user books) right after.
    let duringRead: (() => Promise<void>) | undefined;
    const { t, showId, queue, events } = await hotShowApp(600, {
      waitingRoomRepository: (repo) => ({
        ...repo,
        async entry(show, user) {
          const row = await repo.entry(show, user);
          const act = duringRead;
          duringRead = undefined;
          await act?.();
          return row;
        },
      }),
    });
    const [first, second] = [randomUUID(), randomUUID()];
    const { admission_token } = await queue(first);
    assert.ok(admission_token);
    duringRead = async () => {
      const held = (await hold(t, showId, ['B1'], first, admission_token)).json();
      assert.equal((await book(t, held, TEST_CARDS.success)).statusCode, 201);
    };
    const stream = await events(second);
    try {
      const opening = await stream.next();
      assert.deepEqual([opening.event, (opening.data as QueueStatus).position], ['position', 1]);
      assert.equal(duringRead, undefined, 'the admission came while the stream read its position');
      assert.equal((await stream.until<QueueStatus>('admitted')).user_id, second);
    } finally {
      await stream.cancel();
    }
  });
});
