import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { realServices, uniqueName } from '../../../test/support/platform.ts';

function get(port: number, path: string, agent = false): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
      let body = '';
      res.on('data', (chunk) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('SIGTERM finishes the requests in flight, refuses new ones and exits cleanly', {
  timeout: 90_000,
}, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'shutdown-'));
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const child = spawn(process.execPath, ['test/fixtures/shutdown.ts'], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      SERVICES: 'paste',
      LOG_LEVEL: 'info',
      NAMESPACE: uniqueName('s'),
      DATABASE_URL: '',
      REDIS_URL: realServices.redisUrl ?? '',
      NATS_URL: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  try {
    while (!output.includes('fixture ready')) {
      if (child.exitCode !== null) throw new Error(output);
      await sleep(50);
    }
    const inFlight = Array.from({ length: 20 }, () => get(port, '/slow?ms=1500'));
    await sleep(400);
    child.kill('SIGTERM');
    await sleep(200);
    const late = await get(port, '/health/live').then(
      (response) => `answered ${response.status}`,
      (error: NodeJS.ErrnoException) => error.code,
    );
    const results = await Promise.all(inFlight);
    const [code] = await once(child, 'exit');
    assert.deepEqual(
      results.map((r) => r.status),
      Array(20).fill(200),
    );
    assert.ok(results.every((r) => JSON.parse(r.body).slept === 1500));
    assert.ok(late === 'ECONNREFUSED' || late === 'answered 503', `a new request after SIGTERM: ${late}`);
    assert.equal(code, 0, output);
    assert.match(output, /finishing in-flight requests/);
    assert.match(output, /shut down cleanly/);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});
