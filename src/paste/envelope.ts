import { pasteError } from './errors.ts';

/**
 * The envelope of an end-to-end encrypted paste (README, *Encrypted pastes*): what the browser
 * (pages/static/encrypted.js) or a script makes, sent as the paste's content in standard base64
 * with `encryption: "aes-256-gcm"`. The server checks its shape and stores it as it came; it
 * never has the key, so it cannot and does not decrypt it.
 *
 *   byte 0       version, 1
 *   byte 1       flags: 0 = the AES key is the 32-byte key of the link's fragment;
 *                       1 = password: key = PBKDF2-HMAC-SHA-256(fragment key ‖ UTF-8 password,
 *                           salt, iterations, 32 bytes)
 *   bytes 2-13   the AES-GCM iv (12 random bytes)
 *   flag 1 only: 16 bytes of salt, then the iterations as an unsigned 32-bit big-endian integer
 *   the rest     AES-256-GCM ciphertext followed by its 16-byte tag; the additional authenticated
 *                data is every byte before it (the header), so no metadata can be changed unseen
 */
export const ENCRYPTION = 'aes-256-gcm';
export const ENVELOPE_VERSION = 1;
export const FLAG_PASSWORD = 1;
const IV_BYTES = 12;
const SALT_BYTES = 16;
const TAG_BYTES = 16;
/**
 * The PBKDF2 work a reader's browser is asked to do: at least what OWASP's 2023 guidance names
 * for PBKDF2-HMAC-SHA-256 divided by six (older envelopes, slow phones), at most ten million, so
 * a paste cannot hang its readers' browsers.
 */
export const MIN_ITERATIONS = 100_000;
export const MAX_ITERATIONS = 10_000_000;

export interface EnvelopeInfo {
  version: number;
  password: boolean;
  iterations?: number;
  /** Bytes of ciphertext and tag. */
  ciphertextBytes: number;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The envelope's header, checked; a malformed one is a 400 naming what is wrong. */
export function checkEnvelope(content: string): EnvelopeInfo {
  if (!BASE64.test(content)) {
    throw invalid('must be standard base64 (A-Z a-z 0-9 + /, padded with =) of the envelope');
  }
  const bytes = Buffer.from(content, 'base64');
  const version = bytes[0];
  if (version !== ENVELOPE_VERSION) throw invalid(`has version ${version ?? 'none'}; only 1 is known`);
  const flags = bytes[1];
  if (flags !== 0 && flags !== FLAG_PASSWORD)
    throw invalid(`has flags ${flags ?? 'none'}; only 0 and 1 are known`);
  const password = flags === FLAG_PASSWORD;
  const header = 2 + IV_BYTES + (password ? SALT_BYTES + 4 : 0);
  // At least one byte of ciphertext: an empty paste is refused, encrypted or not.
  if (bytes.length < header + 1 + TAG_BYTES) {
    throw invalid(
      `is ${bytes.length} bytes; a version 1 envelope has a ${header}-byte header, ciphertext and a 16-byte tag`,
    );
  }
  const iterations = password ? bytes.readUInt32BE(2 + IV_BYTES + SALT_BYTES) : undefined;
  if (iterations !== undefined && (iterations < MIN_ITERATIONS || iterations > MAX_ITERATIONS)) {
    throw invalid(
      `asks for ${iterations} PBKDF2 iterations; from ${MIN_ITERATIONS} to ${MAX_ITERATIONS} are accepted`,
    );
  }
  return { version, password, iterations, ciphertextBytes: bytes.length - header };
}

function invalid(message: string) {
  return pasteError('invalid_option', {
    detail: `content ${message}`,
    extras: { errors: [{ field: 'content', message }] },
  });
}
