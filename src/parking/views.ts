import type { SpotType } from './allocation.ts';
import type { LotConfig } from './lot-config.ts';
import { formatDuration } from './pricing.ts';
import type { FreeCount, PaymentRow, TicketRow } from './repository.ts';

/** JSON shapes of the API: ISO 8601 UTC times, money as numbers with two decimals. */
export const money = (minor: number) => Math.round(minor) / 100;

export function ticketView(ticket: TicketRow, payment?: PaymentRow) {
  return {
    ticketId: ticket.id,
    licensePlate: ticket.licensePlate,
    vehicleType: ticket.vehicleType,
    spotId: ticket.spotId,
    spotType: ticket.spotType,
    floor: ticket.floor,
    status: ticket.status,
    entryTime: ticket.entryTime.toISOString(),
    exitTime: ticket.exitTime?.toISOString() ?? null,
    lostAt: ticket.lostAt?.toISOString() ?? null,
    paidAt: ticket.paidAt?.toISOString() ?? null,
    payment: payment ? paymentView(payment) : null,
  };
}

export function paymentView(payment: PaymentRow) {
  return {
    paymentId: payment.id,
    kind: payment.kind,
    amount: money(payment.amountMinor),
    currency: payment.currency,
    duration: formatDuration(payment.durationMs),
    status: payment.status,
    paymentUrl: payment.paymentUrl,
    failureReason: payment.failureReason,
    createdAt: payment.createdAt.toISOString(),
    updatedAt: payment.updatedAt.toISOString(),
  };
}

/** The exit answer of the spec (`amount, duration, paymentUrl`) plus the payment's id and status. */
export function exitView(ticket: TicketRow, payment: PaymentRow) {
  return {
    ticketId: ticket.id,
    ticketStatus: ticket.status,
    licensePlate: ticket.licensePlate,
    spotId: ticket.spotId,
    amount: money(payment.amountMinor),
    currency: payment.currency,
    duration: formatDuration(payment.durationMs),
    paymentId: payment.id,
    paymentUrl: payment.paymentUrl,
    status: payment.status,
    kind: payment.kind,
    failureReason: payment.failureReason,
  };
}

const COLUMNS: Record<SpotType, 'motorcycle' | 'compact' | 'large' | 'handicapped' | 'electric'> = {
  MOTORCYCLE: 'motorcycle',
  COMPACT: 'compact',
  LARGE: 'large',
  HANDICAPPED: 'handicapped',
  ELECTRIC: 'electric',
};

const zeros = () =>
  ({ MOTORCYCLE: 0, COMPACT: 0, LARGE: 0, HANDICAPPED: 0, ELECTRIC: 0 }) as Record<SpotType, number>;

/** Spec: `floors: [{floor, motorcycle, compact, large}]`, plus handicapped and electric. */
export function availabilityView(lot: LotConfig, counts: FreeCount[]) {
  return {
    floors: lot.floors.map((floor) => {
      const row = { floor: floor.floor, motorcycle: 0, compact: 0, large: 0, handicapped: 0, electric: 0 };
      for (const count of counts) if (count.floor === floor.floor) row[COLUMNS[count.spotType]] = count.free;
      return row;
    }),
  };
}

/** One display board per floor (spec: boardId, availableSpots per type), plus the lot's totals. */
export function boardsView(lot: LotConfig, counts: FreeCount[], at: Date) {
  const total = zeros();
  const capacity = zeros();
  const boards = lot.floors.map((floor) => {
    const availableSpots = zeros();
    const totalSpots = zeros();
    for (const count of counts) {
      if (count.floor !== floor.floor) continue;
      availableSpots[count.spotType] = count.free;
      totalSpots[count.spotType] = count.total;
      total[count.spotType] += count.free;
      capacity[count.spotType] += count.total;
    }
    return { boardId: floor.boardId, floor: floor.floor, name: floor.name, availableSpots, totalSpots };
  });
  return {
    lot: { id: lot.id, name: lot.name },
    updatedAt: at.toISOString(),
    boards,
    total: { availableSpots: total, totalSpots: capacity },
  };
}

export type BoardsView = ReturnType<typeof boardsView>;
