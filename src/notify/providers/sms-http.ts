import { type OutboundMessage, type Provider, ProviderError } from '../ports.ts';

export interface SmsHttpSettings {
  /** Base URL, e.g. https://api.twilio.com (a local fake in tests). */
  url: string;
  accountSid: string;
  authToken: string;
  /** Sender number (E.164) or alphanumeric sender id. */
  from: string;
  timeoutMs?: number;
}

/**
 * SMS over HTTP in Twilio's shape: `POST {base}/2010-04-01/Accounts/{sid}/Messages.json`,
 * form-encoded To/From/Body, Basic auth, answer `{sid, status}`. The delivery id rides along as
 * `I-Twilio-Idempotency-Token`, so a retry after a lost answer does not send a second SMS.
 */
export function createSmsHttpProvider(settings: SmsHttpSettings): Provider {
  const endpoint = `${settings.url}/2010-04-01/Accounts/${encodeURIComponent(settings.accountSid)}/Messages.json`;
  const auth = `Basic ${Buffer.from(`${settings.accountSid}:${settings.authToken}`).toString('base64')}`;
  return {
    name: 'http',
    channel: 'sms',
    async send(message: OutboundMessage) {
      const to = message.recipient.phone;
      if (!to)
        throw new ProviderError('no_address', 'The recipient has no phone number', { permanent: true });
      let response: Response;
      try {
        response = await fetch(endpoint, {
          method: 'POST',
          headers: {
            authorization: auth,
            'content-type': 'application/x-www-form-urlencoded',
            accept: 'application/json',
            'i-twilio-idempotency-token': message.deliveryId,
          },
          body: new URLSearchParams({ To: to, From: settings.from, Body: message.message.text }),
          signal: AbortSignal.timeout(settings.timeoutMs ?? 10_000),
        });
      } catch (error) {
        throw new ProviderError('sms_unreachable', `SMS provider unreachable: ${(error as Error).message}`, {
          permanent: false,
        });
      }
      const body = (await response.json().catch(() => ({}))) as {
        sid?: string;
        code?: number;
        message?: string;
      };
      if (response.ok && typeof body.sid === 'string')
        return { providerMessageId: body.sid, provider: 'http' };
      throw smsError(response.status, body);
    },
  };
}

/** Twilio error codes that mean "this number will never work": not retried. */
const PERMANENT_CODES: Record<number, string> = {
  21211: 'invalid_number',
  21614: 'not_a_mobile_number',
  21610: 'unsubscribed',
  21408: 'region_not_enabled',
};

function smsError(status: number, body: { code?: number; message?: string }): ProviderError {
  const detail = `SMS provider answered ${status}${body.code ? ` (code ${body.code})` : ''}: ${body.message ?? ''}`;
  if (status === 429 || status >= 500)
    return new ProviderError(`http_${status}`, detail, { permanent: false });
  // Wrong credentials will not fix themselves by retrying; an operator must, so the item fails visibly.
  if (status === 401 || status === 403)
    return new ProviderError('provider_auth', detail, { permanent: true });
  const code = body.code && PERMANENT_CODES[body.code];
  if (code) return new ProviderError(code, detail, { permanent: true });
  if (status === 200 || status === 201)
    return new ProviderError('malformed_answer', detail, { permanent: false });
  return new ProviderError(`http_${status}`, detail, { permanent: status >= 400 && status < 500 });
}
