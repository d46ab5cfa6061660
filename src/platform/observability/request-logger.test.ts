import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { createTestAdapters, type TestAdapters, testConfig } from '../../../test/support/platform.ts';
import { type App, buildApp } from '../../app.ts';
import { deferredChildLogger } from './request-logger.ts';

/**
 * Each request's logger (request.log) is pino's child with the request id bound, built on the
 * request's first line at an enabled level: every line written carries the id, and a request that
 * writes none builds no child.
 */
let app: App;
let adapters: TestAdapters;
let lines: Array<Record<string, unknown>> = [];

before(async () => {
  const config = testConfig({}, ['paste']);
  adapters = await createTestAdapters(config);
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(
        ...String(chunk)
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line)),
      );
      done();
    },
  });
  app = await buildApp(config, adapters, { logger: { level: 'info', stream } });
  app.get('/test/log', async (request) => {
    request.log.debug('below the level');
    request.log.info({ item: 7 }, 'one line');
    request.log.child({ step: 'inner' }).warn('from a child');
    return { level: request.log.level };
  });
  app.get('/test/verbose', { logLevel: 'debug' }, async (request) => {
    request.log.debug('a route that logs more');
    return { level: request.log.level };
  });
  await app.ready();
});
after(async () => {
  await app.close();
  await adapters.close();
});

describe("a request's logger", () => {
  test('writes lines with the request id; the levels of the app and the route decide', async () => {
    lines = [];
    const response = await app.inject('/test/log');
    assert.equal(response.json().level, 'info');
    const requestId = response.headers['x-request-id'];
    assert.deepEqual(
      lines.map(({ msg, requestId: id, item, step }) => ({ msg, id, item, step })),
      [
        { msg: 'one line', id: requestId, item: 7, step: undefined },
        { msg: 'from a child', id: requestId, item: undefined, step: 'inner' },
      ],
    );
    lines = [];
    const verbose = await app.inject('/test/verbose');
    assert.equal(verbose.json().level, 'debug');
    assert.deepEqual(
      lines.map(({ msg, requestId: id }) => ({ msg, id })),
      [{ msg: 'a route that logs more', id: verbose.headers['x-request-id'] }],
    );
  });

  test('builds no child for a request that writes nothing, or only below the level', () => {
    const parent = pino({ level: 'warn' }, new Writable({ write: (_c, _e, done) => done() }));
    let children = 0;
    const counting = Object.create(parent, {
      child: {
        value: (...args: Parameters<typeof parent.child>) => {
          children++;
          return parent.child(...args);
        },
      },
    }) as FastifyBaseLogger;
    const log = deferredChildLogger.call(app, counting, { requestId: 'r-1' }, {}, undefined as never);
    log.info('below warn');
    log.debug('below warn');
    assert.equal(log.level, 'warn');
    assert.equal(children, 0);
    log.error('written');
    log.warn('written too');
    assert.equal(children, 1);
  });
});
