import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { deferChildLoggers } from './lazy-logger.ts';

function recordingApp(level: string) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const app = Fastify({ logger: { level, stream }, genReqId: () => 'req-42' });
  // Counts the pino children really built (pino's own `child`, which the deferral calls).
  let built = 0;
  const pinoChild = app.log.child;
  app.log.child = function (this: FastifyBaseLogger, ...args: Parameters<FastifyBaseLogger['child']>) {
    built++;
    return pinoChild.apply(this, args);
  } as FastifyBaseLogger['child'];
  deferChildLoggers(app.log);
  return { app, lines, built: () => built };
}

test('request log lines carry the request id; disabled levels build nothing', async () => {
  const { app, lines } = recordingApp('info');
  app.get('/', async (request) => {
    request.log.debug('not written');
    request.log.info({ detail: 1 }, 'written');
    request.log.child({ step: 'inner' }).warn('nested');
    return { level: request.log.level };
  });
  const response = await app.inject('/');
  await app.close();
  assert.deepEqual(response.json(), { level: 'info' });
  const mine = lines.filter((line) => line.reqId === 'req-42');
  assert.deepEqual(
    mine.map((line) => line.msg),
    ['incoming request', 'written', 'nested', 'request completed'],
  );
  assert.equal(mine[1].detail, 1);
  assert.equal(mine[2].step, 'inner');
});

test('a request that logs nothing at an enabled level builds no pino child', async () => {
  const { app, lines, built } = recordingApp('warn');
  app.get('/quiet', async (request) => {
    request.log.info('below the level');
    return { ok: true };
  });
  app.get('/loud', async (request) => {
    request.log.warn('written');
    return { ok: true };
  });
  await app.ready();
  const before = built();
  await app.inject('/quiet');
  assert.equal(built(), before);
  await app.inject('/loud');
  await app.close();
  assert.equal(built(), before + 1);
  assert.deepEqual(
    lines.filter((line) => line.reqId === 'req-42').map((line) => line.msg),
    ['written'],
  );
});

test('a route with a log level of its own decides with that level', async () => {
  const { app, lines } = recordingApp('warn');
  app.get('/chatty', { logLevel: 'debug' }, async (request) => {
    request.log.debug('route debug');
    return { level: request.log.level };
  });
  const response = await app.inject('/chatty');
  await app.close();
  assert.deepEqual(response.json(), { level: 'debug' });
  assert.ok(lines.some((line) => line.msg === 'route debug' && line.reqId === 'req-42'));
});
