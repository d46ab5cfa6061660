import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type Parent = FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean };

/**
 * A request's logger that builds pino's child (with the request id bound) on its first line at
 * an enabled level. Fastify asks for a child per request, most requests write no line, and
 * building a pino child serialises its bindings: this defers that to the requests that log.
 */
class DeferredChild implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined;
  readonly #parent: Parent;
  readonly #bindings: Record<string, unknown>;
  readonly #options: { level?: string };

  constructor(parent: Parent, bindings: Record<string, unknown>, options: { level?: string }) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  #real(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options);
    return this.#child;
  }

  #write(level: Level, args: unknown[]) {
    // A route's own log level decides in the child; otherwise a disabled level costs no child.
    if (
      this.#child === undefined &&
      this.#options.level === undefined &&
      this.#parent.isLevelEnabled?.(level) === false
    )
      return;
    // Passed on as given: pino's overloads cannot be chosen for a spread of unknowns.
    (this.#real()[level] as (...args: unknown[]) => void)(...args);
  }

  get level(): string {
    return this.#child?.level ?? this.#options.level ?? this.#parent.level;
  }
  set level(value: string) {
    this.#real().level = value;
  }
  fatal(...args: unknown[]) {
    this.#write('fatal', args);
  }
  error(...args: unknown[]) {
    this.#write('error', args);
  }
  warn(...args: unknown[]) {
    this.#write('warn', args);
  }
  info(...args: unknown[]) {
    this.#write('info', args);
  }
  debug(...args: unknown[]) {
    this.#write('debug', args);
  }
  trace(...args: unknown[]) {
    this.#write('trace', args);
  }
  silent() {}
  child(bindings: Record<string, unknown>, options?: object): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: each request's logger is a DeferredChild. */
export const deferredChildLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (
  logger,
  bindings,
  options,
) => new DeferredChild(logger, bindings, options);
