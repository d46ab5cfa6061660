import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type BookingTestApp, book, bookingTestApp, hold, seedShow } from '../../../test/support/booking.ts';
import { TEST_CARDS } from '../../payments/api.ts';

/**
 * Booking through the real notification module (not the recording double the other tests use):
 * the notifications booking sends are accepted by notify, with the contact booking passed on.
 */
let t: BookingTestApp;
let skip: string | false = false;

before(async () => {
  t = await bookingTestApp({ notify: 'real' });
  if (!t.app.platform.modules.has('notify')) skip = 'the notify module is not built in this tree yet';
});
after(() => t.close());

interface Listed {
  notifications: {
    type: string;
    data: Record<string, unknown>;
    channels: { channel: string; status: string }[];
  }[];
}

test('a confirmed booking reaches the notification service: e-mail queued to the address given at checkout', async (context) => {
  if (skip) return context.skip(skip);
  const { showId } = await seedShow(t);
  const held = (await hold(t, showId, ['A1', 'A2'])).json();
  const booked = await book(t, held, TEST_CARDS.success, undefined, {
    contact: { email: 'rahul@example.com' },
  });
  assert.equal(booked.statusCode, 201, booked.body);
  const listed = await t.app.inject({
    url: `/api/users/${held.user_id}/notifications`,
    headers: t.asUser(held.user_id),
  });
  assert.equal(listed.statusCode, 200, listed.body);
  const confirmation = (listed.json() as Listed).notifications.find((n) => n.type === 'booking_confirmed');
  assert.ok(confirmation, listed.body);
  assert.equal(confirmation.data.booking_id, booked.json().booking_id);
  const email = confirmation.channels.find((channel) => channel.channel === 'email');
  assert.ok(email && email.status !== 'skipped', JSON.stringify(confirmation.channels));
  const sms = confirmation.channels.find((channel) => channel.channel === 'sms');
  assert.equal(sms?.status, 'skipped', 'no phone number was given');
});
