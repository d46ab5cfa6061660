import type { Clock } from '../clock.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { JobDefinition } from './index.ts';

/**
 * How long one table's rows are kept, and how to remove (or archive) the ones past it. A module
 * declares one policy per growing table; `retentionJob` runs its policies under the scheduler.
 */
export interface RetentionPolicy {
  /** The table (or group of tables removed together): the metrics' `table` label. */
  table: string;
  /** Rows older than this are removed. */
  keepMs: number;
  /**
   * Removes up to `limit` rows older than `cutoff` and returns how many. One short statement (or
   * transaction) per call: a batch holds its row locks for milliseconds, never the table's.
   */
  removeBatch(cutoff: Date, limit: number): Promise<number>;
  /**
   * When the oldest row this policy removes once it is old enough was written (undefined: none):
   * the lag. Rows kept on purpose past the window (a notification still being delivered) don't count.
   */
  oldest(): Promise<Date | undefined>;
}

export interface RetentionOptions {
  /** Rows per statement. */
  batch?: number;
  /**
   * Longest a run keeps deleting (ms). A run that stops at it leaves the rest to the next tick
   * and shows the backlog as lag, rather than overlapping the next run or a shutdown.
   */
  budgetMs?: number;
}

export const RETENTION_BATCH = 2000;
const RETENTION_BUDGET_MS = 45_000;

/**
 * A periodic job removing what each policy no longer keeps, batch after batch, until a batch
 * comes back short, the time budget is spent or the process stops. Exported metrics:
 * `retention_rows_removed_total{table}` and `retention_lag_seconds{table}` (how far the oldest
 * stored row is past its window: 0 when the job keeps up).
 */
export function retentionJob(
  name: string,
  schedule: string,
  policies: RetentionPolicy[],
  deps: { clock: Clock; metrics: Metrics },
  options: RetentionOptions = {},
): JobDefinition {
  const batch = options.batch ?? RETENTION_BATCH;
  const budgetMs = options.budgetMs ?? RETENTION_BUDGET_MS;
  const { retentionRemoved, retentionLag } = deps.metrics;
  return {
    name,
    schedule,
    async run({ signal }) {
      const deadline = performance.now() + budgetMs;
      for (const policy of policies) {
        const cutoff = new Date(deps.clock.now().getTime() - policy.keepMs);
        while (!signal.aborted && performance.now() < deadline) {
          const removed = await policy.removeBatch(cutoff, batch);
          retentionRemoved.inc({ table: policy.table }, removed);
          if (removed < batch) break;
        }
        const oldest = await policy.oldest();
        const lagMs = oldest === undefined ? 0 : Math.max(0, cutoff.getTime() - oldest.getTime());
        retentionLag.set({ table: policy.table }, lagMs / 1000);
      }
    },
  };
}
