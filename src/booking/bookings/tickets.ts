import { LRUCache } from 'lru-cache';
import QRCode from 'qrcode';
import { ticketToken } from '../signing.ts';

/** The QR code of a confirmed booking: its signed ticket token as a PNG data URL (cached per booking). */
export function createTickets(secret: string) {
  const images = new LRUCache<string, string>({ max: 5000 });
  return {
    token: (bookingId: string) => ticketToken(secret, bookingId),
    async qrCode(bookingId: string): Promise<string> {
      const known = images.get(bookingId);
      if (known) return known;
      const image = await QRCode.toDataURL(ticketToken(secret, bookingId), {
        errorCorrectionLevel: 'M',
        margin: 1,
        width: 240,
      });
      images.set(bookingId, image);
      return image;
    },
  };
}

export type Tickets = ReturnType<typeof createTickets>;
