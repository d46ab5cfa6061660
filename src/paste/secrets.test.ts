import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newToken, sha256, tokenMatches } from './secrets.ts';

test('tokens drawn from the random pool are never repeated, across refills, and carry 256 bits', () => {
  const tokens = new Set<string>();
  const bytes = new Set<string>();
  // 1,000 tokens: several refills of the 128-token pool.
  for (let i = 0; i < 1000; i++) {
    const { token, hash } = newToken('dt_');
    assert.match(token, /^dt_[A-Za-z0-9_-]{43}$/);
    assert.equal(hash, sha256(token));
    assert.ok(tokenMatches(token, hash));
    tokens.add(token);
    // Any two tokens sharing a 16-byte run would mean pool bytes were handed out twice.
    const raw = Buffer.from(token.slice(3), 'base64url');
    assert.equal(raw.length, 32);
    bytes.add(raw.subarray(0, 16).toString('hex'));
    bytes.add(raw.subarray(16).toString('hex'));
  }
  assert.equal(tokens.size, 1000);
  assert.equal(bytes.size, 2000);
});
