import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { admissionToken, createAdmissionCheck } from './signing.ts';

const SECRET = 'a-test-secret-of-enough-length-1234';

describe('admission check with verified tokens remembered', () => {
  const show = randomUUID();
  const user = randomUUID();
  const now = new Date('2026-01-05T12:00:00Z');
  const expires = new Date(now.getTime() + 600_000);

  test('a valid token passes, again and again; for another show or user it does not', () => {
    const check = createAdmissionCheck(SECRET);
    const token = admissionToken(SECRET, show, user, expires);
    assert.equal(check(token, show, user, now), true);
    assert.equal(check(token, show, user, now), true);
    assert.equal(check(token, show, user.toUpperCase(), now), true);
    assert.equal(check(token, randomUUID(), user, now), false);
    assert.equal(check(token, show, randomUUID(), now), false);
  });

  test('a remembered token is refused once it has expired', () => {
    const check = createAdmissionCheck(SECRET);
    const token = admissionToken(SECRET, show, user, expires);
    assert.equal(check(token, show, user, now), true);
    assert.equal(check(token, show, user, new Date(expires.getTime() - 1)), true);
    assert.equal(check(token, show, user, expires), false);
    assert.equal(check(token, show, user, new Date(expires.getTime() + 1)), false);
  });

  test('forged tokens are refused every time: another secret, a changed expiry, garbage', () => {
    const check = createAdmissionCheck(SECRET);
    const good = admissionToken(SECRET, show, user, expires);
    const otherSecret = admissionToken('another-secret-of-enough-length-5678', show, user, expires);
    const [, mac] = good.split('.');
    const longer = `${expires.getTime() + 3_600_000}.${mac}`;
    for (let i = 0; i < 2; i++) {
      assert.equal(check(otherSecret, show, user, now), false);
      assert.equal(check(longer, show, user, now), false);
      assert.equal(check('not-a-token', show, user, now), false);
      assert.equal(check(`${expires.getTime()}.${'A'.repeat(43)}`, show, user, now), false);
    }
    // The genuine token still passes after the forgeries.
    assert.equal(check(good, show, user, now), true);
  });

  test('an expired token is refused even the first time', () => {
    const check = createAdmissionCheck(SECRET);
    assert.equal(check(admissionToken(SECRET, show, user, now), show, user, now), false);
  });

  test('at most `max` tokens are kept; one that went is simply checked again', () => {
    const check = createAdmissionCheck(SECRET, { max: 2 });
    const users = [randomUUID(), randomUUID(), randomUUID()];
    const tokens = users.map((u) => admissionToken(SECRET, show, u, expires));
    for (const [i, u] of users.entries()) assert.equal(check(tokens[i], show, u, now), true);
    for (const [i, u] of users.entries()) assert.equal(check(tokens[i], show, u, now), true);
  });
});
