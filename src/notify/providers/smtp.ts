import nodemailer from 'nodemailer';
import { type OutboundMessage, type Provider, ProviderError } from '../ports.ts';

export interface SmtpSettings {
  /** e.g. smtps://user:pass@smtp.example.com:465 or smtp://127.0.0.1:2525 */
  url: string;
  /** From header, e.g. `"Cinema" <tickets@example.com>`. */
  from: string;
  timeoutMs?: number;
  /** The name this host gives in EHLO (NOTIFY_SMTP_NAME); nodemailer's default is the OS hostname. */
  name?: string;
  /** DKIM signing (NOTIFY_SMTP_DKIM_*): the receiving server checks it against `{selector}._domainkey.{domain}`. */
  dkim?: { domain: string; selector: string; privateKey: string };
  /**
   * The List-Unsubscribe URIs of a bulk message (an https one-click link, optionally a mailto:),
   * or undefined for a transactional one, which gets none.
   */
  listUnsubscribe?: (message: OutboundMessage) => string[] | undefined;
}

/**
 * Headers DKIM signs: nodemailer's list plus what RFC 8058 §4 requires to be covered
 * (List-Unsubscribe-Post next to List-Unsubscribe) and Auto-Submitted.
 */
const DKIM_SIGNED_HEADERS =
  'From:Sender:Reply-To:Subject:Date:Message-ID:To:Cc:MIME-Version:Content-Type:' +
  'Content-Transfer-Encoding:Content-ID:Content-Description:In-Reply-To:References:' +
  'List-Id:List-Help:List-Unsubscribe:List-Unsubscribe-Post:List-Subscribe:List-Post:List-Owner:' +
  'List-Archive:Auto-Submitted';

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
    ...(settings.name ? { name: settings.name } : {}),
    ...(settings.dkim
      ? {
          dkim: {
            domainName: settings.dkim.domain,
            keySelector: settings.dkim.selector,
            privateKey: settings.dkim.privateKey,
            headerFieldNames: DKIM_SIGNED_HEADERS,
          },
        }
      : {}),
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
      // RFC 3834: a machine wrote this, so auto-responders (vacation replies) must not answer it.
      const headers: Record<string, string> = {
        'X-Notification-Id': message.notificationId,
        'Auto-Submitted': 'auto-generated',
      };
      // Bulk mail only (RFC 2369, one click per RFC 8058): Gmail and Yahoo require both headers of
      // bulk senders and show an Unsubscribe button; a booking confirmation must not offer one.
      const unsubscribe = settings.listUnsubscribe?.(message);
      if (unsubscribe?.length) {
        headers['List-Unsubscribe'] = unsubscribe.map((uri) => `<${uri}>`).join(', ');
        headers['List-Unsubscribe-Post'] = 'List-Unsubscribe=One-Click';
      }
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
          attachments: message.message.attachments?.map((file) => ({
            filename: file.filename,
            contentType: file.content_type,
            content: file.content,
          })),
          headers,
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
