import type { FastifyBaseLogger } from 'fastify';

type LogFn = (...args: unknown[]) => void;
type Pino = FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean };
type ChildFn = (this: Pino, bindings: Record<string, unknown>, options?: object) => FastifyBaseLogger;

/**
 * Fastify builds a pino child logger (with the request id bound) for every request. Building it
 * cost about a fifth of the throughput of a small GET, and most requests never log. This
 * stand-in builds the real child on the first log call at an enabled level, so every line that
 * is written still carries the request id. One small object per request, methods on the prototype.
 */
class LazyChildLogger {
  #parent: Pino;
  #realChild: ChildFn;
  #bindings: Record<string, unknown>;
  #options: { level?: string } | undefined;
  #child: FastifyBaseLogger | undefined;

  constructor(
    parent: Pino,
    realChild: ChildFn,
    bindings: Record<string, unknown>,
    options: object | undefined,
  ) {
    this.#parent = parent;
    this.#realChild = realChild;
    this.#bindings = bindings;
    this.#options = options;
  }

  #real(): FastifyBaseLogger {
    this.#child ??= this.#realChild.call(this.#parent, this.#bindings, this.#options);
    return this.#child;
  }

  #log(level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace', args: unknown[]) {
    // A child with a level of its own (a route's `logLevel`) decides for itself.
    if (this.#options?.level === undefined && this.#parent.isLevelEnabled?.(level) === false) return;
    (this.#real()[level] as unknown as LogFn)(...args);
  }

  get level(): string {
    return this.#child?.level ?? this.#options?.level ?? this.#parent.level;
  }
  set level(value: string) {
    this.#real().level = value;
  }
  fatal(...args: unknown[]) {
    this.#log('fatal', args);
  }
  error(...args: unknown[]) {
    this.#log('error', args);
  }
  warn(...args: unknown[]) {
    this.#log('warn', args);
  }
  info(...args: unknown[]) {
    this.#log('info', args);
  }
  debug(...args: unknown[]) {
    this.#log('debug', args);
  }
  trace(...args: unknown[]) {
    this.#log('trace', args);
  }
  silent() {}
  child(bindings: Record<string, unknown>, options?: object): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }
}

/**
 * Makes `logger.child()` return the stand-in above; Fastify calls it once per request. Pino's
 * children inherit the property from their parent, so their children are deferred too (with the
 * right parent: `this`). This rather than Fastify's `childLoggerFactory` option: with a factory
 * of its own, Fastify checks the seven methods of every request's logger (`validateLogger`:
 * an array, a filter and 14 megamorphic property reads, ~3 000 instructions per request, a tenth
 * of the platform's overhead on a small GET under callgrind).
 */
export function deferChildLoggers(logger: FastifyBaseLogger): void {
  // Fastify's stand-in when logging is off (`logger: false`) is a shared no-op object; leave it alone.
  if (typeof (logger as Pino).isLevelEnabled !== 'function') return;
  const realChild = logger.child as ChildFn;
  logger.child = function deferredChild(this: Pino, bindings, options) {
    return new LazyChildLogger(this, realChild, bindings, options) as unknown as FastifyBaseLogger;
  } as FastifyBaseLogger['child'];
}
