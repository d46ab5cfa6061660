import type { Channel } from '../api.ts';

/** A template as the migration seeds it (and as an operator may later change it through the API). */
export interface TemplateSeed {
  id: string;
  subject: string;
  body: string;
  html?: string;
  /** In-app templates: where the item leads. */
  link?: string;
}

/**
 * The show's time in the venue's zone with the zone named (`time_zone`, which booking sends; the
 * recipient's zone when a sender has none), and amounts with their currency (`currency`, else
 * NOTIFY_CURRENCY): "Fri 27 Nov 2026, 19:30 (Asia/Kolkata)", "₹900.00". SMS shows the currency's
 * code, which stays in the GSM 7-bit alphabet ("INR 900.00").
 */
const when = '{{ show_time | datetime: time_zone }}';
const money = (name: string) => `{{ ${name} | money: currency }}`;
const smsMoney = (name: string) => `{{ ${name} | money: currency, "code" }}`;

/**
 * Default templates for the types booking sends (api.ts BOOKING_NOTIFICATION_TYPES) plus a
 * critical `security_alert` and a batch `marketing` type. SMS bodies stay under 160 characters
 * with typical values, so they go out as one segment.
 */
export const DEFAULT_TEMPLATES: Record<string, Record<Channel, Omit<TemplateSeed, 'id'>>> = {
  booking_confirmed: {
    email: {
      subject: 'Your tickets for {{ movie_title }}',
      body: [
        'Booking {{ booking_id }} is confirmed.',
        '',
        `{{ movie_title }} at {{ theater_name }}, ${when}.`,
        `Seats: {{ seats | join: ", " }}. Paid: ${money('total_paid')}.`,
        '',
        'Show the QR code from the HTML version of this e-mail at the entrance.',
      ].join('\n'),
      html: [
        '<h1>{{ movie_title }}</h1>',
        '<p>Booking <strong>{{ booking_id }}</strong> is confirmed.</p>',
        '<p>{{ theater_name }}, ' +
          when +
          `<br>Seats: {{ seats | join: ", " }}<br>Paid: ${money('total_paid')}</p>`,
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
    in_app: {
      subject: 'Tickets for {{ movie_title }}',
      body: `Booking {{ booking_id }} is confirmed: {{ theater_name }}, ${when}, seats {{ seats | join: ", " }}.`,
      link: '/bookings/{{ booking_id }}',
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
    in_app: {
      subject: '{{ movie_title }} starts soon',
      body: `In {{ hours_before }} h at {{ theater_name }} (${when}).`,
      link: '/bookings/{{ booking_id }}',
    },
  },
  booking_cancelled: {
    email: {
      subject: 'Booking {{ booking_id }} cancelled',
      body:
        'Your booking for {{ movie_title }} (' +
        when +
        `) was cancelled: {{ reason }}.\nRefund: ${money('refund_amount')}.`,
    },
    push: {
      subject: 'Booking cancelled',
      body: `{{ movie_title }} (${when}): {{ reason }}. Refund ${money('refund_amount')}.`,
    },
    sms: {
      subject: '',
      body: `Cancelled: {{ movie_title }} ${when}. Refund ${smsMoney('refund_amount')}. Ref {{ booking_id }}`,
    },
    in_app: {
      subject: 'Booking {{ booking_id }} cancelled',
      body: `{{ movie_title }} (${when}): {{ reason }}. Refund ${money('refund_amount')}.`,
      link: '/bookings/{{ booking_id }}',
    },
  },
  refund_update: {
    email: {
      subject: 'Refund for booking {{ booking_id }}: {{ refund_status }}',
      body: `The refund of ${money('refund_amount')} for booking {{ booking_id }} is {{ refund_status }}.`,
    },
    push: {
      subject: 'Refund {{ refund_status }}',
      body: `Refund of ${money('refund_amount')} for booking {{ booking_id }}: {{ refund_status }}.`,
    },
    sms: {
      subject: '',
      body: `Refund ${smsMoney('refund_amount')} for {{ booking_id }}: {{ refund_status }}`,
    },
    in_app: {
      subject: 'Refund {{ refund_status }}',
      body: `Refund of ${money('refund_amount')} for booking {{ booking_id }}: {{ refund_status }}.`,
      link: '/bookings/{{ booking_id }}',
    },
  },
  security_alert: {
    email: {
      subject: 'Security alert: {{ event }}',
      body:
        'We noticed {{ event }} on your account at {{ occurred_at | datetime }}.\n' +
        'If this was not you, secure your account now.',
    },
    push: {
      subject: 'Security alert',
      body: '{{ event }} at {{ occurred_at | datetime }}. Not you? Act now.',
    },
    sms: {
      subject: '',
      body: 'Security alert: {{ event }} at {{ occurred_at | datetime }}. Not you? Secure your account.',
    },
    in_app: {
      subject: 'Security alert: {{ event }}',
      body: 'We noticed {{ event }} on your account at {{ occurred_at | datetime }}. Not you? Secure your account now.',
    },
  },
  marketing: {
    email: {
      subject: '{{ headline }}',
      body: '{{ message }}\n\nUnsubscribe in your notification preferences.',
    },
    push: { subject: '{{ headline }}', body: '{{ message }}' },
    sms: { subject: '', body: '{{ headline }}: {{ message }} Reply STOP to opt out' },
    in_app: { subject: '{{ headline }}', body: '{{ message }}' },
  },
};

export function defaultTemplates(): TemplateSeed[] {
  return Object.entries(DEFAULT_TEMPLATES).flatMap(([type, channels]) =>
    Object.entries(channels).map(([channel, template]) => ({ id: `${type}.${channel}`, ...template })),
  );
}
