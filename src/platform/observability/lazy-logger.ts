import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';

type ChildLoggerFactory = NonNullable<FastifyServerOptions['childLoggerFactory']>;
type LogFn = (...args: unknown[]) => void;
type Pino = FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean };

/**
 * Fastify builds a pino child logger (with the request id bound) for every request. Building it
 * cost about a fifth of the throughput of a small GET, and most requests never log. This
 * stand-in builds the real child on the first log call at an enabled level, so every line that
 * is written still carries the request id. One small object per request, methods on the prototype.
 */
class LazyChildLogger {
  #parent: Pino;
  #bindings: Record<string, unknown>;
  #options: object | undefined;
  #child: FastifyBaseLogger | undefined;

  constructor(parent: Pino, bindings: Record<string, unknown>, options: object | undefined) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  #real(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options);
    return this.#child;
  }

  #log(level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace', args: unknown[]) {
    if (this.#parent.isLevelEnabled?.(level) === false) return;
    (this.#real()[level] as unknown as LogFn)(...args);
  }

  get level(): string {
    return this.#child?.level ?? this.#parent.level;
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

export const lazyChildLoggerFactory: ChildLoggerFactory = (logger, bindings, options) =>
  new LazyChildLogger(
    logger as Pino,
    bindings as Record<string, unknown>,
    options,
  ) as unknown as FastifyBaseLogger;
