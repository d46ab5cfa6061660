/**
 * The one card form (card-form.eta): checks the fields as the payments API does (src/payments/
 * card.ts: 12–19 digits passing Luhn, an expiry month not in the past and at most 20 years ahead,
 * a 3-digit CVC, 4 for Amex) and says what is wrong under each field, in words, attached to it by
 * aria-describedby. The API's own field errors (422) are shown the same way.
 */
export function cardForm(form) {
  const field = (name) => form.querySelector(`[data-card-field="${name}"]`);
  const fields = { number: field('number'), exp: field('exp'), cvc: field('cvc') };

  function setError(name, text) {
    const input = fields[name];
    const error = document.getElementById(`${input.id}-error`);
    error.textContent = text ?? '';
    error.hidden = !text;
    if (text) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
  }

  function clear() {
    for (const name of Object.keys(fields)) setError(name, undefined);
  }

  function luhn(digits) {
    let sum = 0;
    for (let i = 0; i < digits.length; i++) {
      let digit = Number(digits[digits.length - 1 - i]);
      if (i % 2 === 1) {
        digit *= 2;
        if (digit > 9) digit -= 9;
      }
      sum += digit;
    }
    return sum % 10 === 0;
  }

  /** The card details for the API, or undefined after marking the fields that are wrong. */
  function read(now = new Date()) {
    clear();
    const problems = {};
    const number = fields.number.value.replace(/[\s-]/g, '');
    if (number === '') problems.number = 'Enter the card number.';
    else if (!/^\d{12,19}$/.test(number)) problems.number = 'A card number has 12 to 19 digits.';
    else if (!luhn(number)) problems.number = 'This is not a valid card number: check the digits.';
    const exp = fields.exp.value.trim();
    const match = /^(\d{1,2})\s*\/\s*(\d{2}|\d{4})$/.exec(exp);
    let expMonth = 0;
    let expYear = 0;
    if (exp === '') problems.exp = 'Enter the expiry date as MM/YY, e.g. 12/30.';
    else if (!match) problems.exp = 'Write the expiry date as MM/YY, e.g. 12/30.';
    else {
      expMonth = Number(match[1]);
      expYear = Number(match[2]) + (match[2].length === 2 ? 2000 : 0);
      if (expMonth < 1 || expMonth > 12) problems.exp = 'The month is 01 to 12.';
      else if (Date.UTC(expYear, expMonth, 1) <= now.getTime()) problems.exp = 'This card has expired.';
      else if (expYear > now.getUTCFullYear() + 20) problems.exp = 'Check the year of the expiry date.';
    }
    const cvc = fields.cvc.value.trim();
    const amex = /^3[47]/.test(number);
    const cvcLength = amex ? 4 : 3;
    if (cvc === '') problems.cvc = 'Enter the security code (CVC).';
    else if (!new RegExp(`^\\d{${cvcLength}}$`).test(cvc))
      problems.cvc = `The security code is ${cvcLength} digits.`;
    const wrong = Object.keys(problems);
    if (wrong.length > 0) {
      for (const name of wrong) setError(name, problems[name]);
      fields[wrong[0]].focus();
      return undefined;
    }
    return { card_number: number, exp_month: expMonth, exp_year: expYear, cvc };
  }

  /** The API's 422 `errors` (`payment_details.<field>`), under the fields they are about; false if none was. */
  function showApiErrors(errors) {
    const names = { card_number: 'number', exp_month: 'exp', exp_year: 'exp', cvc: 'cvc' };
    let shown = false;
    for (const error of errors ?? []) {
      const name = names[String(error.field).replace('payment_details.', '')];
      if (!name) continue;
      setError(name, `${{ number: 'Card number', exp: 'Expiry', cvc: 'CVC' }[name]} ${error.message}.`);
      shown = true;
    }
    return shown;
  }

  for (const [name, input] of Object.entries(fields)) {
    input.addEventListener('input', () => setError(name, undefined));
  }
  return { read, clear, showApiErrors, focus: () => fields.number.focus() };
}
