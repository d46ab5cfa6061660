import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import {
  type BookingTestApp,
  bookingTestApp,
  hold,
  type Seeded,
  seedShow,
} from '../../../test/support/booking.ts';
import { createHoldBatcher } from './hold-batch.ts';
import { type ClaimResult, createSeatsRepository, type NewHold, type SeatsRepository } from './repository.ts';

let t: BookingTestApp;
let seeded: Seeded;
let repo: SeatsRepository;
let seatIds: Map<string, string>;

before(async () => {
  t = await bookingTestApp();
  seeded = await seedShow(t);
  repo = createSeatsRepository(t.adapters.database.db, {
    limits: { perShow: 1, perUser: 3 },
  });
  const { rows } = await sql<{
    id: string;
    label: string;
  }>`select id::text as id, row_number || seat_number as label
    from booking_seats where screen_id = ${seeded.screenId}`.execute(t.adapters.database.db);
  seatIds = new Map(rows.map((row) => [row.label, row.id]));
});
after(() => t.close());

function newHold(labels: string[]): NewHold {
  const now = t.clock.now();
  return {
    id: randomUUID(),
    show_id: seeded.showId,
    user_id: randomUUID(),
    seat_ids: labels.map((label) => seatIds.get(label)!),
    seats: labels,
    total_minor: 100 * labels.length,
    expires_at: new Date(now.getTime() + 600_000),
    created_at: now,
  };
}

/** The repository with its calls counted (and `claimMany` made to fail when asked). */
function counting(options: { failMany?: boolean } = {}) {
  const calls = { one: 0, many: [] as number[] };
  const counted = {
    claimSeats(hold: NewHold, now: Date): Promise<ClaimResult> {
      calls.one++;
      return repo.claimSeats(hold, now);
    },
    async claimMany(holds: NewHold[], now: Date): Promise<ClaimResult[]> {
      calls.many.push(holds.length);
      // As PostgreSQL refuses a whole statement (it rolled back): e.g. a deadlock.
      if (options.failMany)
        throw Object.assign(new Error('deadlock detected'), { code: '40P01', severity: 'ERROR' });
      return repo.claimMany(holds, now);
    },
  };
  return { calls, batcher: createHoldBatcher(counted) };
}

async function holdOf(seat: string): Promise<string | null> {
  const { rows } = await sql<{
    hold_id: string | null;
  }>`select hold_id::text as hold_id from booking_show_seats
    where show_id = ${seeded.showId} and seat_id = ${seatIds.get(seat)!}`.execute(t.adapters.database.db);
  return rows[0].hold_id;
}

async function storedHolds(ids: string[]): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from booking_holds
    where id = any(${ids}::uuid[])`.execute(t.adapters.database.db);
  return rows[0].n;
}

const takenLabels = (result: ClaimResult) =>
  result.taken.map((seat) => [...seatIds].find(([, id]) => id === seat.id)![0]).sort();

describe('hold batches (group commit)', () => {
  test('holds arriving together are claimed in one transaction, each one whole', async () => {
    const { calls, batcher } = counting();
    const holds = [newHold(['A1', 'A2']), newHold(['A3']), newHold(['A4', 'A5', 'A6'])];
    const results = await Promise.all(holds.map((h) => batcher.claim(h, t.clock.now())));
    assert.deepEqual(calls, { one: 0, many: [3] });
    assert.deepEqual(
      results.map((result) => result.taken),
      [[], [], []],
    );
    for (const [i, labels] of [['A1', 'A2'], ['A3'], ['A4', 'A5', 'A6']].entries()) {
      for (const label of labels) assert.equal(await holdOf(label), holds[i].id);
    }
    assert.equal(await storedHolds(holds.map((h) => h.id)), 3);
    // The stored hold keeps its seats in the order asked, as claimSeats stores them.
    const reversed = newHold(['A9', 'A8', 'A7']);
    await Promise.all([reversed, newHold(['A10'])].map((h) => batcher.claim(h, t.clock.now())));
    const { rows } = await sql<{ seat_ids: string[]; seats: string[]; total_minor: string }>`select
      seat_ids::text[] as seat_ids, seats, total_minor::text as total_minor from booking_holds
      where id = ${reversed.id}`.execute(t.adapters.database.db);
    assert.deepEqual(rows[0], { seat_ids: reversed.seat_ids, seats: ['A9', 'A8', 'A7'], total_minor: '300' });
  });

  test('a hold wanting a seat an earlier hold of the batch got is refused alone; the others are granted', async () => {
    const { calls, batcher } = counting();
    const first = newHold(['B1', 'B2']);
    const loser = newHold(['B2', 'B3']);
    const third = newHold(['B4']);
    const results = await Promise.all([first, loser, third].map((h) => batcher.claim(h, t.clock.now())));
    assert.deepEqual(calls, { one: 0, many: [3] });
    assert.deepEqual(results[0].taken, []);
    assert.deepEqual(takenLabels(results[1]), ['B2']);
    assert.equal(results[1].taken[0].until, first.expires_at.getTime());
    assert.deepEqual(results[2].taken, []);
    // All or nothing: the loser's free seat B3 stays free, and no hold row of it exists.
    assert.equal(await holdOf('B2'), first.id);
    assert.equal(await holdOf('B3'), null);
    assert.equal(await storedHolds([loser.id]), 0);
    const retry = await hold(t, seeded.showId, ['B3']);
    assert.equal(retry.statusCode, 201, retry.body);
  });

  test('a hold wanting a seat taken in the table is refused with when it frees; the batch goes on', async () => {
    const earlier = newHold(['C1']);
    assert.deepEqual((await repo.claimSeats(earlier, t.clock.now())).taken, []);
    const { calls, batcher } = counting();
    const refused = newHold(['C1', 'C2']);
    const granted = newHold(['C3']);
    const results = await Promise.all([refused, granted].map((h) => batcher.claim(h, t.clock.now())));
    assert.deepEqual(calls, { one: 0, many: [2] });
    assert.deepEqual(takenLabels(results[0]), ['C1']);
    assert.equal(results[0].taken[0].until, earlier.expires_at.getTime());
    assert.deepEqual(results[1].taken, []);
    assert.equal(await holdOf('C2'), null);
    assert.equal(await holdOf('C3'), granted.id);
  });

  test('a seat whose hold has run out is free for the batch', async () => {
    const old = { ...newHold(['C9']), expires_at: new Date(t.clock.now().getTime() + 1000) };
    assert.deepEqual((await repo.claimSeats(old, t.clock.now())).taken, []);
    const { batcher } = counting();
    const later = new Date(t.clock.now().getTime() + 2000);
    const [a, b] = await Promise.all([newHold(['C9']), newHold(['C10'])].map((h) => batcher.claim(h, later)));
    assert.deepEqual([a.taken, b.taken], [[], []]);
  });

  test('when a batch fails as a whole, each hold is decided alone by claimSeats', async () => {
    const { calls, batcher } = counting({ failMany: true });
    const first = newHold(['D1', 'D2']);
    const loser = newHold(['D2']);
    const third = newHold(['D3']);
    const results = await Promise.all([first, loser, third].map((h) => batcher.claim(h, t.clock.now())));
    assert.deepEqual(calls, { one: 3, many: [3] });
    // Decided one by one, in arrival order.
    assert.equal(results.filter((result) => result.taken.length === 0).length, 2);
    assert.deepEqual(takenLabels(results[1]), ['D2']);
    assert.equal(await holdOf('D2'), first.id);
    assert.equal(await holdOf('D3'), third.id);
  });

  test('a refusal names only the seats that are taken, never the free ones it asked for', async () => {
    // CI's two-process race once saw a 409 name a seat nobody held: claimSeats listed every seat asked.
    const earlier = newHold(['B6']);
    assert.deepEqual((await repo.claimSeats(earlier, t.clock.now())).taken, []);
    assert.deepEqual(takenLabels(await repo.claimSeats(newHold(['B7', 'B6', 'B8']), t.clock.now())), ['B6']);
    const [batched, other] = await repo.claimMany([newHold(['B9', 'B6']), newHold(['B10'])], t.clock.now());
    assert.deepEqual([takenLabels(batched), other.taken], [['B6'], []]);
    assert.deepEqual([await holdOf('B7'), await holdOf('B8'), await holdOf('B9')], [null, null, null]);
  });

  test("one user's holds never share a batch nor go in two at once; the user's next waits for the batch", async () => {
    const { calls, batcher } = counting();
    const user = randomUUID();
    const mine = [newHold(['C4']), newHold(['C5'])].map((h) => ({ ...h, user_id: user }));
    const other = newHold(['C6']);
    const results = await Promise.all([...mine, other].map((h) => batcher.claim(h, t.clock.now())));
    // C4 and C6 together; C5 after their commit, alone, where the cap of one per show refuses it.
    assert.deepEqual(calls, { one: 1, many: [2] });
    assert.deepEqual(
      results.map((result) => result.limit?.holds.map((held) => held.id) ?? null),
      [null, [mine[0].id], null],
    );
  });

  test("a batch's refusal at a user's cap names the holds that count, granted before or in the batch", async () => {
    const user = randomUUID();
    const first = { ...newHold(['C7']), user_id: user };
    assert.deepEqual((await repo.claimSeats(first, t.clock.now())).taken, []);
    const [refused, granted] = await repo.claimMany(
      [{ ...newHold(['C8']), user_id: user }, newHold(['D4'])],
      t.clock.now(),
    );
    assert.deepEqual(refused.limit, {
      onShow: 1,
      total: 1,
      holds: [{ id: first.id, show_id: seeded.showId }],
    });
    assert.deepEqual([granted.taken, granted.limit], [[], undefined]);
  });

  test('a lone hold goes at once through claimSeats', async () => {
    const { calls, batcher } = counting();
    assert.deepEqual((await batcher.claim(newHold(['E1']), t.clock.now())).taken, []);
    assert.deepEqual(calls, { one: 1, many: [] });
  });
});
