import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

export interface StoredResponse {
  headers: Record<string, string>;
  body: string;
}

const VERSION = 'v1.';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Stored idempotent responses, sealed with AES-256-GCM: they carry what a client is shown once
 * (a paste's delete token, a booking's ticket token) and stay 24 h in a table that backups and
 * database readers see. The key is derived from APP_SECRET (HKDF), and each row's scope and key
 * are the additional data, so a sealed response only opens in the row it was written for: moving
 * it to another row (another caller's key) fails authentication instead of replaying it there.
 */
export function createResponseSeal(secret: string) {
  const key = Buffer.from(hkdfSync('sha256', secret, '', 'idempotency.response.v1', 32));
  const rowOf = (scope: string, idempotencyKey: string) => Buffer.from(`${scope}\u0000${idempotencyKey}`);

  return {
    close(response: StoredResponse, scope: string, idempotencyKey: string): string {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(rowOf(scope, idempotencyKey));
      const sealed = Buffer.concat([cipher.update(JSON.stringify(response), 'utf8'), cipher.final()]);
      return VERSION + Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64');
    },

    /** Undefined when the text was not sealed for this row under this secret. */
    open(text: string, scope: string, idempotencyKey: string): StoredResponse | undefined {
      if (!text.startsWith(VERSION)) return undefined;
      const bytes = Buffer.from(text.slice(VERSION.length), 'base64');
      if (bytes.length < IV_BYTES + TAG_BYTES) return undefined;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
        decipher.setAAD(rowOf(scope, idempotencyKey));
        decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
        const plain = Buffer.concat([
          decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)),
          decipher.final(),
        ]);
        return JSON.parse(plain.toString('utf8')) as StoredResponse;
      } catch {
        return undefined;
      }
    },
  };
}
