/**
 * Group commit: calls that arrive while earlier ones are being written wait for them, then go
 * together in one statement (`many`), so under load the round trips and commits per call fall
 * with the concurrency, and a lone call still goes at once, alone (`one`).
 *
 * Each caller gets what `one` would have given it: when the batch fails (one bad row rolls the
 * whole statement back), or `many` leaves a call undecided (`retry` says so, e.g. a row the batch
 * did not get), that call runs through `one` on its own, which decides it exactly as before.
 * When the batch's fate is unknown (the connection died: it may have committed), every caller
 * gets that error instead: trying each alone again could do its work twice.
 */
export interface GroupOptions<I, O> {
  /** The single-call path; also the fallback. */
  one(input: I): Promise<O>;
  /** Several calls in one statement; results in the order of the inputs. */
  many(inputs: I[]): Promise<O[]>;
  /** Calls of one kind may share a batch (default: all). */
  kind?(input: I): string;
  /** Calls with the same key never share a batch (e.g. one plate, one ticket). */
  key?(input: I): string;
  /**
   * Nor do they run at the same time: a call waits while a batch holding its key is being
   * written, so it sees that batch's outcome committed (a second entry of a plate finds the
   * first one's ticket, instead of the lot full of its uncommitted spots).
   */
  exclusive?: boolean;
  /** A batch result that `one` must decide instead (default: none). */
  retry?(output: O): boolean;
  maxBatch?: number;
  /** Batches written at once; the next one forms while they run. */
  maxInFlight?: number;
  /**
   * Under load, how long a batch waits for more calls before it is written (default 0: it forms
   * while the previous one is written, and goes as soon as that one is done). Only while batches
   * follow each other closely (the last one started less than 10 × `lingerMs` ago), so a call
   * after a quiet spell still goes at once.
   */
  lingerMs?: number;
}

export function createGroup<I, O>(options: GroupOptions<I, O>): (input: I) => Promise<O> {
  const { one, many, kind = () => '', key, retry = () => false } = options;
  const maxBatch = options.maxBatch ?? 200;
  const maxInFlight = options.maxInFlight ?? 2;
  const lingerMs = options.lingerMs ?? 0;
  let lastStart = Number.NEGATIVE_INFINITY;
  interface Waiter {
    input: I;
    resolve(output: O): void;
    reject(error: unknown): void;
  }
  let queue: Waiter[] = [];
  /** Keys of the batches being written, when `exclusive`. */
  const running = new Set<string>();
  let inFlight = 0;
  let scheduled = false;

  function schedule() {
    if (scheduled || inFlight >= maxInFlight || queue.length === 0) return;
    scheduled = true;
    const write = () => {
      scheduled = false;
      while (inFlight < maxInFlight && queue.length > 0) {
        const batch = take();
        if (batch.length === 0) break; // every waiting key is being written: its batch's end schedules again
        lastStart = performance.now();
        void run(batch);
      }
    };
    // After the current I/O phase, so the requests parsed from the same reads all join the batch;
    // under load, `lingerMs` later.
    if (lingerMs > 0 && performance.now() - lastStart < 10 * lingerMs) setTimeout(write, lingerMs);
    else setImmediate(write);
  }

  const free = (k: string | undefined) => k === undefined || !running.has(k);

  /** The oldest free call and up to maxBatch - 1 more of its kind, in arrival order, each key once. */
  function take(): Waiter[] {
    const first = queue.find((waiter) => free(key?.(waiter.input)));
    if (!first) return [];
    const wanted = kind(first.input);
    const batch: Waiter[] = [];
    const rest: Waiter[] = [];
    const keys = new Set<string>();
    for (const waiter of queue) {
      const k = key?.(waiter.input);
      if (
        batch.length < maxBatch &&
        kind(waiter.input) === wanted &&
        (k === undefined || (!keys.has(k) && free(k)))
      ) {
        if (k !== undefined) keys.add(k);
        batch.push(waiter);
      } else {
        rest.push(waiter);
      }
    }
    queue = rest;
    return batch;
  }

  async function alone(waiter: Waiter) {
    try {
      waiter.resolve(await one(waiter.input));
    } catch (error) {
      waiter.reject(error);
    }
  }

  async function run(batch: Waiter[]) {
    inFlight++;
    const keys = options.exclusive && key ? batch.map((waiter) => key(waiter.input)) : [];
    for (const k of keys) running.add(k);
    try {
      if (batch.length === 1) return await alone(batch[0]);
      let outputs: O[] | undefined;
      try {
        outputs = await many(batch.map((waiter) => waiter.input));
      } catch (error) {
        if (!rolledBack(error)) {
          for (const waiter of batch) waiter.reject(error);
          return;
        }
        outputs = undefined;
      }
      await Promise.all(
        batch.map((waiter, i) =>
          outputs && !retry(outputs[i]) ? waiter.resolve(outputs[i]) : alone(waiter),
        ),
      );
    } finally {
      for (const k of keys) running.delete(k);
      inFlight--;
      schedule();
    }
  }

  return (input) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ input, resolve, reject });
      schedule();
    });
}

/**
 * Whether a failed statement certainly changed nothing: PostgreSQL refused it (an error with a
 * SQLSTATE), other than for the connection itself (class 08) or the server going away (57P01–03,
 * e.g. `pg_terminate_backend`), after which the statement may or may not have committed. Anything
 * else (a socket closed, a timeout) leaves its fate unknown.
 */
export function rolledBack(error: unknown): boolean {
  // A server's error carries its severity too; a socket's `code` (EPIPE…) does not.
  const { code, severity } = (error ?? {}) as { code?: unknown; severity?: unknown };
  if (typeof severity !== 'string' || typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return false;
  return !code.startsWith('08') && !/^57P0[1-3]$/.test(code);
}
