import { formatDuration } from './pricing/pricing.ts';
import type { PaymentRow, TicketRow } from './tables.ts';
import { formatCode } from './tickets/codes.ts';

/** JSON shapes of the API: ISO 8601 UTC times, money as numbers with two decimals. */
export const money = (minor: number) => Math.round(minor) / 100;

export function ticketView(ticket: TicketRow, payment?: PaymentRow) {
  return {
    ticketId: ticket.id,
    code: ticket.code && formatCode(ticket.code),
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
    /** The reservation the vehicle arrived on (its window is priced at the exit), or null. */
    reservationId: ticket.reservationId,
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
    code: ticket.code && formatCode(ticket.code),
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
    /** When the gate opened (the payment completed); an exit panel says so for a ticket paid before. */
    paidAt: ticket.paidAt?.toISOString() ?? null,
  };
}
