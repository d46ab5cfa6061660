import { ConfigError } from './config-error.ts';
import type { RatePolicy } from './ratelimit/index.ts';

/**
 * Every setting is read through these: each parses one raw value and, when it is not right,
 * throws a ConfigError naming the variable (the process exits with that one line). `envReader`
 * wraps them with defaults for a module's own settings (`readBookingSettings(config.env)`).
 */
export type Env = Readonly<Record<string, string | undefined>>;

export function envReader(env: Env) {
  const raw = (name: string) => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  return {
    /** The value as given, or undefined when unset or empty. */
    optional: raw,
    string: (name: string, fallback: string) => raw(name) ?? fallback,
    int: (name: string, fallback: number, min: number, max: number) =>
      int(name, raw(name) ?? String(fallback), min, max),
    bool: (name: string, fallback: boolean) => bool(name, raw(name) ?? String(fallback)),
    oneOf: <T extends string>(name: string, fallback: T, allowed: readonly T[]) =>
      oneOf(name, raw(name) ?? fallback, allowed),
    list: <T extends string>(name: string, fallback: readonly T[], allowed: readonly T[]) =>
      list(name, raw(name) ?? fallback.join(','), allowed),
    /** A length of time as `<number><s|m|h|d>` (`30d`, `90m`), in milliseconds. */
    duration: (name: string, fallback: string, minMs: number, maxMs: number) =>
      duration(name, raw(name) ?? fallback, minMs, maxMs),
    /** A rate limit `POINTS/SECONDS` (e.g. `30/60`) as the policy named `policy`. */
    rate: (name: string, fallback: string, policy: string) => ratePolicy(name, raw(name) ?? fallback, policy),
  };
}

export type EnvReader = ReturnType<typeof envReader>;

export function int(name: string, raw: string, min: number, max: number): number {
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `<number><unit>`, unit s, m, h or d (`30d`, `1.5h`): retention windows and the like. */
export function duration(name: string, raw: string, minMs: number, maxMs: number): number {
  const match = /^(\d+(?:\.\d+)?)([smhd])$/.exec(raw.trim());
  const ms = match ? Math.round(Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]) : Number.NaN;
  if (!(ms >= minMs && ms <= maxMs)) {
    const bounds = `${minMs / 1000} s to ${maxMs / 86_400_000} days`;
    throw new ConfigError(`${name} must be a duration like 30d, 12h or 15m, from ${bounds}, got "${raw}"`);
  }
  return ms;
}

/** `POINTS/SECONDS`: at most `POINTS` per window of `SECONDS` (up to 30 days). */
export function ratePolicy(name: string, raw: string, policy: string): RatePolicy {
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(raw);
  const points = Number(match?.[1]);
  const durationSec = Number(match?.[2]);
  if (!match || points < 1 || durationSec < 1 || points > 1e9 || durationSec > 86_400 * 30) {
    throw new ConfigError(`${name} must look like POINTS/SECONDS (e.g. 30/60), got "${raw}"`);
  }
  return { name: policy, points, durationSec };
}

export function bool(name: string, raw: string): boolean {
  if (['true', '1', 'yes'].includes(raw)) return true;
  if (['false', '0', 'no', ''].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

export function oneOf<T extends string>(name: string, raw: string, allowed: readonly T[]): T {
  if (!allowed.includes(raw as T))
    throw new ConfigError(`${name} must be one of ${allowed.join('|')}, got "${raw}"`);
  return raw as T;
}

export function list<T extends string>(name: string, raw: string, allowed: readonly T[]): T[] {
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) throw new ConfigError(`${name} must name at least one of ${allowed.join(',')}`);
  return [...new Set(items.map((item) => oneOf(name, item, allowed)))];
}

export function url(name: string, raw: string): string {
  try {
    return new URL(raw).toString();
  } catch {
    throw new ConfigError(`${name} must be an absolute URL, got "${raw}"`);
  }
}

/**
 * Comma-separated web origins (`https://app.example.org,http://localhost:5173`), each exactly as a
 * browser sends it in `Origin`: scheme, host and port only, lower case, no default port. A path, a
 * trailing slash or a wildcard would never equal a request's `Origin`, so a typo would silently
 * allow nothing; it stops the start-up instead.
 */
export function origins(name: string, raw: string): string[] {
  const items = raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  for (const item of items) {
    let origin: string | undefined;
    try {
      const parsed = new URL(item);
      // The URL parser takes `*` in a host name; a browser never sends one.
      const web = parsed.protocol === 'http:' || parsed.protocol === 'https:';
      if (web && !parsed.hostname.includes('*')) origin = parsed.origin;
    } catch {}
    if (origin !== item) {
      const hint = origin === undefined ? '' : ` (did you mean "${origin}"?)`;
      throw new ConfigError(
        `${name} must list exact origins like https://app.example.org separated by commas (scheme, host and port; no path, no wildcard), got "${item}"${hint}`,
      );
    }
  }
  return [...new Set(items)];
}

export function optionalUrl(name: string, raw: string | undefined, protocols: string[]): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL like ${protocols[0]}//host:port, got "${raw}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  }
  return raw;
}

export function pattern(name: string, raw: string, re: RegExp): string {
  if (!re.test(raw)) throw new ConfigError(`${name} must match ${re}, got "${raw}"`);
  return raw;
}

export function minLength(name: string, raw: string, min: number): string {
  if (raw.length < min) throw new ConfigError(`${name} must be at least ${min} characters`);
  return raw;
}
