import { randomUUID } from 'node:crypto';
import { Agent, type ClientRequest, get } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { numberFlag } from './harness.ts';
import { BOOKING_BENCH_ENV, createHotShow, guest } from './scenarios/booking-hold.ts';
import { mib, rssOf, startApp } from './standalone.ts';

/**
 * `npm run bench -- sse-10k [--connections=10000]`
 *
 * One app process holds 10,000 waiting-queue SSE streams of one hot show (each a different
 * user, each told its position), then the waiting room moves: every stream must receive its
 * update. Reports the process's memory per connection and how long the update took to reach all.
 */
async function main() {
  const total = numberFlag('connections', 10_000);
  const app = await startApp('booking', {
    BOOKING_DEMO: 'false',
    BOOKING_QUEUE_CAPACITY: '100',
    // Every stream comes from this one address.
    SSE_MAX_PER_ADDRESS: String(total + 100),
    // The periodic re-read would also count as an update: only the pub/sub path is measured.
    BOOKING_QUEUE_RESYNC_SECONDS: '600',
    ...BOOKING_BENCH_ENV,
  });
  const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  const requests: ClientRequest[] = [];
  try {
    const show = await createHotShow(app.base, 20, 20);
    await sleep(1000);
    const before = rssOf(app.pid);
    const events = new Array<number>(total).fill(0);
    const admitted: { token: string; authorization: string }[] = [];
    // Each stream is a guest of its own, made before the clock starts.
    const guests: { authorization: string }[] = [];
    for (let i = 0; i < total; i += 500) {
      guests.push(
        ...(await Promise.all(Array.from({ length: Math.min(500, total - i) }, () => guest(app.base)))),
      );
    }
    const url = new URL(app.base);
    const open = (index: number) =>
      new Promise<void>((resolve, reject) => {
        const { authorization } = guests[index];
        let buffer = '';
        const request = get(
          {
            host: url.hostname,
            port: url.port,
            agent,
            path: `/api/v1/shows/${show}/queue/events`,
            headers: { accept: 'text/event-stream', authorization },
          },
          (response) => {
            if (response.statusCode !== 200)
              return reject(new Error(`stream ${index}: ${response.statusCode}`));
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => {
              buffer += chunk;
              const blocks = buffer.split('\n\n');
              buffer = blocks.pop() ?? '';
              for (const block of blocks) {
                const event = /^event: (.+)$/m.exec(block)?.[1];
                if (!event || event === 'heartbeat') continue;
                events[index]++;
                if (event === 'admitted' && events[index] === 1) {
                  const data = JSON.parse(/^data: (.+)$/m.exec(block)?.[1] ?? '{}');
                  admitted.push({ token: data.admission_token, authorization });
                }
                if (events[index] === 1) resolve();
              }
            });
          },
        );
        request.on('error', reject);
        requests.push(request);
      });
    const started = performance.now();
    for (let i = 0; i < total; i += 500) {
      await Promise.all(Array.from({ length: Math.min(500, total - i) }, (_, k) => open(i + k)));
    }
    const openedMs = performance.now() - started;
    await sleep(3000);
    const held = rssOf(app.pid);
    const live = await timed(() => fetch(`${app.base}/health/live`));
    console.log(
      `${total} SSE streams open in ${(openedMs / 1000).toFixed(1)} s, each with its first position`,
    );
    console.log(
      `app RSS: ${mib(before)} before, ${mib(held)} holding them → ${((held - before) / total / 1024).toFixed(1)} KiB per connection`,
    );
    console.log(`/health/live while holding them: ${live.toFixed(1)} ms`);

    // An admitted user books: the slot goes to the next in line and everyone behind moves up.
    const firstEvents = [...events];
    const moved = performance.now();
    await bookOneSeat(app.base, show, admitted[0]);
    while (events.filter((count, i) => count > firstEvents[i]).length < total - admitted.length) {
      if (performance.now() - moved > 60_000) break;
      await sleep(50);
    }
    const reached = events.filter((count, i) => count > firstEvents[i]).length;
    console.log(
      `queue moved by one: ${reached} of ${total} streams got an update (${total - admitted.length} of them waiting, each with its new position) in ${((performance.now() - moved) / 1000).toFixed(2)} s`,
    );
  } finally {
    for (const request of requests) request.destroy();
    agent.destroy();
    await app.stop();
  }
}

async function bookOneSeat(base: string, show: string, who: { token: string; authorization: string }) {
  const json = { 'content-type': 'application/json', authorization: who.authorization };
  const hold = await fetch(`${base}/api/v1/shows/${show}/hold`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ seat_ids: ['A1'], admission_token: who.token }),
  });
  if (hold.status !== 201) throw new Error(`hold: ${hold.status} ${await hold.text()}`);
  const { hold_id } = (await hold.json()) as { hold_id: string };
  const booking = await fetch(`${base}/api/v1/bookings`, {
    method: 'POST',
    headers: { ...json, 'idempotency-key': randomUUID() },
    body: JSON.stringify({
      hold_id,
      payment_method: 'CARD',
      payment_details: { card_number: '4242424242424242', exp_month: 12, exp_year: 2030, cvc: '123' },
    }),
  });
  if (booking.status !== 201) throw new Error(`booking: ${booking.status} ${await booking.text()}`);
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

await main();
