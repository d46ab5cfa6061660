import { platformError } from '../../platform/errors.ts';
import type { AnyDb } from '../templates/repository.ts';
import type {
  DeadLetterView,
  NotificationView,
  NotifyPagesDeps,
  PreferencesPatch,
  PreferencesView,
} from './deps.ts';

/**
 * A fake core for page tests, in the core's answer shapes: one notification (e-mail delivered after
 * a failed try, SMS dead-lettered, push skipped), dead letters that can be re-driven once, and
 * preferences in memory. Unknown ids throw 404s like the core's service does.
 */
export function fakePagesDeps(db: AnyDb) {
  const notification: NotificationView = {
    id: '0190a1b2-0000-7000-8000-0000000000aa',
    user_id: '7',
    type: 'booking_confirmed',
    priority: 'high',
    lane: 'realtime',
    created_at: '2026-01-05T12:00:00.000Z',
    sent_at: '2026-01-05T12:01:00.500Z',
    delivered_at: '2026-01-05T12:01:02.000Z',
    channels: [
      {
        channel: 'email',
        status: 'delivered',
        provider: 'inbox',
        attempts: 2,
        sent_at: '2026-01-05T12:01:00.500Z',
        delivered_at: '2026-01-05T12:01:02.000Z',
      },
      { channel: 'sms', status: 'dead_lettered', attempts: 1, reason: 'invalid_number' },
      { channel: 'push', status: 'skipped', reason: 'no_address', attempts: 0 },
    ],
    attempts: [
      {
        channel: 'email',
        attempt: 1,
        at: '2026-01-05T12:00:00.100Z',
        provider: 'smtp',
        error: 'smtp_451: Try again later',
      },
      {
        channel: 'sms',
        attempt: 1,
        at: '2026-01-05T12:00:00.200Z',
        provider: 'http',
        error: 'invalid_number: <bad> number',
      },
      { channel: 'email', attempt: 2, at: '2026-01-05T12:01:00.100Z', provider: 'inbox', error: null },
    ],
  };
  const deadLetters: DeadLetterView[] = [
    {
      id: 'notifications.sms:dl-1',
      topic: 'notifications.sms',
      notification_id: notification.id,
      user_id: '7',
      channel: 'sms',
      attempts: 1,
      error: 'invalid_number',
      dead_at: '2026-01-05T12:00:01.000Z',
    },
  ];
  const preferences = new Map<string, PreferencesView>([
    [
      '7',
      {
        push_enabled: true,
        sms_enabled: false,
        email_enabled: true,
        quiet_hours_start: '22:00',
        quiet_hours_end: '07:00',
        email: 'ana@example.test',
        phone: null,
        timezone: 'Europe/Berlin',
        locale: null,
      },
    ],
  ]);
  const redriven: string[] = [];
  const updates: [string, PreferencesPatch][] = [];
  const deps: NotifyPagesDeps = {
    db,
    getNotification: async (id) => {
      if (id !== notification.id) throw platformError('not_found', `No notification ${id}`);
      return notification;
    },
    listDeadLetters: async () => deadLetters.filter((d) => !redriven.includes(d.id)),
    redrive: async (id) => {
      if (!deadLetters.some((d) => d.id === id) || redriven.includes(id)) {
        throw platformError('not_found', `No dead letter ${id}`);
      }
      redriven.push(id);
    },
    getPreferences: async (userId) => preferences.get(userId),
    updatePreferences: async (userId, patch) => {
      updates.push([userId, patch]);
      const next = { ...preferences.get(userId)!, ...patch };
      preferences.set(userId, next);
      return next;
    },
  };
  return { deps, notification, redriven, updates, preferences };
}
