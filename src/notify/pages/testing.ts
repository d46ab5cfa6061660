import { platformError } from '../../platform/errors.ts';
import type { AnyDb } from '../templates/repository.ts';
import type {
  DeadLetterView,
  NotificationView,
  NotifyPagesDeps,
  PreferencesPatch,
  PreferencesView,
} from './deps.ts';

/** Fake core for page tests: one notification, dead letters that can be re-driven, preferences in memory. */
export function fakePagesDeps(db: AnyDb) {
  const notification: NotificationView = {
    id: '0190a1b2-0000-7000-8000-0000000000aa',
    user_id: '7',
    type: 'booking_confirmed',
    priority: 'high',
    created_at: '2026-01-05T12:00:00.000Z',
    channels: [
      {
        channel: 'email',
        status: 'delivered',
        created_at: '2026-01-05T12:00:00.000Z',
        sent_at: '2026-01-05T12:01:00.500Z',
        delivered_at: '2026-01-05T12:01:02.000Z',
        provider: 'inbox',
        attempts: [
          {
            attempt: 1,
            at: '2026-01-05T12:00:00.100Z',
            outcome: 'failed',
            provider: 'smtp',
            error: 'smtp_451: Try again later',
          },
          { attempt: 2, at: '2026-01-05T12:01:00.100Z', outcome: 'sent', provider: 'inbox' },
        ],
      },
      {
        channel: 'sms',
        status: 'dead_lettered',
        created_at: '2026-01-05T12:00:00.000Z',
        attempts: [
          {
            attempt: 1,
            at: '2026-01-05T12:00:00.200Z',
            outcome: 'failed',
            error: 'invalid_number: <bad> number',
          },
        ],
      },
      { channel: 'push', status: 'skipped', reason: 'no_address', created_at: '2026-01-05T12:00:00.000Z' },
    ],
  };
  const deadLetters: DeadLetterView[] = [
    {
      id: 'dl-1',
      notification_id: notification.id,
      user_id: '7',
      type: 'booking_confirmed',
      channel: 'sms',
      attempts: 1,
      error: 'invalid_number',
      dead_lettered_at: '2026-01-05T12:00:01.000Z',
    },
  ];
  const preferences = new Map<string, PreferencesView>([
    [
      '7',
      {
        user_id: '7',
        push_enabled: true,
        sms_enabled: false,
        email_enabled: true,
        quiet_hours_start: '22:00',
        quiet_hours_end: '07:00',
        email: 'ana@example.test',
        phone: null,
        timezone: 'Europe/Berlin',
      },
    ],
  ]);
  const redriven: string[] = [];
  const updates: [string, PreferencesPatch][] = [];
  const deps: NotifyPagesDeps = {
    db,
    getNotification: async (id) => (id === notification.id ? notification : undefined),
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
