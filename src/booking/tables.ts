import type { Generated, Kysely } from 'kysely';
import type { Db } from '../platform/db/index.ts';

/** Kysely types of the booking tables (see migrations/index.ts). */
export type BookingTables = {
  booking_cities: { id: string; name: string; state: string | null; timezone: string; created_at: Date };
  booking_movies: {
    id: string;
    title: string;
    description: string;
    duration_minutes: number;
    language: string;
    genres: string[];
    release_date: string;
    poster_url: string | null;
    rating: string | number | null;
    created_at: Date;
    updated_at: Date;
  };
  booking_theaters: {
    id: string;
    city_id: string;
    name: string;
    address: string;
    total_screens: number;
    created_at: Date;
  };
  booking_screens: {
    id: string;
    theater_id: string;
    screen_number: number;
    total_seats: number;
    screen_type: string;
    created_at: Date;
  };
  booking_seats: {
    id: string;
    screen_id: string;
    row_number: string;
    seat_number: number;
    seat_type: SeatType;
    base_price_minor: number | bigint;
  };
  booking_shows: {
    id: string;
    movie_id: string;
    screen_id: string;
    show_time: Date;
    end_time: Date;
    price_multiplier: string | number;
    status: Generated<'SCHEDULED' | 'CANCELLED'>;
    is_hot: Generated<boolean>;
    cancelled_at: Date | null;
    cancel_reason: string | null;
    created_at: Date;
  };
  booking_show_seats: {
    show_id: string;
    seat_id: string;
    status: 'AVAILABLE' | 'HELD' | 'BOOKED' | 'CLOSED';
    hold_id: string | null;
    held_until: Date | null;
  };
  booking_holds: {
    id: string;
    show_id: string;
    user_id: string;
    seat_ids: string[];
    seats: string[];
    total_minor: number | bigint;
    status: HoldStatus;
    expires_at: Date;
    created_at: Date;
    released_at: Date | null;
    release_reason: string | null;
  };
  booking_bookings: {
    id: string;
    hold_id: string;
    user_id: string;
    show_id: string;
    status: BookingStatus;
    seats: string[];
    total_minor: number | bigint;
    currency: string;
    payment_id: string | null;
    booking_time: Date;
    payment_deadline: Date;
    confirmed_at: Date | null;
    failed_at: Date | null;
    failure_reason: string | null;
    cancelled_at: Date | null;
    cancel_reason: string | null;
    refund_minor: number | bigint | null;
    refund_status: RefundStatus | null;
    email: string | null;
    phone: string | null;
  };
  booking_payments: {
    payment_id: string;
    booking_id: string;
    status: 'PENDING' | 'COMPLETED' | 'FAILED' | 'REFUNDED';
    amount_minor: number | bigint;
    created_at: Date;
    settled_at: Date | null;
    refund_status: RefundStatus | null;
    refund_minor: number | bigint | null;
    refund_reason: string | null;
    refund_attempts: Generated<number>;
  };
  booking_reminders: { booking_id: string; kind: string; sent_at: Date };
  booking_hold_users: { user_id: string; version: number | bigint };
  booking_queue_entries: {
    show_id: string;
    user_id: string;
    seq: number | bigint;
    status: 'WAITING' | 'ADMITTED' | 'DONE';
    joined_at: Date;
    admitted_at: Date | null;
    admitted_until: Date | null;
  };
};

export type SeatType = 'REGULAR' | 'PREMIUM' | 'RECLINER';
export const SEAT_TYPES: SeatType[] = ['REGULAR', 'PREMIUM', 'RECLINER'];
export type HoldStatus = 'HELD' | 'BOOKED' | 'RELEASED' | 'EXPIRED';
export type BookingStatus = 'PENDING' | 'CONFIRMED' | 'FAILED' | 'CANCELLED';
export type RefundStatus = 'PENDING' | 'COMPLETED' | 'FAILED';

export type BookingDb = Kysely<BookingTables>;

export function bookingDb(db: Db): BookingDb {
  return db.withTables<BookingTables>() as unknown as BookingDb;
}
