import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  assertProblem,
  type BookingTestApp,
  bookingTestApp,
  hold,
  type Seeded,
  seedShow,
} from '../../../test/support/booking.ts';
import { createTestClock } from '../../platform/clock.ts';
import { createMemoryPubSub } from '../../platform/pubsub/index.ts';
import { createTakenFilter, type TakenSeat } from './taken-filter.ts';

const SHOW = randomUUID();

function setup() {
  const clock = createTestClock();
  const pubsub = createMemoryPubSub();
  const filter = createTakenFilter({ clock, pubsub });
  const loads: TakenSeat[][] = [];
  let answer: TakenSeat[] = [];
  const load = async () => {
    loads.push(answer);
    return answer;
  };
  return {
    clock,
    pubsub,
    filter,
    loads,
    load,
    answer: (seats: TakenSeat[]) => {
      answer = seats;
    },
  };
}

describe('taken-seat filter', () => {
  test("after a refusal it loads the show's taken seats and refuses them without the database, at most every 10 s", async () => {
    const f = setup();
    const until = f.clock.now().getTime() + 600_000;
    f.answer([
      { id: 's1', until },
      { id: 's2', until: Number.POSITIVE_INFINITY },
      { id: 's3', until: f.clock.now().getTime() - 1 },
    ]);
    assert.deepEqual(f.filter.taken(SHOW, ['s1', 's2', 's3']), []);
    await f.filter.refresh(SHOW, f.load);
    assert.deepEqual(f.filter.taken(SHOW, ['s1', 's2', 's3', 's4']), ['s1', 's2']);
    await f.filter.refresh(SHOW, f.load);
    f.clock.advance(9_999);
    await f.filter.refresh(SHOW, f.load);
    assert.equal(f.loads.length, 1);
    f.clock.advance(1);
    await f.filter.refresh(SHOW, f.load);
    assert.equal(f.loads.length, 2);
    // Remembered at most 30 s, even for a booked seat: the staleness the spec allows.
    f.clock.advance(30_000);
    assert.deepEqual(f.filter.taken(SHOW, ['s1', 's2']), []);
  });

  test('a release forgets the show at once; a load that started before it is dropped', async () => {
    const f = setup();
    const until = f.clock.now().getTime() + 600_000;
    f.answer([{ id: 's1', until }]);
    await f.filter.refresh(SHOW, f.load);
    assert.deepEqual(f.filter.taken(SHOW, ['s1']), ['s1']);
    await f.filter.released(SHOW);
    assert.deepEqual(f.filter.taken(SHOW, ['s1']), []);

    // A load in flight while s1 is released: its answer (s1 taken) is stale and must not count.
    f.clock.advance(10_000);
    let finish: (seats: TakenSeat[]) => void = () => {};
    const loading = f.filter.refresh(SHOW, () => new Promise((resolve) => (finish = resolve)));
    await f.filter.released(SHOW);
    finish([{ id: 's1', until }]);
    await loading;
    assert.deepEqual(f.filter.taken(SHOW, ['s1']), []);

    // So is a claim's answer read before a release, and a release by another process (pub/sub).
    const stamp = f.filter.stamp(SHOW);
    const other = createTakenFilter({ clock: f.clock, pubsub: f.pubsub });
    await new Promise((resolve) => setImmediate(resolve));
    await other.released(SHOW);
    await new Promise((resolve) => setImmediate(resolve));
    f.filter.remember(SHOW, [{ id: 's1', until }], stamp);
    assert.deepEqual(f.filter.taken(SHOW, ['s1']), []);
    f.filter.remember(SHOW, [{ id: 's1', until }], f.filter.stamp(SHOW));
    assert.deepEqual(f.filter.taken(SHOW, ['s1']), ['s1']);
    await other.released(SHOW);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(f.filter.taken(SHOW, ['s1']), []);
  });

  test('a failed load refuses nothing and is tried again after 10 s', async () => {
    const f = setup();
    await f.filter.refresh(SHOW, async () => {
      throw new Error('database away');
    });
    assert.deepEqual(f.filter.taken(SHOW, ['s1']), []);
    f.clock.advance(10_000);
    f.answer([{ id: 's1', until: f.clock.now().getTime() + 1000 }]);
    await f.filter.refresh(SHOW, f.load);
    assert.deepEqual(f.filter.taken(SHOW, ['s1']), ['s1']);
  });
});

describe('the filter in the hold path', () => {
  let t: BookingTestApp;
  let seeded: Seeded;
  before(async () => {
    t = await bookingTestApp();
    seeded = await seedShow(t);
  });
  after(() => t.close());

  test('a seat refused by the filter is holdable the moment its hold is released', async () => {
    const first = await hold(t, seeded.showId, ['A1', 'A2']);
    assert.equal(first.statusCode, 201, first.body);
    // Refused by the arbiter (A3 is free, A2 is not), then by the filter.
    assert.deepEqual(
      assertProblem(await hold(t, seeded.showId, ['A2', 'A3']), 409, 'seats_unavailable').seats,
      ['A2'],
    );
    assert.deepEqual(assertProblem(await hold(t, seeded.showId, ['A1']), 409, 'seats_unavailable').seats, [
      'A1',
    ]);
    const released = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/holds/${first.json().hold_id}`,
      headers: t.asUser(first.json().user_id),
    });
    assert.equal(released.statusCode, 200, released.body);
    const again = await hold(t, seeded.showId, ['A1', 'A2', 'A3']);
    assert.equal(again.statusCode, 201, again.body);
  });
});
