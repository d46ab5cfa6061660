import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type BookingTestApp, book, bookingTestApp, hold, seedShow } from '../../../test/support/booking.ts';
import { eventually } from '../../../test/support/notify.ts';
import { TEST_CARDS } from '../../payments/api.ts';

/**
 * A cancelled booking's reminder that is still pending is cancelled in the notification service
 * (`NotifyApi.cancel`, as `DELETE /api/notifications/{id}` does), through the real notify module
 * and its workers, on a moved clock: the push reminder held by the user's quiet hours never goes;
 * the same reminder of a booking that stands goes when the quiet hours end.
 */
let t: BookingTestApp;
let skip: string | false = false;

before(async () => {
  t = await bookingTestApp({
    notify: 'real',
    workers: true,
    // The test's push endpoints are at push.example.com, which has no DNS here.
    env: { OUTBOUND_ALLOW_HOSTS: 'push.example.com' },
  });
  if (!t.app.platform.modules.has('notify')) skip = 'the notify module is not built in this tree yet';
});
after(() => t.close());

const HOUR = 3_600_000;
const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);

interface Listed {
  notifications: {
    type: string;
    data: Record<string, unknown>;
    channels: { channel: string; status: string }[];
  }[];
}

/** The reminder's status per channel, as the user's history shows it. */
async function reminderOf(userId: string) {
  const listed = await t.app.inject({ url: `/api/users/${userId}/notifications`, headers: t.asAdmin });
  const reminder = (listed.json() as Listed).notifications.find((n) => n.type === 'booking_reminder');
  return Object.fromEntries((reminder?.channels ?? []).map((c) => [c.channel, c.status]));
}

test('cancelling a booking cancels its reminder still held by quiet hours; a standing booking gets it later', async (context) => {
  if (skip) return context.skip(skip);
  const { showId } = await seedShow(t, { inMs: 30 * HOUR });
  const showTime = new Date((await t.app.inject(`/api/v1/shows/${showId}`)).json().show_time).getTime();
  const remindAt = showTime - 24 * HOUR;
  const bookings = [];
  for (const seat of ['B1', 'B2']) {
    const held = (await hold(t, showId, [seat])).json();
    const booked = await book(t, held, TEST_CARDS.success, undefined, {
      contact: { email: `${seat}@example.com` },
    });
    assert.equal(booked.statusCode, 201, booked.body);
    const userId = held.user_id as string;
    // Quiet from an hour before the reminder is due until two hours after: push waits, e-mail goes.
    const prefs = await t.app.inject({
      method: 'PATCH',
      url: `/api/users/${userId}/notification-preferences`,
      headers: t.asAdmin,
      payload: {
        timezone: 'UTC',
        quiet_hours_start: hhmm(remindAt - HOUR),
        quiet_hours_end: hhmm(remindAt + 2 * HOUR),
      },
    });
    assert.equal(prefs.statusCode, 200, prefs.body);
    const subscribed = await t.app.inject({
      method: 'POST',
      url: `/api/users/${userId}/push-subscriptions`,
      headers: t.asAdmin,
      payload: { endpoint: `https://push.example.com/${userId}`, keys: { p256dh: 'k', auth: 'a' } },
    });
    assert.equal(subscribed.statusCode, 201, subscribed.body);
    bookings.push({ userId, id: booked.json().booking_id as string });
  }
  const [cancelled, standing] = bookings;

  t.clock.set(new Date(remindAt));
  await t.app.platform.scheduler.runTick('booking.reminders', t.clock.now());
  for (const b of bookings) {
    await eventually(async () => (await reminderOf(b.userId)).email === 'delivered');
    assert.equal((await reminderOf(b.userId)).push, 'scheduled');
  }

  const response = await t.app.inject({
    method: 'POST',
    url: `/api/v1/bookings/${cancelled.id}/cancel`,
    headers: t.asUser(cancelled.userId),
    payload: {},
  });
  assert.equal(response.statusCode, 200, response.body);
  assert.deepEqual(await reminderOf(cancelled.userId), { push: 'cancelled', email: 'delivered' });
  assert.deepEqual(await reminderOf(standing.userId), { push: 'scheduled', email: 'delivered' });

  t.clock.advance(3 * HOUR);
  await t.app.platform.scheduler.runTick('notify.publish_due', t.clock.now());
  await eventually(async () => (await reminderOf(standing.userId)).push === 'delivered');
  assert.equal((await reminderOf(cancelled.userId)).push, 'cancelled');
  const inbox = await t.app.inject({ url: '/api/notifications/inbox?channel=push', headers: t.asAdmin });
  const pushes = (inbox.json().messages as { user_id: string; type: string }[]).filter(
    (m) => m.type === 'booking_reminder',
  );
  assert.deepEqual(
    pushes.map((m) => m.user_id),
    [standing.userId],
    'the dev inbox holds the standing booking reminder only',
  );
});
