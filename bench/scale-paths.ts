import { randomInt, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Send } from './mixed-load.ts';
import { AS_SERVICE, notificationRequest } from './notify-common.ts';
import { randomSeats } from './scenarios/booking-hold.ts';

/**
 * The hot paths `bench/scale.ts` times on every database size: each a closed-loop step over the
 * ids of its fixtures, so a seeded database is read where its rows are, not only where the run
 * wrote. `table` is the table whose size the path answers to (the chart's x axis is the whole
 * database's rows, this says which of them matter).
 */
export interface Fixtures {
  /** Public pastes anyone may read: the first few again and again, the rest once each. */
  pastes: string[];
  /** How far the uncached read has got through `pastes` on this database. */
  uncachedRead: { next: number };
  notifications: { id: string; user: string }[];
  /** Users with a notification history. */
  historyUsers: string[];
  /** Shows whose seat maps are read (seeded ones where there are). */
  seatMapShows: string[];
  /** A fresh show of `rows` × `seatsPerRow` seats for holds and bookings, and its buyers. */
  holdShow: { id: string; rows: number; seatsPerRow: number };
  buyers: { authorization: string }[];
  cityDates: { city: string; date: string }[];
  searchWords: string[];
}

export interface HotPath {
  name: string;
  table: string;
  step(send: Send, context: Record<string, unknown>, fixtures: Fixtures): Promise<void>;
}

const PANEL = { 'x-operator-key': 'dev-operator-key' };
const CARD = { card_number: '4242424242424242', exp_month: 12, exp_year: 2030, cvc: '123' };
const pick = <T>(items: T[]): T => items[randomInt(items.length)];

/** Pastes read again and again (the rest of the list is read once each). */
const CACHED = 8;
let plates = 0;
const platePrefix = `S${Date.now().toString(36).slice(-4).toUpperCase()}`;

export const HOT_PATHS: HotPath[] = [
  {
    name: 'paste read (cached)',
    table: 'pastes',
    // A handful of ids: after the first pass every read is a cache hit.
    step: async (send, _, f) =>
      void (await send('paste read (cached)', 'GET', `/api/v1/paste/${f.pastes[randomInt(CACHED)]}`)),
  },
  {
    name: 'paste read (uncached)',
    table: 'pastes',
    // Each id once: a miss every time while the list lasts (fixtures make it longer than a run).
    step: async (send, _, f) => {
      const id = f.pastes[CACHED + f.uncachedRead.next++];
      if (id === undefined) return void (await sleep(50));
      await send('paste read (uncached)', 'GET', `/api/v1/paste/${id}`);
    },
  },
  {
    name: 'paste create',
    table: 'pastes',
    step: async (send) =>
      void (await send('paste create', 'POST', '/api/v1/paste', {
        content: `scale ${randomUUID()} ${'x'.repeat(1500)}`,
      })),
  },
  {
    name: 'notification accept',
    table: 'notifications',
    step: async (send, _, f) =>
      void (await send(
        'notification accept',
        'POST',
        '/api/notifications',
        notificationRequest(pick(f.notifications).user),
        AS_SERVICE,
      )),
  },
  {
    name: 'notification history page',
    table: 'notifications',
    step: async (send, _, f) => {
      const user = encodeURIComponent(pick(f.historyUsers));
      await send(
        'notification history page',
        'GET',
        `/api/users/${user}/notifications?limit=20`,
        undefined,
        AS_SERVICE,
      );
    },
  },
  {
    name: 'notification status',
    table: 'notifications',
    step: async (send, _, f) =>
      void (await send(
        'notification status',
        'GET',
        `/api/notifications/${pick(f.notifications).id}`,
        undefined,
        AS_SERVICE,
      )),
  },
  {
    name: 'seat map',
    table: 'booking_show_seats',
    step: async (send, _, f) =>
      void (await send('seat map', 'GET', `/api/v1/shows/${pick(f.seatMapShows)}/seats`)),
  },
  {
    name: 'hold',
    table: 'booking_holds',
    step: async (send, _, f) => {
      const { id, rows, seatsPerRow } = f.holdShow;
      await send(
        'hold',
        'POST',
        `/api/v1/shows/${id}/hold`,
        { seat_ids: randomSeats(rows, seatsPerRow) },
        pick(f.buyers),
      );
    },
  },
  {
    name: 'booking',
    table: 'booking_bookings',
    // Hold, then pay for it: the booking is the second request of the two.
    step: async (send, _, f) => {
      const { id, rows, seatsPerRow } = f.holdShow;
      const buyer = pick(f.buyers);
      const hold = await send(
        'booking: its hold',
        'POST',
        `/api/v1/shows/${id}/hold`,
        { seat_ids: randomSeats(rows, seatsPerRow) },
        buyer,
      );
      if (hold.status !== 201) return;
      await send(
        'booking',
        'POST',
        '/api/v1/bookings',
        { hold_id: JSON.parse(hold.body).hold_id, payment_method: 'CARD', payment_details: CARD },
        { ...buyer, 'idempotency-key': randomUUID() },
      );
    },
  },
  {
    name: 'city shows for a date',
    table: 'booking_shows',
    step: async (send, _, f) => {
      const { city, date } = pick(f.cityDates);
      await send('city shows for a date', 'GET', `/api/v1/cities/${city}/shows?date=${date}`);
    },
  },
  {
    name: 'search',
    table: 'booking_movies',
    step: async (send, _, f) => {
      const { city, date } = pick(f.cityDates);
      await send(
        'search',
        'GET',
        `/api/v1/movies?q=${encodeURIComponent(pick(f.searchWords))}&city=${city}&date=${date}`,
      );
    },
  },
  {
    name: 'suggest',
    table: 'booking_movies',
    step: async (send, _, f) =>
      void (await send(
        'suggest',
        'GET',
        `/api/v1/movies/suggest?q=${encodeURIComponent(pick(f.searchWords).slice(0, 4))}`,
      )),
  },
  {
    name: 'parking entry and exit',
    table: 'parking_tickets',
    step: async (send) => {
      const entry = await send(
        'parking entry',
        'POST',
        '/api/v1/parking/entry',
        { licensePlate: `${platePrefix}${(plates++).toString(36).toUpperCase()}`, vehicleType: 'CAR' },
        PANEL,
      );
      if (entry.status !== 201) return;
      await send(
        'parking exit',
        'POST',
        '/api/v1/parking/exit',
        { ticketId: JSON.parse(entry.body).ticketId, payment: CARD },
        { ...PANEL, 'idempotency-key': randomUUID() },
      );
    },
  },
  {
    name: 'board totals',
    table: 'parking_spots',
    step: async (send) => void (await send('board totals', 'GET', '/api/v1/parking/boards')),
  },
];
