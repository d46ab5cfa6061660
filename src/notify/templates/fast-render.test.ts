import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Liquid } from 'liquidjs';
import { defaultTemplates } from './defaults.ts';
import { htmlEngine, RENDER_LIMITS, rendersSync, textEngine } from './engine.ts';
import { compile } from './fast-render.ts';

const data = {
  booking_id: 'BK-42',
  movie_title: 'Alien <Romulus> & "Co"',
  theater_name: 'Odeon',
  show_time: '2026-03-01T19:30:00Z',
  hours_before: 3,
  seats: ['C7', 'C8'],
  total_paid: 24,
  refund_amount: '12.5',
  reason: 'show cancelled',
  status: 'completed',
  message: 'New sign-in',
  items: ['a', 'b'],
  title: 'Offer',
  nested: { name: 'Ana', list: [1, 2, 3], empty: null, yes: true },
  nothing: null,
  zero: 0,
};
const options = (timeZone = 'Europe/Berlin') => ({ ...RENDER_LIMITS, globals: { timeZone } });

/** Both ways, with what each answered or threw (name and message). */
function both(engine: Liquid, source: string, input: Record<string, unknown> = data, timeZone?: string) {
  const templates = engine.parse(source);
  const compiled = compile(engine, templates);
  const outcome = (run: () => string) => {
    try {
      return { ok: run() };
    } catch (error) {
      return { error: `${(error as Error).name}: ${(error as Error).message}` };
    }
  };
  return {
    compiled: compiled !== undefined,
    liquid: outcome(() => String(engine.renderSync(templates, input, options(timeZone)))),
    fast: compiled && outcome(() => compiled(input, options(timeZone))),
  };
}

describe('fast path for simple templates', () => {
  test('every default template without the async qr filter compiles and renders as liquid does', () => {
    let compared = 0;
    for (const template of defaultTemplates()) {
      const parts: [Liquid, string | undefined][] = [
        [textEngine, template.subject],
        [textEngine, template.body],
        [htmlEngine, template.html],
      ];
      for (const [engine, source] of parts) {
        if (!source || !rendersSync([source])) continue;
        for (const zone of ['UTC', 'America/New_York']) {
          const result = both(engine, source, data, zone);
          assert.ok(result.compiled, `${template.id} compiles: ${source}`);
          assert.deepEqual(result.fast, result.liquid, `${template.id} in ${zone}: ${source}`);
          compared++;
        }
      }
    }
    assert.ok(compared > 40, `compared ${compared}`);
  });

  test('paths, values, filters and escaping come out as liquid writes them', () => {
    const cases: [Liquid, string][] = [
      [textEngine, '{{ nested.name }}|{{ nested.list[1] }}|{{ nested.list.size }}|{{ nested.list.first }}'],
      [textEngine, '{{ nested.list }}|{{ nested.empty }}|{{ nested.yes }}|{{ zero }}|{{ nothing }}'],
      [textEngine, '{{ seats | join: " / " | upcase }} {{ total_paid | money }} {{ refund_amount | money }}'],
      [textEngine, '{{ nothing | default: "none" }} {{ movie_title | truncate: 8 }} {{ zero | plus: 2 }}'],
      [
        textEngine,
        '{{ show_time | date: "%Y-%m-%d %H:%M %Z" }} {{ show_time | date: "%H:%M", "Asia/Tokyo" }}',
      ],
      [
        htmlEngine,
        '<b>{{ movie_title }}</b> {{ seats }} {{ movie_title | raw }} {{ nested.list | join: "<" }}',
      ],
      [textEngine, 'no outputs at all'],
      [textEngine, ''],
    ];
    for (const [engine, source] of cases) {
      const result = both(engine, source);
      assert.ok(result.compiled, source);
      assert.ok('ok' in result.liquid, `${source}: ${JSON.stringify(result.liquid)}`);
      assert.deepEqual(result.fast, result.liquid, source);
    }
  });

  test('errors are liquid errors with the same message: a missing variable or path, a failing filter', () => {
    const cases = [
      '{{ missing }}',
      'Hello {{ nested.missing }}!',
      '{{ nothing.deeper }}',
      '{{ movie_title | date: "%Y" | round: "x" | money }}',
      '{{ seats | join: ", " }} then {{ gone | upcase }}',
    ];
    for (const source of cases) {
      const result = both(textEngine, source);
      assert.ok(result.compiled, source);
      assert.deepEqual(result.fast, result.liquid, source);
    }
    assert.deepEqual(both(textEngine, '{{ missing }}').fast, {
      error: 'UndefinedVariableError: undefined variable: missing, line:1, col:4',
    });
  });

  test('anything but text and simple outputs is left to liquid', () => {
    for (const source of [
      '{% if zero %}x{% endif %}',
      '{{ movie_title | append: theater_name }}',
      '{{ "literal" }}',
      '{{ zero > 1 }}',
      '{% assign a = 1 %}{{ a }}',
      '{{ (1..3) | join }}',
    ]) {
      assert.equal(compile(textEngine, textEngine.parse(source)), undefined, source);
    }
  });
});
