/** Time as a dependency, so tests can move it instead of sleeping. */
export interface Clock {
  now(): Date;
  /** Resolves once the clock has passed `ms` from now; rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => new Date(),
  sleep: (ms, signal) =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

export interface TestClock extends Clock {
  /** Moves time forward and wakes every sleeper whose deadline has passed. */
  advance(ms: number): void;
  set(date: Date | string): void;
}

export function createTestClock(start: Date | string = '2026-01-05T12:00:00Z'): TestClock {
  let current = new Date(start).getTime();
  const sleepers = new Set<{ until: number; wake: () => void }>();
  const wakeDue = () => {
    for (const sleeper of sleepers) {
      if (sleeper.until <= current) {
        sleepers.delete(sleeper);
        sleeper.wake();
      }
    }
  };
  return {
    now: () => new Date(current),
    sleep(ms, signal) {
      return new Promise((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        const sleeper = { until: current + ms, wake: resolve };
        signal?.addEventListener(
          'abort',
          () => {
            sleepers.delete(sleeper);
            reject(signal.reason);
          },
          { once: true },
        );
        sleepers.add(sleeper);
        wakeDue();
      });
    },
    advance(ms) {
      current += ms;
      wakeDue();
    },
    set(date) {
      current = new Date(date).getTime();
      wakeDue();
    },
  };
}

export interface OffsetClock extends Clock {
  /** Moves this clock forward; sleepers keep their real-time deadlines. */
  advance(ms: number): void;
}

/**
 * System time plus an offset that tests move forward: for browser tests of a real server
 * process (`TEST_CLOCK=1`, see server.ts), which cannot share a test's in-process clock.
 */
export function createOffsetClock(base: Clock = systemClock): OffsetClock {
  let offset = 0;
  return {
    now: () => new Date(base.now().getTime() + offset),
    sleep: (ms, signal) => base.sleep(ms, signal),
    advance(ms) {
      if (!(ms >= 0)) throw new RangeError('the clock only moves forward');
      offset += ms;
    },
  };
}
