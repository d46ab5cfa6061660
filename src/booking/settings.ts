import { ConfigError } from '../platform/config.ts';
import type { RatePolicy } from '../platform/ratelimit/index.ts';

type Env = Record<string, string | undefined>;

/** The booking service's own settings, read once from the environment the config came from. */
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
}

export function loadBookingSettings(env: Readonly<Env>): BookingSettings {
  return {
    holdMs: int(env, 'BOOKING_HOLD_MINUTES', 10, 1, 60) * 60_000,
    maxSeatsPerHold: int(env, 'BOOKING_MAX_SEATS', 10, 1, 50),
    refundCutoffMs: int(env, 'BOOKING_REFUND_CUTOFF_HOURS', 4, 0, 24 * 30) * 3_600_000,
    paymentWaitMs: int(env, 'BOOKING_PAYMENT_WAIT_MS', 8000, 0, 120_000),
    paymentTimeoutMs: int(env, 'BOOKING_PAYMENT_TIMEOUT_SECONDS', 120, 5, 3600) * 1000,
    queueCapacity: int(env, 'BOOKING_QUEUE_CAPACITY', 100, 1, 100_000),
    admissionMs: int(env, 'BOOKING_ADMISSION_MINUTES', 10, 1, 120) * 60_000,
    currency: pattern(env, 'BOOKING_CURRENCY', 'INR', /^[A-Z]{3}$/),
    holdsPerUserShow: int(env, 'BOOKING_HOLDS_PER_USER_SHOW', 1, 1, 1000),
    holdsPerUser: int(env, 'BOOKING_HOLDS_PER_USER', 3, 1, 1000),
    holdRate: rate(env, 'BOOKING_RATE_HOLD', '30/60', 'booking.hold'),
    queueRate: rate(env, 'BOOKING_RATE_QUEUE', '120/60', 'booking.queue'),
    demoCatalogue: bool(env, 'BOOKING_DEMO', true),
  };
}

function int(env: Readonly<Env>, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

/** `POINTS/SECONDS`, as the paste service's rates. */
function rate(env: Readonly<Env>, name: string, fallback: string, policy: string): RatePolicy {
  const raw = env[name] || fallback;
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(raw);
  const points = Number(match?.[1]);
  const durationSec = Number(match?.[2]);
  if (!match || points < 1 || durationSec < 1 || points > 1e9 || durationSec > 86_400) {
    throw new ConfigError(`${name} must look like POINTS/SECONDS (e.g. 30/60), got "${raw}"`);
  }
  return { name: policy, points, durationSec };
}

function bool(env: Readonly<Env>, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['true', '1', 'yes'].includes(raw)) return true;
  if (['false', '0', 'no'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function pattern(env: Readonly<Env>, name: string, fallback: string, re: RegExp): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!re.test(raw)) throw new ConfigError(`${name} must match ${re}, got "${raw}"`);
  return raw;
}
