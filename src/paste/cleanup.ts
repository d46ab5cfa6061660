import { Counter, type Registry } from 'prom-client';
import type { Clock } from '../platform/clock.ts';
import type { PasteReads } from './reads.ts';
import type { PasteRepository } from './repository.ts';

/** Spec: records handled per cleanup query. */
export const CLEANUP_BATCH = 1000;
/** Spec: hard delete 24 hours after the soft delete. */
export const PURGE_AFTER_MS = 24 * 3600_000;
/** A content blob touched this recently may be about to be referenced by a create in flight. */
const CONTENT_GRACE_MS = 3600_000;

export interface CleanupReport {
  softDeleted: number;
  softDeleteBatches: number;
  purged: number;
  purgeBatches: number;
  contentsRemoved: number;
}

/**
 * The hourly cleanup: soft-deletes expired pastes, then hard-deletes those soft-deleted over
 * 24 h ago together with content nothing references any more, 1000 rows per query, dropping
 * every affected cache entry. It needs no traffic (the scheduler runs it) and stops between
 * batches when the process shuts down.
 */
export function createCleanup(deps: {
  repository: PasteRepository;
  reads: PasteReads;
  clock: Clock;
  registry: Registry;
}) {
  const { repository, reads, clock } = deps;
  const counter = (name: string, help: string) => new Counter({ name, help, registers: [deps.registry] });
  const batches = new Counter({
    name: 'paste_cleanup_batches_total',
    help: 'Cleanup queries (of up to 1000 rows) by step',
    labelNames: ['step'] as const,
    registers: [deps.registry],
  });
  const softDeletedTotal = counter(
    'paste_cleanup_soft_deleted_total',
    'Expired pastes soft-deleted by the cleanup',
  );
  const purgedTotal = counter(
    'paste_cleanup_purged_total',
    'Soft-deleted pastes purged (hard-deleted) by the cleanup',
  );
  const contentsTotal = counter(
    'paste_cleanup_contents_removed_total',
    'Content blobs removed once no paste referenced them',
  );

  return async function cleanup(signal?: AbortSignal): Promise<CleanupReport> {
    const report: CleanupReport = {
      softDeleted: 0,
      softDeleteBatches: 0,
      purged: 0,
      purgeBatches: 0,
      contentsRemoved: 0,
    };
    while (!signal?.aborted) {
      const shortUrls = await repository.softDeleteExpired(clock.now(), CLEANUP_BATCH);
      if (shortUrls.length === 0) break;
      report.softDeleteBatches++;
      batches.inc({ step: 'soft_delete' });
      report.softDeleted += shortUrls.length;
      softDeletedTotal.inc(shortUrls.length);
      await reads.invalidate(...shortUrls);
      if (shortUrls.length < CLEANUP_BATCH) break;
    }
    while (!signal?.aborted) {
      const now = clock.now().getTime();
      const { shortUrls, contentsRemoved } = await repository.purgeDeleted(
        new Date(now - PURGE_AFTER_MS),
        new Date(now - CONTENT_GRACE_MS),
        CLEANUP_BATCH,
      );
      if (shortUrls.length === 0) break;
      report.purgeBatches++;
      batches.inc({ step: 'purge' });
      report.purged += shortUrls.length;
      report.contentsRemoved += contentsRemoved;
      purgedTotal.inc(shortUrls.length);
      contentsTotal.inc(contentsRemoved);
      await reads.invalidate(...shortUrls);
      if (shortUrls.length < CLEANUP_BATCH) break;
    }
    return report;
  };
}
