import { rolledBack } from '../platform/db/group.ts';

/**
 * Group commit for creates: each create waits for a statement that carries it, and while
 * `maxInFlight` statements are running, newcomers queue up and leave together in the next one.
 * An idle service pays nothing (a lone create runs at once, alone); a busy one turns a
 * hundred INSERT-and-commit round trips into a few multi-row ones (one commit, one fsync, for
 * many rows: PostgreSQL stores several times as many rows a second). If a batch fails, its items are
 * retried one by one, so one bad row fails only its own request; unless the batch may have
 * committed (the connection died, `rolledBack`): then each request gets that error, since trying
 * again would store its paste twice.
 */
export interface Batcher<T> {
  add(item: T): Promise<void>;
}

export function createBatcher<T>(
  write: (items: T[]) => Promise<void>,
  options: { maxBatch: number; maxInFlight: number },
): Batcher<T> {
  const queue: { item: T; resolve: () => void; reject: (error: unknown) => void }[] = [];
  let inFlight = 0;

  function pump() {
    while (queue.length > 0 && inFlight < options.maxInFlight) {
      const batch = queue.splice(0, options.maxBatch);
      inFlight++;
      run(batch).finally(() => {
        inFlight--;
        pump();
      });
    }
  }

  async function run(batch: typeof queue) {
    try {
      await write(batch.map((entry) => entry.item));
      for (const entry of batch) entry.resolve();
    } catch (error) {
      if (batch.length === 1 || !rolledBack(error)) {
        for (const entry of batch) entry.reject(error);
        return;
      }
      for (const entry of batch) {
        await write([entry.item]).then(entry.resolve, entry.reject);
      }
    }
  }

  return {
    add(item) {
      return new Promise<void>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        pump();
      });
    },
  };
}
