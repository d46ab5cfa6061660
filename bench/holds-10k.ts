import { Agent, request } from 'node:http';
import { numberFlag } from './harness.ts';
import {
  admitUsers,
  auditShow,
  BOOKING_BENCH_ENV,
  createHotShow,
  randomSeats,
} from './scenarios/booking-hold.ts';
import { startApp } from './standalone.ts';

/**
 * `npm run bench -- holds-10k [--holds=10000]`
 *
 * 10,000 hold requests on one hot show of 5,000 seats, all sent at once on their own
 * connections by 10,000 admitted users (1–3 random seats each): far more demand than seats.
 * Every answer must be 201 or 409 `seats_unavailable`, and the audit afterwards must find no
 * seat held twice and no hold missing a seat.
 */
const ROWS = 50;
const SEATS_PER_ROW = 100;

async function main() {
  const holds = numberFlag('holds', 10_000);
  // A request waits up to 60 s for a connection here (default 5 s, then 503): the point is that
  // every one of the 10,000 gets a decision from the arbiter, not how fast they are shed.
  const app = await startApp('booking', {
    BOOKING_DEMO: 'false',
    BOOKING_QUEUE_CAPACITY: String(holds),
    DATABASE_POOL_WAIT_MS: process.env.DATABASE_POOL_WAIT_MS ?? '60000',
    ...BOOKING_BENCH_ENV,
  });
  const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  try {
    const show = await createHotShow(app.base, ROWS, SEATS_PER_ROW);
    console.log(`admitting ${holds} users through the waiting room…`);
    const users = await admitUsers(app.base, show, holds);
    const url = new URL(app.base);
    const statuses = new Map<number, number>();
    const started = performance.now();
    await Promise.all(
      users.map(
        ({ token, authorization }) =>
          new Promise<void>((resolve) => {
            const body = JSON.stringify({
              seat_ids: randomSeats(ROWS, SEATS_PER_ROW),
              admission_token: token,
            });
            const req = request(
              {
                host: url.hostname,
                port: url.port,
                agent,
                method: 'POST',
                path: `/api/v1/shows/${show}/hold`,
                headers: {
                  'content-type': 'application/json',
                  'content-length': Buffer.byteLength(body),
                  authorization,
                },
              },
              (response) => {
                response.resume();
                response.on('end', () => {
                  const status = response.statusCode ?? 0;
                  statuses.set(status, (statuses.get(status) ?? 0) + 1);
                  resolve();
                });
              },
            );
            req.on('error', () => {
              statuses.set(0, (statuses.get(0) ?? 0) + 1);
              resolve();
            });
            req.end(body);
          }),
      ),
    );
    const seconds = (performance.now() - started) / 1000;
    const answers = Object.fromEntries([...statuses].map(([status, count]) => [status || 'network', count]));
    console.log(`${holds} concurrent holds answered in ${seconds.toFixed(1)} s: ${JSON.stringify(answers)}`);
    const audit = await auditShow(app.base, show);
    console.log(
      `audit: ${audit.live_holds} holds, ${audit.held_seats} of ${ROWS * SEATS_PER_ROW} seats held; ` +
        `${audit.double_booked_seats} seats held twice, ${audit.incomplete_holds} holds missing a seat`,
    );
    const unexpected = [...statuses.keys()].filter((status) => status !== 201 && status !== 409);
    if (audit.double_booked_seats !== 0 || audit.incomplete_holds !== 0 || unexpected.length > 0) {
      console.log(
        `FAILED: ${unexpected.length ? `unexpected answers ${unexpected.join(', ')}` : 'the audit'}`,
      );
      process.exitCode = 1;
    }
  } finally {
    agent.destroy();
    await app.stop();
  }
}

await main();
