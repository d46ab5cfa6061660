import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import {
  assertProblem,
  type BookingTestApp,
  book,
  bookingTestApp,
  seatStatus,
  seedShow,
} from '../../../test/support/booking.ts';
import { TEST_CARDS } from '../../payments/api.ts';
import { createBookingsRepository } from '../bookings/repository.ts';
import { createHoldBatcher } from './hold-batch.ts';
import { type ClaimResult, createSeatsRepository, type NewHold } from './repository.ts';

/**
 * Abuse limits on holds: live holds per user per show (1) and per user (3), decided by the
 * database so concurrent holds of one user cannot all pass; holds and waiting-room joins per
 * client address.
 */
let t: BookingTestApp;
let shows: string[];
let address = 0;

before(async () => {
  t = await bookingTestApp({
    env: {
      BOOKING_HOLDS_PER_USER_SHOW: '1',
      BOOKING_HOLDS_PER_USER: '3',
      BOOKING_RATE_HOLD: '5/60',
      BOOKING_RATE_QUEUE: '3/60',
    },
  });
  shows = [];
  for (let i = 0; i < 5; i++) shows.push((await seedShow(t)).showId);
});
after(() => t.close());

/** A hold from a client address of its own, unless one is given (the per-address rate has its own test). */
function holdAs(
  userId: string,
  showId: string,
  seats: string[],
  from = `10.0.${address >> 8}.${address++ & 255}`,
) {
  return t.app.inject({
    method: 'POST',
    url: `/api/v1/shows/${showId}/hold`,
    remoteAddress: from,
    headers: t.asUser(userId),
    payload: { seat_ids: seats },
  });
}

async function liveHolds(userId: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from booking_holds
    where user_id = ${userId} and status = 'HELD' and expires_at > ${t.clock.now()}`.execute(
    t.adapters.database.db,
  );
  return rows[0].n;
}

describe('live holds per user', () => {
  test('a second hold of the same show is 409 hold_limit naming the first; it passes once that one is released', async () => {
    const user = randomUUID();
    const first = await holdAs(user, shows[0], ['A1']);
    assert.equal(first.statusCode, 201, first.body);
    const refused = assertProblem(await holdAs(user, shows[0], ['A2']), 409, 'hold_limit');
    assert.equal(refused.limit, 'per_show');
    assert.equal(refused.max, 1);
    assert.deepEqual(refused.hold_ids, [first.json().hold_id]);
    assert.equal((await seatStatus(t.app, shows[0])).A2, 'AVAILABLE', 'nothing held');
    const released = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/holds/${first.json().hold_id}`,
      headers: t.asUser(user),
    });
    assert.equal(released.statusCode, 200, released.body);
    assert.equal((await holdAs(user, shows[0], ['A2'])).statusCode, 201);
  });

  test('a script holding seats of many shows as one user is stopped at 3 live holds', async () => {
    const user = randomUUID();
    const answers = [];
    for (const [i, showId] of shows.entries()) answers.push(await holdAs(user, showId, [`B${i + 1}`]));
    assert.deepEqual(
      answers.map((answer) => answer.statusCode),
      [201, 201, 201, 409, 409],
    );
    const refused = assertProblem(answers[3], 409, 'hold_limit');
    assert.equal(refused.limit, 'per_user');
    assert.deepEqual(
      refused.hold_ids,
      answers.slice(0, 3).map((answer) => answer.json().hold_id),
    );
    assert.equal(await liveHolds(user), 3);
    // Another user is not held back by this one.
    assert.equal((await holdAs(randomUUID(), shows[4], ['B5'])).statusCode, 201);
  });

  test('a booked hold no longer counts, nor does an expired one (clock)', async () => {
    const user = randomUUID();
    const held = [];
    for (const [i, showId] of shows.slice(0, 3).entries())
      held.push((await holdAs(user, showId, [`C${i + 1}`])).json());
    assertProblem(await holdAs(user, shows[3], ['C4']), 409, 'hold_limit');
    assert.equal((await book(t, held[0], TEST_CARDS.success)).statusCode, 201);
    assert.equal(
      (await holdAs(user, shows[0], ['C5'])).statusCode,
      201,
      'the booked one is done: its show again',
    );
    assertProblem(await holdAs(user, shows[3], ['C4']), 409, 'hold_limit');
    t.clock.advance(10 * 60_000);
    assert.equal(
      (await holdAs(user, shows[3], ['C4'])).statusCode,
      201,
      'expired holds, swept or not, are gone',
    );
  });

  test('concurrent holds of one user on one show: exactly one is granted', async () => {
    const user = randomUUID();
    const answers = await Promise.all(
      ['D1', 'D2', 'D3', 'D4', 'D5', 'D6'].map((seat) => holdAs(user, shows[1], [seat])),
    );
    const codes = answers.map((answer) => answer.statusCode).sort();
    assert.deepEqual(codes, [201, 409, 409, 409, 409, 409], answers.map((a) => a.body).join('\n'));
    for (const answer of answers.filter((a) => a.statusCode === 409))
      assertProblem(answer, 409, 'hold_limit');
    assert.equal(await liveHolds(user), 1);
  });

  test('concurrent holds of one user on five shows: exactly three are granted', async () => {
    const user = randomUUID();
    const answers = await Promise.all(shows.map((showId) => holdAs(user, showId, ['E1'])));
    assert.equal(answers.filter((answer) => answer.statusCode === 201).length, 3);
    assert.equal(answers.filter((answer) => answer.statusCode === 409).length, 2);
    assert.equal(await liveHolds(user), 3);
  });
});

describe('the database decides the caps', () => {
  /** A hold of `user` on one of the shows, of one seat, made straight on the repository. */
  async function newHold(user: string, showId: string, label: string): Promise<NewHold> {
    const { rows } = await sql<{ id: string }>`select s.id::text as id from booking_seats s
      join booking_shows sh on sh.screen_id = s.screen_id
      where sh.id = ${showId} and s.row_number || s.seat_number = ${label}`.execute(t.adapters.database.db);
    const now = t.clock.now();
    return {
      id: randomUUID(),
      show_id: showId,
      user_id: user,
      seat_ids: [rows[0].id],
      seats: [label],
      total_minor: 100,
      expires_at: new Date(now.getTime() + 600_000),
      created_at: now,
    };
  }
  const repo = () =>
    createSeatsRepository(t.adapters.database.db, {
      limits: { perShow: 1, perUser: 3 },
    });
  const granted = (results: ClaimResult[]) => results.filter((r) => r.taken.length === 0 && !r.limit).length;

  test('concurrent single claims (one statement each, separate connections) grant one per show, three in all', async () => {
    const user = randomUUID();
    const holds = await Promise.all(
      shows.flatMap((showId) => ['A7', 'A8'].map((seat) => newHold(user, showId, seat))),
    );
    const results = await Promise.all(holds.map((hold) => repo().claimSeats(hold, t.clock.now())));
    assert.equal(granted(results), 3, JSON.stringify(results));
    assert.ok(
      results.every((result) => result.taken.length === 0),
      'refused by the caps, not the seats',
    );
    assert.equal(await liveHolds(user), 3);
    const { rows } = await sql<{ show_id: string; n: number }>`select show_id::text, count(*)::int as n
      from booking_holds where user_id = ${user} group by show_id`.execute(t.adapters.database.db);
    assert.ok(
      rows.every((row) => row.n === 1),
      'never two on one show',
    );
  });

  test('batches of two processes in flight together (group commit, one per show) never grant one user past the caps', async () => {
    const user = randomUUID();
    // One process never has one user's holds in two batches at once (hold-batch.ts); two do.
    const batchers = [createHoldBatcher(repo()), createHoldBatcher(repo())];
    const holds = await Promise.all(
      shows.flatMap((showId) =>
        ['A9', 'A10', 'B9'].map((seat, i) => newHold(i === 2 ? randomUUID() : user, showId, seat)),
      ),
    );
    const results = await Promise.all(holds.map((hold, i) => batchers[i % 2].claim(hold, t.clock.now())));
    const mine = results.filter((_, i) => holds[i].user_id === user);
    assert.equal(granted(mine), 3, JSON.stringify(mine));
    assert.ok(
      mine.every((result) => result.retry !== true),
      'a stale count is decided again, never answered',
    );
    assert.equal(
      granted(results.filter((_, i) => holds[i].user_id !== user)),
      shows.length,
      'others unaffected',
    );
    assert.equal(await liveHolds(user), 3);
  });

  test('with caps above 1, a user far under them is not counted, the bound is kept by the bump, and the caps still hold at their edge', async () => {
    // perShow 3: a user's first three holds go uncounted (the bound stays within 3), the fourth is counted.
    const raised = createSeatsRepository(t.adapters.database.db, { limits: { perShow: 3, perUser: 4 } });
    const { showId } = await seedShow(t);
    const bounds = async (user: string) => {
      const { rows } = await sql<{ held: number; held_until: Date }>`select held, held_until
        from booking_hold_users where user_id = ${user}`.execute(t.adapters.database.db);
      return rows[0];
    };
    const fiveHolds = (user: string, row: string) =>
      Promise.all([1, 2, 3, 4, 5].map((seat) => newHold(user, showId, `${row}${seat}`)));

    // One claim after another: each bumps the bound when it could hold.
    const alone = randomUUID();
    const single: ClaimResult[] = [];
    for (const hold of await fiveHolds(alone, 'A')) single.push(await raised.claimSeats(hold, t.clock.now()));
    assert.equal(granted(single), 3, JSON.stringify(single));
    assert.deepEqual(
      single.slice(3).map((result) => result.limit?.onShow),
      [3, 3],
    );
    assert.equal((await bounds(alone)).held, 3);

    // Five holds of one user in one batch: the bound rises by five, and the batch counts that user.
    const batched = randomUUID();
    const holds = await fiveHolds(batched, 'B');
    const many = await raised.claimMany(holds, t.clock.now());
    assert.equal(granted(many), 3, JSON.stringify(many));
    assert.deepEqual(await bounds(batched), { held: 5, held_until: holds[4].expires_at });
    const next = await raised.claimMany([await newHold(batched, showId, 'B6')], t.clock.now());
    assert.equal(next[0].limit?.onShow, 3, 'counted: its bound says it may be at the cap');

    // Once every hold it counted has ended, the bound starts again at the next hold.
    const user = randomUUID();
    assert.equal(granted([await raised.claimSeats(await newHold(user, showId, 'D6'), t.clock.now())]), 1);
    t.clock.advance(10 * 60_000 + 1);
    const later = await newHold(user, showId, 'D7');
    assert.equal(granted([await raised.claimSeats(later, t.clock.now())]), 1);
    assert.deepEqual(await bounds(user), { held: 1, held_until: later.expires_at });

    // A hold kept for its payment keeps the bound with it: past the hold's first end, its user
    // (one per show) is still counted, and refused.
    const paying = randomUUID();
    const first = await newHold(paying, showId, 'E1');
    assert.equal(granted([await repo().claimSeats(first, t.clock.now())]), 1);
    await repo().extendHold(first.id, new Date(first.expires_at.getTime() + 10 * 60_000));
    t.clock.advance(15 * 60_000);
    const second = await repo().claimSeats(await newHold(paying, showId, 'E2'), t.clock.now());
    assert.equal(second.limit?.onShow, 1, JSON.stringify(second));
  });

  test('a declined payment that gives its hold a later end (BOOKING_HOLD_MS raised meanwhile) keeps its user counted', async () => {
    const { showId } = await seedShow(t);
    const user = randomUUID();
    const hold = await holdAs(user, showId, ['C3']);
    assert.equal(hold.statusCode, 201, hold.body);
    const pending = await book(t, { hold_id: hold.json().hold_id, user_id: user }, TEST_CARDS.noAnswer);
    assert.equal(pending.statusCode, 202, pending.body);
    // The decline as settled by a process whose holds last an hour.
    const declined = await createBookingsRepository(t.adapters.database.db).settleFailure(
      pending.json().booking_id,
      pending.json().payment_id,
      'card_declined',
      t.clock.now(),
      (heldAt) => new Date(heldAt.getTime() + 60 * 60_000),
    );
    assert.equal(declined?.kind, 'declined');
    t.clock.advance(30 * 60_000);
    assertProblem(await holdAs(user, showId, ['C4']), 409, 'hold_limit');
  });
});

describe('per client address', () => {
  test('holds: 5 a minute, then 429 problem+json with RateLimit headers; another address goes on', async () => {
    const from = '192.0.2.10';
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await holdAs(randomUUID(), shows[2], [`C${i + 4}`], from));
    assert.deepEqual(
      answers.map((answer) => answer.statusCode),
      [201, 201, 201, 201, 201, 429],
    );
    const limited = assertProblem(answers[5], 429, 'rate_limited');
    assert.match(limited.detail, /5 holds per 60 s/);
    assert.equal(answers[5].headers['ratelimit-policy'], '"booking.hold";q=5;w=60');
    assert.match(String(answers[5].headers.ratelimit), /^"booking\.hold";r=0;t=\d+$/);
    assert.ok(Number(answers[5].headers['retry-after']) >= 1);
    assert.match(String(answers[0].headers.ratelimit), /r=4/);
    assert.equal((await seatStatus(t.app, shows[2])).C9, 'AVAILABLE', 'the refused hold held nothing');
    assert.equal((await holdAs(randomUUID(), shows[2], ['C10'], '192.0.2.11')).statusCode, 201);
  });

  test('waiting-room joins: 3 a minute, then 429', async () => {
    const { showId } = await seedShow(t, { hot: true });
    const join = () =>
      t.app.inject({
        url: `/api/v1/shows/${showId}/queue`,
        remoteAddress: '192.0.2.20',
        headers: t.asUser(randomUUID()),
      });
    const codes = [];
    for (let i = 0; i < 4; i++) codes.push((await join()).statusCode);
    assert.deepEqual(codes, [200, 200, 200, 429]);
    assertProblem(await join(), 429, 'rate_limited');
  });
});
