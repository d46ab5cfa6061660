import { randomBytes } from 'node:crypto';
import { ConfigError } from '../config-error.ts';
import { DEV_KEYS, type KeyGrant } from './keys.ts';

type Env = Readonly<Record<string, string | undefined>>;

/** What a production start must not run with; each check names the variable at fault. */
export interface ProductionInputs {
  env: Env;
  services: readonly string[];
  secret: string;
  adminApiKey: string;
  paymentWebhookSecret: string;
  serviceKeys: readonly KeyGrant[];
  operatorKeys: readonly KeyGrant[];
}

const DEV_SECRET_VALUES = new Set<string>([
  DEV_KEYS.admin,
  DEV_KEYS.service,
  DEV_KEYS.operator,
  'dev-secret-change-me-in-production',
]);
/** Words that mark a value copied from an example instead of generated. */
const PLACEHOLDER =
  /replace|change[-_ ]?me|changeme|example|placeholder|your[-_ ]|insert|generate|todo|dummy|sample|insecure|default|^dev-|^test-?|secret-?here|x{6,}/i;
const MIN_ENTROPY_BITS = 256;
const GENERATE_HINT = 'generate one with `npm run secrets` (deploy/README.md)';

/**
 * `NODE_ENV=production` refuses every development default, placeholder or weak secret, the sandbox
 * gateway unless `PAYMENTS_SANDBOX=true`, a blanket TRUST_PROXY, and every unsafe or test switch:
 * with any of these, anyone who has read this repository can forge tokens or pay with a test card.
 */
export function refuseUnsafeProduction(inputs: ProductionInputs): void {
  const { env, services } = inputs;
  if (env.NODE_ENV !== 'production') return;
  const needsPayments = services.includes('booking') || services.includes('parking');
  strongSecret('APP_SECRET', env.APP_SECRET, inputs.secret);
  strongSecret('ADMIN_API_KEY', env.ADMIN_API_KEY, inputs.adminApiKey);
  if (needsPayments) {
    strongSecret('PAYMENT_WEBHOOK_SECRET', env.PAYMENT_WEBHOOK_SECRET, inputs.paymentWebhookSecret);
  }
  if (services.includes('notify') || services.includes('booking')) {
    strongKeys('SERVICE_KEYS', env.SERVICE_KEYS, inputs.serviceKeys);
  }
  if (services.includes('booking') || services.includes('parking')) {
    strongKeys('OPERATOR_KEYS', env.OPERATOR_KEYS, inputs.operatorKeys);
  }
  if (needsPayments && env.PAYMENTS_SANDBOX !== 'true') {
    throw new ConfigError(
      'PAYMENTS_SANDBOX must be true to run the built-in sandbox gateway in production (its test cards pay without money)',
    );
  }
  if (['true', 'yes', '1'].includes(env.TRUST_PROXY ?? '')) {
    throw new ConfigError(
      'TRUST_PROXY=true lets every client choose its own address; give the hop count or the proxy addresses',
    );
  }
  for (const [name, value] of Object.entries(env)) {
    if (value && (/_UNSAFE_/.test(name) || name === 'TEST_CLOCK') && !['0', 'false', 'no'].includes(value)) {
      throw new ConfigError(`${name} is a test-only switch and is refused when NODE_ENV=production`);
    }
  }
}

function strongSecret(name: string, raw: string | undefined, value: string): void {
  if (raw === undefined || raw === '') {
    throw new ConfigError(`${name} must be set when NODE_ENV=production; ${GENERATE_HINT}`);
  }
  const weakness = secretWeakness(value);
  if (weakness) throw new ConfigError(`${name} ${weakness}; ${GENERATE_HINT}`);
}

function strongKeys(name: string, raw: string | undefined, grants: readonly KeyGrant[]): void {
  if (raw === undefined || raw.trim() === '' || grants.length === 0) {
    throw new ConfigError(`${name} must be set when NODE_ENV=production; ${GENERATE_HINT}`);
  }
  for (const grant of grants) {
    const weakness = secretWeakness(grant.key);
    if (weakness) throw new ConfigError(`${name}: the key of ${grant.name} ${weakness}; ${GENERATE_HINT}`);
  }
}

/** Why production refuses this secret (a development default, a placeholder, too little entropy), or undefined. */
export function secretWeakness(value: string): string | undefined {
  if (DEV_SECRET_VALUES.has(value)) return 'is a documented development default';
  if (PLACEHOLDER.test(value)) return 'looks like a placeholder';
  if (entropyBits(value) < MIN_ENTROPY_BITS) return 'has less than 32 bytes of entropy';
  return undefined;
}

/**
 * An upper bound of the entropy a random string of this alphabet and length can carry, lowered
 * for strings that repeat a few characters: `openssl rand -hex 32` (64 hex digits), `-base64 32`
 * and `npm run secrets` (43 base64url characters) pass; words, dates and keyboard runs do not.
 */
export function entropyBits(value: string): number {
  let alphabet: number;
  if (/^[0-9a-f]+$/i.test(value)) alphabet = /^[0-9]+$/.test(value) ? 10 : 16;
  else if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(value) && /[a-z]/.test(value) && /[A-Z]/.test(value))
    alphabet = 64;
  else {
    const classes: [RegExp, number][] = [
      [/[a-z]/, 26],
      [/[A-Z]/, 26],
      [/[0-9]/, 10],
      [/[^a-zA-Z0-9]/, 33],
    ];
    alphabet = classes.reduce((sum, [re, size]) => sum + (re.test(value) ? size : 0), 0);
  }
  const distinct = new Set(value).size;
  return value.length * Math.log2(Math.max(2, Math.min(alphabet, distinct * 4)));
}

/**
 * 32 random bytes, base64url, that production accepts: a random string can spell a placeholder
 * word by chance (`todo` somewhere in its 43 characters), which the start-up check refuses, so
 * such a draw is thrown away.
 */
export function generateSecret(): string {
  for (;;) {
    const candidate = randomBytes(32).toString('base64url');
    if (secretWeakness(candidate) === undefined) return candidate;
  }
}
