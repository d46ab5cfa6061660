import assert from 'node:assert/strict';
import { test } from 'node:test';
import { stableJson } from './accept.ts';

/** The version whose hashes are stored (24 h of idempotency keys): the rewrite must match it byte for byte. */
function reference(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${reference(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

test('stableJson: sorted keys, the same bytes as the version stored hashes came from', () => {
  const values: unknown[] = [
    null,
    undefined,
    0,
    -1.5e300,
    'a "quoted" \\ line\nbreak \u2028 ü 😀',
    true,
    [],
    {},
    [1, undefined, null, 'x', [{}], () => 1],
    { b: 1, a: { d: [3, { z: 1, y: undefined }], c: 'x' }, '10': 'ten', '9': 'nine', é: 1, A: 2, _: 3 },
    { date: new Date(0), nested: { list: [{ b: 2, a: 1 }] } },
    {
      user_id: 'u-1',
      type: 'booking_reminder',
      channels: ['email', 'push'],
      data: { booking_id: 'BK-1', hours_before: 3, movie_title: 'X' },
      priority: 'normal',
    },
  ];
  for (const value of values) assert.equal(stableJson(value), reference(value));
  assert.equal(stableJson({ b: [2, { d: 1, c: null }], a: 'x' }), '{"a":"x","b":[2,{"c":null,"d":1}]}');
  // The request hash leaves the client id out of the outermost object only (it was a copy without it).
  for (const value of [
    { id: 'c-1', b: { id: 2 }, a: 1 },
    { a: 1 },
    { id: 'c-1' },
    { id: undefined, z: [{ id: 1 }] },
  ]) {
    const { id: _, ...rest } = value as Record<string, unknown>;
    assert.equal(stableJson(value, 'id'), reference(rest));
  }
});
