import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import {
  assertProblem,
  type BookingTestApp,
  book,
  bookingTestApp,
  hold,
  seedShow,
} from '../../../test/support/booking.ts';
import { TEST_CARDS } from '../../payments/api.ts';
import type { QueueStatus } from './schemas.ts';
import { estimateWait } from './service.ts';

let t: BookingTestApp;
let hotShow: string;
const users = Array.from({ length: 150 }, () => randomUUID());

before(async () => {
  t = await bookingTestApp();
  hotShow = (await seedShow(t, { hot: true })).showId;
});
after(() => t.close());

/** `userId` joins (or asks about) the show's waiting room with their token. */
async function queue(showId: string, userId: string) {
  const response = await t.app.inject({ url: `/api/v1/shows/${showId}/queue`, headers: t.asUser(userId) });
  assert.equal(response.statusCode, 200, response.body);
  return response.json();
}

/** Reads Server-Sent Events from a real connection until `until` returns true. */
async function readEvents(
  url: string,
  headers: Record<string, string>,
  until: (events: { event: string; data: QueueStatus }[]) => boolean,
  act?: () => Promise<void>,
) {
  const controller = new AbortController();
  const response = await fetch(url, { headers, signal: controller.signal });
  assert.equal(response.status, 200);
  assert.match(String(response.headers.get('content-type')), /text\/event-stream/);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: { event: string; data: QueueStatus }[] = [];
  let buffer = '';
  let acted = false;
  const deadline = Date.now() + 10_000;
  try {
    while (!until(events)) {
      if (Date.now() > deadline) throw new Error(`no such event in ${JSON.stringify(events)}`);
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const chunk = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(chunk)?.[1];
        const data = /^data: (.*)$/m.exec(chunk)?.[1];
        if (event && data) events.push({ event, data: JSON.parse(data) });
        end = buffer.indexOf('\n\n');
      }
      if (!acted && events.length > 0 && act) {
        acted = true;
        await act();
      }
    }
    return events;
  } finally {
    controller.abort();
  }
}

describe('the waiting room of a hot show', () => {
  test('a show that is not hot needs no queue', async () => {
    const { showId } = await seedShow(t);
    const status = await queue(showId, randomUUID());
    assert.equal(status.status, 'NOT_REQUIRED');
    assert.equal(status.position, 0);
    assert.equal(status.admission_token, null);
  });

  test('holding seats of a hot show needs an admission token (403 with the queue to join)', async () => {
    const user = randomUUID();
    const body = assertProblem(await hold(t, hotShow, ['A1'], user), 403, 'admission_required');
    // The token says who joins: the queue's address names nobody.
    assert.equal(body.queue_url, `/api/v1/shows/${hotShow}/queue`);
    assertProblem(await hold(t, hotShow, ['A1'], user, '99999999999999.forged'), 403, 'admission_required');
  });

  test('100 are admitted at a time: the first 100 get a token, the next wait with position and estimated wait', async () => {
    for (const [index, user] of users.entries()) {
      const status = await queue(hotShow, user);
      if (index < 100) {
        assert.equal(status.status, 'ADMITTED', `user ${index}`);
        assert.ok(status.admission_token);
      } else {
        assert.equal(status.status, 'WAITING', `user ${index}`);
        assert.equal(status.position, index - 99);
        assert.equal(status.estimated_wait, '10 minutes');
        assert.equal(status.estimated_wait_seconds, 600);
        assert.equal(status.admission_token, null);
      }
    }
    const again = await queue(hotShow, users[149]);
    assert.equal(again.position, 50, 'asking again keeps the place');
    assert.equal(again.waiting, 50);
  });

  test('the token lets its user hold seats of that show, and nobody else', async () => {
    const admitted = await queue(hotShow, users[0]);
    assert.equal((await queue(hotShow, users[0])).admission_token, admitted.admission_token, 'stable');
    assertProblem(
      await hold(t, hotShow, ['A1'], users[1], admitted.admission_token),
      403,
      'admission_required',
    );
    const { showId: otherHot } = await seedShow(t, { hot: true });
    assertProblem(
      await hold(t, otherHot, ['A1'], users[0], admitted.admission_token),
      403,
      'admission_required',
    );
    const held = await hold(t, hotShow, ['A1', 'A2'], users[0], admitted.admission_token);
    assert.equal(held.statusCode, 201, held.body);
    const header = await t.app.inject({
      method: 'POST',
      url: `/api/v1/shows/${hotShow}/hold`,
      headers: {
        ...t.asUser(users[2]),
        'x-admission-token': (await queue(hotShow, users[2])).admission_token,
      },
      payload: { seat_ids: ['A3'], user_id: users[2] },
    });
    assert.equal(header.statusCode, 201, header.body);
  });

  test('booking frees the slot: the first in line is admitted and told over SSE', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address() as { port: number };
    const url = `http://127.0.0.1:${address.port}/api/v1/shows/${hotShow}/queue/events`;
    const token = (await queue(hotShow, users[3])).admission_token;
    const events = await readEvents(
      url,
      t.asUser(users[100]),
      (seen) => seen.some((e) => e.event === 'admitted'),
      async () => {
        const held = (await hold(t, hotShow, ['B1'], users[3], token)).json();
        assert.equal((await book(t, held, TEST_CARDS.success)).statusCode, 201);
      },
    );
    assert.equal(events[0].event, 'position');
    assert.equal(events[0].data.position, 1);
    const admitted = events.find((e) => e.event === 'admitted')!;
    assert.equal(admitted.data.status, 'ADMITTED');
    assert.ok(admitted.data.admission_token);
    assert.equal((await queue(hotShow, users[101])).position, 1, 'everyone behind moved up');
  });

  test('when the batch’s 10 minutes are up, the next in line are admitted (clock + scheduler job)', async () => {
    const oldToken = (await queue(hotShow, users[5])).admission_token;
    t.clock.advance(10 * 60_000);
    assert.ok(await t.app.platform.scheduler.runTick('booking.queue_admit', t.clock.now()));
    const { rows } = await sql<{ live: number; waiting: number }>`select
        count(*) filter (where status = 'ADMITTED' and admitted_until > ${t.clock.now()})::int as live,
        count(*) filter (where status = 'WAITING')::int as waiting
      from booking_queue_entries where show_id = ${hotShow}`.execute(t.adapters.database.db);
    // 150 joined; 101 were admitted (user 3 booked and user 100 took the slot); the other 49 now.
    assert.deepEqual(rows[0], { live: 49, waiting: 0 });
    assert.equal((await queue(hotShow, users[149])).status, 'ADMITTED');
    assertProblem(await hold(t, hotShow, ['C1'], users[5], oldToken), 403, 'admission_required');
  });

  test('marking a show hot (admin) puts its holds behind the waiting room at once', async () => {
    const { showId } = await seedShow(t);
    assert.equal((await hold(t, showId, ['A1'])).statusCode, 201);
    const marked = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/admin/shows/${showId}`,
      headers: t.asAdmin,
      payload: { is_hot: true },
    });
    assert.equal(marked.statusCode, 200, marked.body);
    assert.equal(marked.json().is_hot, true);
    assertProblem(await hold(t, showId, ['A2']), 403, 'admission_required');
    const unmarked = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/admin/shows/${showId}`,
      headers: t.asAdmin,
      payload: { is_hot: false },
    });
    assert.equal(unmarked.json().is_hot, false);
    assert.equal((await hold(t, showId, ['A2'])).statusCode, 201);
    const noKey = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/admin/shows/${showId}`,
      payload: { is_hot: true },
    });
    assertProblem(noKey, 401, 'unauthorized');
  });

  test("unknown show 404, bad user id 400, another user's id 403, no token 401", async () => {
    const user = randomUUID();
    const ask = (url: string, headers: Record<string, string> = t.asUser(user)) =>
      t.app.inject({ url, headers });
    assertProblem(await ask(`/api/v1/shows/${randomUUID()}/queue`), 404, 'show_not_found');
    assertProblem(await ask(`/api/v1/shows/${hotShow}/queue?user_id=bob`), 400, 'validation_failed');
    assertProblem(await ask(`/api/v1/shows/${hotShow}/queue?user_id=${randomUUID()}`), 403, 'forbidden');
    assert.equal(
      (await ask(`/api/v1/shows/${hotShow}/queue?user_id=${user}`)).statusCode,
      200,
      'their own id',
    );
    assertProblem(await ask(`/api/v1/shows/${hotShow}/queue?user_id=${user}`, {}), 401, 'unauthorized');
    assertProblem(await ask(`/api/v1/shows/${hotShow}/queue/events`, {}), 401, 'unauthorized');
  });
});

test('estimated wait: worst case, slots free as live admissions end, then every 10 minutes', () => {
  const now = new Date('2026-01-05T12:00:00Z');
  const at = (minutes: number) => new Date(now.getTime() + minutes * 60_000);
  const ends = [at(2), at(5), at(9)];
  assert.equal(estimateWait(1, ends, 3, 600_000, now), 2 * 60_000);
  assert.equal(estimateWait(3, ends, 3, 600_000, now), 9 * 60_000);
  assert.equal(estimateWait(4, ends, 3, 600_000, now), 12 * 60_000);
  assert.equal(estimateWait(1, [at(2)], 3, 600_000, now), 0, 'free slots admit at once');
});
