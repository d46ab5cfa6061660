import fc from 'fast-check';

/** Strings that have broken other services: injections, control characters, odd Unicode, sheer size. */
export const HOSTILE_STRINGS = [
  "' OR '1'='1",
  "'; drop table payments; --",
  '1; select pg_sleep(5)',
  '{{7*7}}',
  '{% for x in (1..99999999) %}x{% endfor %}',
  '<%= process.exit(1) %>',
  '$' + '{process.exit(1)}',
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  '../../../../etc/passwd',
  '%00',
  '\u0000',
  '\u0007\u001b[2J',
  '\u202e\u202d',
  '\ud800',
  '\udfff\ud800',
  '😀'.repeat(1000),
  'a'.repeat(100_000),
  '__proto__',
  'constructor',
  'NaN',
  '-1',
  '99999999999999999999999',
  '1e309',
  '',
  ' ',
];

export const hostileString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.uuid() },
  { weight: 1, arbitrary: fc.integer().map(String) },
);

/** Any JSON value, including awkward numbers and prototype-pollution keys. */
export const hostileValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileString,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(hostileString, fc.constantFrom('__proto__', 'constructor')), tie('value'), {
      maxKeys: 4,
    }),
  ),
})).value;

/** An object with the schema's property names and wrong or hostile values (the likeliest to reach code). */
export function mutatedObject(properties: string[]): fc.Arbitrary<Record<string, unknown>> {
  if (properties.length === 0) return fc.dictionary(hostileString, hostileValue, { maxKeys: 4 });
  return fc.record(Object.fromEntries(properties.map((name) => [name, hostileValue])), { requiredKeys: [] });
}

export type RawBody = { raw: Buffer | string; contentType: string };

/** JSON nested beyond any reasonable depth (built as text: a value this deep overflows stringifiers). */
export const deepNesting: fc.Arbitrary<RawBody> = fc.integer({ min: 100, max: 20_000 }).map((depth) => ({
  raw: `${'{"a":['.repeat(depth)}1${']}'.repeat(depth)}`,
  contentType: 'application/json',
}));

/** Bodies that are not JSON at all, or not UTF-8, or lie about their type. */
export const rawBody: fc.Arbitrary<RawBody> = fc.oneof(
  fc.constant({
    raw: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
    contentType: 'application/json',
  }),
  fc.constant({ raw: Buffer.from([0xc3, 0x28, 0xa0, 0xa1]), contentType: 'text/plain' }),
  fc.constant({ raw: '{"unterminated": ', contentType: 'application/json' }),
  fc.constant({ raw: 'a=1&b=<script>', contentType: 'application/x-www-form-urlencoded' }),
  fc.constant({ raw: '<xml/>', contentType: 'application/xml' }),
  fc.constant({ raw: '', contentType: 'application/json' }),
  fc.string({ unit: 'binary', maxLength: 200 }).map((raw) => ({ raw, contentType: 'application/json' })),
  fc
    .uint8Array({ maxLength: 200 })
    .map((bytes) => ({ raw: Buffer.from(bytes), contentType: 'application/octet-stream' })),
);
