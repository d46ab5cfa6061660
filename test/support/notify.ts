import { setTimeout as sleep } from 'node:timers/promises';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { CHANNELS, type Channel } from '../../src/notify/api.ts';
import { createNotifyModule } from '../../src/notify/module.ts';
import {
  type ChannelSender,
  type OutboundMessage,
  ProviderError,
  ProviderUnavailable,
  type TemplateProblem,
  type TemplateRenderer,
} from '../../src/notify/ports.ts';
import { systemClock, type TestClock } from '../../src/platform/clock.ts';
import { createTestApp, type TestApp, uniqueName } from './platform.ts';

/** Test doubles of the notify seams and an app wired with them. */

export const FAKE_TEMPLATES: Record<string, string[]> = {
  order_update: ['order_id'],
  security_alert: ['message'],
  digest: ['items'],
  seq: ['n'],
};

/** Templates for every channel of FAKE_TEMPLATES' types; `sms_only` has an SMS template only. */
export function fakeTemplates(): TemplateRenderer {
  return {
    async check(type, channels, data) {
      return channels.flatMap((channel): TemplateProblem[] => {
        const needed = FAKE_TEMPLATES[type];
        if (!needed) return [{ channel, reason: 'unknown_type' }];
        const missing = needed.filter((name) => data[name] === undefined);
        return missing.length ? [{ channel, reason: 'missing_variables', missing }] : [];
      });
    },
    async render(type, _channel, data, options) {
      const text = `${type} ${JSON.stringify(data)} @${options?.timeZone ?? 'UTC'}`;
      return { subject: type, text };
    },
    async types() {
      return Object.keys(FAKE_TEMPLATES);
    },
  };
}

export type Behaviour = 'ok' | 'transient' | 'permanent' | 'unavailable' | 'hang';

/** A provider per channel that records what it is given and fails when told to. */
export interface RecordingSenders {
  senders: Record<Channel, ChannelSender>;
  /** Every successful send, in order. */
  sent: OutboundMessage[];
  /** Every call, failures included. */
  calls: OutboundMessage[];
  /** Decides each call's outcome (default: ok); an error is thrown as the provider's own. */
  behaviour: (message: OutboundMessage) => Behaviour | Error;
}

export function recordingSenders(): RecordingSenders {
  const recorder: RecordingSenders = {
    senders: {} as Record<Channel, ChannelSender>,
    sent: [],
    calls: [],
    behaviour: () => 'ok',
  };
  for (const channel of CHANNELS) {
    recorder.senders[channel] = {
      async send(message) {
        recorder.calls.push(message);
        const behaviour = recorder.behaviour(message);
        if (behaviour instanceof Error) throw behaviour;
        if (behaviour === 'transient')
          throw new ProviderError('timeout', 'provider timed out', { permanent: false });
        if (behaviour === 'permanent')
          throw new ProviderError('invalid_address', 'no such mailbox', { permanent: true });
        if (behaviour === 'unavailable') throw new ProviderUnavailable(`fake-${channel}`, 30_000);
        if (behaviour === 'hang') await new Promise(() => {});
        recorder.sent.push(message);
        return { provider: `fake-${channel}`, providerMessageId: `p-${recorder.sent.length}` };
      },
      states: () => [{ provider: `fake-${channel}`, channel, state: 'closed' }],
      close: async () => {},
    };
  }
  return recorder;
}

export interface NotifyTestApp extends TestApp {
  provider: RecordingSenders;
  admin: Record<string, string>;
  /**
   * `app.inject` as an admin unless the request carries credentials of its own: the tests of what
   * notify does. Who may call what is tested with `app.inject` itself (access.test.ts).
   */
  inject(options: string | InjectOptions): Promise<LightMyRequestResponse>;
  send(body: Record<string, unknown>, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  setPreferences(userId: string, body: Record<string, unknown>): Promise<void>;
  /** Runs the outbox sweep (scheduled sends that are due, lost publishes) as the scheduler would. */
  publishDue(): Promise<void>;
}

export async function notifyTestApp(
  options: { env?: Record<string, string>; clock?: TestClock; workers?: boolean } = {},
): Promise<NotifyTestApp> {
  const namespace = uniqueName('n');
  const provider = recordingSenders();
  const t = await createTestApp({
    services: ['notify'],
    replace: [createNotifyModule({ templates: fakeTemplates(), senders: provider.senders })],
    clock: options.clock,
    workers: options.workers,
    env: { NAMESPACE: namespace, ...options.env },
  });
  const inject = (options: string | InjectOptions) => {
    const request = typeof options === 'string' ? { url: options } : options;
    const headers = request.headers ?? {};
    const credentials = ['authorization', 'x-api-key', 'x-admin-key', 'x-operator-key', 'cookie'];
    if (credentials.some((name) => name in headers)) return t.app.inject(request);
    return t.app.inject({ ...request, headers: { ...headers, ...t.asAdmin } });
  };
  return {
    ...t,
    provider,
    admin: t.asAdmin,
    inject,
    send: (payload, headers) =>
      t.app.inject({
        method: 'POST',
        url: '/api/notifications',
        payload,
        headers: { ...t.asService, ...headers },
      }),
    async setPreferences(userId, body) {
      const response = await inject({
        method: 'PATCH',
        url: `/api/users/${userId}/notification-preferences`,
        payload: body,
      });
      if (response.statusCode !== 200) throw new Error(response.body);
    },
    async publishDue() {
      await t.app.platform.scheduler.runTick('notify.publish_due', t.clock.now());
    },
  };
}

/** Polls (in real time) until `check` holds; the queue's pollers run on real timers. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined | false;
  while (Date.now() < deadline) {
    last = await check();
    if (last) return last;
    await sleep(20);
  }
  throw new Error(`condition not met within ${timeoutMs} ms (last: ${JSON.stringify(last)})`);
}

/** System time behind the TestClock interface, for tests whose workers run in other processes. */
export function realTimeClock(): TestClock {
  return {
    ...systemClock,
    advance() {
      throw new Error('a real-time clock does not move');
    },
    set() {
      throw new Error('a real-time clock does not move');
    },
  };
}

/**
 * What booking sends with its notifications, for a 19:30 show in Delhi (14:00 UTC) paid in rupees,
 * plus the members the other default templates read: every default template renders from it.
 */
export const BOOKING_MESSAGE_DATA = {
  booking_id: 'BK-42',
  movie_title: 'Pushpa 2',
  theater_name: 'PVR Select City Walk',
  show_time: '2026-11-27T14:00:00Z',
  time_zone: 'Asia/Kolkata',
  seats: ['C7', 'C8'],
  total_paid: 900,
  refund_amount: 900,
  currency: 'INR',
  qr_code: 'v1.eyJiIjoiQkstNDIifQ.sig',
  hours_before: 2,
  refund_status: 'COMPLETED',
  reason: 'the show was cancelled',
  event: 'a new sign-in',
  occurred_at: '2026-11-27T14:00:00Z',
  headline: 'Diwali offers',
  message: 'Two tickets for one this week.',
};
