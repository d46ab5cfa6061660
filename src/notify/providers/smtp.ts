import nodemailer from 'nodemailer';
import { type OutboundMessage, type Provider, ProviderError } from '../ports.ts';

export interface SmtpSettings {
  /** e.g. smtps://user:pass@smtp.example.com:465 or smtp://127.0.0.1:2525 */
  url: string;
  /** From header, e.g. `"Cinema" <tickets@example.com>`. */
  from: string;
  timeoutMs?: number;
}

/**
 * E-mail over SMTP with nodemailer (a pooled connection). The Message-ID is derived from the
 * delivery id, so a message re-sent after a lost answer carries the same id and mail clients
 * show it once; it is also the provider message id that receipts (DSNs) refer to.
 */
export function createSmtpProvider(settings: SmtpSettings): Provider {
  const timeout = settings.timeoutMs ?? 10_000;
  const transport = nodemailer.createTransport({
    url: settings.url,
    pool: true,
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
  });
  const domain = /@([^>\s]+)>?\s*$/.exec(settings.from)?.[1] ?? 'localhost';
  return {
    name: 'smtp',
    channel: 'email',
    async send(message: OutboundMessage) {
      const to = message.recipient.email;
      if (!to)
        throw new ProviderError('no_address', 'The recipient has no e-mail address', { permanent: true });
      const messageId = `<${message.deliveryId.replace(/[^A-Za-z0-9.-]/g, '.')}@${domain}>`;
      try {
        await transport.sendMail({
          from: settings.from,
          to,
          subject: message.message.subject ?? '',
          text: message.message.text,
          html: message.message.html,
          messageId,
          // Gmail and Outlook do not show data: images; nodemailer turns each one (the ticket QR)
          // into an inline attachment referenced by cid:, which every client shows.
          attachDataUrls: true,
          headers: { 'X-Notification-Id': message.notificationId },
        });
      } catch (error) {
        throw smtpError(error as Error & { responseCode?: number; code?: string });
      }
      return { providerMessageId: messageId, provider: 'smtp' };
    },
    async close() {
      transport.close();
    },
  };
}

/** 5xx: the server refused for good (no such mailbox, policy); 4xx and connection trouble: try later. */
function smtpError(error: Error & { responseCode?: number; code?: string }): ProviderError {
  const status = error.responseCode;
  if (status && status >= 500) {
    return new ProviderError(`smtp_${status}`, error.message, { permanent: true });
  }
  return new ProviderError(
    status ? `smtp_${status}` : (error.code ?? 'smtp_error').toLowerCase(),
    error.message,
    {
      permanent: false,
    },
  );
}
