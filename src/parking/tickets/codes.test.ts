import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CODE_ALPHABET,
  CODE_LENGTH,
  checkCharacter,
  formatCode,
  isValidCode,
  newTicketCode,
  normaliseCode,
  parseTicketRef,
} from './codes.ts';

test('new codes: 8 characters of the unambiguous alphabet with a valid check character, all different', () => {
  const codes = new Set<string>();
  for (let i = 0; i < 5000; i++) {
    const code = newTicketCode();
    assert.equal(code.length, CODE_LENGTH);
    assert.match(code, /^[2-9A-HJ-NP-Y]{8}$/);
    assert.ok(isValidCode(code), code);
    codes.add(code);
  }
  assert.equal(codes.size, 5000);
  assert.ok(!/[01IOZ]/.test(CODE_ALPHABET));
});

test('the check character catches every single mistyped character and every swap of neighbours', () => {
  for (let n = 0; n < 500; n++) {
    const code = newTicketCode();
    for (let i = 0; i < code.length; i++) {
      for (const other of CODE_ALPHABET) {
        if (other === code[i]) continue;
        const typo = code.slice(0, i) + other + code.slice(i + 1);
        assert.equal(isValidCode(typo), false, `${code} → ${typo}`);
      }
      if (i + 1 < code.length && code[i] !== code[i + 1]) {
        const swapped = code.slice(0, i) + code[i + 1] + code[i] + code.slice(i + 2);
        assert.equal(isValidCode(swapped), false, `${code} → ${swapped}`);
      }
    }
  }
});

test('typed in any case, with a dash or spaces; a UUID is an id; anything else invalid', () => {
  const body = 'ABCDEFG';
  const code = body + checkCharacter(body);
  assert.equal(formatCode(code), `${code.slice(0, 4)}-${code.slice(4)}`);
  assert.equal(normaliseCode(` ${formatCode(code).toLowerCase()} `), code);
  assert.deepEqual(parseTicketRef(formatCode(code).toLowerCase()), { code });
  assert.deepEqual(parseTicketRef('0190A1B2-0000-7000-8000-000000000001'), {
    id: '0190a1b2-0000-7000-8000-000000000001',
  });
  assert.deepEqual(parseTicketRef('nope'), { invalid: 'nope' });
  assert.deepEqual(parseTicketRef('ABCD-EFG0'), { invalid: 'ABCD-EFG0' });
});
