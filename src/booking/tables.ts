import type { ColumnType, Generated, GeneratedAlways, Kysely } from 'kysely';

/**
 * Kysely types of the booking tables, as `migrations/index.ts` creates them and as both drivers
 * return them: `bigint` columns come back as BigInt (platform/db), `numeric` as a string, `date`
 * as a Date (at UTC midnight). Columns with a default are `Generated` (optional on insert).
 */
// A type, not an interface: `withTables` needs its string index (an interface has none).
export type BookingTables = {
  booking_cities: CitiesTable;
  booking_movies: MoviesTable;
  booking_theaters: TheatersTable;
  booking_screens: ScreensTable;
  booking_seats: SeatsTable;
  booking_shows: ShowsTable;
  booking_movie_cities: MovieCitiesTable;
  booking_show_seats: ShowSeatsTable;
  booking_holds: HoldsTable;
  booking_bookings: BookingsTable;
  booking_payments: PaymentsTable;
  booking_reminders: RemindersTable;
  booking_hold_users: HoldUsersTable;
  booking_queue_entries: QueueEntriesTable;
  booking_check_ins: CheckInsTable;
};

/** `bigint`: read as BigInt, written from a number or a BigInt. */
type Int8 = ColumnType<bigint, number | bigint, number | bigint>;
/** `numeric`: read as its exact decimal text, written from a number or text. */
type Numeric = ColumnType<string, number | string, number | string>;
/** `date`: read as a Date, written as `YYYY-MM-DD` (or a Date). */
type CalendarDate = ColumnType<Date, string | Date, string | Date>;
type Nullable<C> =
  C extends ColumnType<infer S, infer I, infer U>
    ? ColumnType<S | null, I | null | undefined, U | null>
    : never;
/** A column with a default (`Generated` for the column types above). */
type Defaulted<C> = C extends ColumnType<infer S, infer I, infer U> ? ColumnType<S, I | undefined, U> : never;

/** A row's priced type; a wheelchair space or companion seat costs what its row's type costs. */
export type RowSeatType = 'REGULAR' | 'PREMIUM' | 'RECLINER';
export type SeatType = RowSeatType | 'WHEELCHAIR' | 'COMPANION';
export const SEAT_TYPES: SeatType[] = ['REGULAR', 'PREMIUM', 'RECLINER', 'WHEELCHAIR', 'COMPANION'];
export type ShowStatus = 'SCHEDULED' | 'CANCELLED';
export type ShowSeatStatus = 'AVAILABLE' | 'HELD' | 'BOOKED' | 'CLOSED';
export type HoldStatus = 'HELD' | 'BOOKED' | 'RELEASED' | 'EXPIRED';
export type BookingStatus = 'PENDING' | 'CONFIRMED' | 'FAILED' | 'CANCELLED';
export type PaymentStatus = 'PENDING' | 'COMPLETED' | 'FAILED' | 'REFUNDED';
export type RefundStatus = 'PENDING' | 'COMPLETED' | 'FAILED';
export type QueueStatus = 'WAITING' | 'ADMITTED' | 'DONE';

export interface CitiesTable {
  id: string;
  name: string;
  state: string | null;
  timezone: string;
  created_at: Date;
}

export interface MoviesTable {
  id: string;
  title: string;
  description: Generated<string>;
  duration_minutes: number;
  language: string;
  genres: Generated<string[]>;
  release_date: CalendarDate;
  poster_url: string | null;
  rating: Nullable<Numeric>;
  created_at: Date;
  updated_at: Date;
  /** `to_tsvector('english', title)`, kept by PostgreSQL (full-text search). */
  title_tsv: GeneratedAlways<string>;
}

export interface TheatersTable {
  id: string;
  city_id: string;
  name: string;
  address: Generated<string>;
  total_screens: Generated<number>;
  created_at: Date;
}

export interface ScreensTable {
  id: string;
  theater_id: string;
  screen_number: number;
  total_seats: number;
  screen_type: string;
  created_at: Date;
}

export interface SeatsTable {
  id: string;
  screen_id: string;
  row_number: string;
  seat_number: number;
  /** Its column in the row counting aisle gaps; null when that is its number (no aisle before it). */
  column_number: ColumnType<number | null, number | null | undefined, number | null>;
  seat_type: SeatType;
  base_price_minor: Int8;
}

export interface ShowsTable {
  id: string;
  movie_id: string;
  screen_id: string;
  show_time: Date;
  end_time: Date;
  price_multiplier: Defaulted<Numeric>;
  status: Generated<ShowStatus>;
  is_hot: Generated<boolean>;
  cancelled_at: Date | null;
  cancel_reason: string | null;
  created_at: Date;
  /** When the retention job removed the show's seat inventory (null: still there). */
  inventory_removed_at: Generated<Date | null>;
}

/**
 * A movie's cities: the start of its last scheduled show in each (catalogue/repository.ts keeps it
 * as shows are added and cancelled). A city whose last show has started no longer shows it.
 */
export interface MovieCitiesTable {
  movie_id: string;
  city_id: string;
  last_show_time: Date;
}

export interface ShowSeatsTable {
  show_id: string;
  seat_id: string;
  status: Generated<ShowSeatStatus>;
  hold_id: string | null;
  held_until: Date | null;
}

export interface HoldsTable {
  id: string;
  show_id: string;
  user_id: string;
  seat_ids: string[];
  seats: string[];
  total_minor: Int8;
  status: HoldStatus;
  expires_at: Date;
  created_at: Date;
  released_at: Date | null;
  release_reason: string | null;
  /** An ended hold a booking references, passed over by the retention job (kept as long as the booking). */
  retained: Generated<boolean>;
}

export interface BookingsTable {
  id: string;
  hold_id: string;
  user_id: string;
  show_id: string;
  status: BookingStatus;
  seats: string[];
  total_minor: Int8;
  currency: string;
  payment_id: string | null;
  booking_time: Date;
  payment_deadline: Date;
  confirmed_at: Date | null;
  failed_at: Date | null;
  failure_reason: string | null;
  cancelled_at: Date | null;
  cancel_reason: string | null;
  refund_minor: Nullable<Int8>;
  refund_status: RefundStatus | null;
  email: string | null;
  phone: string | null;
}

export interface PaymentsTable {
  payment_id: string;
  booking_id: string;
  status: PaymentStatus;
  amount_minor: Int8;
  created_at: Date;
  settled_at: Date | null;
  refund_status: RefundStatus | null;
  refund_minor: Nullable<Int8>;
  refund_reason: string | null;
  refund_attempts: Generated<number>;
}

export interface RemindersTable {
  booking_id: string;
  kind: string;
  sent_at: Date;
}

export interface HoldUsersTable {
  user_id: string;
  version: Int8;
  /** Holds made since `held_until` last passed: an upper bound on the live ones (migration 009). */
  held: number;
  held_until: Date;
}

export interface QueueEntriesTable {
  show_id: string;
  user_id: string;
  seq: Int8;
  status: QueueStatus;
  joined_at: Date;
  admitted_at: Date | null;
  admitted_until: Date | null;
}

/** An admitted ticket (door check-in), at most one per booking. */
export interface CheckInsTable {
  booking_id: string;
  show_id: string;
  door: string;
  /** The operator (or admin) whose scanner admitted it: `callerId`, never a key. */
  checked_in_by: string;
  checked_in_at: Date;
}

export type BookingDb = Kysely<BookingTables>;
