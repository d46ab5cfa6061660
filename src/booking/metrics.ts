import { Counter, Gauge, type Registry } from 'prom-client';
import { AppError } from '../platform/errors.ts';
import { tallyCounter } from '../platform/observability/metrics.ts';

/** What became of a hold request (`POST /api/v1/shows/:id/hold`), by the service's paths. */
const HOLD_OUTCOMES = [
  'held',
  /** 409 seats_unavailable: a seat was taken (known to the taken-filter or refused by the arbiter). */
  'unavailable',
  /** 409 hold_limit: the user's per-show or per-user cap. */
  'limited',
  /** 403 admission_required: a hot show without a valid waiting-room admission. */
  'admission_required',
  /** 409 show_started, 410 show_cancelled. */
  'closed',
  /** Any other refusal (unknown show or seats, a seat named twice) or an error. */
  'rejected',
] as const;
type HoldOutcome = (typeof HOLD_OUTCOMES)[number];

const HOLD_REFUSALS: Record<string, HoldOutcome> = {
  seats_unavailable: 'unavailable',
  hold_limit: 'limited',
  admission_required: 'admission_required',
  show_started: 'closed',
  show_cancelled: 'closed',
};

/**
 * How a booking went: each ending counted once, at the transition; a declined card is counted per
 * attempt (the booking stays PENDING with its hold and may still be paid with another card).
 */
export type BookingOutcome =
  | 'confirmed'
  /** A card declined (per attempt; the booking is not over). */
  | 'payment_declined'
  /** The payment did not answer before the booking's payment deadline (the sweeper). */
  | 'expired'
  /** A payment arrived after the seats were released; it is refunded. */
  | 'seats_released'
  /** A confirmed booking cancelled (customer, admin, show), or a pending one failed by its show's cancellation. */
  | 'cancelled';

export interface WaitingTotals {
  users: number;
  shows: number;
}

/**
 * Booking's business metrics. Counters are incremented on transitions the code already makes
 * (holds in plain numbers, tallyCounter: the hold path is hot); the waiting-room gauges are read at
 * scrape time with one count over the partial index of waiting entries.
 *
 * The waiting room is exposed as totals, not per show: a show id label would add a series for
 * every hot show ever queued (ids churn with each new show), which Prometheus keeps for as long
 * as it retains data; the per-show length is in the API (`GET /api/v1/shows/:id/queue`, `waiting`).
 */
export function createBookingMetrics(registry: Registry, waitingTotals: () => Promise<WaitingTotals>) {
  const registers = [registry];
  const hold = tallyCounter(registry, {
    name: 'booking_holds_total',
    help: `Hold requests by outcome: ${HOLD_OUTCOMES.join(', ')}`,
    label: 'outcome',
    values: HOLD_OUTCOMES,
  });
  const bookings = new Counter({
    name: 'booking_bookings_total',
    help: 'Bookings by how they ended (confirmed, expired, seats_released, cancelled), and declined card attempts (payment_declined)',
    labelNames: ['outcome'] as const,
    registers,
  });

  // Both gauges are collected in one scrape: the second shares the first's read.
  let reading: Promise<WaitingTotals> | undefined;
  const read = () => {
    reading ??= waitingTotals().finally(() => {
      reading = undefined;
    });
    return reading;
  };
  const waitingGauge = (name: string, help: string, pick: (totals: WaitingTotals) => number) =>
    new Gauge({
      name,
      help,
      registers,
      async collect() {
        try {
          this.set(pick(await read()));
        } catch {
          // An unreachable database shows up in /health/ready; the scrape still succeeds.
        }
      },
    });
  waitingGauge(
    'booking_waiting_room_users',
    'Users waiting in a waiting room, all hot shows together (read at scrape time)',
    (totals) => totals.users,
  );
  waitingGauge(
    'booking_waiting_room_shows',
    'Hot shows with at least one user waiting in their waiting room (read at scrape time)',
    (totals) => totals.shows,
  );

  return {
    held: () => hold('held'),
    holdRefused(error: unknown) {
      hold((error instanceof AppError && HOLD_REFUSALS[error.code]) || 'rejected');
    },
    booking: (outcome: BookingOutcome, count = 1) => {
      if (count > 0) bookings.inc({ outcome }, count);
    },
  };
}

export type BookingMetrics = ReturnType<typeof createBookingMetrics>;

/** The seats service with every hold request counted by outcome (`booking_holds_total`). */
export function countingHolds<T extends { hold: (...args: never[]) => Promise<unknown> }>(
  seats: T,
  metrics: BookingMetrics,
): T {
  const hold = seats.hold;
  return {
    ...seats,
    hold: (async (...args: Parameters<T['hold']>) => {
      try {
        const held = await hold(...args);
        metrics.held();
        return held;
      } catch (error) {
        metrics.holdRefused(error);
        throw error;
      }
    }) as T['hold'],
  };
}
