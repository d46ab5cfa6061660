import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createMemoryPubSub } from '../../platform/pubsub/index.ts';
import { createContactsCache } from './contacts-cache.ts';
import { DEFAULT_PREFERENCES } from './service.ts';

const log = { warn() {} };
const prefs = (email: string) => ({ ...DEFAULT_PREFERENCES, email });

test('a change in one process drops the entry in the others', async () => {
  const pubsub = createMemoryPubSub();
  const [here, there] = [createContactsCache({ pubsub, log }), createContactsCache({ pubsub, log })];
  await Promise.all([here.ready, there.ready]);
  there.remember('u1', there.generation(), { prefs: prefs('old@example.com') });
  there.remember('u2', there.generation(), { prefs: prefs('other@example.com') });
  await here.changed('u1');
  await sleep(5);
  assert.equal(there.get('u1', false), undefined);
  assert.equal(there.get('u2', false)?.prefs.email, 'other@example.com');
  await Promise.all([here.close(), there.close()]);
});

test('a read that overlapped a change is not kept; a read without subscriptions does not answer for push', async () => {
  const cache = createContactsCache({ pubsub: createMemoryPubSub(), log });
  await cache.ready;
  const readAt = cache.generation();
  await cache.changed('u1'); // committed while the read was under way: the read may be older
  cache.remember('u1', readAt, { prefs: prefs('old@example.com') });
  assert.equal(cache.get('u1', false), undefined);
  cache.remember('u1', cache.generation(), { prefs: prefs('new@example.com') });
  assert.equal(cache.get('u1', false)?.prefs.email, 'new@example.com');
  assert.equal(cache.get('u1', true), undefined);
  cache.remember('u1', cache.generation(), { prefs: prefs('new@example.com'), subscriptions: [] });
  assert.deepEqual(cache.get('u1', true)?.subscriptions, []);
  await cache.close();
});

test('entries expire after the TTL (a change message lost on the way)', async () => {
  let now = 1_000;
  const cache = createContactsCache({ pubsub: createMemoryPubSub(), log, ttlMs: 30, now: () => now });
  await cache.ready;
  cache.remember('u1', cache.generation(), { prefs: prefs('old@example.com') });
  now += 29;
  assert.ok(cache.get('u1', false));
  now += 2;
  assert.equal(cache.get('u1', false), undefined);
  await cache.close();
});
