import type { Channel } from '../api.ts';
import type { TemplateSeed } from '../templates/defaults.ts';

const when = '{{ show_time | date: "%a %-d %b %Y, %H:%M" }}';

/**
 * The default templates as migration 100 seeded them, kept as they were (do not edit): migration
 * 101 replaces a stored default only while it is still exactly this text, so an operator's edit
 * stays. Default templates for the types booking sends (api.ts BOOKING_NOTIFICATION_TYPES) plus a
 * critical `security_alert` and a batch `marketing` type. SMS bodies stay under 160 characters
 * with typical values, so they go out as one segment.
 */
export const FIRST_DEFAULTS: Record<string, Record<Exclude<Channel, 'in_app'>, Omit<TemplateSeed, 'id'>>> = {
  booking_confirmed: {
    email: {
      subject: 'Your tickets for {{ movie_title }}',
      body: [
        'Booking {{ booking_id }} is confirmed.',
        '',
        `{{ movie_title }} at {{ theater_name }}, ${when}.`,
        'Seats: {{ seats | join: ", " }}. Paid: {{ total_paid | money }}.',
        '',
        'Show the QR code from the HTML version of this e-mail at the entrance.',
      ].join('\n'),
      html: [
        '<h1>{{ movie_title }}</h1>',
        '<p>Booking <strong>{{ booking_id }}</strong> is confirmed.</p>',
        '<p>{{ theater_name }}, ' +
          when +
          '<br>Seats: {{ seats | join: ", " }}<br>Paid: {{ total_paid | money }}</p>',
        '<p><img alt="Ticket QR code for booking {{ booking_id }}" width="200" height="200" src="{{ qr_code | qr }}"></p>',
        '<p>Show this code at the entrance.</p>',
      ].join('\n'),
    },
    push: {
      subject: 'Booking confirmed',
      body: `{{ movie_title }}, ${when}, seats {{ seats | join: ", " }}. Your ticket is in your e-mail.`,
    },
    sms: {
      subject: '',
      body: `Booked: {{ movie_title }} ${when}, seats {{ seats | join: "," }}. Ref {{ booking_id }}`,
    },
  },
  booking_reminder: {
    email: {
      subject: 'Reminder: {{ movie_title }} in {{ hours_before }} hours',
      body: `{{ movie_title }} starts at {{ theater_name }}, ${when}.\nBooking {{ booking_id }}.`,
    },
    push: {
      subject: '{{ movie_title }} starts soon',
      body: `In {{ hours_before }} h at {{ theater_name }} (${when}).`,
    },
    sms: {
      subject: '',
      body: `Reminder: {{ movie_title }} at {{ theater_name }}, ${when}. Ref {{ booking_id }}`,
    },
  },
  booking_cancelled: {
    email: {
      subject: 'Booking {{ booking_id }} cancelled',
      body:
        'Your booking for {{ movie_title }} (' +
        when +
        ') was cancelled: {{ reason }}.\nRefund: {{ refund_amount | money }}.',
    },
    push: {
      subject: 'Booking cancelled',
      body: `{{ movie_title }} (${when}): {{ reason }}. Refund {{ refund_amount | money }}.`,
    },
    sms: {
      subject: '',
      body: `Cancelled: {{ movie_title }} ${when}. Refund {{ refund_amount | money }}. Ref {{ booking_id }}`,
    },
  },
  refund_update: {
    email: {
      subject: 'Refund for booking {{ booking_id }}: {{ refund_status }}',
      body: 'The refund of {{ refund_amount | money }} for booking {{ booking_id }} is {{ refund_status }}.',
    },
    push: {
      subject: 'Refund {{ refund_status }}',
      body: 'Refund of {{ refund_amount | money }} for booking {{ booking_id }}: {{ refund_status }}.',
    },
    sms: {
      subject: '',
      body: 'Refund {{ refund_amount | money }} for {{ booking_id }}: {{ refund_status }}',
    },
  },
  security_alert: {
    email: {
      subject: 'Security alert: {{ event }}',
      body:
        'We noticed {{ event }} on your account at {{ occurred_at | date: "%-d %b %Y, %H:%M %Z" }}.\n' +
        'If this was not you, secure your account now.',
    },
    push: {
      subject: 'Security alert',
      body: '{{ event }} at {{ occurred_at | date: "%H:%M" }}. Not you? Act now.',
    },
    sms: {
      subject: '',
      body: 'Security alert: {{ event }} at {{ occurred_at | date: "%H:%M" }}. Not you? Secure your account.',
    },
  },
  marketing: {
    email: {
      subject: '{{ headline }}',
      body: '{{ message }}\n\nUnsubscribe in your notification preferences.',
    },
    push: { subject: '{{ headline }}', body: '{{ message }}' },
    sms: { subject: '', body: '{{ headline }}: {{ message }} Reply STOP to opt out' },
  },
};

export function firstDefaults(): TemplateSeed[] {
  return Object.entries(FIRST_DEFAULTS).flatMap(([type, channels]) =>
    Object.entries(channels).map(([channel, template]) => ({ id: `${type}.${channel}`, ...template })),
  );
}
