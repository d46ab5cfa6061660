/** Money is integer minor units inside; JSON carries numbers with at most two decimals. */

export function toMinor(amount: number): number {
  return Math.round(amount * 100);
}

export function fromMinor(minor: number | bigint): number {
  return Number(minor) / 100;
}

/** A seat's price: base price × the show's multiplier (in hundredths), rounded half up to a minor unit. */
export function seatPrice(baseMinor: number, multiplierHundredths: number): number {
  return Math.floor((baseMinor * multiplierHundredths + 50) / 100);
}

/** `1.25` → 125, exactly (the multiplier is numeric(3,2) in the database). */
export function multiplierToHundredths(multiplier: number): number {
  return Math.round(multiplier * 100);
}
