import assert from 'node:assert/strict';
import { test } from 'node:test';
import { uuidv7, uuidv7Floor } from './ids.ts';

test('uuidv7: RFC 9562 version 7 ids that only grow within the process, past the random pool', () => {
  const ids = Array.from({ length: 2000 }, uuidv7);
  for (const id of ids)
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], `${ids[i]} after ${ids[i - 1]}`);
  const millis = Number.parseInt(ids[0].replace('-', '').slice(0, 12), 16);
  assert.ok(Math.abs(millis - Date.now()) < 5000, 'the time is in the first 48 bits');
});

test('uuidv7Floor: ids made before the time sort below it, ids made from it on do not', () => {
  const id = uuidv7();
  const millis = Number.parseInt(id.replace('-', '').slice(0, 12), 16);
  assert.ok(id < uuidv7Floor(new Date(millis + 1)));
  assert.ok(id >= uuidv7Floor(new Date(millis)));
  assert.equal(uuidv7Floor(new Date(0x0190a1b2c3d4)), '0190a1b2-c3d4-0000-0000-000000000000');
});
