import type { FastifyBaseLogger } from 'fastify';
import type { Channel, NotificationRequest, NotifyApi } from '../../notify/api.ts';
import type { ShowInfo } from '../catalogue/shapes.ts';
import { fromMinor } from '../money.ts';
import { calendarFile } from './calendar.ts';
import type { BookingRow } from './repository.ts';

/**
 * Booking's notifications through the notification service's public API (in-process). Each has a
 * stable id, so a retry (or a second process doing the same) is dropped by notify as a duplicate.
 * A failure to notify never fails a booking: it is logged. Variables follow DESIGN §3: times as
 * ISO 8601 UTC, money as numbers, seats as a list; with them `time_zone`, the venue's city's zone
 * (a show's time is read where the show is: 19:30 in Delhi, named, not the recipient's 15:00), and
 * `currency`, the booking's (notify's CONTEXT_VARIABLES).
 */
export function createBookingNotifier(deps: {
  notify: NotifyApi | undefined;
  log: FastifyBaseLogger;
  /** The app's public address (BASE_URL): the calendar event links to the booking's page. */
  baseUrl?: string;
}) {
  const { notify, log } = deps;

  /** The show as a calendar event in the venue's zone, sent with the confirmation e-mail. */
  function calendar(booking: BookingRow, show: ShowInfo) {
    const host = deps.baseUrl ? new URL(deps.baseUrl).hostname : 'localhost';
    const seats = booking.seats.join(', ');
    return {
      filename: 'ticket.ics',
      content_type: 'text/calendar; charset=utf-8; method=PUBLISH',
      content: calendarFile({
        uid: `booking-${booking.id}@${host}`,
        stamp: booking.confirmed_at ?? booking.booking_time,
        start: new Date(show.show_time),
        end: new Date(show.end_time),
        timeZone: show.timezone,
        summary: `${show.movie_title} (seats ${seats})`,
        location: `${show.theater_name}, Screen ${show.screen_number}, ${show.city_name}`,
        description: `Booking ${booking.id}. Seats ${seats}. Show the ticket's QR code at the door.`,
        url: deps.baseUrl ? `${deps.baseUrl}/bookings/${booking.id}` : undefined,
      }),
    };
  }

  async function send(request: NotificationRequest): Promise<void> {
    if (!notify) return;
    try {
      await notify.send(request);
    } catch (error) {
      log.warn({ err: error, type: request.type, id: request.id }, 'booking notification not accepted');
    }
  }

  /** The reminder's id: notify keeps it as the client id, by which `cancelReminders` finds it. */
  const reminderId = (bookingId: string, hoursBefore: 24 | 2) =>
    `booking_reminder:${bookingId}:${hoursBefore}h`;

  const base = (booking: BookingRow, type: string, id: string, channels: Channel[]) => ({
    id,
    user_id: booking.user_id,
    type,
    channels,
  });

  return {
    enabled: notify !== undefined,

    async setContact(userId: string, contact: { email?: string; phone?: string }): Promise<void> {
      if (!notify || (!contact.email && !contact.phone)) return;
      try {
        await notify.setContact(userId, contact);
      } catch (error) {
        log.warn({ err: error, userId }, 'could not store contact details with the notification service');
      }
    },

    /** The ticket token goes as `qr_code`: notify's e-mail template renders it as a QR image. */
    confirmed: (booking: BookingRow, show: ShowInfo, ticketToken: string) =>
      send({
        ...base(booking, 'booking_confirmed', `booking_confirmed:${booking.id}`, ['email', 'sms', 'push']),
        priority: 'high',
        data: {
          booking_id: booking.id,
          movie_title: show.movie_title,
          theater_name: show.theater_name,
          show_time: show.show_time,
          time_zone: show.timezone,
          seats: booking.seats,
          total_paid: fromMinor(booking.total_minor),
          currency: booking.currency,
          qr_code: ticketToken,
          // The e-mail carries it as `ticket.ics` (notify's `data.attachments`); other channels ignore it.
          attachments: [calendar(booking, show)],
        },
      }),

    reminder: (booking: BookingRow, show: ShowInfo, hoursBefore: 24 | 2) =>
      send({
        ...base(booking, 'booking_reminder', reminderId(booking.id, hoursBefore), ['push', 'email']),
        data: {
          booking_id: booking.id,
          movie_title: show.movie_title,
          theater_name: show.theater_name,
          show_time: show.show_time,
          time_zone: show.timezone,
          hours_before: hoursBefore,
        },
      }),

    /**
     * A cancelled booking's reminders that are still pending (a push held by the user's quiet
     * hours, a message not yet taken by a worker) are taken back; ones already sent stay sent.
     * Like a send, a failure is logged and never fails the cancellation.
     */
    async cancelReminders(booking: BookingRow): Promise<void> {
      if (!notify) return;
      for (const hours of [24, 2] as const) {
        try {
          await notify.cancel({ user_id: booking.user_id, id: reminderId(booking.id, hours) });
        } catch (error) {
          log.warn({ err: error, bookingId: booking.id, hours }, 'booking reminder not cancelled');
        }
      }
    },

    cancelled: (booking: BookingRow, show: ShowInfo, refundMinor: number, reason: string) =>
      send({
        ...base(booking, 'booking_cancelled', `booking_cancelled:${booking.id}`, ['email', 'push']),
        priority: 'high',
        data: {
          booking_id: booking.id,
          movie_title: show.movie_title,
          show_time: show.show_time,
          time_zone: show.timezone,
          refund_amount: fromMinor(refundMinor),
          currency: booking.currency,
          reason,
        },
      }),

    refundUpdate: (booking: BookingRow, paymentId: string, refundMinor: number, status: string) =>
      send({
        ...base(booking, 'refund_update', `refund_update:${paymentId}:${status}`, ['email']),
        data: {
          booking_id: booking.id,
          refund_amount: fromMinor(refundMinor),
          currency: booking.currency,
          refund_status: status,
        },
      }),
  };
}

export type BookingNotifier = ReturnType<typeof createBookingNotifier>;
