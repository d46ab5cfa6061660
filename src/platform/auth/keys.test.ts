import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keyGrants, parseKeyGrants, SERVICE_SCOPES } from './keys.ts';

test('configured keys are found by what was presented, again from memory, and nothing else is', () => {
  const configured = parseKeyGrants(
    'SERVICE_KEYS',
    'backoffice notify:send k3y-0f-the-back-office; booking booking:read another-key-123',
    SERVICE_SCOPES,
  );
  const keys = keyGrants(configured);
  for (let round = 0; round < 2; round++) {
    assert.equal(keys.find('k3y-0f-the-back-office')?.name, 'backoffice');
    assert.equal(keys.find('another-key-123')?.name, 'booking');
    assert.equal(keys.find('k3y-0f-the-back-offic'), undefined);
    assert.equal(keys.find('k3y-0f-the-back-office '), undefined);
    assert.equal(keys.find(''), undefined);
  }
});
