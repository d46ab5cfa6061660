import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createTestApp } from '../../test/support/platform.ts';

test('a stubbed module is not built; the modules that need it get the stub as its API', async () => {
  const recorder = {
    send: async () => ({ id: 'x', status: 'accepted', channels: [] }),
    setContact: async () => {},
  };
  const built = await createTestApp({ services: ['booking'], env: { BOOKING_DEMO: 'false' } });
  const stubbed = await createTestApp({
    services: ['booking'],
    env: { BOOKING_DEMO: 'false' },
    stubs: { notify: recorder },
  });
  try {
    assert.ok(built.app.platform.modules.has('payments'), 'without stubs, needs are built');
    assert.ok(!stubbed.app.platform.modules.has('notify'), 'a stubbed module is not built');
    assert.ok(stubbed.app.platform.modules.has('payments'));
    assert.ok(stubbed.app.platform.modules.has('booking'));
  } finally {
    await built.close();
    await stubbed.close();
  }
});
