import type { ColumnType, Generated, Selectable } from 'kysely';
import type { PaymentStatus } from '../payments/api.ts';
import type { SpotType, VehicleType } from './lot/allocation.ts';

/** Kysely types of the parking tables (created in migrations/index.ts). */
export type ParkingTables = {
  parking_spots: ParkingSpotsTable;
  parking_tickets: ParkingTicketsTable;
  parking_payments: ParkingPaymentsTable;
  parking_reservations: ParkingReservationsTable;
  /** Closed tickets and their payments, moved out of the live tables (archive.ts). */
  parking_tickets_archive: ParkingTicketsTable & Archived;
  parking_payments_archive: ParkingPaymentsTable & Archived;
};

interface Archived {
  archived_at: Date;
}

export type TicketStatus = 'ACTIVE' | 'PAID' | 'LOST';
export type PaymentKind = 'EXIT' | 'LOST';
/** int8: read as BigInt (platform setting), written from a number. */
type Int8 = ColumnType<bigint, number | bigint, number | bigint>;

export interface ParkingSpotsTable {
  id: string;
  floor: number;
  /** Position of the floor in the lot file: floors are searched in this order. */
  floor_order: number;
  position: number;
  spot_type: SpotType;
  /** Offering order of this spot's type for each vehicle type; null = does not fit (or retired). */
  rank_motorcycle: number | null;
  rank_car: number | null;
  rank_bus: number | null;
  retired: Generated<boolean>;
  ticket_id: string | null;
  occupied_at: Date | null;
  /** The reservation this free spot is held for (reservations/); invisible to walk-ins while set. */
  reservation_id: Generated<string | null>;
}

export interface ParkingTicketsTable {
  id: string;
  license_plate: string;
  vehicle_type: VehicleType;
  spot_id: string;
  floor: number;
  spot_type: SpotType;
  status: TicketStatus;
  entry_time: Date;
  entry_panel_id: string | null;
  exit_time: Date | null;
  exit_panel_id: string | null;
  lost_at: Date | null;
  paid_at: Date | null;
  current_payment_id: string | null;
  /** The short code printed on the ticket (tickets/codes.ts); null for tickets issued before codes. */
  code: string | null;
  /** The reservation the vehicle arrived on, and its window: the exit prices at least that window. */
  reservation_id: Generated<string | null>;
  reserved_from: Generated<Date | null>;
  reserved_until: Generated<Date | null>;
}

export type ReservationStatus = 'BOOKED' | 'HELD' | 'USED' | 'NO_SHOW' | 'CANCELLED';
/** BOOKED and HELD reservations count against the lot's `reservations.spots`. */
export const LIVE_RESERVATION: readonly ReservationStatus[] = ['BOOKED', 'HELD'];

export interface ParkingReservationsTable {
  id: string;
  user_id: string;
  license_plate: string;
  vehicle_type: VehicleType;
  spot_type: SpotType;
  starts_at: Date;
  ends_at: Date;
  status: ReservationStatus;
  /** The held spot (HELD), kept once used. */
  spot_id: string | null;
  floor: number | null;
  ticket_id: string | null;
  quote_minor: Int8;
  currency: string;
  created_at: Date;
  updated_at: Date;
}

export interface ParkingPaymentsTable {
  /** The payments module's payment id. */
  id: string;
  ticket_id: string;
  kind: PaymentKind;
  amount_minor: Int8;
  currency: string;
  status: PaymentStatus;
  payment_url: string;
  failure_reason: string | null;
  duration_ms: Int8;
  created_at: Date;
  updated_at: Date;
  /**
   * FAILED but still payable with another card (payments `allowRetry`, not withdrawn): still the
   * ticket's live payment (migration 004). False for payments recorded before retries existed.
   */
  retryable: Generated<boolean>;
}

/** `license_plate` → `licensePlate`: the service reads rows under camelCase names. */
type Camel<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<Camel<Tail>>}`
  : S;
type CamelCased<Row> = { [K in keyof Row as Camel<K & string>]: Row[K] };

/** A ticket as the repository returns it. */
export type TicketRow = CamelCased<Selectable<ParkingTicketsTable>>;

/** A reservation as the repository returns it: the quote fits a number. */
export type ReservationRow = Omit<CamelCased<Selectable<ParkingReservationsTable>>, 'quoteMinor'> & {
  quoteMinor: number;
};

/** A payment as the repository returns it: amounts and durations fit a number. */
export type PaymentRow = Omit<CamelCased<Selectable<ParkingPaymentsTable>>, 'amountMinor' | 'durationMs'> & {
  amountMinor: number;
  durationMs: number;
};
