import type { EventEmitter } from 'node:events';
import { sql } from 'kysely';
import type { Db } from '../../db/index.ts';
import { describeError, type Handler, nextStep } from '../index.ts';
import type { ClaimedRow, MessageLeases } from './lease.ts';

export interface RowProcessorOptions<T> {
  db: Db;
  at: (offsetMs?: number) => Date;
  leases: MessageLeases;
  topic: string;
  handler: Handler<T>;
  retryDelaysMs: number[];
  /** Aborted when the consumer stops; handed to the handler. */
  signal: AbortSignal;
  /** Receives `outcome` (topic, Outcome). */
  events: EventEmitter;
  /** A row was put back for `delayMs`: the claim loop should look again when it comes due. */
  retryDue(delayMs: number): void;
}

/**
 * Runs the handler for one claimed row, keeping its lease meanwhile, then settles the row:
 * deleted when handled, dead when out of attempts (or a PermanentError), otherwise made visible
 * again after its retry delay (a RetryLater gives the attempt back).
 */
export function createRowProcessor<T>(options: RowProcessorOptions<T>): (row: ClaimedRow) => Promise<void> {
  const { db, at, topic, events } = options;

  async function acked(row: ClaimedRow) {
    await sql`delete from queue_messages where id = ${row.id} and attempt = ${row.attempt}`.execute(db);
    events.emit('outcome', topic, 'acked');
  }

  async function failed(row: ClaimedRow, error: unknown) {
    const step = nextStep(error, row.attempt, options.retryDelaysMs);
    const message = describeError(error);
    if (step.kind === 'dead') {
      await sql`update queue_messages set status = 'dead', dead_at = ${at()}, lease_until = null, last_error = ${message}
        where id = ${row.id} and attempt = ${row.attempt}`.execute(db);
      events.emit('outcome', topic, 'dead_lettered');
      return;
    }
    const spent = step.kind === 'defer' ? 1 : 0;
    await sql`update queue_messages set visible_at = ${at(step.delayMs)}, lease_until = null,
        last_error = ${message}, attempt = attempt - ${spent}
      where id = ${row.id} and attempt = ${row.attempt}`.execute(db);
    options.retryDue(step.delayMs);
    events.emit('outcome', topic, step.kind === 'defer' ? 'deferred' : 'retried');
  }

  return async (row) => {
    const release = options.leases.keep(row);
    try {
      await options.handler({
        id: row.dedup_id,
        key: row.key,
        topic,
        payload: row.payload as T,
        attempt: row.attempt,
        traceContext: row.trace_context ?? undefined,
        signal: options.signal,
      });
      await acked(row);
    } catch (error) {
      await failed(row, error);
    } finally {
      release();
    }
  };
}
