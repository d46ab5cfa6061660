import { sql } from 'kysely';
import type { Db } from '../../db/index.ts';
import type { RetentionPolicy } from '../../jobs/retention.ts';
import { DEAD_LETTER_KEEP_MS } from '../index.ts';

/**
 * The database queue's dead letters are kept as long as JetStream keeps its dead-letter streams
 * (`max_age`): long enough for an operator to look and redrive, not for ever.
 */
export function deadLetterRetention(db: Db, keepMs = DEAD_LETTER_KEEP_MS): RetentionPolicy {
  return {
    table: 'queue_messages',
    keepMs,
    async removeBatch(cutoff, limit) {
      const result = await sql`delete from queue_messages where id in (
        select id from queue_messages where status = 'dead' and dead_at < ${cutoff} limit ${limit})`.execute(
        db,
      );
      return Number(result.numAffectedRows ?? 0n);
    },
    async oldest() {
      const { rows } = await sql<{ at: Date | null }>`
        select min(dead_at) as at from queue_messages where status = 'dead'`.execute(db);
      return rows[0]?.at ?? undefined;
    },
  };
}
