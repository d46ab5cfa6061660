import type { EventEmitter } from 'node:events';
import type { ClaimedRow } from './lease.ts';

export interface ClaimLoopOptions {
  topic: string;
  /** Rows handled at once. */
  concurrency: number;
  /** Idle polling interval. */
  pollMs: number;
  /** Emits the topic when a message was published in this process: claim again at once. */
  wake: EventEmitter;
  claim(limit: number): Promise<ClaimedRow[]>;
  /** Runs after each claim (e.g. purging expired dedup ids); a failure is reported like a claim's. */
  afterClaim(): Promise<void>;
  process(row: ClaimedRow): Promise<void>;
  onError(error: unknown): void;
  /** Ends the loop; the consumer aborts it before `stop`. */
  signal: AbortSignal;
}

/**
 * Claims as many rows as there are free slots and processes each in the background; when it
 * got none, or every slot is busy, it sleeps until the poll interval passes, a local publish
 * arrives or a row finishes.
 */
export function runClaimLoop(options: ClaimLoopOptions): { stop(): Promise<void> } {
  const { topic, concurrency, wake, signal } = options;
  const inFlight = new Set<Promise<void>>();
  let nudged = false;
  const onWake = () => {
    nudged = true;
  };
  wake.on(topic, onWake);

  async function claimFree(): Promise<ClaimedRow[]> {
    let claimed: ClaimedRow[] = [];
    if (concurrency - inFlight.size <= 0) return claimed;
    try {
      nudged = false;
      claimed = await options.claim(concurrency - inFlight.size);
      await options.afterClaim();
    } catch (error) {
      options.onError(error);
    }
    return claimed;
  }

  function start(row: ClaimedRow) {
    const task: Promise<void> = options
      .process(row)
      .catch(options.onError)
      .finally(() => inFlight.delete(task));
    inFlight.add(task);
  }

  function idle(): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, options.pollMs);
      const tasks = [...inFlight];
      function done() {
        clearTimeout(timer);
        wake.off(topic, done);
        signal.removeEventListener('abort', done);
        resolve();
      }
      if (nudged && inFlight.size < concurrency) return done();
      wake.once(topic, done);
      signal.addEventListener('abort', done, { once: true });
      if (tasks.length > 0) Promise.race(tasks).then(done, done);
    });
  }

  const loop = (async () => {
    while (!signal.aborted) {
      const claimed = await claimFree();
      for (const row of claimed) start(row);
      if (claimed.length === 0 || inFlight.size >= concurrency) await idle();
    }
  })();

  return {
    /** After `signal` was aborted: waits for the loop and the rows in progress. */
    async stop() {
      wake.off(topic, onWake);
      await loop;
      await Promise.allSettled([...inFlight]);
    },
  };
}
