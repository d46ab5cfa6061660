import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../platform/config.ts';
import { loadPasteSettings } from './settings.ts';

test('spam limits default to DESIGN.md (30 anonymous, 300 per key, per 10 minutes) and are configurable', () => {
  const defaults = loadPasteSettings({});
  assert.deepEqual([defaults.anonymousCreates.points, defaults.anonymousCreates.durationSec], [30, 600]);
  assert.deepEqual([defaults.keyCreates.points, defaults.keyCreates.durationSec], [300, 600]);
  const custom = loadPasteSettings({ PASTE_RATE_ANON: '5/60', PASTE_RATE_KEY: ' 1000 / 3600 ' });
  assert.equal(custom.anonymousCreates.points, 5);
  assert.equal(custom.anonymousCreates.durationSec, 60);
  assert.equal(custom.keyCreates.points, 1000);
});

test('a malformed setting stops start-up with a message naming it', () => {
  for (const value of ['30', '30/0', 'lots/600', '-1/600', '30/600/1']) {
    assert.throws(
      () => loadPasteSettings({ PASTE_RATE_ANON: value }),
      (error: Error) => error instanceof ConfigError && error.message.includes('PASTE_RATE_ANON'),
      value,
    );
  }
  assert.throws(() => loadPasteSettings({ PASTE_VIEW_FLUSH_MS: '10' }), /PASTE_VIEW_FLUSH_MS/);
});
