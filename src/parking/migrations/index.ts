import { type Kysely, sql } from 'kysely';
import type { Migrations } from '../../platform/db/migrate.ts';

/**
 * PostgreSQL is the arbiter of who parks where:
 * - a spot row holds at most one ticket (`ticket_id`), taken with a conditional update;
 * - at most one ticket inside per plate and per spot (partial unique indexes), whatever the code does;
 * - at most one live (PENDING, COMPLETED, or FAILED and still open to another card) payment per
 *   ticket, so an exit never charges twice and two payment pages of one ticket are never payable.
 */
export const parkingMigrations: Migrations = {
  '001_parking': {
    async up(db: Kysely<unknown>) {
      await sql`
        create table parking_spots (
          id text primary key,
          floor int not null,
          floor_order int not null,
          position int not null,
          spot_type text not null check (spot_type in ('MOTORCYCLE', 'COMPACT', 'LARGE', 'HANDICAPPED', 'ELECTRIC')),
          -- Offering order of this spot's type for each vehicle type; null = does not fit (or retired).
          rank_motorcycle smallint,
          rank_car smallint,
          rank_bus smallint,
          retired boolean not null default false,
          ticket_id uuid,
          occupied_at timestamptz
        )`.execute(db);
      // One partial index per vehicle type, in allocation order, holding only free fitting spots:
      // taking the next spot is an index scan that skips rows other entries have locked.
      for (const vehicle of ['motorcycle', 'car', 'bus']) {
        await sql
          .raw(
            `create index parking_spots_free_${vehicle} on parking_spots (floor_order, rank_${vehicle}, position)
             where ticket_id is null and rank_${vehicle} is not null`,
          )
          .execute(db);
      }
      await sql`
        create table parking_tickets (
          id uuid primary key,
          license_plate text not null,
          vehicle_type text not null check (vehicle_type in ('MOTORCYCLE', 'CAR', 'BUS')),
          spot_id text not null references parking_spots (id),
          floor int not null,
          spot_type text not null,
          status text not null check (status in ('ACTIVE', 'PAID', 'LOST')),
          entry_time timestamptz not null,
          entry_panel_id text,
          exit_time timestamptz,
          exit_panel_id text,
          lost_at timestamptz,
          paid_at timestamptz,
          current_payment_id text
        )`.execute(db);
      await sql`create unique index parking_tickets_plate_inside on parking_tickets (license_plate)
        where status in ('ACTIVE', 'LOST')`.execute(db);
      await sql`create unique index parking_tickets_spot_inside on parking_tickets (spot_id)
        where status in ('ACTIVE', 'LOST')`.execute(db);
      await sql`
        create table parking_payments (
          id text primary key,
          ticket_id uuid not null references parking_tickets (id),
          kind text not null check (kind in ('EXIT', 'LOST')),
          amount_minor bigint not null,
          currency text not null,
          status text not null check (status in ('PENDING', 'COMPLETED', 'FAILED', 'REFUNDED')),
          payment_url text not null,
          failure_reason text,
          duration_ms bigint not null,
          created_at timestamptz not null,
          updated_at timestamptz not null
        )`.execute(db);
      await sql`create unique index parking_payments_live on parking_payments (ticket_id)
        where status in ('PENDING', 'COMPLETED')`.execute(db);
      await sql`create index parking_payments_ticket on parking_payments (ticket_id, created_at)`.execute(db);
    },
  },
  '002_archive': {
    async up(db: Kysely<unknown>) {
      // Closed tickets move here with their payments (../archive.ts), so the live tables hold the
      // lot's vehicles and the recent past. Same columns, no foreign keys and no hot-path indexes:
      // only the lookups of an archived ticket by id and of its payments.
      await sql`
        create table parking_tickets_archive (
          id uuid primary key,
          license_plate text not null,
          vehicle_type text not null,
          spot_id text not null,
          floor int not null,
          spot_type text not null,
          status text not null,
          entry_time timestamptz not null,
          entry_panel_id text,
          exit_time timestamptz,
          exit_panel_id text,
          lost_at timestamptz,
          paid_at timestamptz,
          current_payment_id text,
          archived_at timestamptz not null
        )`.execute(db);
      await sql`
        create table parking_payments_archive (
          id text primary key,
          ticket_id uuid not null,
          kind text not null,
          amount_minor bigint not null,
          currency text not null,
          status text not null,
          payment_url text not null,
          failure_reason text,
          duration_ms bigint not null,
          created_at timestamptz not null,
          updated_at timestamptz not null,
          archived_at timestamptz not null
        )`.execute(db);
      await sql`create index parking_payments_archive_ticket on parking_payments_archive (ticket_id)`.execute(
        db,
      );
      // The archive job's scan: paid tickets, oldest first.
      await sql`create index parking_tickets_paid on parking_tickets (paid_at) where status = 'PAID'`.execute(
        db,
      );
    },
  },
  '003_ticket_codes': {
    async up(db: Kysely<unknown>) {
      // The short code printed on a ticket (tickets/codes.ts). Tickets issued before have none and
      // keep answering to their id. A code is unique among the vehicles inside, so a code typed
      // at the exit names one car; a paid ticket's code may come round again (35 random bits).
      await sql`alter table parking_tickets add column code text`.execute(db);
      await sql`alter table parking_tickets_archive add column code text`.execute(db);
      await sql`create unique index parking_tickets_code_inside on parking_tickets (code)
        where status in ('ACTIVE', 'LOST')`.execute(db);
      // Receipts and status by code after the exit: the newest paid ticket of that code.
      await sql`create index parking_tickets_code on parking_tickets (code, entry_time)`.execute(db);
      await sql`create index parking_tickets_archive_code on parking_tickets_archive (code, entry_time)`.execute(
        db,
      );
    },
  },
  '004_reservations': {
    async up(db: Kysely<unknown>) {
      // A spot type booked for a time window (reservations/): held on a concrete spot shortly
      // before it starts (`parking_spots.reservation_id`), used by the plate's entry, or ended.
      await sql`
        create table parking_reservations (
          id uuid primary key,
          user_id text not null,
          license_plate text not null,
          vehicle_type text not null check (vehicle_type in ('MOTORCYCLE', 'CAR', 'BUS')),
          spot_type text not null check (spot_type in ('MOTORCYCLE', 'COMPACT', 'LARGE', 'HANDICAPPED', 'ELECTRIC')),
          starts_at timestamptz not null,
          ends_at timestamptz not null,
          status text not null check (status in ('BOOKED', 'HELD', 'USED', 'NO_SHOW', 'CANCELLED')),
          spot_id text,
          floor int,
          ticket_id uuid,
          quote_minor bigint not null,
          currency text not null,
          created_at timestamptz not null,
          updated_at timestamptz not null,
          check (ends_at > starts_at)
        )`.execute(db);
      // Arrival by plate (one lookup per entry batch): only live reservations.
      await sql`create index parking_reservations_plate_live on parking_reservations (license_plate, starts_at)
        where status in ('BOOKED', 'HELD')`.execute(db);
      // "My reservations".
      await sql`create index parking_reservations_user on parking_reservations (user_id, starts_at)`.execute(
        db,
      );
      // Admission (overlaps of one spot type) and the job's scans (holds due, no-shows), live only.
      await sql`create index parking_reservations_type_live on parking_reservations (spot_type, starts_at)
        where status in ('BOOKED', 'HELD')`.execute(db);
      await sql`create index parking_reservations_live on parking_reservations (starts_at)
        where status in ('BOOKED', 'HELD')`.execute(db);
      // Retention: ended reservations, oldest first.
      await sql`create index parking_reservations_ended on parking_reservations (updated_at)
        where status in ('USED', 'NO_SHOW', 'CANCELLED')`.execute(db);

      // A held spot: free of vehicles but kept for one reservation, invisible to walk-ins.
      await sql`alter table parking_spots add column reservation_id uuid`.execute(db);
      await sql`create unique index parking_spots_reservation on parking_spots (reservation_id)
        where reservation_id is not null`.execute(db);
      for (const vehicle of ['motorcycle', 'car', 'bus']) {
        await sql.raw(`drop index parking_spots_free_${vehicle}`).execute(db);
        await sql
          .raw(
            `create index parking_spots_free_${vehicle} on parking_spots (floor_order, rank_${vehicle}, position)
             where ticket_id is null and reservation_id is null and rank_${vehicle} is not null`,
          )
          .execute(db);
      }
      // The reserved window travels with the ticket, so pricing at the exit needs no join.
      for (const table of ['parking_tickets', 'parking_tickets_archive']) {
        await sql
          .raw(
            `alter table ${table} add column reservation_id uuid,
               add column reserved_from timestamptz, add column reserved_until timestamptz`,
          )
          .execute(db);
      }
    },
  },
  '005_payment_retry': {
    async up(db: Kysely<unknown>) {
      // Payments are made with `allowRetry`: a declined one stays payable with another card until
      // it is withdrawn (`retryable` false once the payments module says it is final). It is still
      // the ticket's live payment then, so the live index covers it: a ticket never has two
      // payments that could both be paid. Payments recorded before were final when they failed
      // (default false), so existing tickets with several failed payments stay valid.
      await sql`alter table parking_payments add column retryable boolean not null default false`.execute(db);
      await sql`alter table parking_payments_archive add column retryable boolean not null default false`.execute(
        db,
      );
      await sql`drop index parking_payments_live`.execute(db);
      await sql`create unique index parking_payments_live on parking_payments (ticket_id)
        where status in ('PENDING', 'COMPLETED') or (status = 'FAILED' and retryable)`.execute(db);
    },
  },
  '006_paid_code_index': {
    async up(db: Kysely<unknown>) {
      // A code is looked up among the vehicles inside (the unique index) and then among the paid
      // tickets: the second index holds the paid ones only, so an entry writes one code index, not two.
      await sql`drop index parking_tickets_code`.execute(db);
      await sql`create index parking_tickets_code_paid on parking_tickets (code, entry_time)
        where status = 'PAID'`.execute(db);
    },
  },
};
