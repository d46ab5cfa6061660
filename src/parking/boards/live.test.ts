import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { enter, lotEnv } from '../../../test/support/parking.ts';
import { createTestApp, type TestApp } from '../../../test/support/platform.ts';
import { sseEvents } from '../../../test/support/sse-reader.ts';
import { type App, buildApp } from '../../app.ts';
import type { BoardsView } from './views.ts';

// Two API "processes" on one database and one pub/sub: a park or unpark handled by one must
// reach the display boards streamed by the other.
let t: TestApp;
let other: App;
let otherUrl: string;

before(async () => {
  t = await createTestApp({ services: ['parking'], env: lotEnv() });
  other = await buildApp(t.config, t.adapters, { logger: false });
  await other.listen({ port: 0, host: '127.0.0.1' });
  otherUrl = `http://127.0.0.1:${(other.server.address() as { port: number }).port}`;
});
after(async () => {
  await other.close();
  await t.close();
});

const free = (boards: BoardsView, floor: number, type: keyof BoardsView['total']['availableSpots']) =>
  boards.boards.find((board) => board.floor === floor)!.availableSpots[type];

test('the boards stream sends the boards at once and again after every park, from any process', async () => {
  const response = await fetch(`${otherUrl}/api/v1/parking/boards/stream`);
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  const events = sseEvents(response);
  const first = await events.until<BoardsView>('boards');
  assert.equal(free(first, 1, 'LARGE'), 1);

  const parked = await t.app.inject({
    method: 'POST',
    url: '/api/v1/parking/entry',
    headers: t.asOperator,
    payload: { licensePlate: 'LIVE1', vehicleType: 'BUS' },
  });
  assert.equal(parked.statusCode, 201);
  const afterPark = await events.until<BoardsView>('boards', (boards) => free(boards, 1, 'LARGE') === 0);
  assert.equal(afterPark.total.availableSpots.LARGE, 1);

  // A burst of entries: the stream ends up showing the state after the last one.
  await Promise.all(
    ['A', 'B', 'C'].map((plate) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/parking/entry',
        headers: t.asOperator,
        payload: { licensePlate: plate, vehicleType: 'MOTORCYCLE' },
      }),
    ),
  );
  const afterBurst = await events.until<BoardsView>(
    'boards',
    (boards) => free(boards, 1, 'HANDICAPPED') === 0,
  );
  assert.deepEqual(afterBurst.boards[0].availableSpots, {
    MOTORCYCLE: 0,
    COMPACT: 0,
    LARGE: 0,
    HANDICAPPED: 0,
    ELECTRIC: 1,
  });
  await events.cancel();
});

test('a change whose message never came reaches the boards and ticket streams at the next re-read', async () => {
  const resyncing = await createTestApp({
    services: ['parking'],
    env: { ...lotEnv(), PARKING_LIVE_RESYNC: '1s' },
  });
  try {
    await resyncing.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = resyncing.app.server.address() as { port: number };
    const events = sseEvents(await fetch(`http://127.0.0.1:${port}/api/v1/parking/boards/stream`));
    try {
      assert.equal(free(await events.until<BoardsView>('boards'), 1, 'LARGE'), 1);
      // A spot taken out of service behind the API's back: nothing publishes it.
      await sql`update parking_spots set retired = true where floor = 1 and spot_type = 'LARGE'`.execute(
        resyncing.adapters.database.db,
      );
      await events.until<BoardsView>('boards', (boards) => free(boards, 1, 'LARGE') === 0);
    } finally {
      await events.cancel();
    }

    // A panel waiting for a payment made on the phone: its gate_open message never came.
    const parked = await enter(resyncing, 'LOST1');
    assert.equal(parked.statusCode, 201, parked.body);
    const { ticketId } = parked.json() as { ticketId: string };
    const ticket = sseEvents(
      await fetch(`http://127.0.0.1:${port}/api/v1/parking/tickets/${ticketId}/events`),
    );
    try {
      assert.equal((await ticket.until<{ status: string }>('ticket')).status, 'ACTIVE');
      await sql`update parking_tickets set status = 'PAID', paid_at = now() where id = ${ticketId}`.execute(
        resyncing.adapters.database.db,
      );
      await ticket.until<{ status: string }>('ticket', (body) => body.status === 'PAID');
    } finally {
      await ticket.cancel();
    }
  } finally {
    await resyncing.close();
  }
});

test('the ticket event stream is a 404 for an unknown ticket', async () => {
  const response = await fetch(
    `${otherUrl}/api/v1/parking/tickets/0190f0f0-0000-7000-8000-000000000000/events`,
  );
  assert.equal(response.status, 404);
  assert.equal(((await response.json()) as { code: string }).code, 'ticket_not_found');
});
