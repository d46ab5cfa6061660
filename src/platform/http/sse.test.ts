import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestAdapters, type TestAdapters, testConfig } from '../../../test/support/platform.ts';
import { type App, buildApp } from '../../app.ts';
import { createSseHub } from './sse.ts';

let app: App;
let adapters: TestAdapters;
let base: string;
const hub = createSseHub({ maxPerAddress: 3 });

before(async () => {
  const config = testConfig({}, ['paste']);
  adapters = await createTestAdapters(config);
  app = await buildApp(config, adapters, { logger: false, routes: false });
  // A live page's stream: every pub/sub message on "board" goes to every connected client.
  app.get('/events', async (request, reply) => {
    const stream = hub.open(request, reply, 100);
    const unsubscribe = await adapters.pubsub.subscribe('board', (message) => stream.send('update', message));
    stream.send('hello', { connected: true }, '1');
    await stream.closed;
    await unsubscribe();
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
});
after(async () => {
  hub.closeAll(); // this test's own hub: the app's preClose only ends the app's streams
  await app.close();
  await adapters.close();
});

/** Reads SSE blocks (separated by a blank line) from a response, keeping what is left over. */
function eventReader(response: Response) {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let pings = 0;
  return {
    /** The next `count` events; comment blocks (heartbeats) are counted, not returned. */
    async next(count: number): Promise<string> {
      const blocks: string[] = [];
      while (blocks.length < count) {
        const end = buffer.indexOf('\n\n');
        if (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (block.startsWith(': ping')) pings++;
          else if (!block.startsWith(':')) blocks.push(block);
          continue;
        }
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value);
      }
      return blocks.join('\n\n');
    },
    /** Waits until at least `count` heartbeats have arrived. */
    async heartbeats(count: number): Promise<number> {
      while (pings < count) {
        const end = buffer.indexOf('\n\n');
        if (end >= 0) {
          if (buffer.startsWith(': ping')) pings++;
          buffer = buffer.slice(end + 2);
          continue;
        }
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value);
      }
      return pings;
    },
    async ended(): Promise<boolean> {
      while (true) {
        const { done } = await reader.read();
        if (done) return true;
      }
    },
    cancel: () => reader.cancel(),
  };
}

test('SSE: events reach every client, heartbeats keep the stream alive, and it cleans up', async () => {
  const oneResponse = await fetch(`${base}/events`);
  const twoResponse = await fetch(`${base}/events`);
  assert.equal(oneResponse.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  assert.equal(oneResponse.headers.get('x-content-type-options'), 'nosniff');
  assert.ok(oneResponse.headers.get('x-request-id'));
  const one = eventReader(oneResponse);
  const two = eventReader(twoResponse);
  assert.match(await one.next(1), /id: 1\nevent: hello\ndata: {"connected":true}/);
  await two.next(1);
  assert.equal(hub.count(), 2);
  await adapters.pubsub.publish('board', { spot: 'A1', free: 3 });
  assert.match(await one.next(1), /event: update\ndata: {"spot":"A1","free":3}/);
  assert.match(await two.next(1), /event: update\ndata: {"spot":"A1","free":3}/);
  assert.ok((await one.heartbeats(1)) >= 1, 'heartbeat comments keep an idle stream alive');
  await one.cancel();
  for (let i = 0; i < 100 && hub.count() > 1; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(hub.count(), 1, 'a client that leaves is forgotten');
  hub.closeAll();
  assert.equal(hub.count(), 0);
  assert.equal(await two.ended(), true, 'the server ended the stream');
});

test('SSE: one address holds at most its share of streams; a closed one frees its place', async () => {
  const readers = await Promise.all([1, 2, 3].map(async () => eventReader(await fetch(`${base}/events`))));
  for (const reader of readers) await reader.next(1);
  const refused = await fetch(`${base}/events`);
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  assert.ok(Number(refused.headers.get('retry-after')) > 0);
  await readers[0].cancel();
  for (let i = 0; i < 100 && hub.count() > 2; i++) await new Promise((r) => setTimeout(r, 10));
  const again = eventReader(await fetch(`${base}/events`));
  assert.match(await again.next(1), /event: hello/);
  hub.closeAll();
});
