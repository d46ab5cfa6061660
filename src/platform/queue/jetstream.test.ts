import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { dropNamespace, realServices, uniqueName } from '../../../test/support/platform.ts';
import { systemClock } from '../clock.ts';
import { createJetStreamQueue } from './jetstream.ts';

// Publishes wait for the stream's ack (`js.publish`): an ack, a duplicate and a refusal must each
// reach the right caller.
test('JetStream publish: ack, duplicate, and a refusal (no stream) rejects at once', {
  skip: realServices.natsUrl ? false : 'needs NATS_URL',
}, async () => {
  const url = realServices.natsUrl!;
  const namespace = uniqueName('qpub');
  const queue = await createJetStreamQueue(url, systemClock, { namespace, partitions: 4 });
  const nc = await connect({ servers: url });
  try {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        queue.publish('t', { id: `m${i % 40}`, key: `k${i}`, payload: { i } }),
      ),
    );
    // Sent at once, answered out of order: each caller still gets its own ack.
    assert.equal(results.filter((r) => r.duplicate).length, 10);
    assert.deepEqual(
      results.map((r) => r.duplicate),
      Array.from({ length: 50 }, (_, i) => i >= 40),
    );
    assert.equal(await queue.depth('t'), 40);
    // The stream is gone (the queue still thinks it exists): the server answers "no responders".
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(`${namespace}_Q_t`.toUpperCase());
    // Rejected by the server's reply (no responders, which nats.js names "jetstream is not
    // enabled"), not by the publish timeout.
    await assert.rejects(
      queue.publish('t', { id: 'late', key: 'k', payload: {} }),
      /JetStream publish failed: JetStreamNotEnabled/,
    );
  } finally {
    await nc.close();
    await queue.close();
    await dropNamespace({ natsUrl: url, namespace, databaseUrl: undefined, redisUrl: undefined }, undefined);
  }
});
