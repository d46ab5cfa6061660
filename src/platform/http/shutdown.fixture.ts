import { setTimeout as sleep } from 'node:timers/promises';
import { start } from '../../server.ts';
import { loadConfig } from '../config.ts';

/** The real server start-up with one slow route, for the graceful shutdown test. */
await start(loadConfig(), {
  beforeListen(app) {
    app.get('/slow', async (request) => {
      const ms = Number((request.query as { ms?: string }).ms ?? 1000);
      await sleep(ms);
      return { slept: ms };
    });
  },
});
process.stdout.write('fixture ready\n');
