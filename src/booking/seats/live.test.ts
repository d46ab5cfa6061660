import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { type BookingTestApp, bookingTestApp, hold, seedShow } from '../../../test/support/booking.ts';
import { sseEvents } from '../../../test/support/sse-reader.ts';
import { type App, buildApp } from '../../app.ts';
import type { SseHub } from '../../platform/http/sse.ts';
import type { PubSub } from '../../platform/pubsub/index.ts';
import { createSeatsLive, PUBLISH_GAP_MS, seatMapChannel } from './live.ts';
import type { SeatMap } from './schemas.ts';

// Two API "processes" on one database and one pub/sub: a hold made through one must turn the
// seat taken on the seat maps streamed by the other, and its release turn it free again.
let t: BookingTestApp;
let other: App;
let otherUrl: string;
let showId: string;

before(async () => {
  t = await bookingTestApp();
  showId = (await seedShow(t, { multiplier: 1 })).showId;
  other = await buildApp(t.config, t.adapters, { logger: false, stubs: { notify: t.notify } });
  await other.listen({ port: 0, host: '127.0.0.1' });
  otherUrl = `http://127.0.0.1:${(other.server.address() as { port: number }).port}`;
});
after(async () => {
  await other.close();
  await t.close();
});

const status = (map: SeatMap, label: string) => map.seats.find((seat) => seat.seat_id === label)?.status;

test('the seat map stream sends the map at once, then after a hold and a release made in another process', async () => {
  const response = await fetch(`${otherUrl}/api/v1/shows/${showId}/seats/events`);
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  const events = sseEvents(response);
  const first = await events.until<SeatMap>('seats');
  assert.equal(status(first, 'A1'), 'AVAILABLE');

  const userId = randomUUID();
  const held = await hold(t, showId, ['A1', 'A2'], userId);
  assert.equal(held.statusCode, 201, held.body);
  const taken = await events.until<SeatMap>('seats', (map) => status(map, 'A1') === 'BOOKED');
  assert.equal(status(taken, 'A2'), 'BOOKED');
  assert.ok(!JSON.stringify(taken).includes(userId), 'the map never says who holds a seat');

  const released = await t.app.inject({
    method: 'DELETE',
    url: `/api/v1/holds/${held.json().hold_id}`,
    headers: t.asUser(userId),
  });
  assert.equal(released.statusCode, 200, released.body);
  await events.until<SeatMap>('seats', (map) => status(map, 'A1') === 'AVAILABLE');
  await events.cancel();
});

test('a hold that runs out shows its seats free on the stream at the next re-read, before any message says so', async () => {
  // No workers here, so no sweeper: nothing publishes the expiry; only the re-read can find it.
  const resyncing = await bookingTestApp({ env: { BOOKING_LIVE_RESYNC_SECONDS: '1' } });
  try {
    const show = (await seedShow(resyncing, { multiplier: 1 })).showId;
    await resyncing.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = resyncing.app.server.address() as { port: number };
    const held = await hold(resyncing, show, ['B1']);
    assert.equal(held.statusCode, 201, held.body);
    const response = await fetch(`http://127.0.0.1:${port}/api/v1/shows/${show}/seats/events`);
    const events = sseEvents(response);
    try {
      assert.equal(status(await events.until<SeatMap>('seats'), 'B1'), 'BOOKED');
      resyncing.clock.advance(11 * 60_000); // past the hold's 10 minutes
      await events.until<SeatMap>('seats', (map) => status(map, 'B1') === 'AVAILABLE');
    } finally {
      await events.cancel();
    }
  } finally {
    await resyncing.close();
  }
});

test('the seat map stream of an unknown show is a 404', async () => {
  const response = await fetch(`${otherUrl}/api/v1/shows/${randomUUID()}/seats/events`);
  assert.equal(response.status, 404);
  assert.equal(((await response.json()) as { code: string }).code, 'show_not_found');
});

test("a burst of one show's changes is said twice (at once and at the gap's end), another show's apart", async () => {
  const published: string[] = [];
  const live = createSeatsLive({
    // Only `publish` is used by `changed`.
    pubsub: { publish: async (channel: string) => void published.push(channel) } as unknown as PubSub,
    sse: {} as SseHub,
    log: t.app.log,
    seatMap: async () => ({}) as SeatMap,
    resyncMs: 60_000,
  });
  const [hot, quiet] = [randomUUID(), randomUUID()];
  for (let i = 0; i < 50; i++) live.changed(hot);
  live.changed(quiet);
  assert.deepEqual(published, [seatMapChannel(hot), seatMapChannel(quiet)]);
  await new Promise((resolve) => setTimeout(resolve, PUBLISH_GAP_MS * 2.5));
  assert.deepEqual(published, [seatMapChannel(hot), seatMapChannel(quiet), seatMapChannel(hot)]);
  live.changed(quiet);
  assert.equal(published.length, 4, 'a change after a quiet gap is said at once');
});
