import type { Clock } from '../../platform/clock.ts';
import type { BookingsRepository } from '../bookings/repository.ts';
import type { CatalogueService } from '../catalogue/service.ts';
import { err } from '../errors.ts';
import { ticketBookingId } from '../signing.ts';
import type { DoorRepository } from './repository.ts';
import type { CheckedIn } from './schemas.ts';

/**
 * Admission at the door: a ticket (the signed token of its QR code) is admitted once, for its own
 * show, until the show ends. The database decides "once" (repository.admit), so two scanners —
 * or a phone replaying its offline queue — never both admit one ticket.
 */
export function createDoorService(deps: {
  repo: DoorRepository;
  bookings: BookingsRepository;
  catalogue: CatalogueService;
  clock: Clock;
  secret: string;
}) {
  const { repo, bookings, catalogue, clock } = deps;

  async function holder(bookingId: string): Promise<string> {
    const contact = await bookings.contact(bookingId);
    if (contact?.email) return maskEmail(contact.email);
    if (contact?.phone) return maskPhone(contact.phone);
    return 'Guest';
  }

  return {
    async checkIn(token: string, request: { show_id: string; door: string }, by: string): Promise<CheckedIn> {
      const bookingId = ticketBookingId(deps.secret, token);
      const booking = bookingId ? await bookings.find(bookingId) : undefined;
      if (!booking) throw err('booking_not_found', 'This is not a ticket of ours');
      const show = await catalogue.showInfo(booking.show_id);
      if (booking.show_id !== request.show_id.toLowerCase()) {
        throw err('wrong_show', {
          detail: `This ticket is for ${show.movie_title} at ${show.show_time}, not for this show`,
          extras: {
            ticket_show_id: booking.show_id,
            show_time: show.show_time,
            movie_title: show.movie_title,
          },
        });
      }
      const refuseStatus = (status: string, cancelledAt: Date | null) => {
        if (status === 'CANCELLED') {
          throw err('ticket_cancelled', {
            detail: 'The booking was cancelled; this ticket admits no one',
            extras: { cancelled_at: cancelledAt?.toISOString() ?? null },
          });
        }
        if (status !== 'CONFIRMED') {
          throw err('ticket_not_valid', {
            detail: `The booking is ${status}, not paid`,
            extras: { booking_status: status },
          });
        }
      };
      refuseStatus(booking.status, booking.cancelled_at);
      const now = clock.now();
      if (now.getTime() >= new Date(show.end_time).getTime()) {
        throw err('show_ended', {
          detail: `The show ended at ${show.end_time}`,
          extras: { end_time: show.end_time },
        });
      }
      const admitted = await repo.admit({
        booking_id: booking.id,
        show_id: booking.show_id,
        door: request.door,
        checked_in_by: by,
        checked_in_at: now,
      });
      if (!admitted) {
        const earlier = await repo.find(booking.id);
        if (earlier) {
          throw err('already_checked_in', {
            detail: `Admitted at ${earlier.door} at ${earlier.checked_in_at.toISOString()}`,
            extras: {
              booking_id: booking.id,
              seats: booking.seats,
              checked_in_at: earlier.checked_in_at.toISOString(),
              door: earlier.door,
            },
          });
        }
        // Not admitted and no check-in: the booking changed between the read and the insert.
        const current = await bookings.find(booking.id);
        refuseStatus(current?.status ?? 'CANCELLED', current?.cancelled_at ?? null);
        throw err('ticket_not_valid', 'The booking changed meanwhile; scan again');
      }
      return {
        admitted: true,
        booking_id: booking.id,
        show_id: booking.show_id,
        seats: booking.seats,
        holder: await holder(booking.id),
        movie_title: show.movie_title,
        show_time: show.show_time,
        door: admitted.door,
        checked_in_at: admitted.checked_in_at.toISOString(),
      };
    },
  };
}

export type DoorService = ReturnType<typeof createDoorService>;

/** `alice@example.com` → `a•••e@example.com`: enough for staff to ask "Alice?", not a mailing list. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  const local = email.slice(0, at);
  const shown = local.length <= 2 ? `${local[0]}•••` : `${local[0]}•••${local.at(-1)}`;
  return `${shown}${email.slice(at)}`;
}

/** `+919876543210` → `+91•••••3210`. */
export function maskPhone(phone: string): string {
  return `${phone.slice(0, 3)}•••••${phone.slice(-4)}`;
}
