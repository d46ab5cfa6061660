import { sql } from 'kysely';
import type { Db } from '../../db/index.ts';

/** A message as a consumer claims it: `attempt` counts this claim. */
export interface ClaimedRow {
  id: bigint;
  topic: string;
  key: string;
  dedup_id: string;
  payload: unknown;
  attempt: number;
  /** The publisher's trace context, when tracing was on. */
  trace_context?: Record<string, string> | null;
}

export interface MessageLeases {
  /**
   * Leases up to `limit` ready messages of the topic, oldest first, at most the oldest ready one
   * of each key: a key's messages run one at a time, in order.
   */
  claim(topic: string, limit: number): Promise<ClaimedRow[]>;
  /** Renews the row's lease until the returned function is called. */
  keep(row: ClaimedRow): () => void;
}

/**
 * Claimed messages stay invisible to other consumers for `leaseMs`; one whose consumer died
 * becomes claimable again when its lease runs out. Every later write to a claimed row names its
 * `attempt`, so a consumer that lost its lease cannot touch the next claim's row.
 */
export function createMessageLeases(db: Db, at: (offsetMs?: number) => Date, leaseMs: number): MessageLeases {
  return {
    async claim(topic, limit) {
      const now = at();
      // Raw SQL: a `FOR UPDATE SKIP LOCKED` claim in a CTE with a per-key `not exists`.
      const { rows } = await sql<ClaimedRow>`
      with candidates as (
        select m.id from queue_messages m
        where m.topic = ${topic} and m.status = 'ready' and m.visible_at <= ${now}
          and (m.lease_until is null or m.lease_until <= ${now})
          and not exists (
            select 1 from queue_messages p
            where p.topic = m.topic and p.key = m.key and p.status = 'ready' and p.id < m.id)
        order by m.id
        limit ${limit}
        for update skip locked
      )
      update queue_messages q set lease_until = ${at(leaseMs)}, attempt = q.attempt + 1
      from candidates c where q.id = c.id
      returning q.id, q.topic, q.key, q.dedup_id, q.payload, q.attempt, q.trace_context`.execute(db);
      return rows;
    },
    keep(row) {
      // Kept while the handler runs, so a slow send is not taken over by another worker.
      const renew = setInterval(() => {
        sql`update queue_messages set lease_until = ${at(leaseMs)} where id = ${row.id} and attempt = ${row.attempt}`
          .execute(db)
          .catch(() => {});
      }, leaseMs / 3);
      return () => clearInterval(renew);
    },
  };
}
