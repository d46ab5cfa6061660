import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import Fastify from 'fastify';
import { lazyChildLoggerFactory } from './lazy-logger.ts';

test('request log lines carry the request id; disabled levels build nothing', async () => {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const app = Fastify({
    logger: { level: 'info', stream },
    childLoggerFactory: lazyChildLoggerFactory,
    genReqId: () => 'req-42',
  });
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
