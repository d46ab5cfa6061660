import { createCipheriv, createDecipheriv, pbkdf2Sync, randomBytes } from 'node:crypto';

/**
 * Envelopes of end-to-end encrypted pastes made and opened the way src/paste/README.md describes
 * them (version 1, src/paste/envelope.ts), with Node's crypto: what a script does, and what
 * proves the browser's envelopes are standard AES-256-GCM.
 */
export function seal(
  text: string,
  options: { password?: string; iterations?: number } = {},
): { envelope: string; key: string } {
  const fragmentKey = randomBytes(32);
  const iv = randomBytes(12);
  let header = Buffer.from([1, options.password === undefined ? 0 : 1, ...iv]);
  let aesKey = fragmentKey;
  if (options.password !== undefined) {
    const salt = randomBytes(16);
    const iterations = Buffer.alloc(4);
    iterations.writeUInt32BE(options.iterations ?? 600_000);
    header = Buffer.concat([header, salt, iterations]);
    aesKey = pbkdf2Sync(
      Buffer.concat([fragmentKey, Buffer.from(options.password, 'utf8')]),
      salt,
      iterations.readUInt32BE(),
      32,
      'sha256',
    );
  }
  const cipher = createCipheriv('aes-256-gcm', aesKey, iv).setAAD(header);
  const sealed = Buffer.concat([cipher.update(text, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return {
    envelope: Buffer.concat([header, sealed]).toString('base64'),
    key: fragmentKey.toString('base64url'),
  };
}

export function open(envelope: string, key: string, password?: string): string {
  const bytes = Buffer.from(envelope, 'base64');
  const withPassword = bytes[1] === 1;
  const headerLength = withPassword ? 34 : 14;
  const header = bytes.subarray(0, headerLength);
  const fragmentKey = Buffer.from(key, 'base64url');
  const aesKey = withPassword
    ? pbkdf2Sync(
        Buffer.concat([fragmentKey, Buffer.from(password ?? '', 'utf8')]),
        bytes.subarray(14, 30),
        bytes.readUInt32BE(30),
        32,
        'sha256',
      )
    : fragmentKey;
  const decipher = createDecipheriv('aes-256-gcm', aesKey, bytes.subarray(2, 14)).setAAD(header);
  decipher.setAuthTag(bytes.subarray(bytes.length - 16));
  return Buffer.concat([
    decipher.update(bytes.subarray(headerLength, bytes.length - 16)),
    decipher.final(),
  ]).toString('utf8');
}
