import type { LotConfig } from '../lot/config.ts';
import { VEHICLE_LABELS } from '../pages/labels.ts';
import {
  billedStay,
  dayOfWeekIn,
  describePricing,
  feeFor,
  formatDuration,
  type Pricing,
} from '../pricing/pricing.ts';
import type { PaymentRow, TicketRow } from '../tables.ts';
import { formatCode } from '../tickets/codes.ts';
import { money } from '../views.ts';

/**
 * The receipt of a paid stay: what a driver keeps (or an employer asks for). Times are given as
 * instants (ISO, UTC) and as the lot's wall clock with its zone, since a receipt is read far
 * from the lot. The exit time is the one the amount was computed for (the exit at the panel),
 * so the duration and the amount agree.
 */
export function receiptView(lot: LotConfig, ticket: TicketRow, payment: PaymentRow) {
  const exitTime = new Date(ticket.entryTime.getTime() + payment.durationMs);
  return {
    receiptNumber: payment.id,
    lot: { id: lot.id, name: lot.name, timeZone: lot.timeZone },
    ticketId: ticket.id,
    code: ticket.code && formatCode(ticket.code),
    licensePlate: ticket.licensePlate,
    vehicleType: ticket.vehicleType,
    spotId: ticket.spotId,
    floor: ticket.floor,
    entryTime: ticket.entryTime.toISOString(),
    exitTime: exitTime.toISOString(),
    paidAt: (ticket.paidAt ?? payment.updatedAt).toISOString(),
    local: {
      entryTime: lotDateTime(ticket.entryTime, lot.timeZone),
      exitTime: lotDateTime(exitTime, lot.timeZone),
      paidAt: lotDateTime(ticket.paidAt ?? payment.updatedAt, lot.timeZone),
    },
    duration: formatDuration(payment.durationMs),
    kind: payment.kind,
    rule: ruleApplied(lot, ticket, exitTime, payment),
    amount: money(payment.amountMinor),
    currency: payment.currency,
    /** REFUNDED when the money went back afterwards; the receipt says so. */
    status: payment.status as 'COMPLETED' | 'REFUNDED',
    url: `/parking/receipts/${ticket.id}`,
  };
}

export type Receipt = ReturnType<typeof receiptView>;

const dateTimes = new Map<string, Intl.DateTimeFormat>();

/** "Nov 27, 2026, 6:55 AM EST": the lot's wall clock, its zone named. */
export function lotDateTime(instant: Date, timeZone: string): string {
  let format = dateTimes.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      dateStyle: 'medium',
      timeStyle: 'short',
    });
    dateTimes.set(timeZone, format);
  }
  const zone =
    new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'short' })
      .formatToParts(instant)
      .find((part) => part.type === 'timeZoneName')?.value ?? timeZone;
  return `${format.format(instant)} ${zone}`;
}

/**
 * The pricing rule that made the amount, in words, recomputed from the lot's pricing. When the
 * lot's prices changed since (the recomputed fee differs), the receipt says the amount is as
 * charged rather than naming a rule that did not apply.
 */
export function ruleApplied(lot: LotConfig, ticket: TicketRow, exitTime: Date, payment: PaymentRow): string {
  const stay = billedStay(ticket, exitTime);
  const fee = feeFor(lot.pricing, stay, lot.timeZone);
  const cash = (minor: number) => `${money(minor).toFixed(2)} ${lot.currency}`;
  if (payment.kind === 'LOST') {
    const lost = lot.lostTicketFeeMinor;
    if (payment.amountMinor === Math.max(lost, fee)) {
      return lost >= fee
        ? `Lost ticket: the lost-ticket fee ${cash(lost)} (the stay alone came to ${cash(fee)})`
        : `Lost ticket: the fee the stay reached, ${cash(fee)} (more than the lost-ticket fee ${cash(lost)})`;
    }
  } else if (payment.amountMinor === fee) {
    const rule = stayRule(lot.pricing, stay, lot.timeZone, cash);
    return ticket.reservedFrom ? `${rule} (reserved stay: the reserved window at least)` : rule;
  }
  return `As charged at the exit under the lot's prices then (now: ${describePricing(lot.pricing, lot.currency)})`;
}

export function stayRule(
  pricing: Pricing,
  stay: { vehicleType: TicketRow['vehicleType']; entryTime: Date; exitTime: Date },
  timeZone: string,
  cash: (minor: number) => string,
): string {
  const vehicle = VEHICLE_LABELS[stay.vehicleType].one.toLowerCase();
  switch (pricing.strategy) {
    case 'hourly': {
      const hours = Math.max(1, Math.floor((stay.exitTime.getTime() - stay.entryTime.getTime()) / 3_600_000));
      const rate = pricing.ratesMinor[stay.vehicleType];
      return `Hourly rate for a ${vehicle}: ${cash(rate)} per full hour (at least one) × ${hours} h`;
    }
    case 'flat':
      return `Flat rate: ${cash(pricing.flatRateMinor)} per stay`;
    case 'weekend': {
      const base = stayRule(pricing.weekday, stay, timeZone, cash);
      const weekend = pricing.weekendDays.includes(dayOfWeekIn(stay.entryTime, timeZone));
      return weekend ? `${base}; weekend entry ×${pricing.multiplierBasisPoints / 10_000}` : base;
    }
  }
}
