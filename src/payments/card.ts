import type { CardDetails } from './api.ts';
import { paymentError } from './errors.ts';

export interface ValidCard {
  /** Digits only. Lives only as long as the request; never stored or logged. */
  number: string;
  last4: string;
  brand: string;
  expMonth: number;
  expYear: number;
  cvc: string;
}

/** The Luhn checksum every real card number satisfies (ISO/IEC 7812-1). */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

export function cardBrand(digits: string): string {
  if (/^4/.test(digits)) return 'visa';
  const prefix4 = Number(digits.slice(0, 4));
  if (/^5[1-5]/.test(digits) || (prefix4 >= 2221 && prefix4 <= 2720)) return 'mastercard';
  if (/^3[47]/.test(digits)) return 'amex';
  if (/^(6011|65|64[4-9])/.test(digits)) return 'discover';
  return 'unknown';
}

/**
 * Checks `payment_details` before anything changes: 422 listing every bad field. Messages never
 * echo the number. A card is valid through the last day of its expiry month (UTC).
 */
export function validateCard(card: CardDetails, now: Date): ValidCard {
  const errors: { field: string; message: string }[] = [];
  const number = String(card.card_number ?? '').replace(/[\s-]/g, '');
  if (!/^\d{12,19}$/.test(number)) {
    errors.push({ field: 'payment_details.card_number', message: 'must be 12 to 19 digits' });
  } else if (!luhnValid(number)) {
    errors.push({ field: 'payment_details.card_number', message: 'is not a valid card number' });
  }
  const brand = cardBrand(number);
  const expMonth = Number(card.exp_month);
  let expYear = Number(card.exp_year);
  if (Number.isInteger(expYear) && expYear >= 0 && expYear < 100) expYear += 2000;
  const monthOk = Number.isInteger(expMonth) && expMonth >= 1 && expMonth <= 12;
  const yearOk = Number.isInteger(expYear) && expYear >= 2000 && expYear <= now.getUTCFullYear() + 20;
  if (!monthOk) errors.push({ field: 'payment_details.exp_month', message: 'must be a month from 1 to 12' });
  if (!yearOk) errors.push({ field: 'payment_details.exp_year', message: 'is not a plausible year' });
  if (monthOk && yearOk && Date.UTC(expYear, expMonth, 1) <= now.getTime()) {
    errors.push({ field: 'payment_details.exp_month', message: 'the card has expired' });
  }
  const cvc = String(card.cvc ?? '');
  const cvcLength = brand === 'amex' ? 4 : 3;
  if (!new RegExp(`^\\d{${cvcLength}}$`).test(cvc)) {
    errors.push({ field: 'payment_details.cvc', message: `must be ${cvcLength} digits` });
  }
  if (errors.length > 0) {
    throw paymentError('invalid_payment_details', {
      detail: errors.map((error) => `${error.field} ${error.message}`).join('; '),
      extras: { errors },
    });
  }
  return { number, last4: number.slice(-4), brand, expMonth, expYear, cvc };
}
