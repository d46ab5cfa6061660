import { randomUUID } from 'node:crypto';
import { Agent, type ClientRequest, get } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { numberFlag, processCpuMs } from './harness.ts';
import { BOOKING_BENCH_ENV, createHotShow, guest } from './scenarios/booking-hold.ts';
import { mib, rssOf, startApp } from './standalone.ts';

/**
 * `npm run bench -- sse-10k [--connections=10000] [--resync=10] [--idle=30]`
 *
 * One app process holds 10,000 waiting-queue SSE streams of one hot show (each a different
 * user, each told its position), then the waiting room moves: every stream must receive its
 * new position. Reports the process's memory per connection, how long the update took to reach
 * all, and the CPU the process spends holding the streams for `--idle` seconds (heartbeats, and
 * the positions re-read every `--resync` seconds, BOOKING_LIVE_RESYNC_SECONDS).
 */
async function main() {
  const total = numberFlag('connections', 10_000);
  const resync = numberFlag('resync', 10);
  const idle = numberFlag('idle', 30);
  const app = await startApp('booking', {
    BOOKING_DEMO: 'false',
    BOOKING_QUEUE_CAPACITY: '100',
    // Every stream comes from this one address.
    SSE_MAX_PER_ADDRESS: String(total + 100),
    BOOKING_LIVE_RESYNC_SECONDS: String(resync),
    ...BOOKING_BENCH_ENV,
  });
  const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  const requests: ClientRequest[] = [];
  try {
    const show = await createHotShow(app.base, 20, 20);
    await sleep(1000);
    const before = rssOf(app.pid);
    // Each stream's last position (0 once admitted): a re-read that changes nothing is no update.
    const positions = new Array<number>(total).fill(-1);
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
                const data = JSON.parse(/^data: (.+)$/m.exec(block)?.[1] ?? '{}');
                const first = positions[index] === -1;
                if (event === 'admitted' && positions[index] !== 0) {
                  admitted.push({ token: data.admission_token, authorization });
                }
                positions[index] = event === 'admitted' ? 0 : data.position;
                if (first) resolve();
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
    const firstPositions = [...positions];
    const movedCount = () => positions.filter((position, i) => position !== firstPositions[i]).length;
    const moved = performance.now();
    await bookOneSeat(app.base, show, admitted[0]);
    while (movedCount() < total - admitted.length) {
      if (performance.now() - moved > 60_000) break;
      await sleep(50);
    }
    const reached = movedCount();
    console.log(
      `queue moved by one: ${reached} of ${total} streams got an update (${total - admitted.length} of them waiting, each with its new position) in ${((performance.now() - moved) / 1000).toFixed(2)} s`,
    );

    const cpuBefore = processCpuMs(app.pid);
    await sleep(idle * 1000);
    const cpuPerSecond = (processCpuMs(app.pid) - cpuBefore) / idle;
    console.log(
      `holding them for ${idle} s, positions re-read every ${resync} s: ${cpuPerSecond.toFixed(1)} ms of CPU per second`,
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
