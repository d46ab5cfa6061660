import { type Env, envReader, pattern } from '../platform/env.ts';
import type { RatePolicy } from '../platform/ratelimit/index.ts';

/**
 * The booking service's own settings, read once (through the platform's env reader) from the
 * environment the config came from.
 */
export interface BookingSettings {
  /** How long a hold keeps its seats (spec: 10 minutes). */
  holdMs: number;
  /** Seats per hold (spec: at most 10). */
  maxSeatsPerHold: number;
  /** A confirmed booking cancelled at least this long before the show gets a full refund. */
  refundCutoffMs: number;
  /** How long `POST /bookings` waits for an asynchronous payment outcome before answering 202. */
  paymentWaitMs: number;
  /** A payment with no outcome after this long fails the booking and releases its hold. */
  paymentTimeoutMs: number;
  /** Waiting room: users admitted at once, and how long each admission lasts. */
  queueCapacity: number;
  admissionMs: number;
  /** How often a process re-reads the seat maps and queue positions it streams: pub/sub may lose one. */
  liveResyncMs: number;
  currency: string;
  /**
   * Abuse limits: live holds (HELD, not expired) one user may have on one show and over all
   * shows; past either, a new hold is refused (409 `hold_limit`) instead of releasing the old one.
   */
  holdsPerUserShow: number;
  holdsPerUser: number;
  /** Hold requests and waiting-room joins (queue reads and streams) per client address. */
  holdRate: RatePolicy;
  queueRate: RatePolicy;
  /** Load the demo catalogue into an empty database at start-up. */
  demoCatalogue: boolean;
  /** How long what the retention job removes is kept (README, "Retention"). */
  retention: BookingRetentionSettings;
}

export interface BookingRetentionSettings {
  /** A released or expired hold no booking references, after it ended. */
  holdsMs: number;
  /** A waiting-room entry, after its admission ended or its show did. */
  queueMs: number;
  /** A show's seat inventory, after the show ended. */
  showSeatsMs: number;
  /** The record of a sent reminder, after its show started. */
  remindersMs: number;
}

/** Retention windows: a minute at least (tests and soak runs), ten years at most. */
const RETENTION_MIN_MS = 60_000;
const RETENTION_MAX_MS = 3650 * 86_400_000;

export function loadBookingSettings(env: Env): BookingSettings {
  const read = envReader(env);
  return {
    holdMs: read.int('BOOKING_HOLD_MINUTES', 10, 1, 60) * 60_000,
    maxSeatsPerHold: read.int('BOOKING_MAX_SEATS', 10, 1, 50),
    refundCutoffMs: read.int('BOOKING_REFUND_CUTOFF_HOURS', 4, 0, 24 * 30) * 3_600_000,
    paymentWaitMs: read.int('BOOKING_PAYMENT_WAIT_MS', 8000, 0, 120_000),
    paymentTimeoutMs: read.int('BOOKING_PAYMENT_TIMEOUT_SECONDS', 120, 5, 3600) * 1000,
    queueCapacity: read.int('BOOKING_QUEUE_CAPACITY', 100, 1, 100_000),
    admissionMs: read.int('BOOKING_ADMISSION_MINUTES', 10, 1, 120) * 60_000,
    liveResyncMs: read.int('BOOKING_LIVE_RESYNC_SECONDS', 10, 1, 600) * 1000,
    currency: pattern('BOOKING_CURRENCY', read.string('BOOKING_CURRENCY', 'INR'), /^[A-Z]{3}$/),
    holdsPerUserShow: read.int('BOOKING_HOLDS_PER_USER_SHOW', 1, 1, 1000),
    holdsPerUser: read.int('BOOKING_HOLDS_PER_USER', 3, 1, 1000),
    holdRate: read.rate('BOOKING_RATE_HOLD', '30/60', 'booking.hold'),
    queueRate: read.rate('BOOKING_RATE_QUEUE', '120/60', 'booking.queue'),
    demoCatalogue: read.bool('BOOKING_DEMO', true),
    retention: {
      holdsMs: read.duration('BOOKING_HOLD_RETENTION', '7d', RETENTION_MIN_MS, RETENTION_MAX_MS),
      queueMs: read.duration('BOOKING_QUEUE_RETENTION', '1d', RETENTION_MIN_MS, RETENTION_MAX_MS),
      showSeatsMs: read.duration('BOOKING_SHOW_SEATS_RETENTION', '30d', RETENTION_MIN_MS, RETENTION_MAX_MS),
      remindersMs: read.duration('BOOKING_REMINDER_RETENTION', '7d', RETENTION_MIN_MS, RETENTION_MAX_MS),
    },
  };
}
